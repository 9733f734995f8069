/**
 * The `terminal` and `process` tools (toolset "terminal"): shell commands in the task's environment,
 * in the foreground with a timeout, or in the background managed through `process`.
 */
import { posix } from "node:path";
import { z } from "zod";
import { DEFAULT_OUTPUT_CAP, shellQuote, type BackgroundStatus, type Environment } from "./environments/base.js";
import { registry, toolError, type ToolContext } from "./registry.js";
import { boolArg, intArg, parseToolArgs } from "./tool_args.js";

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

const terminalArgs = z.object({
  command: z.string().refine((s) => s.trim().length > 0, "must not be empty"),
  timeout: intArg().optional(),
  workdir: z.string().optional(),
  background: boolArg().optional(),
});

/** Resolves a relative workdir against the environment's workdir (POSIX paths in every backend). */
function resolveWorkdir(env: Environment, workdir: string | undefined): string | undefined {
  if (!workdir || workdir.trim() === "") return undefined;
  return posix.isAbsolute(workdir) ? workdir : posix.resolve(env.workdir, workdir);
}

/**
 * The command as the gate must judge it: run from a `workdir` outside the task's working
 * directory, it is the same as `cd <workdir> && command` (so `rm -rf lib` in /usr is
 * `rm -rf /usr/lib`). A workdir inside the working directory changes nothing for detection.
 */
export function commandAsRun(command: string, defaultCwd: string, cwd: string | undefined): string {
  if (!cwd) return command;
  const rel = posix.relative(posix.normalize(defaultCwd), posix.normalize(cwd));
  if (rel === "" || (rel !== ".." && !rel.startsWith("../") && !posix.isAbsolute(rel))) return command;
  return `cd ${shellQuote(cwd)} && ${command}`;
}

function blocked(error: string, status = "blocked"): string {
  return JSON.stringify({ output: "", exit_code: -1, error, status });
}

export async function handleTerminal(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const parsed = parseToolArgs("terminal", terminalArgs, args);
  if (!parsed.ok) return parsed.error;
  const { command, workdir } = parsed.value;
  const background = parsed.value.background ?? false;
  const timeoutS = Math.min(Math.max(parsed.value.timeout ?? DEFAULT_TERMINAL_TIMEOUT_S, 1), MAX_TERMINAL_TIMEOUT_S);

  let env: Environment;
  try {
    env = await ctx.getEnv();
  } catch (err) {
    return blocked(`Environment unavailable: ${err instanceof Error ? err.message : String(err)}`, "error");
  }
  const cwd = resolveWorkdir(env, workdir);

  if (ctx.approve) {
    let verdict: Awaited<ReturnType<NonNullable<ToolContext["approve"]>>>;
    try {
      verdict = await ctx.approve(commandAsRun(command, env.workdir, cwd), { cwd: cwd ?? env.workdir, backend: ctx.envKind });
    } catch (err) {
      return blocked(`Command blocked: approval failed (${err instanceof Error ? err.message : String(err)})`);
    }
    if (!verdict.allowed) return blocked(verdict.message ?? "Command blocked by the approval policy");
  }

  if (background) {
    try {
      const { id } = await env.startBackground(command, { cwd });
      return JSON.stringify({ output: "Background process started", session_id: id, exit_code: 0, error: null });
    } catch (err) {
      return blocked(`Could not start background process: ${err instanceof Error ? err.message : String(err)}`, "error");
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
  return JSON.stringify(result);
}

registry.register({
  name: "terminal",
  toolset: "terminal",
  emoji: "💻",
  schema: {
    name: "terminal",
    description: TERMINAL_DESCRIPTION,
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The shell command to run (bash -c)." },
        timeout: {
          type: "integer",
          minimum: 1,
          maximum: MAX_TERMINAL_TIMEOUT_S,
          description: `Seconds before the command is killed (default ${DEFAULT_TERMINAL_TIMEOUT_S}, max ${MAX_TERMINAL_TIMEOUT_S}).`,
        },
        workdir: {
          type: "string",
          description: "Directory to run in (absolute, or relative to the task's working directory). Default: the working directory.",
        },
        background: {
          type: "boolean",
          description: "Run in the background and return a session_id at once; use the process tool to poll, wait or kill it.",
        },
      },
      required: ["command"],
    },
  },
  handler: handleTerminal,
});

