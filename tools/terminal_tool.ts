/**
 * The `terminal` and `process` tools (toolset "terminal"): shell commands in the task's environment,
 * in the foreground with a timeout, or in the background managed through `process`.
 */
import { posix } from "node:path";
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { DEFAULT_OUTPUT_CAP, type BackgroundStatus, type Environment } from "./environments/base.js";
import { registry, type ToolContext, type ToolEffect, type ToolResult } from "./registry.js";
import { booleanArg, integerArg, pathArg, requiredInSchema, withDefault } from "./tool_args.js";
import { UnknownBackgroundProcessError } from "./environments/background.js";
import { STDERR_TO_STDOUT } from "./environments/shell/shell_session.js";
import type { ProcessNotices } from "./process_notices.js";
import { pyStrip } from "./file_tool_common.js";
import { splitLines } from "./unified_diff.js";
import { pythonLocalIsoformat } from "../src/core/python_time.js";
import { sleep } from "../src/core/abort.js";

/** Waits `ms`, or less when the task is aborted (the caller then reports what it has). */
const pause = (ms: number, signal?: AbortSignal) => sleep(ms, signal).catch(() => {});

export const DEFAULT_TERMINAL_TIMEOUT_S = 60;
export const MAX_TERMINAL_TIMEOUT_S = 600;
const DEFAULT_WAIT_S = 60;
const DEFAULT_LOG_LINES = 200;
/** A task's background processes on a pseudo-terminal at one time; past them one runs without (see startBackground). */
export const MAX_PTY_PROCESSES = 8;

const TERMINAL_DESCRIPTION = [
  "Execute a shell command in the task's environment (a Linux shell) and return its combined stdout/stderr",
  "and exit code. A non-zero exit code is reported, not treated as a tool failure.",
  "Do NOT use cat/head/tail to read files, grep/find/ls to search, or sed/awk/echo redirection to edit or",
  "create files: use read_file, search_files, patch and write_file instead, which are safer and clearer.",
  `Commands time out after \`timeout\` seconds (default ${DEFAULT_TERMINAL_TIMEOUT_S}, max ${MAX_TERMINAL_TIMEOUT_S}); the whole`,
  "process tree is killed on timeout. Interactive programs (editors, REPLs, pagers) are not supported: pass",
  "non-interactive flags (e.g. -y, --no-pager). For servers or long jobs set background=true and manage",
  `them with the process tool. Output longer than ${DEFAULT_OUTPUT_CAP} characters is truncated in the middle.`,
].join(" ");

/** The parameters, order and bounds of the original's terminal schema (upstream cb51baec). */
export const terminalArgs = lazy(() =>
  z.object({
    // Required in the schema; a call without it gets the original's error from the handler, and an empty
    // command runs (as the original runs it).
    command: requiredInSchema(z.string().optional().describe("The shell command to run (bash -c).")),
    background: withDefault(
      booleanArg()
        .optional()
        .describe(
          "Run in the background and return a session_id at once; use the process tool to poll, wait, write to or kill it.",
        ),
      false,
    ),
    // 0 is no timeout given (the original's `timeout or default_timeout`); other values below 1 are brought to 1.
    timeout: z
      .preprocess(
        (v) => (v === 0 || (typeof v === "string" && /^\s*0+\s*$/.test(v)) ? undefined : v),
        integerArg({ min: 1, clamp: "both" }).optional(),
      )
      .describe(
        `Seconds before the command is killed (default ${DEFAULT_TERMINAL_TIMEOUT_S}; in the foreground at most ${MAX_TERMINAL_TIMEOUT_S}, ` +
          "more is refused: run longer commands with background=true).",
      ),
    workdir: pathArg()
      .optional()
      .describe(
        "Directory to run in (absolute, or relative to the task's working directory). Default: the terminal's current directory (where the last command ended).",
      ),
    pty: withDefault(
      booleanArg()
        .optional()
        .describe(
          "With background=true: run on a pseudo-terminal, for interactive programs (REPLs, prompts that need a TTY); answer them with the process tool. A foreground command runs without one.",
        ),
      false,
    ),
    notify_on_complete: withDefault(
      booleanArg()
        .optional()
        .describe(
          "With background=true: be told once when the process ends (a message after your answer, with its exit code and last output). The right choice for long builds and test runs.",
        ),
      false,
    ),
    watch_patterns: z
      .array(z.string())
      .optional()
      .describe(
        "With background=true: strings to watch for in the output (e.g. a server's readiness line); a match is told as a message after your answer, at most one per 15 s per process. Dropped when notify_on_complete is set.",
      ),
  }),
);
type TerminalArgs = z.infer<ReturnType<typeof terminalArgs>>;

