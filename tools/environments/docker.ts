/**
 * The Docker backend: one container per task, driven through dockerode (never the docker CLI).
 *
 * Hardening: network none unless asked, all capabilities dropped (see capabilitiesFor), no-new-privileges,
 * pids/memory/CPU limits, a tmpfs /tmp, an unprivileged user when the image has one, optional read-only
 * root with a writable workdir. Leaks: every container carries run/task labels (for `gc`), runs with
 * AutoRemove and a keep-alive that is its own dead-man's switch (`sleep <task timeout + margin>`: when it
 * ends the container exits and the engine deletes it, even if this process was killed with -9), is
 * force-removed by cleanup(), and is listed in a process-wide registry for the runner's signal handlers.
 *
 * With `prewarm` N, up to N sandboxes for the run's default image and options are started ahead of the tasks
 * (role label "warm"; see the warm-pool section below and docker_warm.ts); a task whose spec matches takes one.
 *
 * Commands run in a persistent shell (docker_shell.ts, a few ms each) and fall back to one exec per command
 * (docker_exec.ts, ≈50–100 ms) for stdin, concurrent calls, or images with neither bash nor setsid.
 * Creating and starting a container is retried on transient engine errors (docker_retry.ts), each retry
 * slowing the run-wide start rate (sandbox_gates.ts).
 */
import { sleep } from "../../src/core/abort.js";
import { networkModeFor } from "./docker_network.js";
export { networkModeFor };
import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import type Docker from "dockerode";
import { z } from "zod";
import { BackgroundProcessManager } from "./background.js";
import {
  DEFAULT_OUTPUT_CAP,
  type BackgroundStatus,
  type Environment,
  type EnvironmentFactory,
  type EnvironmentOptions,
  type EnvironmentSpec,
  type ExecOptions,
  type ExecResult,
  type VerifyOptions,
  EnvironmentLostError,
  shellWriteErrorCode,
  type BackgroundStartOptions,
  type BackgroundStarted,
} from "./base.js";
import { ContainerFileError, mkdirViaArchive, readViaArchive } from "./docker_archive.js";
import {
  LABEL_OWNER,
  LABEL_ROLE,
  LABEL_RUN,
  LABEL_TASK,
  dockerClient,
  dockerErrorMessage,
  ensureDockerImage,
  removeContainerById,
  statusCodeOf,
  type ImageInfo,
} from "./docker_client.js";
import { runExecRaw, runPlainCommand } from "./docker_exec.js";
import { withEngineRetry } from "./docker_retry.js";
import { PersistentShell } from "./docker_shell.js";
import { spawnInContainer } from "./docker_piped.js";
import type { PipedProcess, PipedSpawnOptions } from "./piped_process.js";
import { WarmPool, type WarmPoolStats } from "./docker_warm.js";
import { DiskQuota, diskQuotaUnavailable, parseSize } from "./disk_quota.js";
import { gatesFor, sandboxOwner, type SandboxGates, type SandboxPermit, type WarmPermit } from "./sandbox_gates.js";

export {
  DockerImageNotFoundError,
  DockerUnavailableError,
  LABEL_RUN,
  LABEL_TASK,
  dockerAvailability,
  ensureDockerImage,
  listLabelledContainers,
  removeContainersByLabel,
  type LabelledContainer,
} from "./docker_client.js";
export { TIMEOUT_EXIT_CODE, INTERRUPT_EXIT_CODE } from "./docker_exec.js";

/** Used when neither the row nor the run names an image: what scripts/build-test-image.sh builds. */
export const DEFAULT_DOCKER_IMAGE = "hermes-batch-test:bookworm";
/** Keep-alive length when the runner gives no task timeout. */
const DEFAULT_LIFETIME_SEC = 3600;
const MAX_SHELL_RESTARTS = 3;
/** What bash and sh say when fork() fails (EAGAIN under the pids limit). */
const FORK_FAILURE =
  /fork: (retry: )?(Resource temporarily unavailable|Cannot allocate memory)|can't fork|Cannot fork/i;
/** Liveness probes after a fork failure: how many, how far apart, how long each may take. */
const PROBES = 3;
const PROBE_GAP_MS = 500;
const PROBE_MS = 15_000;

