/** `hermes-batch approval`: check commands against the dangerous-command patterns, list the patterns. */
import { readFile } from "node:fs/promises";
import { DANGEROUS_PATTERNS, analyseCommand, detectDangerousCommand } from "../../tools/approval/gate.js";
import { UserError } from "../core/errors.js";
import type { Command } from "./types.js";

const HELP = `Usage:
  hermes-batch approval check [--explain] "<command>"     print the detection as JSON (exit 0 either way)
  hermes-batch approval check [--explain] --file FILE     one command a line (FILE "-" = stdin; blank and # lines
                                                          skipped), one JSON object a line
  hermes-batch approval patterns [--json]                 list the dangerous-command patterns (key, description)

Everything after "check" (and its options) is the command, so quoting it is optional:
  hermes-batch approval check -- rm -rf /

--explain adds "units": the command as the patterns see it (one line per pipeline, wrappers removed).
Pattern keys are what the user config's command_allowlist (~/.hermes-batch/config.yaml) stores.`;

function detectionJson(command: string, explain: boolean): string {
  const d = detectDangerousCommand(command);
  const out: Record<string, unknown> = { command, dangerous: d.dangerous };
  if (d.dangerous) {
    out.patternKey = d.patternKey;
    out.description = d.description;
    if (d.matches && d.matches.length > 1) out.matches = d.matches.map((m) => m.key);
  }
  if (explain) out.units = analyseCommand(command).units;
  return JSON.stringify(out);
}

async function readLines(file: string): Promise<string[]> {
  let text: string;
  try {
    if (file === "-") {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      text = Buffer.concat(chunks).toString("utf8");
    } else {
      text = await readFile(file, "utf8");
    }
  } catch (err) {
    throw new UserError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  // Blank lines and `#` comment lines are skipped.
  return text.split(/\r?\n/).filter((l) => l.trim() !== "" && !l.trimStart().startsWith("#"));
}

async function check(args: string[]): Promise<number> {
  let explain = false;
  let file: string | undefined;
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--explain") explain = true;
    else if (a === "--file") {
      file = args[++i];
      if (file === undefined) throw new UserError("--file needs a path (or - for stdin)");
    } else if (a.startsWith("--file=")) file = a.slice("--file=".length);
    else if (a === "--") {
      i++;
      break;
    } else break;
  }
  const rest = args.slice(i);
  if (file !== undefined) {
    if (rest.length) throw new UserError("give either --file or a command, not both");
    for (const line of await readLines(file)) process.stdout.write(detectionJson(line, explain) + "\n");
    return 0;
  }
  const command = rest.join(" ");
  if (!command.trim()) throw new UserError('approval check needs a command, e.g. approval check "rm -rf /" (see --help)');
  process.stdout.write(detectionJson(command, explain) + "\n");
  return 0;
}

function patterns(args: string[]): number {
  const json = args.includes("--json");
  const unknown = args.filter((a) => a !== "--json");
  if (unknown.length) throw new UserError(`unknown argument '${unknown[0]}' (see --help)`);
  if (json) {
    for (const p of DANGEROUS_PATTERNS) process.stdout.write(JSON.stringify({ key: p.key, description: p.description }) + "\n");
    return 0;
  }
  const width = Math.max(...DANGEROUS_PATTERNS.map((p) => p.key.length));
  for (const p of DANGEROUS_PATTERNS) process.stdout.write(`${p.key.padEnd(width)}  ${p.description}\n`);
  return 0;
}

export const command: Command = {
  summary: "check commands against the dangerous-command patterns; list the patterns",
  help: HELP,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "check") return check(rest);
    if (sub === "patterns") return patterns(rest);
    throw new UserError(sub ? `unknown subcommand '${sub}'; use check or patterns (see --help)` : "missing subcommand: check or patterns (see --help)");
  },
};
