/**
 * The `terminal` and `process` tools (toolset "terminal"): shell commands in the task's environment,
 * in the foreground with a timeout, or in the background managed through `process`.
 */
import { posix } from "node:path";
import { z } from "zod";
import { DEFAULT_OUTPUT_CAP, type BackgroundStatus, type Environment } from "./environments/base.js";
import { noEffects, registry, toolFailure, type ToolContext, type ToolEffect, type ToolResult } from "./registry.js";
import { booleanArg, integerArg, nonEmptyString } from "./tool_args.js";
import { sleep } from "../src/core/abort.js";

/** Waits `ms`, or less when the task is aborted (the caller then reports what it has). */
const pause = (ms: number, signal?: AbortSignal) => sleep(ms, signal).catch(() => {});

export const DEFAULT_TERMINAL_TIMEOUT_S = 60;
export const MAX_TERMINAL_TIMEOUT_S = 600;
const DEFAULT_WAIT_S = 60;
const DEFAULT_LOG_LINES = 200;
const POLL_PREVIEW_CHARS = 4000;

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

export const terminalArgs = z.object({
  command: nonEmptyString({ blankOk: false }).describe("The shell command to run (bash -c)."),
  timeout: integerArg({ min: 1, max: MAX_TERMINAL_TIMEOUT_S, clamp: "both" })
    .optional()
    .describe(`Seconds before the command is killed (default ${DEFAULT_TERMINAL_TIMEOUT_S}, max ${MAX_TERMINAL_TIMEOUT_S}).`),
  workdir: z
    .string()
    .optional()
    .describe("Directory to run in (absolute, or relative to the task's working directory). Default: the working directory."),
  background: booleanArg()
    .optional()
    .describe("Run in the background and return a session_id at once; use the process tool to poll, wait or kill it."),
});
type TerminalArgs = z.infer<typeof terminalArgs>;

/** Resolves a relative workdir against the environment's workdir (POSIX paths in every backend). */
function resolveWorkdir(env: Environment, workdir: string | undefined): string | undefined {
  if (!workdir || workdir.trim() === "") return undefined;
  return posix.isAbsolute(workdir) ? workdir : posix.resolve(env.workdir, workdir);
}

/** The command the call will run, for the approval gate (with its workdir resolved). */
export async function terminalEffects(args: TerminalArgs, ctx: ToolContext): Promise<ToolEffect[]> {
  const env = await ctx.getEnv();
  return [{ kind: "run", command: args.command, workdir: env.workdir, cwd: resolveWorkdir(env, args.workdir) }];
}

function failed(error: string): ToolResult {
  return { content: { output: "", exit_code: -1, error, status: "error" } };
}