/**
 * The original's `strip_ansi` (tools/ansi_strip.py at upstream cb51baec): CSI, OSC, DCS/SOS/PM/APC strings, nF
 * escapes, single-byte escapes, 8-bit CSI and OSC, and the other C1 controls.
 */
const ANSI_ESCAPE = new RegExp(
  "\\x1b(?:\\[[\\x30-\\x3f]*[\\x20-\\x2f]*[\\x40-\\x7e]|\\][\\s\\S]*?(?:\\x07|\\x1b\\\\)|[PX^_][\\s\\S]*?(?:\\x1b\\\\)" +
    "|[\\x20-\\x2f]+[\\x30-\\x7e]|[\\x30-\\x7e])|\\x9b[\\x30-\\x3f]*[\\x20-\\x2f]*[\\x40-\\x7e]|\\x9d[\\s\\S]*?(?:\\x07|\\x9c)|[\\x80-\\x9f]",
  "g",
);

export function stripAnsi(text: string): string {
  return /[\x1b\x80-\x9f]/.test(text) ? text.replace(ANSI_ESCAPE, "") : text;
}

/** The characters the original allows in a workdir (terminal_tool.py `_WORKDIR_SAFE_RE`). */
const WORKDIR_SAFE = /^[A-Za-z0-9/\\:_\-.~ +@=,]+$/;

/** Python's `repr()` of one character. */
function pyCharRepr(ch: string): string {
  const escapes: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
  if (ch === "'") return `"'"`;
  const cp = ch.codePointAt(0)!;
  let body = escapes[ch];
  if (body === undefined) {
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp === 0xad) body = `\\x${cp.toString(16).padStart(2, "0")}`;
    else if ((cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x2028 && cp <= 0x2029))
      body = `\\u${cp.toString(16).padStart(4, "0")}`;
    else body = ch;
  }
  return `'${body}'`;
}

/**
 * The original's `_validate_workdir`: an error for a workdir with a character outside its allowlist. Its
 * pattern ends in `$`, which in Python also matches before a final newline, so one trailing newline passes.
 */
function workdirError(workdir: string): string | undefined {
  if (!workdir || WORKDIR_SAFE.test(workdir.endsWith("\n") ? workdir.slice(0, -1) : workdir)) return undefined;
  for (const ch of workdir) {
    if (!WORKDIR_SAFE.test(ch))
      return `Blocked: workdir contains disallowed character ${pyCharRepr(ch)}. Use a simple filesystem path without shell metacharacters.`;
  }
  return "Blocked: workdir contains disallowed characters.";
}

const NO_MATCHES = "No matches found (not an error)";
const FILES_DIFFER = "Files differ (expected, not an error)";
const CONDITION_FALSE = "Condition evaluated to false (expected, not an error)";
/** The original's notes for exit codes that are no error, by the last command's name (`_interpret_exit_code`). */
const EXIT_CODE_MEANINGS: Record<string, Record<number, string>> = {
  grep: { 1: NO_MATCHES },
  egrep: { 1: NO_MATCHES },
  fgrep: { 1: NO_MATCHES },
  rg: { 1: NO_MATCHES },
  ag: { 1: NO_MATCHES },
  ack: { 1: NO_MATCHES },
  diff: { 1: FILES_DIFFER },
  colordiff: { 1: FILES_DIFFER },
  find: { 1: "Some directories were inaccessible (partial results may still be valid)" },
  test: { 1: CONDITION_FALSE },
  "[": { 1: CONDITION_FALSE },
  curl: {
    6: "Could not resolve host",
    7: "Failed to connect to host",
    22: "HTTP response code indicated error (e.g. 404, 500)",
    28: "Operation timed out",
  },
  git: { 1: "Non-zero exit (often normal — e.g. 'git diff' returns 1 when files differ)" },
};

/**
 * The original's `_interpret_exit_code`: the last piece of the command split at `||`, `&&`, `|` and `;`,
 * its first word that is no `VAR=value`, without its folder.
 */
