/**
 * One Docker sandbox (a container) as an Environment: commands in a persistent shell or one exec each, files
 * through the archive API or a shell, background processes, the verify step, snapshots, and clean-up.
 */
import { coalesced } from "../coalesced.js";
import { sleep } from "../../../src/core/abort.js";
import { networkModeFor } from "./docker_network.js";
import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import type Docker from "dockerode";
import { BackgroundProcessManager } from "../background.js";
import {
  type BackgroundStatus,
  type Environment,
  type ExecOptions,
  type ExecResult,
  type VerifyOptions,
  EnvironmentLostError,
  MAX_FILE_READ_BYTES,
  removePythonShadows,
  writableTree,
  shellWriteErrorCode,
  type BackgroundStartOptions,
  type BackgroundStarted,
} from "../base.js";
import { ContainerFileError } from "./docker_archive.js";
import {
  dockerClient,
  dockerErrorMessage,
  removeContainerById,
  statusCodeOf,
  type ImageInfo,
} from "./docker_client.js";
import { runExecRaw, runPlainCommand } from "./docker_exec.js";
import { PersistentShell } from "./docker_shell.js";
import { CarriedState } from "../shell/carried_state.js";
import { spawnInContainer } from "./docker_piped.js";
import type { PipedProcess, PipedSpawnOptions } from "../piped_process.js";
import { DiskQuota } from "../disk_quota.js";
import type { RunUser } from "./docker_user.js";
import { workdirQuota, type DockerOptions } from "./docker_options.js";
import type { SandboxPlan } from "./docker_start.js";
import { liveContainers } from "./docker_live.js";
import { containerStopCause, memoryWedge, type StopCause } from "./docker_stop_cause.js";
import { type SandboxGates, type SandboxPermit } from "../sandbox_gates.js";
const MAX_SHELL_RESTARTS = 3;
/** What bash and sh say when fork() fails (EAGAIN under the pids limit). */
const FORK_FAILURE =
  /fork: (retry: )?(Resource temporarily unavailable|Cannot allocate memory)|can't fork|Cannot fork/i;
/** Liveness probes after a fork failure: how many, how far apart, how long each may take. */
const PROBES = 3;
const PROBE_GAP_MS = 500;
const PROBE_MS = 15_000;

/** After the persistent shell ended: how long the container is watched for a stop. */
const SHELL_END_SETTLE_MS = 2_000;

/** How many times a kill pass that did not finish is tried, and the pause before each retry (times the attempt). */
const KILL_PASS_ATTEMPTS = 5;
const KILL_PASS_RETRY_MS = 200;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * One pass of stopProcesses, as whichever user runs it (POSIX sh, builtins only: no process of its own): SIGSTOP,
 * then SIGKILL, to every process but the container's init (pid 1), the keep-alive (init's earliest child) and
 * itself, repeated while any was signalled (forks that raced a pass); a stopped process forks no more, so a fork
 * bomb cannot refill the pids limit between the two. Then `left UID` for each process still there (one another
 * uid owns) and `done`. A redirection's error goes where the redirections before it on the line say (dash), so
 * `2>/dev/null` comes first: a process gone since the listing is not one line of stderr each.
 */
const KILL_PASS = [
  `keep=; best=`,
  `for d in /proc/[0-9]*; do read -r l 2>/dev/null < "$d/stat" || continue; r=\${l##*) }; set -- $r; [ "$2" = 1 ] || continue; if [ -z "$best" ] || [ "\${20}" -lt "$best" ]; then best=\${20}; keep=\${d#/proc/}; fi; done`,
  `sig() { s=$1; n=0; for d in /proc/[0-9]*; do p=\${d#/proc/}; case $p in 1|$$|"$keep") continue ;; esac; read -r l 2>/dev/null < "$d/stat" || continue; r=\${l##*) }; set -- $r; [ "$1" = Z ] && continue; kill -$s "$p" 2>/dev/null && n=$((n+1)); done; }`,
  `i=0; while [ $i -lt 50 ]; do sig STOP; sig KILL; [ $n -eq 0 ] && break; i=$((i+1)); done`,
  `for d in /proc/[0-9]*; do p=\${d#/proc/}; case $p in 1|$$|"$keep") continue ;; esac; read -r l 2>/dev/null < "$d/stat" || continue; r=\${l##*) }; set -- $r; [ "$1" = Z ] && continue; while read -r k v _; do [ "$k" = Uid: ] && echo "left $v"; done 2>/dev/null < "$d/status"; done`,
  `echo done`,
].join("\n");

/**
 * $1 the file, $2 how many bytes at most: a regular file (through links) is copied to stdout; anything else (a FIFO
 * that would block, a device such as /dev/zero without end) is refused. The errors say what `cat` would say.
 */
const READ_FILE = [
  `f=$1`,
  `[ -e "$f" ] || { echo "$f: No such file or directory" >&2; exit 1; }`,
  `[ -d "$f" ] && { echo "$f: Is a directory" >&2; exit 1; }`,
  `[ -f "$f" ] || { echo "$f: Not a regular file" >&2; exit 1; }`,
  `exec head -c "$2" -- "$f"`,
].join("\n");

/**
 * $1 the file, $2 the workdir: folders under the workdir on the way made real (links and files there removed) and
 * writable by their owner (an agent may have left its own folders read-only: the files could not be put and the
 * verify would not run), whatever is at $1 removed, then stdin written there.
 */
