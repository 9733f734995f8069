/** `hermes-batch approval`: check commands against the dangerous-command classes, explain a verdict, list the classes. */
import { readFile } from "node:fs/promises";
import {
  PATTERN_CLASSES,
  analyseCommand,
  normalizeCommand,
  shellComments,
  toDetection,
} from "../../tools/approval/detect.js";
import { modelCommandLine } from "../../tools/approval/next/model.js";
import { UserError } from "../core/errors.js";
import type { Command } from "./types.js";

const HELP = `Usage:
  hermes-batch approval check [--explain] [--cwd DIR] "<command>"   print the detection as JSON (exit 0 either way)
  hermes-batch approval check [--explain] [--cwd DIR] --file FILE   one command a line (FILE "-" = stdin; blank and
                                                          # lines skipped), one JSON object a line; a line
                                                          "# workdir: /path" sets the working directory for the
                                                          lines after it (as --cwd does)
  hermes-batch approval explain [--cwd DIR] "<command>"   the command model (simple commands with their words,
                                                          computed ones marked, redirections, the directory each
                                                          runs in), every class that matched with its
                                                          description, the shell comments (what the smart
                                                          approver is shown as untrusted), and the findings: what
                                                          each judge saw and the rule row that fired with its
                                                          flag/pass examples
  hermes-batch approval patterns [--json]                 list the dangerous-command classes (key, description)

--cwd DIR judges the command as the gate does in a task whose working directory is DIR (an absolute path):
paths inside it are the task's own, so "cd /workspace && rm -rf coverage" with --cwd /workspace is not flagged.
Without it no working directory is known and every relative path counts as possibly outside.

Everything after "check" (and its options) is the command, so quoting it is optional:
  hermes-batch approval check -- rm -rf /

--explain adds "findings": what each judge saw ({key, reason}, and the rule row's program when one fired).
Class keys are what the user config's command_allowlist (~/.hermes-batch/config.yaml) stores.`;

type Workdir = { cwd: string; defaultCwd: string } | undefined;

const workdirOf = (dir: string | undefined, flag: string): Workdir => {
  if (dir === undefined) return undefined;
  if (!dir.startsWith("/")) throw new UserError(`${flag} needs an absolute path, got '${dir}'`);
  return { cwd: dir, defaultCwd: dir };
};

function detectionJson(command: string, explain: boolean, workdir: Workdir): string {
  const { matches, findings } = analyseCommand(command, workdir);
  const d = toDetection(matches);
  const out: Record<string, unknown> = { command, dangerous: d.dangerous };
  if (d.dangerous) {
    out.patternKey = d.patternKey;
    out.description = d.description;
    if (matches.length > 1) out.matches = matches.map((m) => m.key);
  }
  if (workdir) out.cwd = workdir.cwd;
  if (explain)
    out.findings = findings.map((f) => ({
      key: f.key,
      reason: f.reason,
      ...(f.rule ? { rule: f.rule.program[0] } : {}),
    }));
  return JSON.stringify(out);
}

const WORKDIR_HEADER = /^\s*#\s*workdir:\s*(\S+)\s*$/;

/** The file's lines, `# workdir:` headers kept (check applies them), other # and blank lines dropped. */
async function readLines(file: string): Promise<{ line: string; lineNo: number }[]> {
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
  return text
    .split(/\r?\n/)
    .map((line, i) => ({ line, lineNo: i + 1 }))
    .filter(({ line }) => line.trim() !== "" && (!line.trimStart().startsWith("#") || WORKDIR_HEADER.test(line)));
}

interface CheckArgs {
  explain: boolean;
  file?: string;
  cwd?: string;
  rest: string[];
}