export function exitCodeMeaning(command: string, exitCode: number): string | undefined {
  if (exitCode === 0) return undefined;
  const segments = command.split(/\s*(?:\|\||&&|[|;])\s*/);
  const words = pyStrip(segments[segments.length - 1] ?? command)
    .split(/[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/)
    .filter(Boolean);
  const first = words.find((w) => !(w.includes("=") && !w.startsWith("-")));
  if (!first) return undefined;
  const base = first.split("/").pop()!;
  return Object.hasOwn(EXIT_CODE_MEANINGS, base) ? EXIT_CODE_MEANINGS[base]![exitCode] : undefined;
}

/** What the environment kept of an output: all of it, or its head and tail and its whole length (`capOutput`). */
interface KeptOutput {
  head: string;
  tail: string;
  total: number;
}

const CAP_NOTICE =
  /^\n\n\.\.\. \[OUTPUT TRUNCATED - \d+ chars omitted out of (\d+) total; cap is \d+ chars\] \.\.\.\n\n/;

/** Reads the environment's capped text back into its parts (the head is 40 % of the cap, as the original's). */
function keptOutput(text: string, truncated: boolean, cap: number): KeptOutput {
  const headLen = Math.floor(cap * 0.4);
  const m = truncated ? CAP_NOTICE.exec(text.slice(headLen)) : null;
  if (!m) return { head: text, tail: "", total: text.length };
  return { head: text.slice(0, headLen), tail: text.slice(headLen + m[0].length), total: Number(m[1]) };
}

/**
 * The original's cut of a foreground output over `cap` characters: 40 % head, 60 % tail, and its notice
 * (terminal_tool.py at upstream cb51baec), over the output with `suffix` (the timeout note) appended.
 */
function hermesCut(kept: KeptOutput, suffix: string, cap: number): string {
  const headLen = Math.floor(cap * 0.4);
  const tailLen = cap - headLen;
  const total = kept.total + suffix.length;
  if (total <= cap) return kept.head + kept.tail + suffix;
  const whole = kept.tail === "" && kept.total === kept.head.length ? kept.head + suffix : undefined;
  const head = (whole ?? kept.head).slice(0, headLen);
  const tail = (whole ?? kept.head + kept.tail + suffix).slice(-tailLen);
  return `${head}\n\n... [OUTPUT TRUNCATED - ${total - headLen - tailLen} chars omitted out of ${total} total] ...\n\n${tail}`;
}

const SHELL_LEVEL_BACKGROUND = /\b(?:nohup|disown|setsid)\b/i;
const INLINE_BACKGROUND_AMP = /\s&\s/;
/** Python's `$` also matches before a final newline. */
const TRAILING_BACKGROUND_AMP = /\s&\s*(?:#.*)?\n?$/;
const LONG_LIVED_FOREGROUND = [
  /\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:dev|start|serve|watch)\b/i,
  /\bdocker\s+compose\s+up\b/i,
  /\bnext\s+dev\b/i,
  /\bvite(?:\s|$)/i,
  /\bnodemon\b/i,
  /\buvicorn\b/i,
  /\bgunicorn\b/i,
  /\bpython(?:3)?\s+-m\s+http\.server\b/i,
];

/**
 * The original's `_foreground_background_guidance` (terminal_tool.py at upstream cb51baec): its refusal of a
 * foreground command that backgrounds something or looks like a server or watcher, unless it asks for help or a
 * version. A refused command never runs, so the approval gate is not asked about it (the original refuses first).
 */
export function foregroundGuidance(command: string): string | undefined {
  const normalized = command.toLowerCase().split(/\s+/).filter(Boolean).join(" ");
  if (
    normalized.includes(" --help") ||
    normalized.endsWith(" -h") ||
    normalized.includes(" --version") ||
    normalized.endsWith(" -v")
  )
    return undefined;
  if (SHELL_LEVEL_BACKGROUND.test(command))
    return (
      "Foreground command uses shell-level background wrappers (nohup/disown/setsid). " +
      "Use terminal(background=true) so Hermes can track the process, then run readiness checks and tests in separate commands."
    );
  if (INLINE_BACKGROUND_AMP.test(command) || TRAILING_BACKGROUND_AMP.test(command))
    return (
      "Foreground command uses '&' backgrounding. Use terminal(background=true) for long-lived processes, " +
      "then run health checks and tests in follow-up terminal calls."
    );
  if (LONG_LIVED_FOREGROUND.some((re) => re.test(command)))
    return (
      "This foreground command appears to start a long-lived server/watch process. Run it with background=true, " +
      "verify readiness (health endpoint/log signal), then execute tests in a separate command."
    );
  return undefined;
}

/** A foreground call the original refuses before anything runs: a timeout over the maximum, or its guidance. */
function refusedForeground(args: TerminalArgs & { command: string }): ToolResult | undefined {
  if (args.background) return undefined;
  // As the original: a foreground timeout above the maximum is refused, not shortened.
  if (args.timeout !== undefined && args.timeout > MAX_TERMINAL_TIMEOUT_S) {
    return {
      content: {
        error:
          `Foreground timeout ${args.timeout}s exceeds the maximum of ${MAX_TERMINAL_TIMEOUT_S}s. ` +
          "Use background=true with notify_on_complete=true for long-running commands.",
      },
    };
  }
  const guidance = foregroundGuidance(args.command);
  return guidance ? { content: { output: "", exit_code: -1, error: guidance, status: "error" } } : undefined;
}

/**
 * Makes a relative workdir absolute (POSIX paths in every backend) as the original's `builtin cd <workdir>` would
 * (tools/environments/base.py `_wrap_command`): against the folder its bash starts in. On the local backend that is
 * the tracked cwd, where the last command ended (local.py `_run_bash`: Popen cwd=self.cwd); in a container it is
 * the container's start folder (docker.py: `docker exec` without `-w`), as for a local background start
 * (process_registry.py `spawn_local`: Popen cwd=workdir, relative to the start folder).
 * Undefined (the tracked cwd) without a workdir, and for a background start outside the local backend, which
 * ignores it (process_registry.py `spawn_via_env` runs its wrapper with `env.execute(bg_command)`, no cwd).
 */
function resolveWorkdir(
  env: Environment,
  workdir: string | undefined,
  envKind: string,
  background: boolean,
): string | undefined {
  const local = envKind === "local" || envKind === "host";
  if (!workdir || workdir.trim() === "" || (background && !local)) return undefined;
  if (posix.isAbsolute(workdir)) return workdir;
  return posix.resolve((local && !background ? env.cwd : undefined) ?? env.workdir, workdir);
}

/** The command the call will run, for the approval gate (with its workdir resolved). */
export async function terminalEffects(args: TerminalArgs, ctx: ToolContext): Promise<ToolEffect[]> {
  // Refused by the handler before anything runs (as the original refuses before its approval check).
  if (typeof args.command !== "string" || refusedForeground({ ...args, command: args.command })) return [];
  const env = await ctx.getEnv();
  // Without a workdir the command runs where the terminal's last command ended (its cd carries over).
  const cwd = resolveWorkdir(env, args.workdir, ctx.envKind, args.background ?? false) ?? env.cwd;
  return [{ kind: "run", command: args.command, workdir: env.workdir, cwd }];
}

function failed(error: string): ToolResult {
  return { content: { output: "", exit_code: -1, error, status: "error" } };
}

/** As the original: a pty would keep this command from ever seeing the EOF it waits for on stdin. */
function needsPipedStdin(command: string): boolean {
  const normalized = command.toLowerCase().split(/\s+/).filter(Boolean).join(" ");
  return normalized.startsWith("gh auth login") && normalized.includes("--with-token");
}

const PTY_DISABLED_NOTE =
  "PTY disabled for this command because it expects piped stdin/EOF (for example gh auth login --with-token). " +
  "For local background processes, call process(action='close') after writing so it receives EOF.";

/**
 * The background processes each environment (task) started on a pseudo-terminal. Every sandbox's ptys come from
 * the kernel's one pool (kernel.pty.max, 4096 by default, 1024 of them kept for the host's devpts), so a task gets
 * at most MAX_PTY_PROCESSES running on one at a time: past them a process runs without one, as the original's
 * does when it cannot get a pty.
 */
const ptyProcesses = new WeakMap<Environment, Set<string>>();

/** Whether the task may start one more process on a pty: fewer than MAX_PTY_PROCESSES of its own still run. */
async function ptyAvailable(env: Environment): Promise<boolean> {
  const ids = ptyProcesses.get(env);
  if (!ids || ids.size < MAX_PTY_PROCESSES) return true;
  for (const id of [...ids]) {
    const s = await statusOf(env, id).catch(() => undefined);
    if (!s?.running) ids.delete(id);
  }
  return ids.size < MAX_PTY_PROCESSES;
}

function notePty(env: Environment, id: string): void {
  let ids = ptyProcesses.get(env);
  if (!ids) ptyProcesses.set(env, (ids = new Set()));
  ids.add(id);
}

/**
 * A background start with the original's result: `{output, session_id, pid, exit_code, error}`, then
 * `pty_note`, `watch_patterns_ignored`, and the flag that is kept (watch_patterns give way to notify_on_complete).
 * The process runs on a pty when asked and the environment has one to give (and the task is within its share).
 */
async function startBackground(
  args: TerminalArgs & { command: string },
  env: Environment,
  cwd: string | undefined,
  notices: ProcessNotices | undefined,
): Promise<ToolResult> {
  const ptyDisabled = (args.pty ?? false) && needsPipedStdin(args.command);
  const pty = (args.pty ?? false) && !ptyDisabled && (await ptyAvailable(env));
  let started: { id: string; pid?: number };
  try {
    // From the terminal's carried state (its cwd, unless a workdir this backend honours; its exports), as the original's.
    started = await env.startBackground(args.command, { cwd: cwd ?? env.cwd, carry: true, pty });
    if (pty) notePty(env, started.id);
  } catch (err) {
    return {
      content: {
        output: "",
        exit_code: -1,
        error: `Failed to start background process: ${err instanceof Error ? err.message : String(err)}`,
      },
    };
  }
  const result: Record<string, unknown> = {
    output: "Background process started",
    session_id: started.id,
    pid: started.pid ?? null,
    exit_code: 0,
    error: null,
  };
  if (ptyDisabled) result.pty_note = PTY_DISABLED_NOTE;
  const notify = args.notify_on_complete ?? false;
  const patterns = args.watch_patterns?.length ? args.watch_patterns : undefined;
  if (notify && patterns) {
    result.watch_patterns_ignored =
      "watch_patterns ignored because notify_on_complete=True; these two flags produce duplicate notifications when combined";
  }
  if (notify) result.notify_on_complete = true;
  else if (patterns) result.watch_patterns = patterns;
  notices?.watch(started.id, args.command, { notifyOnComplete: notify, watchPatterns: notify ? undefined : patterns });
  return { content: result };
}

export async function handleTerminal(args: TerminalArgs, ctx: ToolContext): Promise<ToolResult> {
  const { command, workdir } = args;
  // As the original (its handler takes whatever the call holds): no command is an error result, "" runs.
  if (typeof command !== "string") {
    return {
      content: {
        output: "",
        exit_code: -1,
        error: "Invalid command: expected string, got NoneType",
        status: "error",
      },
    };
  }
  const background = args.background ?? false;
  const timeoutS = args.timeout ?? DEFAULT_TERMINAL_TIMEOUT_S;
  const refused = refusedForeground({ ...args, command });
  if (refused) return refused;
  const blocked = workdir ? workdirError(workdir) : undefined;
  if (blocked) return { content: { output: "", exit_code: -1, error: blocked, status: "blocked" } };
  const env = await ctx.getEnv();
  const cwd = resolveWorkdir(env, workdir, ctx.envKind, background);

  if (background) return startBackground({ ...args, command }, env, cwd, ctx.notices);

  // Stderr joined to stdout in the order it was written, as the original's one pipe (the shell joins them around
  // the command, which it evaluates as written: bash's syntax errors echo the command's own line).
  // Carried (as the original's one shell per task): it starts where the last command ended, with the variables
  // earlier ones exported, and its own cd and exports carry to the next.
  const res = await env.exec(STDERR_TO_STDOUT + command, {
    cwd,
    carry: true,
    timeoutMs: timeoutS * 1000,
    signal: ctx.signal,
    maxOutputChars: DEFAULT_OUTPUT_CAP,
  });
  // As the original: the output as the command wrote it, the timeout note appended ("\n[Command timed out
  // after Ns]", without the newline when there was no output), cut to 40 % head and 60 % tail past the cap,
  // escape sequences removed, white space stripped at both ends.
  const kept = keptOutput(res.stdout, res.truncated, DEFAULT_OUTPUT_CAP);
  let suffix = res.stderr ? (res.stdout && !res.stdout.endsWith("\n") ? "\n" : "") + res.stderr : "";
  if (res.timedOut) {
    const note = `[Command timed out after ${timeoutS}s]`;
    suffix += kept.total > 0 || suffix ? `\n${note}` : note;
  }
  const output = pyStrip(stripAnsi(hermesCut(kept, suffix, DEFAULT_OUTPUT_CAP)));
  const result: Record<string, unknown> = { output, exit_code: res.exitCode, error: null };
  const meaning = exitCodeMeaning(command, res.exitCode);
  if (meaning) result.exit_code_meaning = meaning;
  return { content: result };
}

registry.register({
  name: "terminal",
  toolset: "terminal",
  emoji: "💻",
  schema: { name: "terminal", description: TERMINAL_DESCRIPTION },
  args: terminalArgs,
  handler: handleTerminal,
  effects: terminalEffects,
  needsEnvironment: true,
});

// ---------------------------------------------------------------- process

const PROCESS_ACTIONS = ["list", "poll", "log", "wait", "kill", "write", "submit", "close"] as const;

const processArgs = lazy(() =>
  z.object({
    // Required and an enum in the schema; anything else reaches the handler, which answers as the original.
    action: requiredInSchema(
      z
        .string()
        .optional()
        .meta({ enum: [...PROCESS_ACTIONS] })
        .describe("Action to perform on background processes"),
    ),
    // Some models send the id as a number; the original takes its str().
    session_id: z
      .preprocess((v) => (typeof v === "number" && Number.isFinite(v) ? String(v) : v), z.string().optional())
      .describe("Process session ID (from terminal background output). Required for all actions except 'list'."),
    data: z.string().optional().describe("Text to send to process stdin (for 'write' and 'submit' actions)"),
    timeout: withDefault(
      integerArg({ min: 1, max: MAX_TERMINAL_TIMEOUT_S, clamp: "both" })
        .optional()
        .describe(
          `Max seconds to block for 'wait' action (max ${MAX_TERMINAL_TIMEOUT_S}). Returns partial output on timeout.`,
        ),
      DEFAULT_WAIT_S,
    ),
    offset: integerArg({ min: 0, clamp: "both" })
      .optional()
      .describe(`Line offset for 'log' action, 0-based (default: last ${DEFAULT_LOG_LINES} lines)`),
    limit: withDefault(
      integerArg({ min: 1, clamp: "both" }).optional().describe("Max lines to return for 'log' action"),
      DEFAULT_LOG_LINES,
    ),
  }),
);
type ProcessArgs = z.infer<ReturnType<typeof processArgs>>;

/**
 * What each background process's stdin was sent so far, per environment and session. A shell reading its stdin
 * runs what several writes spell together (`rm -r`, `f /tmp/vic`, `tim` is `rm -rf /tmp/victim`): the gate judges
 * each write with everything sent before it.
 */
const sentToStdin = new WeakMap<Environment, Map<string, string>>();

function stdinSoFar(env: Environment, id: string | undefined): string {
  return id === undefined ? "" : (sentToStdin.get(env)?.get(id) ?? "");
}

function recordStdin(env: Environment, id: string, data: string): void {
  let sessions = sentToStdin.get(env);
  if (!sessions) sentToStdin.set(env, (sessions = new Map()));
  sessions.set(id, (sessions.get(id) ?? "") + data);
}

/** The text a write or submit sends (submit adds the Enter). */
const sentBy = (a: ProcessArgs) => (a.action === "submit" ? `${a.data ?? ""}\n` : (a.data ?? ""));

/** What a process call does for the gate: data sent to a stdin may be a command for a shell reading it. */
export async function processEffects(args: ProcessArgs, ctx: ToolContext): Promise<ToolEffect[]> {
  if ((args.action !== "write" && args.action !== "submit") || !args.data) return [];
  const env = await ctx.getEnv();
  const before = stdinSoFar(env, args.session_id);
  return [{ kind: "run", command: before ? `${before}${sentBy(args)}` : args.data, workdir: env.workdir }];
}

type ProcessAnswer = Record<string, unknown>;

const notFound = (id: string): ProcessAnswer => ({ status: "not_found", error: `No process with ID ${id}` });
const ago = (at: number) => Math.floor((Date.now() - at) / 1000);
const lastChars = (text: string, n: number) => stripAnsi(text.slice(-n));
/** The original's exit code: -15 (its SIGTERM) for a process ended by kill. */
const exitCodeOf = (s: BackgroundStatus) => (s.killed ? -15 : s.exitCode);

/** The status, or undefined for a session this task never started. Other failures propagate. */
async function statusOf(env: Environment, id: string): Promise<BackgroundStatus | undefined> {
  try {
    return await env.pollBackground(id);
  } catch (err) {
    if (err instanceof UnknownBackgroundProcessError) return undefined;
    throw err;
  }
}

/** The original's poll: `{session_id, command, status, pid, uptime_seconds, output_preview, [exit_code]}`. */
function pollAnswer(s: BackgroundStatus): ProcessAnswer {
  const out: ProcessAnswer = {
    session_id: s.id,
    command: s.started?.command ?? "",
    status: s.running ? "running" : "exited",
    pid: s.started?.pid ?? null,
    uptime_seconds: s.started ? ago(s.started.at) : 0,
    output_preview: lastChars(s.output, 1000),
  };
  if (!s.running) out.exit_code = exitCodeOf(s);
  return out;
}

/** The original's list entry (its output_preview keeps escape sequences). */
function listEntry(s: BackgroundStatus, workdir: string): ProcessAnswer {
  const out: ProcessAnswer = {
    session_id: s.id,
    command: (s.started?.command ?? "").slice(0, 200),
    cwd: s.started?.cwd ?? workdir,
    pid: s.started?.pid ?? null,
    started_at: pythonLocalIsoformat(new Date(s.started?.at ?? Date.now())).slice(0, 19),
    uptime_seconds: s.started ? ago(s.started.at) : 0,
    status: s.running ? "running" : "exited",
    output_preview: s.output.slice(-200),
  };
  if (!s.running) out.exit_code = exitCodeOf(s);
  return out;
}

/** The original's log: the last `limit` lines without an offset (or offset 0), else lines offset.. (0-based). */
function logAnswer(s: BackgroundStatus, offset: number, limit: number): ProcessAnswer {
  const lines = splitLines(stripAnsi(s.output));
  const selected = offset === 0 ? lines.slice(-limit) : lines.slice(offset, offset + limit);
  return {
    session_id: s.id,
    status: s.running ? "running" : "exited",
    output: selected.join("\n"),
    total_lines: lines.length,
    showing: `${selected.length} lines`,
  };
}

async function waitAnswer(env: Environment, id: string, waitS: number, signal?: AbortSignal): Promise<ProcessAnswer> {
  const deadline = Date.now() + waitS * 1000;
  let s = await statusOf(env, id);
  if (!s) return notFound(id);
  let delay = 100;
  while (s.running && Date.now() < deadline && !signal?.aborted) {
    await pause(Math.min(delay, Math.max(0, deadline - Date.now())), signal);
    delay = Math.min(delay * 2, 1000);
    s = (await statusOf(env, id)) ?? s;
  }
  if (!s.running) return { status: "exited", exit_code: exitCodeOf(s), output: lastChars(s.output, 2000) };
  return {
    status: "timeout",
    output: lastChars(s.output, 1000),
    timeout_note: `Waited ${waitS}s, process still running`,
  };
}

async function stdinAnswer(env: Environment, a: ProcessArgs, id: string): Promise<ProcessAnswer> {
  const s = await statusOf(env, id);
  if (!s) return notFound(id);
  if (!s.running) return { status: "already_exited", error: "Process has already finished" };
  try {
    if (a.action === "close") {
      if (!env.closeBackgroundStdin) throw new Error("Process stdin not available (non-local backend or stdin closed)");
      await env.closeBackgroundStdin(id);
      return { status: "ok", message: s.started?.pty ? "EOF sent" : "stdin closed" };
    }
    const data = sentBy(a);
    if (!env.writeBackground) throw new Error("Process stdin not available (non-local backend or stdin closed)");
    await env.writeBackground(id, data);
    recordStdin(env, id, data);
    return { status: "ok", bytes_written: [...data].length };
  } catch (err) {
    return { status: "error", error: err instanceof Error ? err.message : String(err) };
  }
}

/** The fields of /proc/PID/stat after the command name: `$1` state, `$2` ppid, `$4` session, `$5` tty_nr (sh). */
const STAT_FIELDS = 'read -r s < "$f" 2>/dev/null || continue; p=${s%% *}; set -- ${s##*) }';

/**
 * What runs on the pty of a background process: `script` (util-linux) starts the command in a session of its own,
 * out of reach of the kill of the process's group. Shell text that prints `sessions: <ids>` (the sessions `script`
 * children of `pid` lead) and `holders: <pids>` (the processes with those terminals open, which left the session).
 */
function ptySessionsScript(pid: number): string {
  return [
    `w=${pid}; sc=; ld=; h=`,
    `for f in /proc/[0-9]*/stat; do ${STAT_FIELDS}; c=\${s#*(}; [ "$2" = "$w" ] && [ "\${c%)*}" = script ] && sc="$sc $p"; done`,
    `for f in /proc/[0-9]*/stat; do ${STAT_FIELDS}; for x in $sc; do [ "$2" = "$x" ] && [ "$4" = "$p" ] && ld="$ld $p"; done; done`,
    // A slave pty is 136:N; tty_nr packs the minor's low 8 bits at 0 and the rest from bit 20.
    `for l in $ld; do f=/proc/$l/stat; ${STAT_FIELDS}; [ $((($5 >> 8) & 4095)) -eq 136 ] || continue`,
    `  t=/dev/pts/$((($5 & 255) | (($5 >> 12) & 1048320)))`,
    `  for fd in /proc/[0-9]*/fd/*; do [ "$fd" -ef "$t" ] && { x=\${fd#/proc/}; h="$h \${x%%/*}"; }; done`,
    `done`,
    `echo "sessions:$ld"; echo "holders:$h"`,
  ].join("\n");
}

/** Shell text that ends every process of `sessions` and `holders`: SIGTERM, SIGKILL after a second, then waits. */
function endPtySessionsScript(sessions: string, holders: string): string {
  return [
    `ld='${sessions}'; h='${holders}'`,
    `left() { for f in /proc/[0-9]*/stat; do ${STAT_FIELDS}; case $1 in Z*|X*) continue;; esac; ` +
      `for x in $ld; do [ "$4" = "$x" ] && echo $p; done; for x in $h; do [ "$p" = "$x" ] && echo $p; done; done; }`,
    `v=$(left); [ -z "$v" ] || kill -TERM $v 2>/dev/null`,
    `i=0; while [ $i -lt 10 ] && [ -n "$(left)" ]; do sleep 0.1 2>/dev/null || sleep 1; i=$((i+1)); done`,
    `v=$(left); [ -z "$v" ] || kill -KILL $v 2>/dev/null`,
    `i=0; while [ $i -lt 100 ] && [ -n "$(left)" ]; do sleep 0.1 2>/dev/null || sleep 1; i=$((i+1)); done`,
    `true`,
  ].join("\n");
}

async function killAnswer(env: Environment, id: string): Promise<ProcessAnswer> {
  const s = await statusOf(env, id);
  if (!s) return notFound(id);
  if (!s.running) return { status: "already_exited", exit_code: exitCodeOf(s) };
  // On a pty: its session is looked up while `script` still runs, the process's group is killed first (so the
  // exit code is the kill's), then the session and whatever holds its terminal (they ignored the hangup).
  const pid = s.started?.pty ? s.started.pid : undefined;
  const found = pid
    ? await env.exec(ptySessionsScript(pid), { cwd: "/", timeoutMs: 30_000 }).catch(() => undefined)
    : undefined;
  await env.killBackground(id);
  const sessions = /^sessions:([\d ]*)$/m.exec(found?.stdout ?? "")?.[1]?.trim() ?? "";
  const holders = /^holders:([\d ]*)$/m.exec(found?.stdout ?? "")?.[1]?.trim() ?? "";
  if (sessions || holders)
    await env.exec(endPtySessionsScript(sessions, holders), { cwd: "/", timeoutMs: 30_000 }).catch(() => undefined);
  ptyProcesses.get(env)?.delete(id);
  return { status: "killed", session_id: id };
}

/**
 * The process tool with the original's results per action (its process registry's dicts): `not_found` and
 * `already_exited` statuses instead of errors, outputs cut to its lengths with escape sequences removed.
 * A completion seen here (poll, log or wait of an ended process) is not told again as a notice.
 */
export async function handleProcess(a: ProcessArgs, ctx: ToolContext): Promise<ToolResult> {
  if (!(PROCESS_ACTIONS as readonly string[]).includes(a.action ?? "")) {
    return {
      content: {
        error: `Unknown process action: ${a.action ?? ""}. Use: list, poll, log, wait, kill, write, submit, close`,
      },
    };
  }
  const env = await ctx.getEnv();
  if (a.action === "list") {
    const all = await env.listBackground();
    return { content: { processes: all.map((s) => listEntry(s, env.workdir)) } };
  }
  const id = a.session_id ?? "";
  if (!id) return { content: { error: `session_id is required for ${a.action}` } };
  let answer: ProcessAnswer;
  if (a.action === "poll" || a.action === "log") {
    const s = await statusOf(env, id);
    answer = !s
      ? notFound(id)
      : a.action === "poll"
        ? pollAnswer(s)
        : logAnswer(s, a.offset ?? 0, a.limit ?? DEFAULT_LOG_LINES);
  } else if (a.action === "wait") answer = await waitAnswer(env, id, a.timeout ?? DEFAULT_WAIT_S, ctx.signal);
  else if (a.action === "kill") answer = await killAnswer(env, id);
  else answer = await stdinAnswer(env, a, id);
  if (answer.status === "exited") ctx.notices?.markConsumed(id);
  return { content: answer };
}

registry.register({
  name: "process",
  toolset: "terminal",
  emoji: "⚙️",
  schema: {
    name: "process",
    description:
      "Manage background processes started with terminal(background=true). Actions: 'list' (show all), " +
      "'poll' (check status + recent output), 'log' (full output with pagination), 'wait' (block until done or " +
      "timeout), 'kill' (terminate, with everything it started), 'write' (send raw stdin data without newline), " +
      "'submit' (send data + Enter, for answering prompts), 'close' (close stdin/send EOF).",
  },
  args: processArgs,
  handler: handleProcess,
  effects: processEffects,
  needsEnvironment: true,
});