const PUT_FILE = [
  `f=$1; base=$2; rel=\${f#"$base"/}; p=$base; d=`,
  `case $f in "$base"/*) case $rel in */*) d=\${rel%/*} ;; esac ;; *) p=; d=\${f%/*}; d=\${d#/} ;; esac`,
  `[ -n "$p" ] && chmod u+rwx -- "$p" 2>/dev/null`,
  `IFS=/; set -f; for c in $d; do [ -n "$c" ] || continue; p=$p/$c; if [ -L "$p" ] || { [ -e "$p" ] && [ ! -d "$p" ]; }; then rm -rf -- "$p" || exit 1; fi; [ -d "$p" ] || mkdir -- "$p" || exit 1; chmod u+rwx -- "$p" 2>/dev/null; done; unset IFS; set +f`,
  writableTree('"$f"'),
  `rm -rf -- "$f" && cat > "$f" || exit 1`,
  removePythonShadows("f", "exit 1"),
].join("\n");

/**
 * The container's processes other than its init and keep-alive, as the engine lists them (`ps` on the engine's
 * host, not a program of the container's): `PID COMMAND` of each, zombies aside. The keep-alive is init's child
 * running the container's own command; an agent's process cannot stand in for it, since init and the whole
 * container end when the keep-alive does.
 */
async function processesLeft(container: Docker.Container): Promise<string[]> {
  const [top, info] = await Promise.all([
    container.top({ ps_args: "-o pid,ppid,stat,args" }) as Promise<{ Processes?: string[][] }>,
    container.inspect(),
  ]);
  const init = String(info.State.Pid);
  const keepAlive = [...(info.Config.Entrypoint ?? []), ...(info.Config.Cmd ?? [])].join(" ");
  let keptAlive = false;
  const left: string[] = [];
  for (const [pid, ppid, stat, args] of top.Processes ?? []) {
    if (pid === init || stat?.startsWith("Z")) continue;
    if (!keptAlive && ppid === init && args === keepAlive) {
      keptAlive = true;
      continue;
    }
    left.push(`${pid} ${args ?? ""}`);
  }
  return left;
}

/**
 * Where `sh` is found on an image's PATH, and the file that makes every dynamically linked program load a library
 * first. Not the loader and libc: an `apt-get install` upgrades them for good reasons (libc6), and a library put
 * ahead through `ldconfig` is not seen here either.
 */
const SHELL_FILES = /^(?:\/usr)?(?:\/local)?\/s?bin\/(?:sh|dash|bash|ash|busybox)$|^\/etc\/ld\.so\.preload$/;

/**
 * What of the shell the verify step runs through (`sh -c`, found on the image's PATH) the agent added, changed or
 * removed outside its folders, from the engine's diff of the container against its image: a root agent's own
 * `/bin/sh` (or `/usr/local/bin/sh` ahead of it on PATH, or an `/etc/ld.so.preload`) would decide the verify's
 * exit status.
 */
function shellFilesChanged(changes: { Path: string; Kind: number }[] | null | undefined): string[] {
  return (changes ?? []).filter((c) => SHELL_FILES.test(c.Path)).map((c) => c.Path);
}

export class DockerEnvironment implements Environment {
  readonly kind = "docker";
  private shell: PersistentShell | undefined;
  private shellStarting: Promise<PersistentShell | undefined> | undefined;
  private shellFailures = 0;
  private shellDisabled: boolean;
  private background: BackgroundProcessManager | undefined;
  private cleaning: Promise<void> | undefined;
  /** How this sandbox was made, so `isolatedCopy` can make another like it from a snapshot. */
  source:
    | {
        plan: SandboxPlan;
        gates: SandboxGates;
        start: (plan: SandboxPlan, permit: SandboxPermit, gates: SandboxGates) => Promise<DockerEnvironment>;
      }
    | undefined;
  /** The task's EnvironmentSpec.reportLost, set when a task takes this sandbox. */
  onLost: ((reason: string) => void) | undefined;
  private lostReason: string | undefined;
  /**
   * The container is of no more use, and the next call runs in a new one over the same task folder (`renew`):
   * `all`, any call: the agent's own processes ended its keep-alive (a root agent's `kill -9 -1`), and the agent goes
   * on, as the local sandbox replaces a shell the agent killed; `verify`, the verify step's calls: the container
   * stopped or is wedged at its memory limit (the sandbox lost: the agent stops there), or it stopped during the
   * verify step's kill passes.
   */
  private renewal: "all" | "verify" | undefined;
  private renewing: Promise<void> | undefined;
  /** The networks `setNetwork` connected (true) or disconnected: a new container is set the same way. */
  private readonly networks = new Map<string, boolean>();
  /** What the task's set-up did to its container, done again in each new one (`whenRenewed`). */
  private readonly renewSteps: (() => Promise<void>)[] = [];
  /** When this sandbox was made (s): the engine's events of its container are looked up from then. */
  private readonly madeAt = Math.floor(Date.now() / 1000) - 5;
  /** Runs after the container is removed (a snapshot copy removes its image). */
  private afterCleanup: (() => Promise<void>) | undefined;
  /** The workdir's own file system (`disk`), removed after the container. */
  quota: DiskQuota | undefined;