function parseCheckArgs(args: string[]): CheckArgs {
  const out: CheckArgs = { explain: false, rest: [] };
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--explain") out.explain = true;
    else if (a === "--cwd") {
      out.cwd = args[++i];
      if (out.cwd === undefined) throw new UserError("--cwd needs a directory");
    } else if (a.startsWith("--cwd=")) out.cwd = a.slice("--cwd=".length);
    else if (a === "--file") {
      out.file = args[++i];
      if (out.file === undefined) throw new UserError("--file needs a path (or - for stdin)");
    } else if (a.startsWith("--file=")) out.file = a.slice("--file=".length);
    else if (a === "--") {
      i++;
      break;
    } else if (a.startsWith("--")) throw new UserError(`unknown option '${a}' (see --help)`);
    else break;
  }
  out.rest = args.slice(i);
  return out;
}

async function checkFile(file: string, explain: boolean, workdir: Workdir): Promise<void> {
  for (const { line, lineNo } of await readLines(file)) {
    const header = WORKDIR_HEADER.exec(line);
    if (header) workdir = workdirOf(header[1], `${file}:${lineNo}: # workdir:`);
    else process.stdout.write(detectionJson(line, explain, workdir) + "\n");
  }
}

async function check(args: string[], verb: "check" | "explain"): Promise<number> {
  const { explain, file, cwd, rest } = parseCheckArgs(args);
  const workdir = workdirOf(cwd, "--cwd");
  if (file !== undefined) {
    if (verb === "explain") throw new UserError("approval explain takes one command, not --file");
    if (rest.length) throw new UserError("give either --file or a command, not both");
    await checkFile(file, explain, workdir);
    return 0;
  }
  const command = rest.join(" ");
  if (!command.trim())
    throw new UserError(`approval ${verb} needs a command, e.g. approval ${verb} "rm -rf /" (see --help)`);
  process.stdout.write(
    (verb === "explain" ? explainJson(command, workdir) : detectionJson(command, explain, workdir)) + "\n",
  );
  return 0;
}

/** The command model, the classes that matched and the findings with the rule rows that fired. */
function explainJson(command: string, workdir: Workdir): string {
  const { matches, findings } = analyseCommand(command, workdir);
  const model = modelCommandLine(normalizeCommand(command), workdir ? { cwd: workdir.cwd } : {});
  const explained = {
    command,
    ...(workdir ? { cwd: workdir.cwd } : {}),
    dangerous: matches.length > 0,
    matched: matches,
    commands: model.commands.map((c) => ({
      argv: c.argv.map((w) => (w.literal ? w.text : { computed: w.text })),
      ...(c.redirects.length ? { redirects: c.redirects.map((r) => `${r.fd ?? ""}${r.op} ${r.target.text}`) } : {}),
      ...(c.pipedFrom ? { piped: true } : {}),
      ...(c.cwd ? { cwd: c.cwd } : {}),
    })),
    ...(model.comments.length ? { comments: shellComments(command) } : {}),
    findings: findings.map((f) => ({
      key: f.key,
      reason: f.reason,
      ...(f.rule
        ? { rule: { program: f.rule.program, effect: f.rule.effect, flag: f.rule.flag, pass: f.rule.pass } }
        : {}),
    })),
  };
  return JSON.stringify(explained, null, 2);
}

function patterns(args: string[]): number {
  const json = args.includes("--json");
  const unknown = args.filter((a) => a !== "--json");
  if (unknown.length) throw new UserError(`unknown argument '${unknown[0]}' (see --help)`);
  if (json) {
    for (const p of PATTERN_CLASSES)
      process.stdout.write(JSON.stringify({ key: p.key, description: p.description }) + "\n");
    return 0;
  }
  const width = Math.max(...PATTERN_CLASSES.map((p) => p.key.length));
  for (const p of PATTERN_CLASSES) process.stdout.write(`${p.key.padEnd(width)}  ${p.description}\n`);
  return 0;
}

export const command: Command = {
  summary: "check commands against the dangerous-command classes; explain a verdict; list the classes",
  help: HELP,
  async run(argv) {
    const [sub, ...rest] = argv;
    if (sub === "check" || sub === "explain") return check(rest, sub);
    if (sub === "patterns") return patterns(rest);
    throw new UserError(
      sub
        ? `unknown subcommand '${sub}'; use check, explain or patterns (see --help)`
        : "missing subcommand: check, explain or patterns (see --help)",
    );
  },
};
