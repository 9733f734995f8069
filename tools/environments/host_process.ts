/**
 * Runs one host process in its own process group, for the backends that execute on this machine
 * (local, Singularity): bounded output, a timeout or abort kills the whole group (SIGTERM, then SIGKILL),
 * and the result never waits forever on a child that keeps the pipes open.
 */
import { execa } from "execa";
import { OutputCollector } from "./docker_output.js";

export const TIMEOUT_EXIT_CODE = 124;
export const INTERRUPT_EXIT_CODE = 130;
const KILL_GRACE_MS = 1000;
/** How long a live process group may hold the pipes after the command itself exited. */
const LINGER_MS = 300;
/** Upper bound on waiting for the pipes to drain once the whole process group is gone. */
const STREAM_DRAIN_MAX_MS = 10_000;

export interface HostProcessOptions {
  cwd?: string;
  env: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  maxOutputChars: number;
  /** Told when the process group starts (running true) and when this call is done with it (false). */
  onGroup?: (pgid: number, running: boolean) => void;
}

export interface HostProcessResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
  spawnError?: Error;
}

export function killGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGPIPE: 13, SIGTERM: 15 };

export async function runInProcessGroup(file: string, args: string[], opts: HostProcessOptions): Promise<HostProcessResult> {
  const stdout = new OutputCollector(opts.maxOutputChars);
  const stderr = new OutputCollector(opts.maxOutputChars);
  const child = execa(file, args, {
    cwd: opts.cwd,
    env: opts.env,
    extendEnv: false,
    detached: true,
    reject: false,
    buffer: false,
    stripFinalNewline: false,
    ...(opts.stdin !== undefined ? { input: opts.stdin } : { stdin: "ignore" as const }),
  });
  // execa's own promise settles when streams end; the bookkeeping below does not depend on it.
  child.catch(() => undefined);
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (c: string) => stdout.push(c));
  child.stderr?.on("data", (c: string) => stderr.push(c));
  const pid = child.pid;
  if (pid === undefined) {
    const err = await new Promise<Error>((res) => child.once("error", res));
    return { exitCode: 127, stdout: "", stderr: `could not start ${file}: ${err.message}`, timedOut: false, truncated: false, spawnError: err };
  }
  opts.onGroup?.(pid, true);

  let timedOut = false;
  let aborted = false;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    killGroup(pid, "SIGTERM");
    killTimer ??= setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS);
  };
  const timeoutTimer =
    opts.timeoutMs !== undefined && opts.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          stop();
        }, opts.timeoutMs)
      : undefined;
  const onAbort = () => {
    aborted = true;
    stop();
  };
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener("abort", onAbort, { once: true });

  const streamsClosed = new Promise<void>((res) => child.once("close", () => res()));
  const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((res) =>
    child.once("exit", (c, s) => res({ code: c, signal: s })),
  );
  // Only a live process group can hold the pipes open (`server &`); otherwise the rest of the output is
  // still in flight (slow under load) and is waited for.
  const wait = timedOut || aborted ? KILL_GRACE_MS + 200 : killGroup(pid, 0) ? LINGER_MS : STREAM_DRAIN_MAX_MS;
  let lingerTimer: NodeJS.Timeout | undefined;
  const lingered = await Promise.race([
    streamsClosed.then(() => false),
    new Promise<boolean>((res) => {
      lingerTimer = setTimeout(() => res(true), wait);
    }),
  ]);
  clearTimeout(lingerTimer);
  if (lingered) {
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
  if (timeoutTimer) clearTimeout(timeoutTimer);
  opts.signal?.removeEventListener("abort", onAbort);
  if (timedOut || aborted) killGroup(pid, "SIGKILL");
  if (killTimer) clearTimeout(killTimer);
  opts.onGroup?.(pid, false);

  const out = stdout.render();
  const err = stderr.render();
  let exitCode = code ?? 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 1) : 0);
  if (timedOut) exitCode = TIMEOUT_EXIT_CODE;
  else if (aborted) exitCode = INTERRUPT_EXIT_CODE;
  return { exitCode, stdout: out.text, stderr: err.text, timedOut, truncated: out.truncated || err.truncated };
}