const dockerOptionsSchema = z.object({
  image: z.string().min(1).optional(),
  network: z.string().min(1).optional(),
  memoryMb: z.number().int().positive().default(2048),
  cpus: z.number().positive().default(1),
  /** Variables set on the container, so every command sees them (a Harbor task's [environment].env). */
  containerEnv: z.record(z.string(), z.string()).default({}),
  /** GPUs handed to the container (a Harbor task's [environment].gpus); 0 = none. */
  gpus: z.number().int().nonnegative().default(0),
  pidsLimit: z.number().int().positive().default(512),
  /** Open files per process (soft = hard). nproc is left to the pids cgroup: RLIMIT_NPROC counts a uid's
   *  processes across the whole kernel, so containers sharing uid 1000 would starve each other. */
  nofile: z.number().int().positive().default(8192),
  readOnlyRoot: z.boolean().default(false),
  pull: z.boolean().default(false),
  /** "auto": the image's USER, else its first regular user (uid 1000-65533), else root. Or "root", or "uid[:gid]"/"name". */
  user: z.string().min(1).default("auto"),
  tmpSizeMb: z.number().int().positive().default(512),
  /** Size of the workdir's own file system (a volume bound to a sparse ext4 image); none when undefined. */
  disk: z.string().min(1).optional(),
  /** Seconds the keep-alive outlives the task timeout. */
  deadmanMarginSec: z.number().int().nonnegative().default(120),
  persistentShell: z.boolean().default(true),
  maxOutputChars: z.number().int().positive().default(DEFAULT_OUTPUT_CAP),
});

export type DockerOptions = z.infer<typeof dockerOptionsSchema>;

