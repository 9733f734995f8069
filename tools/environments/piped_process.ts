/**
 * A long-lived process inside a task's environment whose stdin and stdout the harness holds as streams (an
 * MCP stdio server run in the task's sandbox). An environment that can start one has `spawnPiped`
 * (`canSpawnPiped`); the local sandbox does it through two FIFOs in its exchange folder (`spawnThroughFifos`),
 * so the process runs inside the sandbox, with its view, limits and pid namespace, and dies with it.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { constants, open as openCb, close as closeCb, fstatSync } from "node:fs";
import { open, readdir, readFile, unlink, type FileHandle } from "node:fs/promises";
import { Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { shellQuote, type Environment, type ExecOptions, type ExecResult } from "./base.js";

const openFd = promisify(openCb);

export interface PipedProcess {
  readonly stdin: NodeJS.WritableStream & { end(): void; destroy(): void };
  readonly stdout: NodeJS.ReadableStream & { destroy(): void };
  /** The last part of what the process wrote to stderr (a start failure's reason). */
  stderrTail(): Promise<string>;
  /** Ends the process (TERM to its process group) and closes the streams. Safe to call twice. */
  kill(): Promise<void>;
}

export interface PipedSpawnOptions {
  /** Working directory inside the environment (default its workdir). */
  cwd?: string;
  /** Variables added to the environment's own. */
  env?: Record<string, string>;
  /** How long the process may take to open its stdin and stdout. */
  startTimeoutMs?: number;
}

export interface SpawnsPiped {
  spawnPiped(argv: string[], opts?: PipedSpawnOptions): Promise<PipedProcess>;
}

export function canSpawnPiped(env: Environment): env is Environment & SpawnsPiped {
  return typeof (env as Partial<SpawnsPiped>).spawnPiped === "function";
}

type Exec = (command: string, opts?: ExecOptions) => Promise<ExecResult>;

/**
 * Starts `argv` inside an environment through its `exec`, with stdin and stdout on two FIFOs made in a folder that
 * the harness sees at `hostDir` and the environment at `innerDir` (the local sandbox's exchange folder). The process
 * leads its own session (setsid), opens stderr to a file there, then its stdin and stdout FIFOs, which this side
 * opens as the other ends: each open waits for the other side, so once both are open the process runs.
 */
export async function spawnThroughFifos(
  exec: Exec,
  hostDir: string,
  innerDir: string,
  argv: string[],
  opts: PipedSpawnOptions = {},
): Promise<PipedProcess> {
  if (argv.length === 0) throw new Error("no command to start");
  const name = `pp-${randomBytes(6).toString("hex")}`;
  const inner = (suffix: string) => shellQuote(`${innerDir}/${name}.${suffix}`);
  const host = (suffix: string) => join(hostDir, `${name}.${suffix}`);
  const child = `exec 2>"$1" <"$2" >"$3"; shift 3; exec "$@"`;
  const script = [
    `mkfifo -m 600 ${inner("in")} ${inner("out")} || exit 1`,
    `if command -v setsid >/dev/null 2>&1; then hb_s=setsid; else hb_s=; fi`,
    `$hb_s sh -c ${shellQuote(child)} hb-piped ${inner("err")} ${inner("in")} ${inner("out")} ${argv.map(shellQuote).join(" ")} </dev/null >/dev/null 2>&1 &`,
    `echo "pid=$!"`,
  ].join("\n");
  const r = await exec(script, { cwd: opts.cwd, env: opts.env, timeoutMs: 30_000 });
  const pid = Number(/pid=(\d+)/.exec(r.stdout)?.[1]);
  if (r.exitCode !== 0 || !(pid > 0))
    throw new Error(`could not start ${argv[0]}: ${(r.stderr || r.stdout).trim() || `exit ${r.exitCode}`}`);

  const fds: number[] = [];
  let startTimer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    startTimer = setTimeout(() => {
      // Unblocks this side's pending opens (a FIFO opened read-write never waits), then gives up.
      for (const s of ["in", "out"]) {
        openFd(host(s), constants.O_RDWR | constants.O_NONBLOCK | constants.O_NOFOLLOW).then(
          (fd) => setTimeout(() => closeCb(fd, () => undefined), 1000),
          () => undefined,
        );
      }
      reject(
        new Error(
          `${argv[0]} did not open its stdin and stdout within ${Math.round((opts.startTimeoutMs ?? 30_000) / 1000)} s`,
        ),
      );
    }, opts.startTimeoutMs ?? 30_000);
  });
  // The folder is the task's too: what it holds is opened without following a link (the task could put one to a
  // host file there, such as /proc/self/environ: the harness's own), and only as what it must be.
  const stderrTail = async () => {
    let fh: FileHandle | undefined;
    try {
      fh = await open(host("err"), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      const st = await fh.stat();
      if (!st.isFile()) return "";
      const length = Math.min(st.size, 64 * 1024);
      const { buffer, bytesRead } = await fh.read(Buffer.alloc(length), 0, length, st.size - length);
      return buffer.subarray(0, bytesRead).toString("utf8").slice(-2000);
    } catch {
      return "";
    } finally {
      await fh?.close().catch(() => undefined);
    }
  };
  // TERM to its process group, up to 3 s to end, then KILL: once this returns the process is gone.
  const killInside = () =>
    exec(
      [
        `kill -TERM -- -${pid} 2>/dev/null || kill -TERM ${pid} 2>/dev/null`,
        `i=0; while kill -0 ${pid} 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done`,
        `kill -KILL -- -${pid} 2>/dev/null; kill -KILL ${pid} 2>/dev/null`,
        `rm -f ${inner("in")} ${inner("out")} ${inner("err")}; true`,
      ].join("\n"),
      { timeoutMs: 10_000 },
    ).catch(() => undefined);
  let failed = false;
  // An open that completes after the start gave up is closed at once.
  const opening = (path: string, flags: number) =>
    openFd(path, flags | constants.O_NOFOLLOW).then((fd) => {
      if (failed || !fstatSync(fd).isFIFO()) {
        closeCb(fd, () => undefined);
        if (!failed) throw new Error(`${path} is not the FIFO made for ${argv[0]}`);
      }
      return fd;
    });
  try {
    fds.push(await Promise.race([opening(host("in"), constants.O_WRONLY), timedOut]));
    fds.push(await Promise.race([opening(host("out"), constants.O_RDONLY), timedOut]));
  } catch (err) {
    failed = true;
    for (const fd of fds) closeCb(fd, () => undefined);
    const tail = (await stderrTail()).trim();
    await killInside();
    throw new Error(`${(err as Error).message}${tail ? `; its stderr: ${tail.slice(-500)}` : ""}`);
  } finally {
    clearTimeout(startTimer);
  }
  // Both ends are open: the names are no longer needed.
  await Promise.all(["in", "out"].map((s) => unlink(host(s)).catch(() => undefined)));
  // Sockets over the FIFOs: libuv reads and writes them without blocking a thread of the pool.
  const stdin = new Socket({ fd: fds[0]!, readable: false, writable: true });
  const stdout = new Socket({ fd: fds[1]!, readable: true, writable: false });
  stdin.on("error", () => undefined);
  let killed = false;
  return {
    stdin,
    stdout,
    stderrTail,
    async kill() {
      if (killed) return;
      killed = true;
      stdin.destroy();
      stdout.destroy();
      await killInside();
    },
  };
}

