/**
 * Runs one host process in its own process group, for the backends that execute on this machine
 * (local, Singularity): bounded output, a timeout or abort kills the whole group (SIGTERM, then SIGKILL),
 * and the result never waits forever on a child that keeps the pipes open.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import type { ExecResult } from "../base.js";
import { OutputCollector } from "./output_capture.js";
import { bashArgs, ShellSession, type ShellCommand } from "./shell_session.js";
import { SpawnHelper, type ExtraFd, type LaunchedProcess } from "./spawn_helper.js";

export { INTERRUPT_EXIT_CODE, TIMEOUT_EXIT_CODE } from "./command_stop.js";
import { CommandStop } from "./command_stop.js";
const KILL_GRACE_MS = 1000;

let bashName: string | undefined;

/**
 * The name the original's local backend runs bash by, which bash then calls itself in its messages
 * (`/usr/bin/bash: line 3: …`): tools/environments/local.py `_find_bash`, the first executable `bash` on PATH
 * (shutil.which), else /usr/bin/bash, /bin/bash, $SHELL, /bin/sh.
 */
export function originalBashName(): string {
  if (bashName === undefined) {
    const executable = (p: string) => {
      try {
        accessSync(p, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    };
    const onPath = (process.env.PATH ?? "").split(":").map((d) => join(d || ".", "bash"));
    bashName =
      onPath.find(executable) ??
      ["/usr/bin/bash", "/bin/bash"].find((p) => existsSync(p)) ??
      process.env.SHELL ??
      "/bin/sh";
  }
  return bashName;
}
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

const SIGNAL_NUMBERS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGPIPE: 13,
  SIGTERM: 15,
};

export async function runInProcessGroup(
  file: string,
  args: string[],
  opts: HostProcessOptions,
): Promise<HostProcessResult> {
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
    return {
      exitCode: 127,
      stdout: "",
      stderr: `could not start ${file}: ${err.message}`,
      timedOut: false,
      truncated: false,
      spawnError: err,
    };
  }
  opts.onGroup?.(pid, true);

  let killTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    killGroup(pid, "SIGTERM");
    killTimer ??= setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS);
  };
  const limits = new CommandStop(opts, stop);

  const streamsClosed = new Promise<void>((res) => child.once("close", () => res()));
  const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((res) =>
    child.once("exit", (c, s) => res({ code: c, signal: s })),
  );
  // Only a live process group can hold the pipes open (`server &`); otherwise the rest of the output is
  // still in flight (slow under load) and is waited for.
  const wait = limits.stopped ? KILL_GRACE_MS + 200 : killGroup(pid, 0) ? LINGER_MS : STREAM_DRAIN_MAX_MS;
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
  limits.dispose();
  if (limits.stopped) killGroup(pid, "SIGKILL");
  if (killTimer) clearTimeout(killTimer);
  opts.onGroup?.(pid, false);

  const out = stdout.render();
  const err = stderr.render();
  const exitCode = limits.exitCode(code ?? 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 1) : 0));
  const { timedOut } = limits;
  return { exitCode, stdout: out.text, stderr: err.text, timedOut, truncated: out.truncated || err.truncated };
}

const HOST_SHELL_BOOT_TIMEOUT_MS = 10_000;

/**
 * A persistent shell on this host (shell_session.ts protocol over a child's pipes): a command costs a fork
 * of a small shell instead of a fork of this (large) process. Each command still gets its own process group,
 * stdin from /dev/null, and a timeout or abort kills its group (SIGTERM, then SIGKILL after a grace).
 * The child is unref'd while idle, so an idle shell never keeps this process alive; it exits when its
 * stdin closes.
 */