export async function handleTerminal(args: TerminalArgs, ctx: ToolContext): Promise<ToolResult> {
  const { command, workdir } = args;
  const background = args.background ?? false;
  const timeoutS = args.timeout ?? DEFAULT_TERMINAL_TIMEOUT_S;
  const env = await ctx.getEnv();
  const cwd = resolveWorkdir(env, workdir);

  if (background) {
    try {
      const { id } = await env.startBackground(command, { cwd });
      return { content: { output: "Background process started", session_id: id, exit_code: 0, error: null } };
    } catch (err) {
      return failed(`Could not start background process: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  // `exec 2>&1` merges stderr into stdout in the order it was written, as a terminal shows it.
  const res = await env.exec(`exec 2>&1; ${command}`, {
    cwd,
    timeoutMs: timeoutS * 1000,
    signal: ctx.signal,
    maxOutputChars: DEFAULT_OUTPUT_CAP,
  });
  let output = res.stdout + (res.stderr ? (res.stdout && !res.stdout.endsWith("\n") ? "\n" : "") + res.stderr : "");
  output = output.trimEnd();
  const result: Record<string, unknown> = { output, exit_code: res.exitCode, error: null };
  if (res.timedOut) {
    result.output = `${output}${output ? "\n" : ""}[Command timed out after ${timeoutS}s]`;
    result.error = `Command timed out after ${timeoutS}s`;
    result.timed_out = true;
  }
  if (res.truncated) result.truncated = true;
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

const processArgs = z.object({
  action: z.enum(["list", "poll", "log", "wait", "kill"]).describe("What to do."),
  session_id: z.string().optional().describe("The session_id returned by terminal (all actions but list)."),
  timeout: integerArg({ min: 1, max: MAX_TERMINAL_TIMEOUT_S, clamp: "both" }).optional().describe(`wait: seconds to wait (default ${DEFAULT_WAIT_S}).`),
  offset: integerArg({ min: 0, clamp: "both" }).optional().describe("log: first line (0-based); default shows the last lines."),
  limit: integerArg({ min: 1, clamp: "both" }).optional().describe(`log: number of lines (default ${DEFAULT_LOG_LINES}).`),
});
type ProcessArgs = z.infer<typeof processArgs>;

function statusWord(s: BackgroundStatus): string {
  if (s.running) return "running";
  return s.exitCode === null ? "killed" : "exited";
}

function tailChars(text: string, n: number): string {
  return text.length <= n ? text : `...${text.slice(text.length - n)}`;
}

export async function handleProcess(a: ProcessArgs, ctx: ToolContext): Promise<ToolResult> {
  if (a.action !== "list" && !a.session_id) {
    return toolFailure(`Invalid arguments for process: 'session_id' is required for action '${a.action}'`);
  }
  const env = await ctx.getEnv();
  const id = a.session_id ?? "";
  const unknown = (err: unknown) =>
    toolFailure(`Unknown session_id '${id}' (${err instanceof Error ? err.message : String(err)}); use action=list to see the processes of this task`);

  switch (a.action) {
    case "list": {
      const all = await env.listBackground();
      return { content: {
        processes: all.map((s) => ({ session_id: s.id, status: statusWord(s), exit_code: s.exitCode })),
      } };
    }
    case "poll": {
      let s: BackgroundStatus;
      try {
        s = await env.pollBackground(id);
      } catch (err) {
        return unknown(err);
      }
      return { content: { session_id: id, status: statusWord(s), exit_code: s.exitCode, output: tailChars(s.output, POLL_PREVIEW_CHARS) } };
    }
    case "log": {
      let s: BackgroundStatus;
      try {
        s = await env.pollBackground(id);
      } catch (err) {
        return unknown(err);
      }
      const lines = s.output.replace(/\n$/, "").split("\n");
      const limit = a.limit ?? DEFAULT_LOG_LINES;
      // Without an offset, the last `limit` lines (like Hermes); with one, lines from offset (0-based).
      const start = a.offset !== undefined ? a.offset : Math.max(0, lines.length - limit);
      return { content: {
        session_id: id,
        status: statusWord(s),
        exit_code: s.exitCode,
        total_lines: lines.length,
        offset: start,
        output: lines.slice(start, start + limit).join("\n"),
      } };
    }
    case "wait": {
      const waitS = a.timeout ?? DEFAULT_WAIT_S;
      const deadline = Date.now() + waitS * 1000;
      let s: BackgroundStatus;
      try {
        s = await env.pollBackground(id);
        let delay = 100;
        while (s.running && Date.now() < deadline && !ctx.signal?.aborted) {
          await pause(Math.min(delay, Math.max(0, deadline - Date.now())), ctx.signal);
          delay = Math.min(delay * 2, 1000);
          s = await env.pollBackground(id);
        }
      } catch (err) {
        return unknown(err);
      }
      const result: Record<string, unknown> = {
        session_id: id,
        status: statusWord(s),
        exit_code: s.exitCode,
        output: tailChars(s.output, DEFAULT_OUTPUT_CAP),
      };
      if (s.running) {
        result.timed_out = true;
        result.note = `Still running after waiting ${waitS}s; it keeps running (use wait again, or kill).`;
      }
      return { content: result };
    }
    case "kill": {
      try {
        await env.killBackground(id);
      } catch (err) {
        return unknown(err);
      }
      return { content: { session_id: id, status: "killed", success: true } };
    }
  }
}

registry.register({
  name: "process",
  toolset: "terminal",
  emoji: "⚙️",
  schema: {
    name: "process",
    description:
      "Manage background processes started with terminal(background=true) in this task: list them, poll one " +
      "(status and recent output), read its log, wait for it to finish (up to timeout seconds), or kill it " +
      "(with everything it started).",
  },
  args: processArgs,
  handler: handleProcess,
  effects: noEffects,
  needsEnvironment: true,
});