export function parseDockerOptions(options: EnvironmentOptions): DockerOptions {
  const picked = Object.fromEntries(
    Object.keys(dockerOptionsSchema.shape)
      .filter((k) => options[k] !== undefined && options[k] !== null)
      .map((k) => [k, options[k]]),
  );
  const parsed = dockerOptionsSchema.safeParse(picked);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid docker options: ${issues}`);
  }
  return parsed.data;
}

/**
 * Capabilities on top of CapDrop ALL. An unprivileged user gets none (a non-root process has no effective
 * capabilities anyway, and no-new-privileges blocks setuid/file-capability binaries). Root gets only what
 * ordinary package and file work needs: CHOWN/FOWNER/DAC_OVERRIDE (pip, tar, files owned by other users)
 * and SETUID/SETGID (apt drops to its _apt user). No NET_*, SYS_*, MKNOD, KILL beyond own uid.
 */
export function capabilitiesFor(runAsRoot: boolean): string[] {
  return runAsRoot ? ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID"] : [];
}

interface RunUser {
  /** Passed as Config.User and exec User; undefined = the image default (root). */
  user: string | undefined;
  uid: number;
  gid: number;
}

function parsePasswd(text: string): Array<{ name: string; uid: number; gid: number; shell: string }> {
  return text
    .split("\n")
    .map((line) => line.split(":"))
    .filter((f) => f.length >= 7 && /^\d+$/.test(f[2]!) && /^\d+$/.test(f[3]!))
    .map((f) => ({ name: f[0]!, uid: Number(f[2]), gid: Number(f[3]), shell: f[6]! }));
}

const imageUserCache = new Map<string, Promise<RunUser>>();

/** The /etc/passwd entries of an image, read from a never-started probe container. */
async function readImagePasswd(imageName: string, runName: string): Promise<ReturnType<typeof parsePasswd>> {
  const probe = await withEngineRetry(() =>
    dockerClient().createContainer({
      Image: imageName,
      Entrypoint: ["true"],
      Cmd: [],
      Labels: { [LABEL_RUN]: runName, [LABEL_TASK]: "", [LABEL_ROLE]: "probe" },
      HostConfig: { NetworkMode: "none" },
    }),
  );
  try {
    return parsePasswd((await readViaArchive(probe, "/etc/passwd").catch(() => Buffer.alloc(0))).toString("utf8"));
  } finally {
    await removeContainerById(probe.id).catch(() => undefined);
  }
}

/** The image's first regular user (once per image per process), else root. */
async function detectImageUser(imageName: string, image: ImageInfo, runName: string): Promise<RunUser> {
  const cached = imageUserCache.get(image.id);
  if (cached) return cached;
  const pending = (async (): Promise<RunUser> => {
    const regular = (await readImagePasswd(imageName, runName)).find(
      (u) => u.uid >= 1000 && u.uid < 65534 && !/(nologin|false)$/.test(u.shell),
    );
    return regular
      ? { user: `${regular.uid}:${regular.gid}`, uid: regular.uid, gid: regular.gid }
      : { user: undefined, uid: 0, gid: 0 };
  })();
  imageUserCache.set(image.id, pending);
  pending.catch(() => imageUserCache.delete(image.id));
  return pending;
}

async function resolveRunUser(setting: string, imageName: string, image: ImageInfo, runName: string): Promise<RunUser> {
  if (setting === "root") return { user: "0:0", uid: 0, gid: 0 };
  if (setting === "auto") {
    if (image.user && image.user !== "root" && image.user !== "0" && !image.user.startsWith("0:")) {
      const m = /^(\d+)(?::(\d+))?$/.exec(image.user);
      return { user: image.user, uid: m ? Number(m[1]) : 1000, gid: m?.[2] ? Number(m[2]) : m ? Number(m[1]) : 1000 };
    }
    return detectImageUser(imageName, image, runName);
  }
  const m = /^(\d+)(?::(\d+))?$/.exec(setting);
  if (m) return { user: setting, uid: Number(m[1]), gid: Number(m[2] ?? m[1]) };
  // A user name: the engine resolves it; ownership of new files follows the passwd entry if we find it.
  const passwd = await detectPasswdEntry(imageName, runName, setting);
  return { user: setting, uid: passwd?.uid ?? 0, gid: passwd?.gid ?? 0 };
}

async function detectPasswdEntry(imageName: string, runName: string, name: string) {
  return (await readImagePasswd(imageName, runName)).find((u) => u.name === name);
}

function sanitizeName(s: string, max: number): string {
  return (
    s
      .replace(/[^a-zA-Z0-9_.-]+/g, "-")
      .replace(/^[^a-zA-Z0-9]+/, "")
      .slice(0, max) || "x"
  );
}

// ---------------------------------------------------------------------------------------------------------
// Process-wide registry: every container this process created and has not removed yet.

const liveContainers = new Map<string, DockerEnvironment | undefined>();
let shuttingDown = false;

/**
 * Removes every container this process created (for the runner's SIGINT/SIGTERM handlers). By default the
 * process then refuses new sandboxes, so a creation in flight cannot leave one behind.
 */
export async function cleanupAllDockerEnvironments(opts: { refuseNew?: boolean } = {}): Promise<void> {
  if (opts.refuseNew !== false) shuttingDown = true;
  if (shuttingDown) await drainWarmPool().catch(() => undefined);
  await Promise.all(
    [...liveContainers.entries()].map(async ([id, env]) => {
      if (env) await env.cleanup().catch(() => undefined);
      else await removeContainerById(id).catch(() => undefined);
      liveContainers.delete(id);
    }),
  );
}

/** Containers created by this process and not yet removed (ids). */
export function liveDockerContainers(): string[] {
  return [...liveContainers.keys()];
}

// ---------------------------------------------------------------------------------------------------------

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * One pass of stopProcesses, as whichever user runs it (POSIX sh, builtins only: no process of its own): SIGKILL
 * to every process but the container's init (pid 1), the keep-alive (init's earliest child) and itself, repeated
 * while any was signalled (forks that raced a pass); then `left UID` for each process still there (one another
 * uid owns) and `done`.
 */
const KILL_PASS = [
  `keep=; best=`,
  `for d in /proc/[0-9]*; do read -r l < "$d/stat" 2>/dev/null || continue; r=\${l##*) }; set -- $r; [ "$2" = 1 ] || continue; if [ -z "$best" ] || [ "\${20}" -lt "$best" ]; then best=\${20}; keep=\${d#/proc/}; fi; done`,
  `i=0; while [ $i -lt 50 ]; do n=0; for d in /proc/[0-9]*; do p=\${d#/proc/}; case $p in 1|$$|"$keep") continue ;; esac; read -r l < "$d/stat" 2>/dev/null || continue; r=\${l##*) }; set -- $r; [ "$1" = Z ] && continue; kill -KILL "$p" 2>/dev/null && n=$((n+1)); done; [ $n -eq 0 ] && break; i=$((i+1)); done`,
  `for d in /proc/[0-9]*; do p=\${d#/proc/}; case $p in 1|$$|"$keep") continue ;; esac; read -r l < "$d/stat" 2>/dev/null || continue; r=\${l##*) }; set -- $r; [ "$1" = Z ] && continue; while read -r k v _; do [ "$k" = Uid: ] && echo "left $v"; done < "$d/status"; done`,
  `echo done`,
].join("\n");

/** $1 the file, $2 the workdir: folders under the workdir on the way made real (links and files there removed), whatever is at $1 removed, then stdin written there. */
const PUT_FILE = [
  `f=$1; base=$2; rel=\${f#"$base"/}; p=$base; d=`,
  `case $f in "$base"/*) case $rel in */*) d=\${rel%/*} ;; esac ;; *) p=; d=\${f%/*}; d=\${d#/} ;; esac`,
  `IFS=/; set -f; for c in $d; do [ -n "$c" ] || continue; p=$p/$c; if [ -L "$p" ] || { [ -e "$p" ] && [ ! -d "$p" ]; }; then rm -rf -- "$p" || exit 1; fi; [ -d "$p" ] || mkdir -- "$p" || exit 1; done; unset IFS; set +f`,
  `rm -rf -- "$f" && cat > "$f"`,
].join("\n");

export class DockerEnvironment implements Environment {
  readonly kind = "docker";
  private shell: PersistentShell | undefined;
  private shellStarting: Promise<PersistentShell | undefined> | undefined;
  private shellFailures = 0;
  private shellDisabled: boolean;
  private background: BackgroundProcessManager | undefined;
  private cleaning: Promise<void> | undefined;
  /** How this sandbox was made, so `isolatedCopy` can make another like it from a snapshot. */
  source: { plan: SandboxPlan; gates: SandboxGates } | undefined;
  /** The task's EnvironmentSpec.reportLost, set when a task takes this sandbox. */
  onLost: ((reason: string) => void) | undefined;
  private lostReason: string | undefined;
  /** Runs after the container is removed (a snapshot copy removes its image). */
  private afterCleanup: (() => Promise<void>) | undefined;
  /** The workdir's own file system (`disk`), removed after the container. */
  quota: DiskQuota | undefined;

  constructor(
    readonly container: Docker.Container,
    readonly workdir: string,
    private readonly runUser: RunUser,
    /** Mount points the archive API cannot see into (tmpfs). */
    private readonly tmpfsMounts: string[],
    private readonly options: DockerOptions,
    /** The run-wide sandbox permit (and, while in the warm pool, the warm one), released by cleanup. */
    readonly permit: SandboxPermit,
  ) {
    this.shellDisabled = !options.persistentShell;
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
    const cwd = opts.cwd ? this.resolvePath(opts.cwd) : this.workdir;
    const cap = opts.maxOutputChars ?? this.options.maxOutputChars;
    if (this.lostReason !== undefined) throw new EnvironmentLostError(this.lostReason);
    try {
      if (opts.stdin === undefined) {
        const shell = await this.getShell();
        // A busy shell means a concurrent call: that one takes the plain path instead of queueing.
        if (shell?.alive && !shell.busy) {
          return await this.afterCommand(
            await shell.run({ command, cwd, env: opts.env, timeoutMs: opts.timeoutMs, signal: opts.signal, cap }),
          );
        }
      }
      const result = await runPlainCommand(this.container, {
        command,
        cwd,
        env: opts.env,
        user: this.runUser.user,
        stdin: opts.stdin,
        timeoutMs: opts.timeoutMs,
        signal: opts.signal,
        cap,
      });
      return await this.afterCommand(result);
    } catch (err) {
      throw await this.explain(err);
    }
  }

  /**
   * A command that could not fork may have met a passing peak of the pids limit, or a sandbox that a fork bomb
   * keeps full: probes (one fork inside the sandbox, by dash, which does not retry) tell them apart. The sandbox
   * is lost when PROBES in a row, PROBE_GAP_MS apart, cannot fork or do not answer within PROBE_MS.
   */
  private async afterCommand(result: ExecResult): Promise<ExecResult> {
    if (this.quota?.full() && /No space left on device/.test(result.stdout + result.stderr)) {
      this.lose(`disk_limit: the task folder is full (its quota is ${Math.round(this.quota.bytes / 2 ** 20)} MiB)`);
      return result;
    }
    if (!FORK_FAILURE.test(result.stderr) && !FORK_FAILURE.test(result.stdout)) return result;
    let why = "";
    for (let attempt = 0; attempt < PROBES; attempt++) {
      if (attempt > 0) await sleep(PROBE_GAP_MS);
      why = await this.forkProbe();
      if (why === "") return result;
    }
    this.lose(`sandbox can no longer start a process (its pids limit stays full, e.g. a fork bomb): ${why}`);
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
    const state = await this.container.inspect().then(
      (i) =>
        i.State?.Running
          ? "running"
          : `stopped (${i.State?.Status ?? "?"}${i.State?.OOMKilled ? ", killed for exceeding its memory limit" : ""})`,
      (e: unknown) => (statusCodeOf(e) === 404 ? "gone" : "running"),
    );
    if (state !== "running")
      return this.lose(`sandbox container ${this.container.id.slice(0, 12)} is ${state}: ${dockerErrorMessage(err)}`);
    return err instanceof Error ? err : new Error(String(err));
  }

  /**
   * The real path of `path` inside the container as the task user resolves it, for the approval gate (a
   * delete through a link is judged by where it leads); null when it does not exist or cannot be resolved.
   */
  async realpath(path: string): Promise<string | null> {
    if (this.lostReason !== undefined) return null;
    try {
      this.assertOpen();
      const full = this.resolvePath(path);
      const res = await runExecRaw(this.container, {
        cmd: ["sh", "-c", '{ [ -e "$1" ] || [ -L "$1" ]; } && readlink -f "$1"', "hb", full],
        user: this.runUser.user,
      });
      const out = res.stdout.toString("utf8").trim();
      return res.exitCode === 0 && out.startsWith("/") ? out : null;
    } catch {
      return null;
    }
  }

  async readFile(path: string): Promise<Buffer> {
    this.assertOpen();
    const full = this.resolvePath(path);
    // As the task user in the running container (not the engine's archive API, which reads as root): a file
    // that user cannot read is not read, and a symlink resolves with that user's rights.
    if (this.lostReason !== undefined) throw new EnvironmentLostError(this.lostReason);
    const res = await runExecRaw(this.container, {
      cmd: ["sh", "-c", 'cat "$1"', "hb", full],
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
    return res.stdout;
  }

  async writeFile(path: string, data: string | Buffer): Promise<void> {
    this.assertOpen();
    const full = this.resolvePath(path);
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    // As the task user, through the kernel: a write through a symlink lands on (and is allowed by) its target.
    const script = 'd=${1%/*}; if [ -n "$d" ]; then mkdir -p "$d" || exit 1; fi; cat > "$1"';
    if (this.lostReason !== undefined) throw new EnvironmentLostError(this.lostReason);
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
  spawnPiped(argv: string[], opts?: PipedSpawnOptions): Promise<PipedProcess> {
    this.assertOpen();
    if (this.lostReason !== undefined) throw new EnvironmentLostError(this.lostReason);
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
    const cwd = opts?.cwd ? this.resolvePath(opts.cwd) : this.workdir;
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
   * root), its persistent shell included, and makes sure none is left: passes of SIGKILL to every process of the
   * container but its init, the keep-alive and the pass itself, as the run user and then as the uid of each
   * survivor (root in a container has no CAP_KILL over other uids), until a last pass as root finds none. Throws
   * when some survive (verify must not run then). Later commands of this sandbox use one exec each, never a
   * persistent shell again.
   */
  async stopProcesses(): Promise<void> {
    this.assertOpen();
    this.shell?.close();
    this.shell = undefined;
    this.shellDisabled = true;
    const pass = async (user: string): Promise<string[]> => {
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
    let left = await pass(this.runUser.user ?? "0:0");
    for (let round = 0; round < 3 && left.length > 0; round++) {
      const next = new Set<string>();
      for (const uid of left) for (const u of await pass(`${uid}:${uid}`)) next.add(u);
      left = [...next];
    }
    const last = await pass("0:0");
    if (last.length > 0)
      throw new Error(`processes of uid ${last.join(", ")} survived the end of the agent's processes`);
    this.stoppedForVerify = true;
  }

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
        throw new ContainerFileError(msg, shellWriteErrorCode(msg) ?? "EIO");
      }
    }
    return runPlainCommand(this.container, {
      command,
      cwd: this.workdir,
      user: this.runUser.user,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      cap: opts.maxOutputChars ?? this.options.maxOutputChars,
    });
  }

  async execAs(command: string, opts: ExecOptions & { user?: string }): Promise<ExecResult> {
    this.assertOpen();
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
    const net = dockerClient().getNetwork(networkModeFor(network));
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
      const copy = await startSandbox(
        { ...source.plan, imageName: imageId, image, cwd: this.workdir, role: "task", signal },
        permit,
        source.gates,
      );
      copy.afterCleanup = removeImage;
      if (source.plan.opts.readOnlyRoot || workdirQuota(source.plan.opts)) {
        const tar = await this.container.getArchive({ path: this.workdir });
        await copy.container.putArchive(tar, { path: posix.dirname(this.workdir) });
      }
      return copy;
    } catch (err) {
      await removeImage();
      throw err;
    }
  }

  /** Removes the container (which ends every process in it, background ones included). Idempotent. */
  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      this.shell?.close();
      try {
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

/** The workdir gets a file system of its own: a size was asked for, and this harness can make one. */
function workdirQuota(opts: DockerOptions): boolean {
  return opts.disk !== undefined && diskQuotaUnavailable() === undefined;
}

function lifetimeSec(spec: EnvironmentSpec, margin: number): number {
  const base = spec.taskTimeoutSec && spec.taskTimeoutSec > 0 ? spec.taskTimeoutSec : DEFAULT_LIFETIME_SEC;
  return Math.ceil(base + margin);
}

function imageFor(spec: EnvironmentSpec, opts: DockerOptions): string {
  return spec.image ?? opts.image ?? DEFAULT_DOCKER_IMAGE;
}

interface SandboxPlan {
  imageName: string;
  image: ImageInfo;
  opts: DockerOptions;
  runName: string;
  /** Label and name part; empty for a warm sandbox (no task yet). */
  taskId: string;
  role: "task" | "warm";
  cwd?: string;
  network?: string;
  lifetimeSec: number;
  /** Gives up waiting for the start turn (a task's creation; warm starts have none). */
  signal?: AbortSignal;
  /** The task's EnvironmentSpec.onEvent (retried starts). */
  onEvent?: (message: string) => void;
}

/** Creates and starts one hardened container holding the given sandbox permit (released on failure). */
async function startSandbox(plan: SandboxPlan, permit: SandboxPermit, gates: SandboxGates): Promise<DockerEnvironment> {
  const { imageName, image, opts } = plan;
  let containerId: string | undefined;
  let retried = 0;
  let quota: DiskQuota | undefined;
  try {
    const runUser = await resolveRunUser(opts.user, imageName, image, plan.runName);
    const runAsRoot = runUser.uid === 0;
    const imageWorkdir = image.workingDir || "/work";
    const workdir = plan.cwd
      ? posix.isAbsolute(plan.cwd)
        ? posix.normalize(plan.cwd)
        : posix.join(imageWorkdir, plan.cwd)
      : imageWorkdir;

    const tmpfs: Record<string, string> = { "/tmp": `rw,nosuid,nodev,size=${opts.tmpSizeMb}m,mode=1777` };
    const mounts: Docker.MountConfig = [];
    if (opts.readOnlyRoot) {
      tmpfs["/var/tmp"] = "rw,nosuid,nodev,size=256m,mode=1777";
      tmpfs["/run"] = "rw,nosuid,nodev,size=64m,mode=755";
    }
    if (workdirQuota(opts)) quota = await DiskQuota.forContainer(parseSize(opts.disk!)!, runUser.uid, runUser.gid);
    if (opts.readOnlyRoot || quota) {
      // A volume (not a tmpfs) keeps what the image has in the workdir (the engine copies it into an empty
      // volume) and is reachable by the archive API; it is anonymous, so removing the container (AutoRemove or
      // cleanup) removes it too. With a quota it is bound to the task's own file system.
      const driver = quota
        ? {
            NoCopy: false,
            Labels: {},
            DriverConfig: { Name: "local", Options: { type: "none", o: "bind", device: quota.mountPoint } },
          }
        : undefined;
      mounts.push({ Type: "volume", Source: "", Target: workdir, ...(driver ? { VolumeOptions: driver } : {}) });
    }

    const who = plan.role === "warm" ? "warm" : sanitizeName(plan.taskId, 24);
    // One name for every attempt: a create whose answer was lost is found (and removed) by it before the next.
    const name = `hermes-${sanitizeName(plan.runName, 24)}-${who}-${randomBytes(3).toString("hex")}`;
    const container = await withEngineRetry<Docker.Container>(
      async () => {
        await gates.startTurn(plan.signal);
        if (shuttingDown) throw new Error("shutting down: no new docker sandboxes");
        const created = await dockerClient().createContainer({
          name,
          Image: imageName,
          Entrypoint: ["sleep"],
          Cmd: [String(plan.lifetimeSec)],
          WorkingDir: workdir,
          ...(Object.keys(opts.containerEnv).length
            ? { Env: Object.entries(opts.containerEnv).map(([k, v]) => `${k}=${v}`) }
            : {}),
          // The keep-alive runs as root when commands run as an unprivileged user, so a command such as
          // `pkill sleep` or `kill -9 -1` cannot end the sandbox; commands get the run user per exec.
          User: runAsRoot ? runUser.user : "0:0",
          Labels: {
            [LABEL_RUN]: plan.runName,
            [LABEL_TASK]: plan.taskId,
            [LABEL_ROLE]: plan.role,
            [LABEL_OWNER]: sandboxOwner(),
          },
          HostConfig: {
            Init: true,
            AutoRemove: true,
            NetworkMode: networkModeFor(plan.network),
            CapDrop: ["ALL"],
            CapAdd: capabilitiesFor(runAsRoot),
            SecurityOpt: ["no-new-privileges"],
            PidsLimit: opts.pidsLimit,
            Ulimits: [{ Name: "nofile", Soft: opts.nofile, Hard: opts.nofile }],
            Memory: opts.memoryMb * 1024 * 1024,
            MemorySwap: opts.memoryMb * 1024 * 1024,
            NanoCpus: Math.round(opts.cpus * 1e9),
            ...(opts.gpus > 0 ? { DeviceRequests: [{ Driver: "", Count: opts.gpus, Capabilities: [["gpu"]] }] } : {}),
            ReadonlyRootfs: opts.readOnlyRoot,
            Tmpfs: tmpfs,
            Mounts: mounts,
          },
        });
        containerId = created.id;
        liveContainers.set(created.id, undefined);
        // Created here (not by the engine, which would make it root's) so the run user can write in it.
        await mkdirViaArchive(created, workdir, runUser);
        await created.start();
        gates.engineRecovered();
        return created;
      },
      {
        signal: plan.signal,
        giveUp: () => shuttingDown,
        onRetry: (r) => {
          retried = r.attempt;
          const interval = gates.engineFailed();
          plan.onEvent?.(
            `sandbox start attempt ${r.attempt} of ${r.attempts} failed (${r.reason}); retrying in ${r.delayMs} ms, run-wide starts now ${interval} ms apart`,
          );
        },
        beforeRetry: async () => {
          await removeContainerById(containerId ?? name).catch(() => undefined);
          if (containerId) liveContainers.delete(containerId);
          containerId = undefined;
        },
      },
    );
    const env = new DockerEnvironment(container, workdir, runUser, Object.keys(tmpfs), opts, permit);
    env.source = { plan, gates };
    env.quota = quota;
    quota = undefined;
    liveContainers.set(container.id, env);
    if (shuttingDown) {
      await env.cleanup();
      throw new Error("shutting down: no new docker sandboxes");
    }
    return env;
  } catch (err) {
    // No "Created" orphans: whatever was made is removed before the error goes up.
    if (containerId) {
      await removeContainerById(containerId).catch(() => undefined);
      liveContainers.delete(containerId);
    }
    permit.release();
    await quota?.remove(false);
    if (plan.signal?.aborted) throw err;
    if (err instanceof Error && /^(image |shutting down)/.test(err.message)) throw err;
    const tries = retried > 0 ? ` after ${retried + 1} attempts` : "";
    throw new Error(`could not start docker sandbox (image ${imageName})${tries}: ${dockerErrorMessage(err)}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Warm pool (`prewarm`): one per worker thread, for the run's default image and options, holding at most
// its share of the run-wide warm total (see sandbox_gates.ts).

/**
 * A warm sandbox idle longer than this is retired. Its keep-alive is `WARM_MAX_IDLE_SEC + task timeout +
 * margin`, so a taken one still outlives its task, and after a `kill -9` nothing warm survives longer.
 */
export const WARM_MAX_IDLE_SEC = 600;

let warm: { key: string; pool: WarmPool<DockerEnvironment, WarmPermit> } | undefined;

function prewarmFor(gates: SandboxGates): number {
  return gates.warmShare;
}

function defaultImage(opts: DockerOptions): string {
  return opts.image ?? DEFAULT_DOCKER_IMAGE;
}

/** The task can use a warm sandbox: the run's default image, network and workdir. */
function takesWarm(spec: EnvironmentSpec, opts: DockerOptions): boolean {
  return (
    !spec.cwd &&
    imageFor(spec, opts) === defaultImage(opts) &&
    networkModeFor(spec.network ?? opts.network) === networkModeFor(opts.network)
  );
}

const gateIds = new WeakMap<SandboxGates, number>();
let nextGateId = 0;
function gateId(gates: SandboxGates): number {
  let id = gateIds.get(gates);
  if (id === undefined) gateIds.set(gates, (id = nextGateId++));
  return id;
}

/** The warm pool for this run's defaults, (re)created when they change (e.g. a new run in the same process). */
function warmPoolFor(
  spec: EnvironmentSpec,
  opts: DockerOptions,
  gates: SandboxGates,
): WarmPool<DockerEnvironment, WarmPermit> {
  const key = JSON.stringify({ run: spec.runName, timeout: spec.taskTimeoutSec ?? null, gates: gateId(gates), opts });
  if (warm?.key === key) return warm.pool;
  if (warm) void warm.pool.drain();
  const lifetime = lifetimeSec(spec, opts.deadmanMarginSec) + WARM_MAX_IDLE_SEC;
  const imageName = defaultImage(opts);
  const pool = new WarmPool<DockerEnvironment, WarmPermit>({
    size: prewarmFor(gates),
    maxIdleMs: WARM_MAX_IDLE_SEC * 1000,
    tryAcquire: () => gates.tryAcquireWarm(),
    handOver: (env) => (env.permit as WarmPermit).handOver(),
    starved: () => gates.waiting > 0 && gates.full,
    start: async (permit) => {
      let image: ImageInfo;
      try {
        image = await ensureDockerImage(imageName, { pull: opts.pull });
      } catch (err) {
        permit.release();
        throw err;
      }
      return startSandbox(
        {
          imageName,
          image,
          opts,
          runName: spec.runName,
          taskId: "",
          role: "warm",
          network: opts.network,
          lifetimeSec: lifetime,
        },
        permit,
        gates,
      );
    },
  });
  warm = { key, pool };
  return pool;
}

/** The current warm pool's counts (undefined without `prewarm`). */
export function warmPoolStats(): WarmPoolStats | undefined {
  return warm?.pool.stats();
}

/** Stops warming and removes the sandboxes not handed out. */
export async function drainWarmPool(): Promise<void> {
  const w = warm;
  warm = undefined;
  await w?.pool.drain();
}

/** Before a task spends tokens: the engine answers and the image exists (pulled only with `pull`). Starts warming. */
export async function preflightDocker(spec: EnvironmentSpec, options: EnvironmentOptions): Promise<void> {
  const opts = parseDockerOptions(options);
  await ensureDockerImage(imageFor(spec, opts), { pull: opts.pull });
  const gates = gatesFor(options);
  if (prewarmFor(gates) > 0 && !shuttingDown) warmPoolFor(spec, opts, gates);
}

export const createDockerEnvironment: EnvironmentFactory = async (
  spec: EnvironmentSpec,
  options: EnvironmentOptions,
) => {
  if (shuttingDown) throw new Error("shutting down: no new docker sandboxes");
  const opts = parseDockerOptions(options);
  const gates = gatesFor(options);
  const imageName = imageFor(spec, opts);
  // The image check comes first: a missing image fails the task before anything else happens.
  const image = await ensureDockerImage(imageName, { pull: opts.pull });

  if (prewarmFor(gates) > 0) {
    const pool = warmPoolFor(spec, opts, gates);
    if (takesWarm(spec, opts)) {
      const env = await pool.take();
      if (env) {
        env.onLost = spec.reportLost;
        return env;
      }
    }
  }

  // Every permit taken and this thread's pool holds some: one of them makes room at once (other threads'
  // pools do the same on their next tick, seeing this task wait).
  if (warm && gates.full) warm.pool.evictOne();
  const permit = await gates.acquireSandbox(spec.signal);
  const env = await startSandbox(
    {
      imageName,
      image,
      opts,
      runName: spec.runName,
      taskId: spec.taskId,
      role: "task",
      cwd: spec.cwd,
      network: spec.network ?? opts.network,
      lifetimeSec: lifetimeSec(spec, opts.deadmanMarginSec),
      signal: spec.signal,
      onEvent: spec.onEvent,
    },
    permit,
    gates,
  );
  env.onLost = spec.reportLost;
  return env;
};
