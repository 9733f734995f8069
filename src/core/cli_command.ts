/**
 * A hermes-batch command line to print for the user to run again (a resume hint, a shard's rerun): this node and
 * this CLI by their absolute paths, never `npx hermes-batch` (npx builds a checkout again, and outside one fetches
 * whatever registry package has that name).
 */
import { resolve } from "node:path";

export function shellQuote(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}

/** This process's node and CLI script, absolute: what a printed command starts with. */
export function thisCli(): { node: string; cli: string } {
  return { node: process.execPath, cli: resolve(process.argv[1] ?? "") };
}

/** `NODE CLI ARGS…`, each word quoted for a POSIX shell. */
export function cliCommandLine(args: string[], { node, cli }: { node: string; cli: string } = thisCli()): string {
  return [node, cli, ...args].map(shellQuote).join(" ");
}