/** What HostShell needs of the process behind the shell: a child of this process, or one the spawn helper started. */
interface ShellProcess {
  readonly pid: number | undefined;
  readonly stdin: (NodeJS.WritableStream & { destroy(): void }) | null;
  readonly stdout: (NodeJS.ReadableStream & { destroy(): void; setEncoding(e: BufferEncoding): unknown }) | null;
  readonly stderr: (NodeJS.ReadableStream & { destroy(): void; setEncoding(e: BufferEncoding): unknown }) | null;
  /** Handles that keep this thread alive while referenced. */
  readonly handles: unknown[];
  /** Calls `gone` once the process is gone ("close": its streams ended; "exit": it exited, streams may still be held). */
  watch(gone: (how: "close" | "exit") => void): void;
  /** The shell answered: an end of its output now means it is gone. */
  started?(): void;
  launched?: LaunchedProcess;
}

function childProcessShell(child: ChildProcess): ShellProcess {
  return {
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    handles: [child, child.stdin, child.stdout, child.stderr],
    watch: (gone) => {
      child.once("error", () => gone("close"));
      child.once("close", () => gone("close"));
      child.once("exit", () => gone("exit"));
    },
  };
}

function launchedShell(p: LaunchedProcess): ShellProcess {
  return {
    pid: p.pid,
    stdin: p.stdin,
    stdout: p.stdout,
    stderr: p.stderr,
    handles: [p.stdin, p.stdout, p.stderr],
    watch: (gone) => p.onClosed(() => gone("close")),
    started: () => p.started(),
    launched: p,
  };
}

/**
 * A persistent shell on this host (shell_session.ts protocol over a child's pipes): a command costs a fork
 * of a small shell instead of a fork of this (large) process. Each command still gets its own process group,
 * stdin from /dev/null, and a timeout or abort kills its group (SIGTERM, then SIGKILL after a grace).
 * The child is unref'd while idle, so an idle shell never keeps this process alive; it exits when its
 * stdin closes.
 */
export class HostShell {
  private constructor(
    private readonly proc: ShellProcess,
    private readonly session: ShellSession,
  ) {}

