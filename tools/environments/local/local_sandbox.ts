/**
 * The local backend: each task in its own bubblewrap sandbox on this machine (bwrap.ts says what the sandbox
 * sees). One bwrap and one persistent bash per task, started on first use; every command, file read and file
 * write goes through that shell, so each acts with the sandbox's view and permissions (a symlink the task made
 * is followed inside the sandbox, never on the host).
 *
 * - Paths are the sandbox's: the task folder is /workspace; a row's `cwd` is resolved inside it.
 * - Commands of one task run one at a time (calls that overlap wait their turn); each gets its own process
 *   group, so a timeout kills what it started.
 * - Files cross through a folder of the harness (SANDBOX_IO_DIR inside), opened on the host without
 *   following symlinks.
 * - A shell that dies or stops answering (the agent's own `kill -9 -1`, a stopped shell) is replaced at the next
 *   call by a new sandbox over the same folders, as Docker starts its shell again: the task goes on and is graded
 *   (a lost sandbox would leave it unscored, out of the pass rate: an agent about to fail could drop itself). A
 *   sandbox whose process count stays at its limit after a command (a fork bomb that survived it), a command the
 *   memory limit killed and a full task folder are reported with `spec.reportLost` as soon as that command ends,
 *   and every later call fails: a scored row is graded there (`resource_limit`, the verify in a new sandbox), any
 *   other task ends as environment_error with that reason.
 * - cleanup() kills the sandbox (every process in it dies with its pid namespace).
 */