/** Whether a process of group `pgid` is still running (a zombie has ended: only its parent's wait is left). */
async function groupHasLiveMember(pgid: number): Promise<boolean> {
  for (const name of await readdir("/proc").catch(() => [] as string[])) {
    if (name.charCodeAt(0) > 57) continue;
    const stat = await readFile(`/proc/${name}/stat`, "latin1").catch(() => "");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[2] === String(pgid) && fields[0] !== "Z" && fields[0] !== "X") return true;
  }
  return false;
}

/** How long a host process gets to exit after its stdin closed, and after TERM, before the next step. */
const HOST_EXIT_GRACE_MS = 500;
const HOST_TERM_GRACE_MS = 2000;

/**
 * Starts `argv` as a child of this process (the `--env host` environment: no sandbox, the task's folder as cwd and
 * the task's environment), its own process group so kill() ends what it started too. kill() closes its stdin,
 * then sends TERM and at last KILL to the whole group, and resolves only once the process has exited: a process
 * that ignores TERM (or its closed stdin) cannot outlive its task, nor the run.
 */
export async function spawnOnHost(cwd: string, env: Record<string, string>, argv: string[]): Promise<PipedProcess> {
  if (argv.length === 0) throw new Error("no command to start");
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString("utf8")).slice(-4000);
  });
  // An 'error' without a listener would be thrown in this thread (every task on it would fail).
  child.stdin.on("error", () => undefined);
  child.stderr.on("error", () => undefined);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", () => resolve());
    child.once("error", (err) => reject(new Error(`could not start ${argv[0]}: ${err.message}`)));
  });
  child.on("error", () => undefined);
  const pid = child.pid!;
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // the group is gone
    }
  };
  const within = (ms: number) =>
    Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
  let killing: Promise<void> | undefined;
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    stderrTail: async () => stderr,
    kill: () =>
      (killing ??= (async () => {
        child.stdin.destroy();
        if (!(await within(HOST_EXIT_GRACE_MS))) {
          group("SIGTERM");
          // What ignores TERM gets KILL; the wait is for the exit itself (KILL cannot be ignored).
          if (!(await within(HOST_TERM_GRACE_MS))) {
            group("SIGKILL");
            await exited;
          }
        }
        // What the process started and left running in its group goes with it, and is waited for: a KILLed
        // process is still running until the kernel has ended it (a loaded machine takes a while).
        group("SIGKILL");
        for (let i = 0; i < 500 && (await groupHasLiveMember(pid)); i++) await new Promise((r) => setTimeout(r, 10));
        child.stdout.destroy();
        child.stderr.destroy();
      })()),
  };
}