  /**
   * Starts `outerShell` (reads the protocol; default: `innerShell` when it is bash, else /bin/sh) in `cwd` with
   * exactly `env`; each command runs under `innerShell -c` unless the outer shell is bash (then in a subshell
   * with job control, see shell_session.ts). Resolves undefined when the shell cannot start or cannot host
   * commands (no job control or setsid, no /proc).
   *
   * `launch` starts the shell through a wrapper (`file args... outerShell`, e.g. a sandbox) from this thread's
   * spawn helper (spawn_helper.ts: no fork of this process), with `extra` descriptors; the wrapper then runs in
   * the helper's folder with its environment (PATH only), so it must set the shell's own; `kill` then replaces the
   * host's group kill (the pids a sandboxed shell reports are its own); `preamble` runs before the boot script
   * (sent with it).
   */
  static async start(o: {
    outerShell?: string;
    innerShell: string;
    cwd: string;
    env: Record<string, string>;
    launch?: { file: string; args: string[]; extra?: ExtraFd[]; enter?: string[] };
    kill?: (pids: number[], signal: "SIGTERM" | "SIGKILL") => void;
    /**
     * With it, commands do not report their pid (one write and one wake-up less per command): a timeout or abort
     * signals the shell's running command through this instead.
     */
    killCommand?: (shellPid: number, signal: "SIGTERM" | "SIGKILL") => void;
    preamble?: string;
    bootTimeoutMs?: number;
    /** Told why, when the shell cannot be started (the result is then undefined). */
    onFailure?: (reason: string) => void;
    /** The name a bash shell gives itself (`$0`, its messages' prefix); default: the outer shell's path. */
    argv0?: string;
  }): Promise<HostShell | undefined> {
    const outer =
      o.outerShell ??
      (/(^|\/)bash$/.test(o.innerShell) ? o.innerShell : existsSync("/bin/sh") ? "/bin/sh" : o.innerShell);
    const bash = /(^|\/)bash$/.test(outer);
    const argv0 = o.argv0 ?? outer;
    // bash is started as a `-c` reader (bashArgs): the requests then run from line 1, under the name `argv0`.
    const outerArgs = bash ? bashArgs(argv0) : [];
    let proc: ShellProcess;
    try {
      if (o.launch) {
        proc = launchedShell(
          await SpawnHelper.forThread().launch(
            o.launch.file,
            [...o.launch.args, outer, ...outerArgs],
            o.launch.extra,
            o.launch.enter,
          ),
        );
      } else {
        const child = spawn(outer, outerArgs, {
          cwd: o.cwd,
          env: o.env,
          detached: true,
          stdio: ["pipe", "pipe", "pipe"],
        });
        child.once("error", () => undefined);
        proc = childProcessShell(child);
      }
    } catch (err) {
      o.onFailure?.(`it could not be launched: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
    const hostKill = (pids: number[], signal: "SIGTERM" | "SIGKILL") => {
      for (const p of pids) if (!killGroup(p, signal)) killPid(p, signal);
    };
    const session = new ShellSession(
      {
        write: (text) => {
          proc.stdin?.write(text);
        },
        kill: o.kill ?? hostKill,
        ...(o.killCommand ? { killCommand: o.killCommand } : {}),
        destroy: () => {
          proc.stdin?.destroy();
          proc.stdout?.destroy();
          proc.stderr?.destroy();
          proc.launched?.destroy();
        },
      },
      {
        termGraceMs: KILL_GRACE_MS,
        innerShell: o.innerShell,
        reportPid: !o.killCommand,
        bashReader: bash,
        argv0,
        ...(o.preamble ? { preamble: o.preamble } : {}),
      },
    );
    proc.stdin?.on("error", () => undefined);
    proc.stdout?.setEncoding("utf8");
    proc.stderr?.setEncoding("utf8");
    proc.stdout?.on("data", (t: string) => session.onOutput("out", t));
    proc.stderr?.on("data", (t: string) => session.onOutput("err", t));
    // A child left behind by a command may hold the pipes open after the shell died, so "close" may never come;
    // the short delay after "exit" lets output the shell wrote before dying arrive first.
    proc.watch((how) => (how === "close" ? session.onGone() : setTimeout(() => session.onGone(), 200).unref()));
    const shell = new HostShell(proc, session);
    if (proc.pid === undefined || !(await session.boot(o.bootTimeoutMs ?? HOST_SHELL_BOOT_TIMEOUT_MS))) {
      o.onFailure?.(proc.pid === undefined ? "it could not be launched" : session.bootProblem);
      session.close();
      return undefined;
    }
    proc.started?.();
    shell.setRef(false);
    return shell;
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  /** What a launched shell's wrapper wrote to an `outputFile` extra descriptor (read once). */
  takeOutput(fd: number): string | undefined {
    return this.proc.launched?.takeOutput(fd);
  }

  /** The shell's own pid as it reported it (inside a sandbox: its pid there). */
  get shellPid(): number | undefined {
    return this.session.shellPid;
  }

  /** Called once when the shell is gone (streams ended or it exited), unless close() ended it. */
  onGone(listener: () => void): void {
    this.session.onceGone(listener);
  }

  get alive(): boolean {
    return this.session.alive;
  }

  get busy(): boolean {
    return this.session.busy;
  }

  private setRef(ref: boolean): void {
    for (const h of this.proc.handles as ({ ref?: () => void; unref?: () => void } | null)[]) {
      if (ref) h?.ref?.();
      else h?.unref?.();
    }
  }

  /** Runs one command. Callers must not overlap calls (check `busy`). */
  async run(c: ShellCommand): Promise<ExecResult> {
    this.setRef(true);
    try {
      return await this.session.run(c);
    } finally {
      if (!this.session.busy) this.setRef(false);
    }
  }

  /** Kills the shell's process group (commands it runs have their own groups; see LocalEnvironment.cleanup). */
  close(): void {
    this.session.close();
  }
}

function killPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}