import { CommandStop } from "../shell/command_stop.js";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  lchownSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
} from "node:fs";
import { chmod, mkdir, mkdtemp, open, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { CarriedState } from "../shell/carried_state.js";
import { BackgroundProcessManager } from "../background.js";
import {
  DEFAULT_OUTPUT_CAP,
  EnvironmentLostError,
  removePythonShadows,
  shellQuote,
  writableTree,
  type BackgroundStatus,
  type Environment,
  type EnvironmentOptions,
  type EnvironmentSpec,
  type ExecOptions,
  type ExecResult,
  type VerifyOptions,
  ShellWriteError,
  MAX_FILE_READ_BYTES,
  type BackgroundStartOptions,
  type BackgroundStarted,
} from "../base.js";
import {
  SANDBOX_HOME,
  SANDBOX_IO_DIR,
  SANDBOX_SHELL,
  SANDBOX_WORKDIR,
  bwrapArgs,
  bwrapLauncher,
  findBwrap,
  openSeccompFilter,
  pidNamespaceOf,
  probeBwrapAsync,
  sandboxProcesses,
  sandboxShellCopy,
  type SandboxLauncher,
} from "./bwrap.js";
import { OutputCollector } from "../shell/output_capture.js";
import { DEFAULT_LIMITS, SandboxCgroup, type SandboxLimits } from "./cgroups.js";
import { DiskQuota, diskQuotaUnavailable, parseSize } from "../disk_quota.js";
import { forgetTempDir, makeTempDir } from "../temp_dirs.js";
import { HostShell, originalBashName } from "../shell/host_process.js";
import { closeInheritedFds } from "../shell/spawn_helper.js";
import { ENV_NAME_PATTERN, taskEnvironment } from "../task_env.js";
import { sandboxNetwork, sandboxWorkdir } from "./local_sandbox_rules.js";
import { spawnThroughFifos, type PipedProcess, type PipedSpawnOptions } from "../piped_process.js";
import { makeTaskDir, removeTaskDir } from "../task_dir.js";

export { sandboxNetwork, sandboxWorkdir };

/** Default process limit inside one sandbox (`ulimit -u`; --pids-limit overrides). */
export const DEFAULT_SANDBOX_PIDS = 512;
const FILE_OP_TIMEOUT_MS = 120_000;
const BOOT_TIMEOUT_MS = 30_000;
/** Where the verify step finds the row's verify_files (read-only, a folder of the harness). */
const VERIFY_FILES_DIR = "/tmp/.hermes-verify";
/** A process count this close to the limit is full (a fork needs a slot; the sandbox's init and shell hold two). */
const PIDS_MARGIN = 2;
/** After a command that met the process limit: how long its count is watched, how often, how many full reads in a row. */
const PIDS_WAIT_MS = 3_000;
const PIDS_POLL_MS = 100;
const PIDS_FULL_READS = 3;
/** How long the agent's processes may take to be gone after the sandbox is killed, before verify refuses to run. */
const STOP_WAIT_MS = 10_000;

function pidsLimit(options: EnvironmentOptions): number {
  return typeof options.pidsLimit === "number" && options.pidsLimit > 0 ? options.pidsLimit : DEFAULT_SANDBOX_PIDS;
}

/** The sandbox's memory (MiB), CPUs and processes: the run's --memory-mb, --cpus, --pids-limit, else the defaults. */
function sandboxLimits(options: EnvironmentOptions): SandboxLimits {
  const num = (v: unknown, d: number) => (typeof v === "number" && v > 0 ? v : d);
  return {
    memoryMb: num(options.memoryMb, DEFAULT_LIMITS.memoryMb),
    cpus: num(options.cpus, DEFAULT_LIMITS.cpus),
    pids: pidsLimit(options),
  };
}

/** What of the host a run adds to its sandboxes' file system (`--sandbox-ro`), and their tmpfs size. */
function fileSystemOptions(options: EnvironmentOptions): { readOnly?: string[]; tmpfsMb?: number } {
  const readOnly = Array.isArray(options.sandboxRo) ? (options.sandboxRo as string[]) : undefined;
  const tmpfsMb = typeof options.tmpSizeMb === "number" && options.tmpSizeMb > 0 ? options.tmpSizeMb : undefined;
  return { ...(readOnly?.length ? { readOnly } : {}), ...(tmpfsMb ? { tmpfsMb } : {}) };
}

function notFound(message: string): Error {
  return Object.assign(new Error(message), { code: "ENOENT" });
}

export class SandboxEnvironment implements Environment {
  readonly kind = "local";
  private readonly background: BackgroundProcessManager;
  private readonly maxOutputChars: number;
  private queue: Promise<unknown> = Promise.resolve();
  private cleaned = false;
  private lost: string | undefined;
  /** The host pid of the sandbox's init (its pid namespace dies with it). */
  private initPid: number | undefined;
  /**
   * When the outer bwrap (the shell's pid) and the init started (/proc/<pid>/stat): once they are gone their pids
   * are free, and a process that gets one later (a small `pid_max` wraps in seconds) must not be signalled.
   */
  private outerStart: string | undefined;
  private initStart: string | undefined;
  /** Its pid namespace (`pid:[N]`), to check that every process in it is gone. */
  private pidNs: string | undefined;
  /** stopProcesses() ended the sandbox: only runVerify and cleanup remain. */
  private stopped = false;
  /** How the sandbox was started (its uid, for the verify step over the same folder). */
  private launcher: SandboxLauncher | undefined;
  private hostNetwork = false;
  private env: Record<string, string> = {};
  /** The sandbox's cgroup (memory, CPU, processes), where the harness can make one. */
  private cgroup: SandboxCgroup | undefined;
  /** The task folder's own file system (`--disk`), where one was made. */
  private quota: DiskQuota | undefined;
  private oomBaseline = 0;
  /** The terminal's state carried between its commands (cwd, exports). */
  private readonly carried: CarriedState;

  /** The terminal's current directory (Environment.cwd). */
  get cwd(): string {
    return this.carried.cwd;
  }

  private constructor(
    readonly taskDir: string,
    readonly workdir: string,
    private readonly ioDir: string,
    private shell: HostShell | undefined,
    private readonly spec: EnvironmentSpec,
    private readonly options: EnvironmentOptions,
  ) {
    this.maxOutputChars = typeof options.maxOutputChars === "number" ? options.maxOutputChars : DEFAULT_OUTPUT_CAP;
    this.carried = new CarriedState(workdir, SANDBOX_IO_DIR);
    this.background = new BackgroundProcessManager((cmd, opts) => this.exec(cmd, opts), {
      stateDir: "/tmp/.hermes-bg",
      shell: "bash",
      maxOutputChars: this.maxOutputChars,
    });
  }

  /** Starts the sandbox of one task: its folder (spec.hostTaskDir) at /workspace, the shell inside. */
  static async create(spec: EnvironmentSpec, options: EnvironmentOptions): Promise<SandboxEnvironment> {
    const probe = await probeBwrapAsync();
    if (!probe.ok) throw new Error(probe.reason);
    const { hostNetwork } = sandboxNetwork(
      typeof options.network === "string" ? options.network : undefined,
      spec.network,
    );
    const workdir = sandboxWorkdir(spec.cwd);
    const launcher = bwrapLauncher(findBwrap()!);
    const taskDir = spec.hostTaskDir;
    const diskBytes = typeof options.disk === "string" ? parseSize(options.disk) : undefined;
    // With a quota the task folder becomes a link to a folder in its file system (a stale link is dropped there).
    const withQuota = diskBytes !== undefined && diskQuotaUnavailable() === undefined;
    if (!withQuota) await makeTaskDir(taskDir, spec.freshTaskDir);
    const quota = withQuota
      ? await DiskQuota.create(taskDir, diskBytes, launcher.uid, launcher.gid, spec.freshTaskDir)
      : undefined;
    closeToOthers(dirname(taskDir));
    // The exchange folder is writable by the task: with a quota it is in the task's file system, which bounds it
    // (in $TMPDIR, a task could fill the host's disk through it).
    const ioDir = quota ? await mkdtemp(join(quota.mountPoint, "io-")) : await makeTempDir("io");
    if (process.getuid?.() === 0) {
      // The sandbox's own uid: a kept folder of an earlier attempt belongs to that attempt's uid.
      chownTree(taskDir, launcher.uid, launcher.gid);
      chownSync(ioDir, launcher.uid, launcher.gid);
    }
    const passEnv = Array.isArray(options.passEnv) ? (options.passEnv as string[]) : [];
    const env = taskEnvironment(process.env, passEnv, { HOME: SANDBOX_HOME });
    const cgroup = await SandboxCgroup.create(sandboxLimits(options));
    const holder: { env?: SandboxEnvironment } = {};
    const start = () =>
      startSandboxShell({
        launcher,
        taskDir,
        ioDir,
        hostNetwork,
        env,
        options,
        cgroup,
        kill: (pids, signal) => holder.env?.killInSandbox(pids, signal),
        killCommand: (shellPid, signal) => holder.env?.killRunningCommand(shellPid, signal),
      });
    let started = await start();
    // A credential file under /etc removed between the masks' lookup and bwrap's mounts (bwrap cannot make a mount
    // point in the read-only /etc): once more, the masks looked up again.
    if (!started.shell && /Can't create file at \/etc\//.test(started.problem)) started = await start();
    if (!started.shell) {
      await cgroup?.remove();
      await quota?.remove(options.removeTaskDirOnCleanup !== true);
      await rm(ioDir, { recursive: true, force: true });
      forgetTempDir(ioDir);
      throw new Error(`could not start the bubblewrap sandbox (${started.problem})`);
    }
    const sandbox = new SandboxEnvironment(taskDir, workdir, ioDir, started.shell, spec, options);
    holder.env = sandbox;
    sandbox.adopt(started.shell);
    sandbox.launcher = launcher;
    sandbox.hostNetwork = hostNetwork;
    sandbox.env = env;
    sandbox.cgroup = cgroup;
    sandbox.quota = quota;
    if (workdir !== SANDBOX_WORKDIR) {
      const r = await sandbox.exec(`mkdir -p -- ${shellQuote(workdir)}`, {
        cwd: SANDBOX_WORKDIR,
        timeoutMs: FILE_OP_TIMEOUT_MS,
      });
      if (r.exitCode !== 0) {
        await sandbox.cleanup();
        throw new Error(`cannot create the row's cwd ${workdir}: ${r.stderr.trim()}`);
      }
    }
    return sandbox;
  }

  /** Takes a started sandbox's shell: its init, pid namespace, and the start times of its bwrap and init. */
  private adopt(shell: HostShell): void {
    this.shell = shell;
    this.initPid = initPidOf(shell);
    this.pidNs = this.initPid === undefined ? undefined : pidNamespaceOf(this.initPid);
    this.outerStart = shell.pid === undefined ? undefined : processStart(shell.pid);
    this.initStart = this.initPid === undefined ? undefined : processStart(this.initPid);
  }

  /** Forks the sandbox's process limit refused since its shell started (a wedged sandbox is lost only for those). */
  private pidsHitsAtStart = 0;

  /**
   * A new sandbox over the same folders, for a shell that ended or stopped answering (the agent's own `kill -9 -1`,
   * `kill -STOP $PPID`, a CPU limit set on it): as Docker starts its shell again, the task goes on and is graded,
   * where a lost sandbox would have left it unscored, out of the pass rate. The old sandbox is ended first, every
   * process of it gone; otherwise, or when the new one cannot start, the sandbox is lost.
   */
  private async restart(): Promise<void> {
    const left = await this.endProcesses();
    if (left > 0) {
      this.markLost(`${left} process(es) of the sandbox survived its end`);
      throw new EnvironmentLostError(this.lost ?? "the sandbox's processes survived its end");
    }
    const started = await startSandboxShell({
      launcher: this.launcher!,
      taskDir: this.taskDir,
      ioDir: this.ioDir,
      hostNetwork: this.hostNetwork,
      env: this.env,
      options: this.options,
      cgroup: this.cgroup,
      kill: (pids, signal) => this.killInSandbox(pids, signal),
      killCommand: (shellPid, signal) => this.killRunningCommand(shellPid, signal),
    });
    if (!started.shell) {
      this.markLost(`the sandbox's shell ended, and a new sandbox could not start (${started.problem})`);
      throw new EnvironmentLostError(this.lost ?? "the sandbox could not start again");
    }
    this.adopt(started.shell);
    this.pidsHitsAtStart = this.cgroup?.pidsLimitHits() ?? 0;
    if (this.cleaned || this.stopped) {
      // Cleaned up or stopped meanwhile: this one goes too.
      this.shell?.close();
      this.killAll();
      throw new Error("the sandbox was already cleaned up");
    }
  }

  /** Ends the sandbox (shell, bwrap, init) and waits until its pid namespace is empty; returns how many are left. */
  private async endProcesses(): Promise<number> {
    this.shell?.close();
    this.killAll();
    const deadline = Date.now() + STOP_WAIT_MS;
    let left = sandboxProcesses(undefined, this.pidNs);
    while (left.length > 0 && Date.now() < deadline) {
      for (const p of left) killQuietly(p.hostPid, "SIGKILL");
      await new Promise((r) => setTimeout(r, 20));
      left = sandboxProcesses(undefined, this.pidNs);
    }
    return left.length;
  }

  /** Signals processes of the sandbox by the pids its shell reports (its own numbering); the shell's pid means the whole sandbox. */
  private killInSandbox(pids: number[], signal: "SIGTERM" | "SIGKILL"): void {
    const shellPid = this.shell?.shellPid;
    if (this.initPid === undefined || pids.some((p) => p === shellPid || p <= 1)) {
      this.killAll();
      return;
    }
    for (const p of sandboxProcesses(undefined, this.pidNs)) {
      if (pids.includes(p.nsPgid) || pids.includes(p.nsPid)) killQuietly(p.hostPid, signal);
    }
  }

  /** The process group of the command the shell runs (its child leads it), remembered for a later SIGKILL. */
  private commandGroup: number | undefined;

  /**
   * Signals the group of the command the shell runs now: the shell's child that leads its own group (job
   * control). After a SIGTERM its leader may be gone while the rest of the group lives on: a SIGKILL then goes
   * to the group signalled before.
   */
  private killRunningCommand(shellPid: number, signal: "SIGTERM" | "SIGKILL"): void {
    if (this.initPid === undefined) return this.killAll();
    // By the namespace found at the start: the init's pid may belong to another process by now.
    const procs = sandboxProcesses(undefined, this.pidNs);
    const shell = procs.find((p) => p.nsPid === shellPid);
    const leader = shell ? procs.find((p) => p.hostPpid === shell.hostPid && p.nsPgid === p.nsPid) : undefined;
    const group = leader?.nsPgid ?? (signal === "SIGKILL" ? this.commandGroup : undefined);
    this.commandGroup = group;
    if (group === undefined) return;
    for (const p of procs) if (p.nsPgid === group && p.nsPid !== shellPid) killQuietly(p.hostPid, signal);
  }

  private killAll(): void {
    // The outer bwrap (or setpriv) process: the sandbox's init has a parent-death SIGKILL, and its pid namespace dies
    // with it. Each only while its pid is still that process (cleanup comes after the verify ended them).
    killIfSame(this.shell?.pid, this.outerStart, "SIGKILL");
    killIfSame(this.initPid, this.initStart, "SIGKILL");
  }

  private markLost(reason: string): void {
    if (this.cleaned || this.stopped || this.lost) return;
    this.lost = reason;
    this.spec.reportLost?.(reason);
  }

  /** Runs `fn` after every call before it (one command at a time in the sandbox's shell). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    return this.serial(() => this.execNow(command, opts));
  }

  private async execNow(command: string, opts: ExecOptions): Promise<ExecResult> {
    if (this.lost) throw new EnvironmentLostError(this.lost);
    if (this.stopped) throw new Error("the sandbox was stopped for the verify step");
    if (this.cleaned || !this.shell) throw new Error("the sandbox was already cleaned up");
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.env ?? {})) {
      if (!ENV_NAME_PATTERN.test(k))
        return {
          exitCode: 2,
          stdout: "",
          stderr: `invalid environment variable name '${k}'`,
          timedOut: false,
          truncated: false,
        };
      env[k] = v;
    }
    let stdinFile: string | undefined;
    if (opts.stdin !== undefined) {
      stdinFile = await this.putFile(opts.stdin);
      command = `exec < ${shellQuote(`${SANDBOX_IO_DIR}/${stdinFile}`)}\n${command}`;
    }
    try {
      if (!this.shell.alive) await this.restart();
      const state = this.carried.stateFor(opts);
      const result = this.carried.after(
        opts,
        await this.shell.run({
          command,
          cwd: this.carried.startCwd(opts, (p) => posix.resolve(this.workdir, p), this.workdir),
          env,
          timeoutMs: opts.timeoutMs,
          signal: opts.signal,
          cap: opts.maxOutputChars ?? this.maxOutputChars,
          ...(state ? { state } : {}),
        }),
      );
      // The kernel killed a process of the task for its memory: the task ends (memory_limit).
      const ooms = this.cgroup?.oomKills() ?? 0;
      if (ooms > this.oomBaseline) {
        this.oomBaseline = ooms;
        this.markLost(
          `memory_limit: a process of the task was killed for exceeding the sandbox's memory limit (${this.cgroup!.limits.memoryMb} MiB)`,
        );
      }
      // A write failed for the task folder's quota: the task ends (disk_limit).
      if (this.quota && /No space left on device/.test(result.stdout + result.stderr) && this.quota.full()) {
        this.markLost(
          `disk_limit: the task folder is full (its quota is ${Math.round(this.quota.bytes / 2 ** 20)} MiB)`,
        );
      }
      // The shell is gone: a new sandbox takes over at the next call (restart), unless its process limit was hit
      // meanwhile (a fork bomb that keeps it full): that ends the task, as the memory limit does.
      if (!this.shell.alive && this.cgroup && this.cgroup.pidsLimitHits() > this.pidsHitsAtStart)
        this.markLost("pids_limit: the sandbox stopped answering (no process could start in it)");
      // What the command left keeps the process limit full (a fork bomb that outlived it): the task ends here, at
      // once, not at a later command that may or may not find a slot (the bomb lets one go now and then).
      else if (!this.lost && (await this.pidsStayFull()))
        this.markLost(
          `pids_limit: the sandbox's process limit (${this.cgroup!.limits.pids}) stays full after the command (e.g. a fork bomb): no process can start in it`,
        );
      return result;
    } finally {
      if (stdinFile) await unlink(join(this.ioDir, stdinFile)).catch(() => undefined);
    }
  }

  /** The fork failures at the process limit seen by the last command's check (pidsStayFull). */
  private pidsHitsSeen = 0;

  /**
   * After a command: whether what it left keeps the sandbox's process count within PIDS_MARGIN of its limit. Asked
   * when a fork failed at the limit since the last command, or the count is full now: read every PIDS_POLL_MS for
   * PIDS_WAIT_MS at most, full PIDS_FULL_READS reads in a row is full (a fork bomb fills the slots its command's own
   * processes let go, and takes any that frees at once); a count that falls below it (a passing peak, its
   * processes ended with the command) is not. Otherwise one read of each counter.
   */
  private async pidsStayFull(): Promise<boolean> {
    const cgroup = this.cgroup;
    if (!cgroup) return false;
    const limit = cgroup.limits.pids;
    const hits = cgroup.pidsLimitHits();
    const hit = hits > this.pidsHitsSeen;
    this.pidsHitsSeen = hits;
    let count = cgroup.pidsCurrent();
    if (!hit && !(count >= limit - PIDS_MARGIN)) return false;
    let inRow = 0;
    for (const end = Date.now() + PIDS_WAIT_MS; ; count = cgroup.pidsCurrent()) {
      // Half empty (or unreadable): nothing keeps it full.
      if (!(count >= limit / 2)) return false;
      inRow = count >= limit - PIDS_MARGIN ? inRow + 1 : 0;
      if (inRow >= PIDS_FULL_READS) return true;
      if (Date.now() >= end) return false;
      await new Promise((r) => setTimeout(r, PIDS_POLL_MS));
    }
  }

  /** Writes data into the exchange folder (never through a symlink); returns its name there. */
  private async putFile(data: string | Buffer): Promise<string> {
    const name = `in-${randomBytes(8).toString("hex")}`;
    const fh = await open(
      join(this.ioDir, name),
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o644,
    );
    try {
      await fh.writeFile(data);
    } finally {
      await fh.close();
    }
    return name;
  }

  private resolve(path: string): string {
    return posix.resolve(this.workdir, path);
  }

  async readFile(path: string): Promise<Buffer> {
    const full = this.resolve(path);
    const name = `out-${randomBytes(8).toString("hex")}`;
    const out = `${SANDBOX_IO_DIR}/${name}`;
    const r = await this.exec(
      `f=${shellQuote(full)}; [ -e "$f" ] || { echo "No such file or directory: $f" >&2; exit 3; }; [ -d "$f" ] && { echo "Is a directory: $f" >&2; exit 4; }; ` +
        // Only a regular file, its size that of what a link leads to, and the copy bounded all the same: a link to
        // /dev/zero or a FIFO would otherwise fill the exchange folder's disk or block the read.
        `[ -f "$f" ] || { echo "Not a regular file: $f" >&2; exit 6; }; ` +
        `[ "$(stat -L -c %s -- "$f")" -le ${MAX_FILE_READ_BYTES} ] || { echo "File is larger than ${MAX_FILE_READ_BYTES} bytes: $f" >&2; exit 5; }; ` +
        `head -c ${MAX_FILE_READ_BYTES + 1} -- "$f" > ${shellQuote(out)}`,
      { cwd: SANDBOX_WORKDIR, timeoutMs: FILE_OP_TIMEOUT_MS },
    );
    const hostPath = join(this.ioDir, name);
    try {
      if (r.exitCode === 3) throw notFound(`ENOENT: no such file or directory, open '${full}'`);
      if (r.exitCode !== 0)
        throw new Error((r.stderr || r.stdout).trim() || `cannot read ${full} (exit ${r.exitCode})`);
      // Opened without following a link: the sandbox owns this folder and could have put one there.
      const fh = await open(hostPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        const st = await fh.stat();
        if (!st.isFile()) throw new Error(`cannot read ${full}: not a regular file`);
        if (st.size > MAX_FILE_READ_BYTES) throw new Error(`File is larger than ${MAX_FILE_READ_BYTES} bytes: ${full}`);
        return await fh.readFile();
      } finally {
        await fh.close();
      }
    } finally {
      await unlink(hostPath).catch(() => undefined);
    }
  }

  async writeFile(path: string, data: string | Buffer): Promise<void> {
    const full = this.resolve(path);
    const name = await this.putFile(data);
    try {
      const dir = posix.dirname(full);
      const r = await this.exec(
        `mkdir -p -- ${shellQuote(dir)} && cat -- ${shellQuote(`${SANDBOX_IO_DIR}/${name}`)} > ${shellQuote(full)}`,
        {
          cwd: SANDBOX_WORKDIR,
          timeoutMs: FILE_OP_TIMEOUT_MS,
        },
      );
      if (r.exitCode !== 0)
        throw new ShellWriteError((r.stderr || r.stdout).trim() || `cannot write ${full} (exit ${r.exitCode})`);
    } finally {
      await unlink(join(this.ioDir, name)).catch(() => undefined);
    }
  }

  /** The real path of `path` inside the sandbox (for the approval gate); null when it does not exist. */
  async realpath(path: string): Promise<string | null> {
    if (this.lost || this.cleaned) return null;
    const r = await this.exec(`realpath -e -- ${shellQuote(this.resolve(path))}`, {
      cwd: SANDBOX_WORKDIR,
      timeoutMs: FILE_OP_TIMEOUT_MS,
    });
    const out = r.stdout.trim();
    return r.exitCode === 0 && out.startsWith("/") ? out : null;
  }

  startBackground(command: string, opts?: BackgroundStartOptions): Promise<BackgroundStarted> {
    return this.background.start(command, opts);
  }

  /** A process inside the sandbox whose stdin and stdout the harness holds (an MCP server; piped_process.ts). */
  spawnPiped(argv: string[], opts?: PipedSpawnOptions): Promise<PipedProcess> {
    return spawnThroughFifos((c, o) => this.exec(c, o), this.ioDir, SANDBOX_IO_DIR, argv, opts);
  }

  pollBackground(id: string): Promise<BackgroundStatus> {
    return this.background.poll(id);
  }

  killBackground(id: string): Promise<void> {
    return this.background.kill(id);
  }

  writeBackground(id: string, data: string): Promise<void> {
    return this.background.writeStdin(id, data);
  }

  closeBackgroundStdin(id: string): Promise<void> {
    return this.background.closeStdin(id);
  }

  listBackground(): Promise<BackgroundStatus[]> {
    return this.background.list();
  }

  /** The host pids of every live process in the sandbox (its init and shell included). */
  processes(): number[] {
    return sandboxProcesses(undefined, this.pidNs).map((p) => p.hostPid);
  }

  /**
   * Before `verify`: ends the sandbox, its shell and every process the agent started (the whole pid namespace),
   * and waits until the kernel shows none of them. Throws when some survive (then verify must not run).
   */
  async stopProcesses(): Promise<void> {
    await this.serial(async () => {
      this.stopped = true;
      const left = await this.endProcesses();
      if (left > 0) throw new Error(`${left} process(es) of the agent survived the end of its sandbox`);
    });
  }

  /**
   * The verify step, out of the agent's reach (after stopProcesses): a fresh bwrap over the same task folder, as
   * the same uid, without the exchange folder. Its command is the new pid namespace's pid 1 (no reaper whose
   * report a process could tamper with) and runs from the unreadable shell copy (not dumpable: no process it
   * starts can read or trace it). The row's files are copied in first, over whatever the agent left at their
   * paths (links and files removed, parents made real folders). The result is bwrap's own exit status, read by
   * this process from the kernel: no marker, no shell of the agent's.
   */
  async runVerify(command: string, opts: VerifyOptions = {}): Promise<ExecResult> {
    if (!this.stopped) await this.stopProcesses();
    if (this.cleaned || !this.launcher) throw new Error("the sandbox was already cleaned up");
    const launcher = this.launcher;
    const filesDir = await makeTempDir("verify");
    const fds: number[] = [];
    try {
      await chmod(filesDir, 0o755);
      const puts: string[] = [];
      let n = 0;
      for (const f of opts.files ?? []) {
        const dest = posix.resolve(this.workdir, f.path);
        if (dest !== SANDBOX_WORKDIR && !dest.startsWith(`${SANDBOX_WORKDIR}/`))
          throw new Error(`verify file ${f.path} is outside ${SANDBOX_WORKDIR}`);
        const name = `f${n++}`;
        await writeFile(join(filesDir, name), f.data, { mode: 0o644 });
        puts.push(
          `hb_put ${name} ${shellQuote(dest)} || { echo "verify: cannot put ${dest.replace(/[^\w./-]/g, "?")} in place" >&2; exit 125; }`,
        );
      }
      openableByOwner(this.taskDir);
      fds.push(
        openSync(this.taskDir, constants.O_RDONLY | constants.O_DIRECTORY),
        openSync(filesDir, constants.O_RDONLY | constants.O_DIRECTORY),
      );
      // fd 5: the seccomp filter (the verify runs the agent's code: the keyrings stay out of its reach too).
      const filter = openSeccompFilter();
      if (filter !== undefined) fds.push(filter);
      const shellCopy = sandboxShellCopy();
      const shell = shellCopy !== undefined ? SANDBOX_SHELL : "/bin/bash";
      const args = bwrapArgs(
        {
          hostNetwork: this.hostNetwork,
          workspaceFd: 3,
          env: this.env,
          shellCopy,
          asPid1: true,
          ...(filter !== undefined ? { seccompFd: 5 } : {}),
          extra: ["--ro-bind-fd", "4", VERIFY_FILES_DIR],
          ...fileSystemOptions(this.options),
        },
        launcher,
      );
      const script = [
        VERIFY_PUT,
        ...puts,
        `unset -f hb_put`,
        `cd -- "$1" || exit 1`,
        `exec ${shell} --norc --noprofile -c "$2"`,
      ].join("\n");
      // In the task's cgroup (its limits), entered by a small bash before it becomes bwrap; that bash first closes
      // every descriptor this process inherited (only the task folder, the verify files and the seccomp filter go in: fds 3 to 5).
      const enter = this.cgroup?.procsFiles ?? [];
      const bwrapCommand = [
        launcher.bwrap,
        ...args,
        shell,
        "--norc",
        "--noprofile",
        "-c",
        script,
        "hb-verify",
        this.workdir,
        command,
      ];
      return await runBwrap(
        "/bin/bash",
        [
          "--norc",
          "--noprofile",
          "-c",
          `${closeInheritedFds(2 + fds.length)}; ${enter.map((_, i) => `echo $$ > "$${i + 1}" 2>/dev/null;`).join(" ")} shift ${enter.length}; exec "$@"`,
          "hb-enter",
          ...enter,
          ...bwrapCommand,
        ],
        { fds, timeoutMs: opts.timeoutMs, signal: opts.signal, cap: opts.maxOutputChars ?? this.maxOutputChars },
      );
    } finally {
      for (const fd of fds) closeSync(fd);
      await rm(filesDir, { recursive: true, force: true });
      forgetTempDir(filesDir);
    }
  }

  async cleanup(): Promise<void> {
    if (this.cleaned) return;
    this.cleaned = true;
    this.shell?.close();
    this.killAll();
    await rm(this.ioDir, { recursive: true, force: true });
    forgetTempDir(this.ioDir);
    if (this.quota) {
      // Its file system is unmounted (or given back to the pool) once nothing of the sandbox holds a file in it.
      const gone = await this.waitUntilGone();
      // Reused only when the cgroup shows every process the task started gone (the verify step's included).
      await this.quota.remove(this.options.removeTaskDirOnCleanup !== true, gone && this.cgroup !== undefined);
    }
    await this.cgroup?.remove();
    if (this.options.removeTaskDirOnCleanup === true) await removeTaskDir(this.taskDir);
  }

  /**
   * Waits (2 s at most) until no process of the sandbox is left: its cgroup is empty, or without one, its pid
   * namespace. One read of the cgroup's process list instead of a scan of every process on the host.
   */
  private async waitUntilGone(): Promise<boolean> {
    const cgroup = this.cgroup;
    const gone = cgroup ? () => cgroup.empty() : () => sandboxProcesses(undefined, this.pidNs).length === 0;
    for (let i = 0; i < 100; i++) {
      if (gone()) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return gone();
  }
}

interface ShellStart {
  launcher: SandboxLauncher;
  taskDir: string;
  ioDir: string;
  hostNetwork: boolean;
  env: Record<string, string>;
  options: EnvironmentOptions;
  cgroup: SandboxCgroup | undefined;
  kill: (pids: number[], signal: "SIGTERM" | "SIGKILL") => void;
  killCommand: (shellPid: number, signal: "SIGTERM" | "SIGKILL") => void;
}

/** Starts a bwrap over the task folder and the exchange folder with the persistent shell inside; why not, when not. */
async function startSandboxShell(s: ShellStart): Promise<{ shell?: HostShell; problem: string }> {
  const shellCopy = sandboxShellCopy();
  const fds: number[] = [];
  let problem = "its shell did not answer";
  try {
    fds.push(
      openSync(s.taskDir, constants.O_RDONLY | constants.O_DIRECTORY),
      openSync(s.ioDir, constants.O_RDONLY | constants.O_DIRECTORY),
    );
    const filter = openSeccompFilter();
    if (filter !== undefined) fds.push(filter);
    // fd 3: bwrap's info (the init's host pid); 4 and 5: the folders it binds; 6: the seccomp filter it applies.
    const args = bwrapArgs(
      {
        hostNetwork: s.hostNetwork,
        infoFd: 3,
        workspaceFd: 4,
        ioFd: 5,
        ...(filter !== undefined ? { seccompFd: 6 } : {}),
        env: s.env,
        shellCopy,
        ...fileSystemOptions(s.options),
      },
      s.launcher,
    );
    const shell = await HostShell.start({
      innerShell: "/bin/bash",
      // Unreadable to the sandbox, so not dumpable: commands cannot read the protocol's nonce from its memory.
      outerShell: shellCopy !== undefined ? SANDBOX_SHELL : "/bin/bash",
      cwd: tmpdir(),
      env: { PATH: s.env.PATH! },
      launch: {
        file: s.launcher.bwrap,
        args,
        extra: [
          { fd: 3, outputFile: true },
          { fd: 4, dirFd: fds[0]! },
          { fd: 5, dirFd: fds[1]! },
          // Reopened by the helper through /proc: bwrap reads it from its start.
          ...(filter !== undefined ? [{ fd: 6, dirFd: filter }] : []),
        ],
        enter: s.cgroup?.procsFiles,
      },
      kill: s.kill,
      killCommand: s.killCommand,
      preamble: `ulimit -u ${pidsLimit(s.options)} 2>/dev/null\n`,
      // Named as the original's local backend names its bash (its messages' prefix, `$0`).
      argv0: originalBashName(),
      bootTimeoutMs: BOOT_TIMEOUT_MS,
      onFailure: (reason) => {
        problem = `its shell did not start: ${reason}`;
      },
    });
    return { ...(shell ? { shell } : {}), problem };
  } catch (err) {
    return { problem: err instanceof Error ? err.message : String(err) };
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/**
 * Puts a verify file in place inside the verify's sandbox: `hb_put NAME DEST` copies VERIFY_FILES_DIR/NAME to DEST
 * (under /workspace), each folder on the way made a real, writable folder (a link or file there is removed), and
 * whatever is at DEST removed first (a link the agent left there is not written through).
 */
const VERIFY_PUT = [
  `hb_put() {`,
  `  local rel=\${2#${SANDBOX_WORKDIR}/} p=${SANDBOX_WORKDIR} c dirs=`,
  `  case $rel in */*) dirs=\${rel%/*} ;; esac`,
  `  chmod u+rwx -- "$p" 2>/dev/null`,
  `  local IFS=/; set -f`,
  `  for c in $dirs; do`,
  `    [ -n "$c" ] || continue; p=$p/$c`,
  `    if [ -L "$p" ] || { [ -e "$p" ] && [ ! -d "$p" ]; }; then rm -rf -- "$p" || return 1; fi`,
  `    [ -d "$p" ] || mkdir -- "$p" || return 1`,
  `    chmod u+rwx -- "$p" 2>/dev/null`,
  `  done`,
  `  set +f`,
  `  ${writableTree('"$2"')}`,
  `  rm -rf -- "$2" && cp -- "${VERIFY_FILES_DIR}/$1" "$2" || return 1`,
  `  ${removePythonShadows("2", "return 1")}`,
  `}`,
].join("\n");

/**
 * Runs a bwrap command line (the verify step) as a child of this process, with `fds` as its descriptors 3, 4, …:
 * output capped, a timeout or abort kills it (its sandbox dies with it: --die-with-parent), and the exit status is
 * the kernel's, as bwrap reports its pid 1's.
 */
function runBwrap(
  file: string,
  args: string[],
  o: { fds: number[]; timeoutMs?: number; signal?: AbortSignal; cap: number },
): Promise<ExecResult> {
  return new Promise<ExecResult>((resolve) => {
    const stdout = new OutputCollector(o.cap);
    const stderr = new OutputCollector(o.cap);
    const child = spawn(file, args, {
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdio: ["ignore", "pipe", "pipe", ...o.fds],
      detached: true,
    });
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const limits = new CommandStop(o, kill);
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (t: string) => stdout.push(t));
    child.stderr!.on("data", (t: string) => stderr.push(t));
    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null, error?: Error) => {
      if (settled) return;
      settled = true;
      limits.dispose();
      const out = stdout.render();
      const err = stderr.render();
      const exitCode = limits.exitCode(error ? 127 : (code ?? 128 + (signal === "SIGKILL" ? 9 : 15)));
      resolve({
        exitCode,
        stdout: out.text,
        stderr: error ? `could not start the verify sandbox: ${error.message}` : err.text,
        timedOut: limits.timedOut,
        truncated: out.truncated || err.truncated,
      });
    };
    child.once("error", (e) => finish(null, null, e));
    child.once("close", (code, signal) => finish(code, signal));
  });
}

/** The host pid of the sandbox's init, from bwrap's `--info-fd` (fd 3): `{"child-pid": N}`, written before the shell started. */
function initPidOf(shell: HostShell): number | undefined {
  return Number(/"child-pid"\s*:\s*(\d+)/.exec(shell.takeOutput(3) ?? "")?.[1]) || undefined;
}

/**
 * A task folder its owner left unreadable (`chmod 000 /workspace`) made readable again before the verify opens it:
 * a harness that is not root owns it (the sandbox runs as its uid) and could not open it, so the verify would not
 * run and the task would be unscored. Only a real folder of this process's uid (no link is followed).
 */
function openableByOwner(dir: string): void {
  try {
    const st = lstatSync(dir);
    if (st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o700) !== 0o700)
      chmodSync(dir, (st.mode & 0o7777) | 0o700);
  } catch {
    // opening it says what is wrong
  }
}

/**
 * The folder that holds the task folders closed to other users (its group and other bits cleared), when it is this
 * process's own. Under a harness that is not root the sandbox's uid is the harness's: a file the task makes is the
 * harness's user's on the host, with whatever mode the task gave it, and a set-user-ID program there (the mounts
 * inside are nosuid, the host's folder is not) would run as that user for anyone who reaches it. No sandbox needs
 * the path: bwrap binds each folder by a descriptor opened here.
 */
function closeToOthers(dir: string): void {
  try {
    const st = lstatSync(dir);
    if (st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) !== 0) chmodSync(dir, st.mode & 0o7700);
  } catch {
    // The task folder's own opening says what is wrong.
  }
}

/** lchown of a folder and everything under it (links are not followed). */
function chownTree(dir: string, uid: number, gid: number): void {
  lchownSync(dir, uid, gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) chownTree(path, uid, gid);
    else lchownSync(path, uid, gid);
  }
}

/** When a process started (field 22 of /proc/<pid>/stat, in clock ticks since boot); undefined when it is gone. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** Signals `pid` only while it is the process that started at `start` (not one that got its pid after it ended). */
function killIfSame(pid: number | undefined, start: string | undefined, signal: NodeJS.Signals): void {
  if (pid !== undefined && start !== undefined && processStart(pid) === start) killQuietly(pid, signal);
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}