  constructor(
    /** The sandbox's container: a new one once the agent ended the last (`renew`). */
    public container: Docker.Container,
    readonly workdir: string,
    private readonly runUser: RunUser,
    /** Mount points the archive API cannot see into (tmpfs). */
    private readonly tmpfsMounts: string[],
    private readonly options: DockerOptions,
    /** The run-wide sandbox permit (and, while in the warm pool, the warm one), released by cleanup. */
    readonly permit: SandboxPermit,
  ) {
    this.shellDisabled = !options.persistentShell;
    this.carried = new CarriedState(workdir, "/tmp");
  }

  /** The terminal's state carried between its commands (cwd, exports). */
  private readonly carried: CarriedState;

  /** The terminal's current directory (Environment.cwd). */
  get cwd(): string {
    return this.carried.cwd;
  }

  get containerId(): string {
    return this.container.id;
  }

  /** The user commands run as ("uid:gid"), or undefined for the image default (root). */
  get user(): string | undefined {
    return this.runUser.user;
  }

  resolvePath(path: string): string {
    return posix.isAbsolute(path) ? posix.normalize(path) : posix.normalize(posix.join(this.workdir, path));
  }

  private assertOpen(): void {
    if (this.cleaning) throw new Error(`docker environment ${this.container.id.slice(0, 12)} was already cleaned up`);
  }

  private async getShell(): Promise<PersistentShell | undefined> {
    if (this.shellDisabled) return undefined;
    if (this.shell?.alive) return this.shell;
    this.shellStarting ??= (async () => {
      try {
        const shell = await PersistentShell.start(this.container, this.runUser.user);
        if (!shell) this.shellDisabled = true;
        this.shell = shell;
        return shell;
      } catch {
        if (++this.shellFailures >= MAX_SHELL_RESTARTS) this.shellDisabled = true;
        return undefined;
      } finally {
        this.shellStarting = undefined;
      }
    })();
    const shell = await this.shellStarting;
    if (shell && !shell.alive && ++this.shellFailures >= MAX_SHELL_RESTARTS) this.shellDisabled = true;
    return shell;
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    this.assertOpen();
    for (const name of Object.keys(opts.env ?? {})) {
      if (!ENV_NAME.test(name)) throw new Error(`invalid environment variable name '${name}'`);
    }
    const cwd = this.carried.startCwd(opts, (p) => this.resolvePath(p), this.workdir);
    const cap = opts.maxOutputChars ?? this.options.maxOutputChars;
    if (this.lostReason !== undefined) throw new EnvironmentLostError(this.lostReason);
    // The persistent shell ended since the last command (a process the agent left ended the container's keep-alive):
    // this command runs in a new sandbox, as in the local one.
    if (this.shell && !this.shell.alive && !this.renewal && !this.cleaning) {
      const stop = await this.checkStopped("its shell ended");
      if (stop instanceof EnvironmentLostError) throw stop;
    }
    await this.renewed(false, opts.signal);
    try {
      if (opts.stdin === undefined) {
        const shell = await this.getShell();
        // A busy shell means a concurrent call: that one takes the plain path instead of queueing.
        if (shell?.alive && !shell.busy) {
          const state = this.carried.stateFor(opts);
          const result = await shell.run({
            command,
            cwd,
            env: opts.env,
            timeoutMs: opts.timeoutMs,
            signal: opts.signal,
            cap,
            ...(state ? { state } : {}),
          });
          // The shell ended with the command: its container may have stopped with it (the memory limit, the agent's
          // own `kill -9 -1` as root), which the task is told now, not at its next command.
          const ended = !shell.alive && !this.cleaning;
          if (ended && (await this.checkStopped("its shell ended", SHELL_END_SETTLE_MS)) !== "running")
            return this.carried.after(opts, result);
          return await this.afterCommand(this.carried.after(opts, result), ended);
        }
      }
      const state = this.carried.stateFor(opts);
      const result = await runPlainCommand(this.container, {
        command,
        cwd,
        env: opts.env,
        user: this.runUser.user,
        stdin: opts.stdin,
        timeoutMs: opts.timeoutMs,
        signal: opts.signal,
        cap,
        ...(state ? { state } : {}),
      });
      if (state && opts.carry === true) result.cwd = await this.savedCwd(state);
      return await this.afterCommand(this.carried.after(opts, result), false);
    } catch (err) {
      throw await this.explain(err);
    }
  }

  /**
   * The cwd a carried command run as its own exec saved (its state file's first line, then reset), read by an exec
   * of the harness's own after it ended, as the persistent shell reads it: never from the command's output.
   */
  private async savedCwd(state: string): Promise<string | undefined> {
    const r = await runExecRaw(this.container, {
      cmd: ["sh", "-c", `IFS= read -r c < "$1" && printf '%s' "$c"; { printf '\\n'; } 1<> "$1"`, "hb", `${state}.cwd`],
      user: this.runUser.user,
    }).catch(() => undefined);
    const cwd = r?.stdout.toString("utf8");
    return cwd?.startsWith("/") ? cwd : undefined;
  }

