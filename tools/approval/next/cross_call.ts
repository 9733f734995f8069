/**
 * Across tool calls: the paths each call writes (so the gate can remember them for the task), and what a
 * later command does by running one of those files (scripts, Makefiles, package.json scripts,
 * conftest.py, git hooks), judged from the file's text as read from the sandbox.
 */
import { judgeCommand, type JudgeOptions, type Match } from "./analyse.js";
import { modelCommandLine } from "./model.js";
import { absolutePath } from "./paths.js";
import { basename } from "./unwrap.js";
import { literalWord } from "./words.js";

const WRITES_LAST = new Set(["cp", "mv", "install", "ln", "rsync"]);

/** Absolute paths a command line writes: redirect targets, `tee` files, copy and move destinations. */
export function writtenPaths(command: string, opts: { cwd?: string; defaultCwd?: string }): string[] {
  const out = new Set<string>();
  const line = modelCommandLine(command, { cwd: (opts.cwd ?? opts.defaultCwd) || undefined });
  const keep = (text: string, cwd: string | undefined) => {
    const abs = absolutePath(literalWord(text), { workdir: opts.defaultCwd || undefined, cwd: cwd || undefined });
    if (abs?.startsWith("/")) out.add(abs);
  };
  for (const r of line.redirects) if (r.op.includes(">") && r.target.literal) keep(r.target.text, opts.cwd);
  for (const cmd of line.commands) {
    for (const r of cmd.redirects)
      if (r.op.includes(">") && r.target.literal && !/^&?\d*$/.test(r.target.text)) keep(r.target.text, cmd.cwd);
    const program = basename(cmd.argv[0]?.text ?? "");
    const operands = cmd.argv.slice(1).filter((w) => w.literal && !w.text.startsWith("-"));
    if (program === "tee") for (const w of operands) keep(w.text, cmd.cwd);
    if (WRITES_LAST.has(program) && operands.length >= 2) keep(operands.at(-1)!.text, cmd.cwd);
    if (program === "sed" && cmd.argv.some((w) => w.text.startsWith("-i"))) keep(operands.at(-1)?.text ?? "", cmd.cwd);
  }
  return [...out];
}

/**
 * The classes a command falls in only because of files earlier calls wrote: judged with the files'
 * text, minus what the command alone already shows.
 */
export function crossCallMatches(command: string, opts: JudgeOptions, files: ReadonlyMap<string, string>): Match[] {
  if (files.size === 0) return [];
  const alone = new Set(judgeCommand(command, opts).matches?.map((m) => m.key) ?? []);
  const readWritten = (p: string) => files.get(p) ?? files.get(p.replace(/\/$/, ""));
  const fresh = (judgeCommand(command, { ...opts, readWritten }).matches ?? []).filter((m) => !alone.has(m.key));
  return fresh.map((m) => ({ key: m.key, description: `${m.description} (in a file an earlier call wrote)` }));
}