// ---------------------------------------------------------------- process

const processArgs = z.object({
  action: z.enum(["list", "poll", "log", "wait", "kill"]),
  session_id: z.string().optional(),
  timeout: intArg().optional(),
  offset: intArg().optional(),
  limit: intArg().optional(),
});

function statusWord(s: BackgroundStatus): string {
  if (s.running) return "running";
  return s.exitCode === null ? "killed" : "exited";
}

function tailChars(text: string, n: number): string {
  return text.length <= n ? text : `...${text.slice(text.length - n)}`;
}

/** Resolves after `ms`, or at once on abort; never leaves a listener behind. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

export async function handleProcess(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const parsed = parseToolArgs("process", processArgs, args);
  if (!parsed.ok) return parsed.error;
  const a = parsed.value;
  if (a.action !== "list" && !a.session_id) {
    return toolError(`Invalid arguments for process: 'session_id' is required for action '${a.action}'`);
  }
  const env = await ctx.getEnv();
  const id = a.session_id ?? "";
  const unknown = (err: unknown) =>
    toolError(`Unknown session_id '${id}' (${err instanceof Error ? err.message : String(err)}); use action=list to see the processes of this task`);

  switch (a.action) {
    case "list": {
      const all = await env.listBackground();
      return JSON.stringify({
        processes: all.map((s) => ({ session_id: s.id, status: statusWord(s), exit_code: s.exitCode })),
      });
    }
    case "poll": {
      let s: BackgroundStatus;
      try {
        s = await env.pollBackground(id);
      } catch (err) {
        return unknown(err);
      }
      return JSON.stringify({ session_id: id, status: statusWord(s), exit_code: s.exitCode, output: tailChars(s.output, POLL_PREVIEW_CHARS) });
    }
    case "log": {
      let s: BackgroundStatus;
      try {
        s = await env.pollBackground(id);
      } catch (err) {
        return unknown(err);
      }
      const lines = s.output.replace(/\n$/, "").split("\n");
      const limit = Math.max(1, a.limit ?? DEFAULT_LOG_LINES);
      // Without an offset, the last `limit` lines (like Hermes); with one, lines from offset (0-based).
      const start = a.offset !== undefined ? Math.max(0, a.offset) : Math.max(0, lines.length - limit);
      return JSON.stringify({
        session_id: id,
        status: statusWord(s),
        exit_code: s.exitCode,
        total_lines: lines.length,
        offset: start,
        output: lines.slice(start, start + limit).join("\n"),
      });
    }
    case "wait": {
      const waitS = Math.min(Math.max(a.timeout ?? DEFAULT_WAIT_S, 1), MAX_TERMINAL_TIMEOUT_S);
      const deadline = Date.now() + waitS * 1000;
      let s: BackgroundStatus;
      try {
        s = await env.pollBackground(id);
        let delay = 100;
        while (s.running && Date.now() < deadline && !ctx.signal?.aborted) {
          await sleep(Math.min(delay, Math.max(0, deadline - Date.now())), ctx.signal);
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
      return JSON.stringify(result);
    }
    case "kill": {
      try {
        await env.killBackground(id);
      } catch (err) {
        return unknown(err);
      }
      return JSON.stringify({ session_id: id, status: "killed", success: true });
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
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["list", "poll", "log", "wait", "kill"], description: "What to do." },
        session_id: { type: "string", description: "The session_id returned by terminal (all actions but list)." },
        timeout: { type: "integer", minimum: 1, maximum: MAX_TERMINAL_TIMEOUT_S, description: `wait: seconds to wait (default ${DEFAULT_WAIT_S}).` },
        offset: { type: "integer", minimum: 0, description: "log: first line (0-based); default shows the last lines." },
        limit: { type: "integer", minimum: 1, description: `log: number of lines (default ${DEFAULT_LOG_LINES}).` },
      },
      required: ["action"],
    },
  },
  handler: handleProcess,
});