  /**
   * A command that could not fork may have met a passing peak of the pids limit, or a sandbox that a fork bomb
   * keeps full: probes (one fork inside the sandbox, by dash, which does not retry) tell them apart. The sandbox
   * is lost when PROBES in a row, PROBE_GAP_MS apart, cannot fork or do not answer within PROBE_MS.
   */
  private async afterCommand(result: ExecResult, shellEnded: boolean): Promise<ExecResult> {
    // Killed (or its shell with it), or unable to fork: its memory may be held by files no process's end gives back.
    const forkFailed = FORK_FAILURE.test(result.stderr) || FORK_FAILURE.test(result.stdout);
    if ((shellEnded || result.exitCode === 137 || forkFailed) && (await this.loseIfWedged())) return result;
    if (this.quota?.full() && /No space left on device/.test(result.stdout + result.stderr)) {
      this.lose(`disk_limit: the task folder is full (its quota is ${Math.round(this.quota.bytes / 2 ** 20)} MiB)`);
      return result;
    }
    if (!forkFailed) return result;
    let why = "";
    for (let attempt = 0; attempt < PROBES; attempt++) {
      if (attempt > 0) await sleep(PROBE_GAP_MS);
      why = await this.forkProbe();
      if (why === "") return result;
    }
    this.lose(
      `pids_limit: sandbox can no longer start a process (its pids limit stays full, e.g. a fork bomb): ${why}`,
    );
    return result;
  }

