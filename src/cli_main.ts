/**
 * The `hermes-batch` commands behind one function: picks a subcommand, maps errors to exit codes (2 = bad input).
 * src/cli.ts is the executable that calls it; tests call it in process (test/helpers/cli.ts `runCliInProcess`).
 */
import { UserError, errorMessage } from "./core/errors.js";
import { packageVersion } from "./core/package_version.js";
import type { Command } from "./commands/types.js";

const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => (await import("./commands/run.js")).command,
  tools: async () => (await import("./commands/tools.js")).command,
  toolsets: async () => (await import("./commands/toolsets.js")).command,
  distributions: async () => (await import("./commands/distributions.js")).command,
  sample: async () => (await import("./commands/sample.js")).command,
  approval: async () => (await import("./commands/approval.js")).command,
  gc: async () => (await import("./commands/gc.js")).command,
  export: async () => (await import("./commands/export.js")).command,
  merge: async () => (await import("./commands/merge.js")).command,
  shards: async () => (await import("./commands/shards.js")).command,
  compare: async () => (await import("./commands/compare.js")).command,
  score: async () => (await import("./commands/score.js")).command,
  report: async () => (await import("./commands/report.js")).command,
  view: async () => (await import("./commands/view.js")).command,
  harbor: async () => (await import("./commands/harbor.js")).command,
};

async function mainHelp(): Promise<string> {
  const lines = [
    "hermes-batch — run tool-using LLM agents over whole datasets",
    "",
    "Usage: hermes-batch <command> [options]      (hermes-batch <command> --help for details)",
    "",
    "Commands:",
  ];
  for (const [name, load] of Object.entries(COMMANDS)) {
    let summary = "";
    try {
      summary = (await load()).summary;
    } catch {
      summary = "(unavailable in this build)";
    }
    lines.push(`  ${name.padEnd(15)} ${summary}`);
  }
  lines.push("", "Options:", "  --help, -h      this text", "  --version, -v   print the version");
  lines.push("", "Try it without an API key:  hermes-batch run datasets/smoke.jsonl --model scripted");
  return lines.join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write((await mainHelp()) + "\n");
    return name ? 0 : 2;
  }
  if (name === "--version" || name === "-v") {
    process.stdout.write(packageVersion() + "\n");
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`hermes-batch: unknown command '${name}'. Commands: ${Object.keys(COMMANDS).join(", ")}\n`);
    return 2;
  }
  const command = await load();
  // Only a leading -h asks for help: later ones may belong to a quoted command (`approval check ls -h`).
  const beforeDashes = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (beforeDashes.includes("--help") || rest[0] === "-h") {
    process.stdout.write(command.help.trimEnd() + "\n");
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UserError) {
      process.stderr.write(`hermes-batch ${name}: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`hermes-batch ${name}: internal error: ${errorMessage(err)}\n`);
    if (process.env.HERMES_BATCH_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
}