  /**
   * "" when the sandbox has room for processes, else why not: a fork by dash inside it fails, or the pids
   * cgroup (v2 or v1) stays within 2 of its limit, which a fork bomb's churn keeps it at.
   */
  private async forkProbe(): Promise<string> {
    const text = (b: Buffer) => b.toString("utf8").trim().slice(0, 200);
    const probe = (async () => {
      const pids = await runExecRaw(this.container, {
        cmd: ["cat", "/sys/fs/cgroup/pids.current", "/sys/fs/cgroup/pids/pids.current"],
      });
      const current = Number(/\d+/.exec(pids.stdout.toString("utf8"))?.[0] ?? NaN);
      if (current >= this.options.pidsLimit - 2) return `${current} of ${this.options.pidsLimit} processes in use`;
      const r = await runExecRaw(this.container, { cmd: ["sh", "-c", "/bin/true & wait $!"], user: this.runUser.user });
      return r.exitCode === 0 ? "" : text(r.stderr) || `probe exit ${r.exitCode}`;
    })().catch((err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 200));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>(
      (resolve) => (timer = setTimeout(() => resolve(`no answer in ${PROBE_MS / 1000} s`), PROBE_MS)),
    );
    try {
      return await Promise.race([probe, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Marks the sandbox lost once and tells the task (EnvironmentSpec.reportLost). */
  private lose(reason: string): EnvironmentLostError {
    if (this.lostReason === undefined) {
      this.lostReason = reason;
      this.onLost?.(reason);
    }
    return new EnvironmentLostError(this.lostReason);
  }

  /** Turns engine errors into messages that say what happened to the sandbox. */
  private async explain(err: unknown): Promise<Error> {
    if (err instanceof EnvironmentLostError || this.cleaning)
      return err instanceof Error ? err : new Error(String(err));
    // Any failure of the command path (an engine error, the persistent shell's stream ending) may mean the
    // container is gone or stopped: then no later call can succeed and the task must not go on.
    const why = dockerErrorMessage(err);
    const stop = await this.checkStopped(why);
    if (stop instanceof EnvironmentLostError) return stop;
    if (stop === "renew")
      return new Error(
        `${why}: the sandbox's container was ended from inside (its keep-alive killed); the next call runs in a new sandbox over the task folder`,
      );
    return err instanceof Error ? err : new Error(String(err));
  }

  /**
   * Whether the container still runs (watched for `settleMs`: the engine marks it stopped a moment after its
   * processes died), and else what follows for the task (`why`: what the harness met): the agent's own end of its
   * keep-alive, a new sandbox at the next call (`renew`); the memory limit, the sandbox lost as a memory_limit and
   * the verify step in a new sandbox; anything else (an engine's or a person's kill, the keep-alive's own end), the
   * sandbox lost.
   */
  private async checkStopped(why: string, settleMs = 0): Promise<"running" | "renew" | EnvironmentLostError> {
    const stop = await this.stopCause(settleMs);
    if (!stop) return "running";
    const id = this.container.id.slice(0, 12);
    if (stop.cause === "self") {
      this.renewal = "all";
      this.source?.plan.onEvent?.(
        `sandbox container ${id} was ended from inside (its keep-alive killed: ${why}); the next call starts a new sandbox over the task folder`,
      );
      return "renew";
    }
    if (stop.cause === "memory") {
      this.renewal = "verify";
      return this.lose(
        `memory_limit: sandbox container ${id} stopped: the kernel killed its own processes for exceeding its memory limit (${this.options.memoryMb} MiB)`,
      );
    }
    return this.lose(`sandbox container ${id} is ${stop.status}: ${why}`);
  }

  /** Why the container no longer runs (undefined while it runs): see docker_stop_cause.ts. */
  private stopCause(settleMs = 0): Promise<StopCause | undefined> {
    return containerStopCause(this.container, { settleMs, since: this.madeAt, runAsRoot: this.runUser.uid === 0 });
  }

  /**
   * Whether files in the container's memory file systems (tmpfs: /tmp, /dev/shm) hold its memory so near its limit
   * that no process can start in it (WEDGE_HEADROOM_MB): the container runs, but each exec is killed for memory, the
   * verify step's included. Then the sandbox is lost as a memory_limit, and the verify step runs in a new sandbox
   * over the task folder. Asked only when those file systems can hold that much.
   */
  private async loseIfWedged(): Promise<boolean> {
    const why = await this.wedged();
    if (!why) return false;
    this.renewal = "verify";
    this.lose(
      `memory_limit: sandbox container ${this.container.id.slice(0, 12)} stays at its memory limit (${this.options.memoryMb} MiB): ${why}`,
    );
    return true;
  }

  /** What holds the container wedged at its memory limit (see loseIfWedged), or undefined when it is not. */
  private wedged(): Promise<string | undefined> {
    if (this.cleaning) return Promise.resolve(undefined);
    return memoryWedge(this.container, this.options);
  }

  /**
   * Runs `renew` when the container is to be replaced for this call (`forVerify`: a call of the verify step's),
   * once for concurrent calls. A new sandbox for the agent that cannot start loses the sandbox.
   */
  private async renewed(forVerify: boolean, signal?: AbortSignal): Promise<void> {
    while (this.renewal === "all" || (forVerify && this.renewal === "verify")) {
      const agent = this.renewal === "all";
      this.renewing ??= this.renew(signal).finally(() => (this.renewing = undefined));
      try {
        await this.renewing;
      } catch (err) {
        if (!agent || this.cleaning) throw err;
        throw this.lose(
          `sandbox container ${this.container.id.slice(0, 12)} was ended from inside, and a new sandbox could not start: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
  }

  /**
   * A new container for this sandbox, started as the last one was (the task's image, limits, user, network,
   * labels; this sandbox's permit), over the same task folder: its own file system (`disk`), which outlives a
   * container, is bound again; without one the agent's files went with the container, and the new one has the
   * image's. The last container is removed first (gone already, or wedged at its memory limit): nothing of the
   * agent's runs beside the new one. Its keep-alive is the image's (the image is the task's, which the agent never
   * wrote). The networks are set as `setNetwork` left them; the persistent shell and background processes start
   * anew.
   */
  private async renew(signal?: AbortSignal): Promise<void> {
    const source = this.source;
    if (!source) throw new Error("this docker sandbox was not started for a task: it cannot be started again");
    // Its container is removed below (paused first when its folder is carried over).
    this.shell?.discard();
    this.shell = undefined;
    const old = this.container;
    const drop = async () => {
      await removeContainerById(old.id);
      liveContainers.delete(old.id);
    };
    // The task folder is copied from the last container when it has no file system of its own: that one is paused
    // meanwhile (nothing of the agent's runs beside the new one), and removed after.
    const carry = this.carryWorkdir && !this.quota;
    this.carryWorkdir = false;
    if (carry) await old.pause();
    else await drop();
    let next: DockerEnvironment;
    try {
      next = await source.start(
        { ...source.plan, role: "task", ...(this.quota ? { quota: this.quota } : {}), ...(signal ? { signal } : {}) },
        this.permit,
        source.gates,
      );
      if (carry)
        await this.copyWorkdir(old, next.container).catch(async (err: unknown) => {
          await removeContainerById(next.container.id).catch(() => undefined);
          liveContainers.delete(next.container.id);
          throw err;
        });
    } finally {
      if (carry) await drop();
    }
    this.container = next.container;
    liveContainers.set(next.container.id, this);
    this.background = undefined;
    this.shellFailures = 0;
    this.shellDisabled = !this.options.persistentShell || this.stoppedForVerify;
    this.renewal = undefined;
    for (const [network, connected] of this.networks) await this.switchNetwork(network, connected);
    for (const step of this.renewSteps) await step();
  }

  /**
   * The task folder of `from` (paused, or its processes ended) in place of the image's in `to`, a new container: emptied
   * first by the image's own `sh` as root, so what the agent removed stays removed, then the engine's archive of it
   * (links in it kept as links, owners and modes as they were) put there.
   */
  private async copyWorkdir(from: Docker.Container, to: Docker.Container): Promise<void> {
    const empty = await runExecRaw(to, {
      cmd: ["sh", "-c", 'cd "$1" && rm -rf -- * .[!.]* ..?*', "hb", this.workdir],
      user: "0:0",
    });
    if (empty.exitCode !== 0)
      throw new Error(
        `could not empty the task folder of a new container: ${empty.stderr.toString("utf8").trim().slice(0, 200) || `exit ${empty.exitCode}`}`,
      );
    // Its contents (`/.`) put into it: the new container's root may be read-only (the folder a volume there).
    const tar = await from.getArchive({ path: `${this.workdir.replace(/\/$/, "")}/.` });
    await to.putArchive(tar, { path: this.workdir });
  }

  /**
   * `step` runs in each new container of this sandbox (`renew`), before anything else: a task's set-up that
   * changed the image's files (a Harbor task's /tests removed, its /logs made) does it there too.
   */
  whenRenewed(step: () => Promise<void>): void {
    this.renewSteps.push(step);
  }

  /**
   * The real path of `path` inside the container as the task user resolves it, for the approval gate (a
   * delete through a link is judged by where it leads); null when it does not exist or cannot be resolved.
   */
  realpath(path: string): Promise<string | null> {
    return this.realpathCoalesced(path);
  }

  /** The gate's calls for one command's paths, made at once, answered by one exec. */
  private readonly realpathCoalesced = coalesced((paths: string[]) => this.realpaths(paths));

  /** Each path's realpath in one exec (NUL-separated: a path may hold a newline); null where it does not resolve. */
  async realpaths(paths: readonly string[]): Promise<(string | null)[]> {
    const none = paths.map(() => null);
    if (this.lostReason !== undefined || paths.length === 0) return none;
    try {
      this.assertOpen();
      await this.renewed(false);
      const full = paths.map((p) => this.resolvePath(p));
      const res = await runExecRaw(this.container, {
        cmd: [
          "sh",
          "-c",
          'for p; do if { [ -e "$p" ] || [ -L "$p" ]; } && r=$(readlink -f "$p"); then printf "%s\\0" "$r"; ' +
            'else printf "\\0"; fi; done',
          "hb",
          ...full,
        ],
        user: this.runUser.user,
      });
      if (res.exitCode !== 0) return none;
      const answers = res.stdout.toString("utf8").split("\0");
      // N answers, each ended by a NUL: N + 1 parts, the last one empty.
      if (answers.length !== paths.length + 1) return none;
      return paths.map((_, i) => (answers[i]!.startsWith("/") ? answers[i]! : null));
    } catch {
      return none;
    }
  }

  async readFile(path: string): Promise<Buffer> {
    this.assertOpen();
    const full = this.resolvePath(path);
    // As the task user in the running container (not the engine's archive API, which reads as root): a file
    // that user cannot read is not read, and a symlink resolves with that user's rights.
    if (this.lostReason !== undefined) throw new EnvironmentLostError(this.lostReason);
    await this.renewed(false);
    // Only a regular file (what a link leads to), and at most MAX_FILE_READ_BYTES + 1 of it: the whole output is kept in
    // memory and the exec has no time limit, so a FIFO would hold the task and a link to /dev/zero grow this process.
    const res = await runExecRaw(this.container, {
      cmd: ["sh", "-c", READ_FILE, "hb", full, String(MAX_FILE_READ_BYTES + 1)],
      user: this.runUser.user,
    }).catch(async (err: unknown) => {
      throw await this.explain(err);
    });
    if (res.exitCode !== 0) {
      const msg = res.stderr.toString("utf8").trim();
      throw new ContainerFileError(
        `${full}: ${msg || "cannot read"}`,
        /directory/i.test(msg) ? "EISDIR" : /no such/i.test(msg) ? "ENOENT" : "EIO",
      );
    }
    if (res.stdout.length > MAX_FILE_READ_BYTES)
      throw new ContainerFileError(`${full}: File is larger than ${MAX_FILE_READ_BYTES} bytes`, "EIO");
    return res.stdout;
  }

  async writeFile(path: string, data: string | Buffer): Promise<void> {
    this.assertOpen();
    const full = this.resolvePath(path);
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    // As the task user, through the kernel: a write through a symlink lands on (and is allowed by) its target. Not
    // into a FIFO or a device (the exec has no time limit: a FIFO nobody reads would hold the task).
    const script =
      'd=${1%/*}; if [ -n "$d" ]; then mkdir -p "$d" || exit 1; fi; ' +
      'if [ -e "$1" ] && [ ! -f "$1" ] && [ ! -d "$1" ]; then echo "$1: Not a regular file" >&2; exit 1; fi; cat > "$1"';
    if (this.lostReason !== undefined) throw new EnvironmentLostError(this.lostReason);
    await this.renewed(false);
    const res = await runExecRaw(this.container, {
      cmd: ["sh", "-c", script, "hb", full],
      user: this.runUser.user,
      stdin: buf,
    }).catch(async (err: unknown) => {
      throw await this.explain(err);
    });
    if (res.exitCode !== 0) {
      const msg = `${full}: ${res.stderr.toString("utf8").trim() || "cannot write"}`;
      throw new ContainerFileError(msg, shellWriteErrorCode(msg) ?? "EIO");
    }
  }

  private async backgroundManager(): Promise<BackgroundProcessManager> {
    // Those of a container the agent ended went with it: a new container has a manager of its own.
    await this.renewed(false);
    if (!this.background) {
      const probe = await this.exec("command -v bash >/dev/null 2>&1 && echo bash || echo sh", { timeoutMs: 10_000 });
      const shell = probe.stdout.trim() === "bash" ? "bash" : "sh";
      this.background ??= new BackgroundProcessManager((cmd, o) => this.exec(cmd, o), {
        stateDir: "/tmp/.hermes-bg",
        shell,
        maxOutputChars: this.options.maxOutputChars,
      });
    }
    return this.background;
  }

  /** A process in the container whose stdin and stdout the harness holds (an MCP server; docker_piped.ts). */
  async spawnPiped(argv: string[], opts?: PipedSpawnOptions): Promise<PipedProcess> {
    this.assertOpen();
    if (this.lostReason !== undefined) throw new EnvironmentLostError(this.lostReason);
    await this.renewed(false);
    return spawnInContainer(
      this.container,
      this.runUser.user,
      opts?.cwd ? this.resolvePath(opts.cwd) : this.workdir,
      argv,
      opts,
    );
  }

  async startBackground(command: string, opts?: BackgroundStartOptions): Promise<BackgroundStarted> {
    this.assertOpen();
    const cwd = opts?.cwd ? this.resolvePath(opts.cwd) : opts?.carry ? this.carried.cwd : this.workdir;
    return (await this.backgroundManager()).start(command, { ...opts, cwd });
  }

  async pollBackground(id: string): Promise<BackgroundStatus> {
    return (await this.backgroundManager()).poll(id);
  }

  async killBackground(id: string): Promise<void> {
    return (await this.backgroundManager()).kill(id);
  }

  async writeBackground(id: string, data: string): Promise<void> {
    return (await this.backgroundManager()).writeStdin(id, data);
  }

  async closeBackgroundStdin(id: string): Promise<void> {
    return (await this.backgroundManager()).closeStdin(id);
  }

  async listBackground(): Promise<BackgroundStatus[]> {
    if (!this.background) return [];
    return this.background.list();
  }

  /**
   * Ends every process the agent started, tracked or not (`cmd &`, `nohup`, `setsid`, a uid it switched to as
   * root), its persistent shell included, and makes sure none is left: passes of SIGSTOP then SIGKILL to every
   * process of the container but its init, the keep-alive and the pass itself, first as root (which holds CAP_KILL
   * in a sandbox of an unprivileged run user: `capabilitiesFor`), then as the uid of each survivor (a root run user
   * has no CAP_KILL over the uids it switched to), until a last pass as root finds none. A pass that did not finish
   * (killed by a process it raced, or unable to fork under a full pids limit) is tried again. Throws when some
   * survive (verify must not run then). Later commands of this sandbox use one exec each, never a persistent shell
   * again. A container stopped or wedged at its memory limit, or ended by the agent (its keep-alive killed, before
   * or during the passes), is replaced first by a new one over the same task folder (`renew`), where this runs.
   */
  async stopProcesses(): Promise<void> {
    this.assertOpen();
    await this.renewed(true);
    // No exec of the harness's could run in it.
    if (await this.wedged()) {
      this.renewal = "verify";
      await this.renewed(true);
    }
    // The passes would run through the agent's own shell: none is tried there, the verify runs in a new container.
    if (await this.freshIfShellChanged()) {
      await this.renewed(true);
      await this.endProcesses();
    } else {
      try {
        await this.endProcesses();
      } catch (err) {
        const stop = await this.stopCause(SHELL_END_SETTLE_MS).catch(() => undefined);
        if (stop?.cause === "other") throw err;
        // Changed while the passes ran (by a process of the agent's they raced), which then ran through it.
        if (!stop && !(await this.freshIfShellChanged()) && !(await this.wedged())) throw err;
        this.renewal = "verify";
        await this.renewed(true);
        await this.endProcesses();
      }
    }
    this.stoppedForVerify = true;
  }

  /**
   * When the agent changed the shell the verify step runs through (SHELL_FILES, from the engine's diff of the
   * container against its image: a root agent's own `/bin/sh`, an apt upgrade of bash or dash), the verify step is
   * graded in a new container of the task's image, which the agent never wrote, over the task folder (`renew`,
   * the folder carried over: its own file system bound again, else copied), as SWE-bench grades an agent's work in
   * a fresh container: what the agent installed or changed outside its folder is not there. The verify's output
   * says so (`runVerify`), and the task's events too. False when the shell is the image's (or the container gone).
   */
  private async freshIfShellChanged(): Promise<boolean> {
    const changed = shellFilesChanged(await this.container.changes().catch(() => null));
    if (changed.length === 0) return false;
    const files = changed.slice(0, 5).join(", ");
    this.freshBecause = `the agent changed ${files}, which the verify step runs through`;
    this.carryWorkdir = true;
    this.renewal = "verify";
    this.source?.plan.onEvent?.(
      `sandbox container ${this.container.id.slice(0, 12)}: ${this.freshBecause}; the verify runs in a new container of the task's image over the task folder`,
    );
    return true;
  }

  /** stopProcesses in the container as it is. */
  private async endProcesses(): Promise<void> {
    this.shell?.close();
    this.shell = undefined;
    this.shellDisabled = true;
    const once = async (user: string): Promise<string[]> => {
      const r = await runExecRaw(this.container, { cmd: ["sh", "-c", KILL_PASS], user });
      const out = r.stdout.toString("utf8");
      if (!/^done$/m.test(out))
        throw new Error(
          `could not end the agent's processes: ${r.stderr.toString("utf8").trim().slice(0, 200) || `exit ${r.exitCode}`}`,
        );
      return [
        ...new Set(
          out
            .split("\n")
            .filter((l) => /^left \d+$/.test(l))
            .map((l) => l.slice(5)),
        ),
      ];
    };
    const pass = async (user: string): Promise<string[]> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await once(user);
        } catch (err) {
          if (attempt >= KILL_PASS_ATTEMPTS) throw err;
          await sleep(KILL_PASS_RETRY_MS * attempt);
        }
      }
    };
    let left = await pass("0:0");
    for (let round = 0; round < 3 && left.length > 0; round++) {
      const next = new Set<string>();
      for (const uid of left) for (const u of await pass(`${uid}:${uid}`)) next.add(u);
      left = [...next];
    }
    const last = await pass("0:0");
    if (last.length > 0)
      throw new Error(`processes of uid ${last.join(", ")} survived the end of the agent's processes`);
    // The passes ran the container's own `sh`, which an agent running as root may have replaced by one that
    // prints `done` and kills nothing: what is left, and what the verify's `sh` is, are read from the engine.
    const survivors = await processesLeft(this.container);
    if (survivors.length > 0)
      throw new Error(
        `${survivors.length} process(es) of the agent survived the end of its processes (seen by the engine: ${survivors.join("; ").slice(0, 200)})`,
      );
    const changed = shellFilesChanged(await this.container.changes());
    if (changed.length > 0)
      throw new Error(`the agent changed ${changed.slice(0, 5).join(", ")}, which the verify step runs through`);
  }

  /** Why the verify step runs in a new container of the task's image (the agent changed its shell), said in its output. */
  freshBecause: string | undefined;
  /** The next `renew` copies the task folder from the last container (paused) when it has no file system of its own. */
  private carryWorkdir = false;

  /** stopProcesses() ran: nothing of the agent's runs in the container any more. */
  private stoppedForVerify = false;

  /**
   * The verify step out of the agent's reach: after stopProcesses, each verify file is written by an exec of its
   * own (over whatever is at its path: a link there is removed, not written through; a link or file on the way
   * under the workdir becomes a real folder), then the command runs in a new exec whose exit code the engine
   * reports: no persistent shell, no marker.
   */
  async runVerify(command: string, opts: VerifyOptions = {}): Promise<ExecResult> {
    this.assertOpen();
    await this.renewed(true, opts.signal);
    if (!this.stoppedForVerify) await this.stopProcesses();
    for (const f of opts.files ?? []) {
      const full = this.resolvePath(f.path);
      const res = await runExecRaw(this.container, {
        cmd: ["sh", "-c", PUT_FILE, "hb", full, this.workdir],
        user: this.runUser.user,
        stdin: f.data,
      });
      if (res.exitCode !== 0) {
        const msg = `${full}: ${res.stderr.toString("utf8").trim() || "cannot write"}`;
        // The engine ran the put and the container refused it (its file system full, a folder of the agent's): a
        // failed verify, as in the local sandbox, not an undecided one that the agent could choose to be.
        if (res.exitCode !== null)
          return {
            exitCode: 125,
            stdout: "",
            stderr: `verify: cannot put ${msg}`,
            timedOut: false,
            truncated: false,
          };
        throw new ContainerFileError(msg, shellWriteErrorCode(msg) ?? "EIO");
      }
    }
    const result = await runPlainCommand(this.container, {
      command,
      cwd: this.workdir,
      user: this.runUser.user,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      cap: opts.maxOutputChars ?? this.options.maxOutputChars,
    });
    if (this.freshBecause === undefined) return result;
    const note = `verify ran in a new container of the task's image over the task folder: ${this.freshBecause}`;
    return { ...result, stdout: result.stdout ? `${note}\n${result.stdout}` : note };
  }

  async execAs(command: string, opts: ExecOptions & { user?: string }): Promise<ExecResult> {
    this.assertOpen();
    // A Harbor verifier's commands in a new container, once the last one stopped.
    await this.renewed(true, opts.signal);
    return runPlainCommand(this.container, {
      command,
      cwd: opts.cwd ? this.resolvePath(opts.cwd) : this.workdir,
      user: opts.user ?? this.runUser.user,
      env: opts.env,
      stdin: opts.stdin,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      cap: opts.maxOutputChars ?? this.options.maxOutputChars,
    });
  }

  async setNetwork(network: string, connected: boolean): Promise<void> {
    this.assertOpen();
    await this.renewed(true);
    await this.switchNetwork(network, connected);
    this.networks.set(network, connected);
  }

  /** Connects the container to `network` or disconnects it, when it is not so already. */
  private async switchNetwork(network: string, connected: boolean): Promise<void> {
    const mode = networkModeFor(network);
    const networks = (await this.container.inspect()).NetworkSettings?.Networks ?? {};
    if (Object.hasOwn(networks, mode) === connected) return;
    const net = dockerClient().getNetwork(mode);
    if (connected) await net.connect({ Container: this.container.id });
    else await net.disconnect({ Container: this.container.id, Force: true });
  }

  /**
   * A fresh sandbox from a snapshot of this one, with none of its processes (`--verify-isolated`): the
   * container's filesystem is committed as an image (the workdir copied over when it is a volume), a new
   * hardened container with the same labels, user and limits starts from it, and removing that container
   * removes the image too.
   */
  async isolatedCopy(signal?: AbortSignal): Promise<Environment> {
    this.assertOpen();
    await this.renewed(true, signal);
    const source = this.source;
    if (!source) throw new Error("this docker sandbox was not started for a task: it has no snapshot source");
    const committed = (await this.container.commit({
      repo: "hermes-batch-verify",
      tag: randomBytes(6).toString("hex"),
      pause: true,
    })) as { Id: string };
    const imageId = committed.Id;
    const removeImage = () =>
      dockerClient()
        .getImage(imageId)
        .remove({ force: true })
        .then(
          () => undefined,
          () => undefined,
        );
    try {
      const permit = await source.gates.acquireSandbox(signal);
      const image: ImageInfo = { id: imageId, user: source.plan.image.user, workingDir: this.workdir };
      // The snapshot's own `sleep` may be the agent's: the copy's keep-alive is not found on its PATH.
      const copy = await source.start(
        { ...source.plan, imageName: imageId, image, cwd: this.workdir, role: "task", signal, snapshot: true },
        permit,
        source.gates,
      );
      copy.afterCleanup = removeImage;
      copy.freshBecause = this.freshBecause;
      // Not in the snapshot: a volume's files (put as the folder's contents: the copy's root may be read-only).
      if (source.plan.opts.readOnlyRoot || workdirQuota(source.plan.opts))
        await this.copyWorkdir(this.container, copy.container);
      return copy;
    } catch (err) {
      await removeImage();
      throw err;
    }
  }

  /** Removes the container (which ends every process in it, background ones included). Idempotent. */
  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      // No exec to end the shell first: removing the container ends it.
      this.shell?.discard();
      try {
        // A new container being started is removed with the sandbox.
        await this.renewing?.catch(() => undefined);
        await removeContainerById(this.container.id);
      } finally {
        liveContainers.delete(this.container.id);
        this.permit.release();
        await this.afterCleanup?.();
        await this.quota?.remove(false);
      }
    })();
    return this.cleaning;
  }
}
