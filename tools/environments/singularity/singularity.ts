/**
 * The Singularity/Apptainer backend (execa): one instance per task.
 *
 *   start:   <bin> instance start --contain --cleanenv --writable-tmpfs --bind HOSTDIR:WORKDIR
 *                  [--net --network none] IMAGE NAME
 *   command: <bin> exec --cleanenv --pwd DIR [--env K=V]... instance://NAME bash|sh -c CMD
 *   end:     <bin> instance stop NAME
 *
 * `docker://` images are built once into a SIF cache (`<bin> build`), under a lock file shared by all
 * processes (Hermes locked per thread, so pool workers rebuilt the same SIF concurrently). A `.sif` path is
 * used as is. The task folder on the host is bound at the workdir, so file tools there use the host
 * filesystem directly; other paths go through `cat` in the instance. A detached host watchdog stops the
 * instance after the task timeout plus a margin even if this process is killed with -9.
 *
 * Not run against a real Apptainer on this project's machine (Debian 12 has no package): the command lines
 * and the lifecycle are tested against test/fixtures/fake-apptainer.
 */
import { DiskQuota, diskQuotaUnavailable, parseSize } from "../disk_quota.js";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { constants as fsConstants, existsSync } from "node:fs";
import { access, lstat, mkdir, open, readFile, realpath, rename, rm, stat, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import { delimiter, dirname, join, posix, resolve as resolveHost } from "node:path";
import { execa } from "execa";
import * as z from "zod";
import { BackgroundProcessManager } from "../background.js";
import {
  DEFAULT_OUTPUT_CAP,
  type BackgroundStatus,
  type Environment,
  type EnvironmentFactory,
  type EnvironmentOptions,
  type EnvironmentSpec,
  type ExecOptions,
  type ExecResult,
  ShellWriteError,
  type BackgroundStartOptions,
  type BackgroundStarted,
} from "../base.js";
import { runInProcessGroup } from "../shell/host_process.js";
import { CarriedState } from "../shell/carried_state.js";
import { carriedCommand } from "../shell/shell_session.js";
import { gatesFor, type SandboxPermit } from "../sandbox_gates.js";
import type { LeftoverFilter, LeftoverSandbox, RemovedLeftovers } from "../backend.js";
import { sleep } from "../../../src/core/abort.js";
import { pidAlive } from "../../../src/core/pid_alive.js";
import { spawnOnHost, type PipedProcess, type PipedSpawnOptions } from "../piped_process.js";
import { makeTaskDir } from "../task_dir.js";
import { readRegularFile, writeRegularFile } from "../host_files.js";

const DEFAULT_WORKDIR = "/work";
const DEFAULT_LIFETIME_SEC = 3600;
const INSTANCE_START_TIMEOUT_MS = 120_000;
const INSTANCE_STOP_TIMEOUT_MS = 30_000;
const BUILD_TIMEOUT_MS = 600_000;

// ---------------------------------------------------------------------------------------------------------
// Finding the runtime

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter).filter(Boolean)) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** The environment every apptainer/singularity call gets: no host secrets, only PATH/HOME and their own settings. */
function runtimeEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined) continue;
    if (
      k === "PATH" ||
      k === "HOME" ||
      k === "USER" ||
      k === "LANG" ||
      k === "TMPDIR" ||
      /^(APPTAINER|SINGULARITY)_/.test(k)
    )
      env[k] = v;
  }
  return { ...env, ...extra };
}

export interface SingularityAvailability {
  available: boolean;
  /** Path of the executable used (apptainer preferred). */
  binary?: string;
  version?: string;
  reason?: string;
}

/** `apptainer` (preferred) or `singularity` on PATH answering `--version`. */
export async function singularityAvailability(): Promise<SingularityAvailability> {
  const candidates = ["apptainer", "singularity"].map(onPath).filter((p): p is string => p !== undefined);
  if (candidates.length === 0) return { available: false, reason: "neither apptainer nor singularity is on PATH" };
  const problems: string[] = [];
  for (const binary of candidates) {
    const r = await execa(binary, ["--version"], {
      reject: false,
      timeout: 5000,
      env: runtimeEnv(),
      extendEnv: false,
      stdin: "ignore",
    });
    const out = `${r.stdout}`.trim();
    // Debian's `singularity` package is a game: accept only a runtime that names itself with a version.
    if (r.exitCode === 0 && /(apptainer|singularity).*version|version \d/i.test(out))
      return { available: true, binary, version: out };
    problems.push(
      `${binary} --version: ${r.timedOut ? "no answer within 5 s" : out || `${r.stderr}`.trim() || `exit ${r.exitCode}`}`,
    );
  }
  return { available: false, reason: `no working Apptainer/Singularity (${problems.join("; ")})` };
}

async function requireRuntime(): Promise<string> {
  const a = await singularityAvailability();
  if (!a.available || !a.binary) throw new Error(`singularity environment unavailable: ${a.reason}`);
  return a.binary;
}

const helpCache = new Map<string, Promise<string>>();

/** Whether `instance start` knows `--network` (network isolation), read from its help once per binary. */
async function supportsNetworkNone(binary: string): Promise<boolean> {
  let help = helpCache.get(binary);
  if (!help) {
    help = execa(binary, ["instance", "start", "--help"], {
      reject: false,
      timeout: 10_000,
      env: runtimeEnv(),
      extendEnv: false,
      stdin: "ignore",
    }).then((r) => `${r.stdout}\n${r.stderr}`);
    helpCache.set(binary, help);
  }
  return (await help).includes("--network");
}

// ---------------------------------------------------------------------------------------------------------
// Images and the SIF cache

export function defaultSifCacheDir(): string {
  return (
    process.env.APPTAINER_CACHEDIR ??
    process.env.SINGULARITY_CACHEDIR ??
    join(homedir(), ".cache", "hermes-batch", "sif")
  );
}

/** `docker://python:3.11` → `<cache>/python-3.11.sif` (as Hermes names them). */
export function sifPathFor(image: string, cacheDir: string): string {
  const name = image.replace(/^docker:\/\//, "").replace(/[/:]/g, "-");
  return join(cacheDir, `${name}.sif`);
}

/**
 * A lock shared by every process on the host: the lock file is created exclusively and holds the owner's
 * pid; a lock whose owner is gone is taken over.
 */
export async function withFileLock<T>(
  lockPath: string,
  fn: () => Promise<T>,
  opts: { timeoutMs?: number; pollMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? BUILD_TIMEOUT_MS + 60_000);
  await mkdir(dirname(lockPath), { recursive: true });
  for (;;) {
    try {
      const fh = await open(lockPath, "wx");
      await fh.writeFile(String(process.pid));
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = Number((await readFile(lockPath, "utf8").catch(() => "")).trim());
      if (Number.isInteger(owner) && owner > 0 && !pidAlive(owner)) {
        await unlink(lockPath).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for lock ${lockPath} (held by pid ${owner || "?"})`);
      await sleep(opts.pollMs ?? 200);
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lockPath).catch(() => undefined);
  }
}

/**
 * The image argument for `instance start`: a `.sif` file must exist; a `docker://` image is built into the
 * SIF cache once (other processes wait on the lock and reuse the result). If the build fails, the
 * `docker://` URI is used directly (the runtime converts it itself, slower) and the reason is returned.
 */
export async function resolveSingularityImage(
  binary: string,
  image: string,
  cacheDir: string,
): Promise<{ image: string; note?: string }> {
  if (image.startsWith("docker://")) {
    const sif = sifPathFor(image, cacheDir);
    if (existsSync(sif)) return { image: sif };
    return withFileLock(`${sif}.lock`, async () => {
      if (existsSync(sif)) return { image: sif };
      const tmp = `${sif}.${process.pid}.${randomBytes(3).toString("hex")}.tmp`;
      await mkdir(join(cacheDir, "tmp"), { recursive: true });
      const r = await execa(binary, ["build", tmp, image], {
        reject: false,
        timeout: BUILD_TIMEOUT_MS,
        stdin: "ignore",
        env: runtimeEnv({
          APPTAINER_CACHEDIR: cacheDir,
          APPTAINER_TMPDIR: join(cacheDir, "tmp"),
          SINGULARITY_CACHEDIR: cacheDir,
          SINGULARITY_TMPDIR: join(cacheDir, "tmp"),
        }),
        extendEnv: false,
      });
      if (r.exitCode === 0 && existsSync(tmp)) {
        await rename(tmp, sif);
        return { image: sif };
      }
      await rm(tmp, { force: true });
      const why = r.timedOut
        ? `timed out after ${BUILD_TIMEOUT_MS / 1000} s`
        : `${r.stderr}`.trim().split("\n").pop() || `exit ${r.exitCode}`;
      return { image, note: `building ${sif} failed (${why}); using ${image} directly` };
    });
  }
  if (image.endsWith(".sif")) {
    const full = resolveHost(image);
    try {
      await access(full, fsConstants.R_OK);
    } catch {
      throw new Error(`singularity image ${full} does not exist or is not readable`);
    }
    return { image: full };
  }
  // library://, oras://, sandbox directories: the runtime knows what to do.
  return { image };
}

// ---------------------------------------------------------------------------------------------------------
// Options

const singularityOptionsSchema = z.object({
  image: z.string().min(1).optional(),
  network: z.string().min(1).optional(),
  singularityCacheDir: z.string().min(1).optional(),
  /** Pass --memory/--cpus/--pids-limit as a user that is not root (needs cgroup delegation, so off unless asked). */
  singularityCgroupLimits: z.boolean().default(false),
  memoryMb: z.number().int().positive().default(2048),
  cpus: z.number().positive().default(1),
  pidsLimit: z.number().int().positive().default(512),
  /** Size of the task folder's own file system (root harness); none when undefined. */
  disk: z.string().min(1).optional(),
  deadmanMarginSec: z.number().int().nonnegative().default(120),
  maxOutputChars: z.number().int().positive().default(DEFAULT_OUTPUT_CAP),
});

type SingularityOptions = z.infer<typeof singularityOptionsSchema>;

function parseOptions(options: EnvironmentOptions): SingularityOptions {
  const picked = Object.fromEntries(
    Object.keys(singularityOptionsSchema.shape)
      .filter((k) => options[k] !== undefined && options[k] !== null)
      .map((k) => [k, options[k]]),
  );
  const parsed = singularityOptionsSchema.safeParse(picked);
  if (!parsed.success) {
    throw new Error(
      `invalid singularity options: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  return parsed.data;
}

function networkOff(value: string | undefined): boolean {
  return value === undefined || ["", "none", "off", "false", "0"].includes(value.trim().toLowerCase());
}

/** The `instance start` arguments (exported for tests and `--dry-run` style listings). */
export function instanceStartArgs(o: {
  hostDir: string;
  workdir: string;
  image: string;
  name: string;
  isolateNetwork: boolean;
  memoryMb?: number;
  cpus?: number;
  pidsLimit?: number;
}): string[] {
  const args = [
    "instance",
    "start",
    "--contain",
    "--cleanenv",
    "--writable-tmpfs",
    "--bind",
    `${o.hostDir}:${o.workdir}`,
  ];
  if (o.isolateNetwork) args.push("--net", "--network", "none");
  if (o.memoryMb) args.push("--memory", `${o.memoryMb}M`, "--memory-swap", `${o.memoryMb}M`);
  if (o.cpus) args.push("--cpus", String(o.cpus));
  if (o.pidsLimit) args.push("--pids-limit", String(o.pidsLimit));
  args.push(o.image, o.name);
  return args;
}

// ---------------------------------------------------------------------------------------------------------
// Process-wide registry (for the runner's SIGINT/SIGTERM handlers)

const liveInstances = new Set<SingularityEnvironment>();

export async function cleanupAllSingularityEnvironments(): Promise<void> {
  await Promise.all([...liveInstances].map((e) => e.cleanup().catch(() => undefined)));
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// $1 command. bash where the image has it.
const SHELL_WRAPPER = 'if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; fi; exec sh -c "$1"';

/**
 * A carried command (the terminal's): $1 a marker, $2 its script (carriedCommand: the command's `eval` on line 3,
 * as the original's, so bash's messages name the same line), then the script's $1–$2 (state prefix, cwd).
 * After it, the cwd it saved is read (the file's first line, then reset, as the persistent shell does) and reported
 * as the last line of stderr after the marker: each command is its own exec, and a second exec to read the file
 * would cost a process on the host per command.
 */
const CARRIED_WRAPPER =
  'hb_m=$1; hb_w=$2; hb_s=$3; shift 2; if command -v bash >/dev/null 2>&1; then bash -c "$hb_w" bash "$@"; else sh -c "$hb_w" sh "$@"; fi; ' +
  'hb_x=$?; hb_c=; { IFS= read -r hb_c < "$hb_s.cwd" && printf \'\\n\' 1<> "$hb_s.cwd"; } 2>/dev/null; ' +
  'printf \'\\n%s %s\\n\' "$hb_m" "$hb_c" >&2; exit $hb_x';

/** Takes the cwd report CARRIED_WRAPPER appends to stderr off it: the stderr as the command wrote it, and the cwd. */
export function takeCwdReport(stderr: string, marker: string): { stderr: string; cwd: string | undefined } {
  const at = stderr.lastIndexOf(`\n${marker} `);
  if (at < 0 || !stderr.endsWith("\n")) return { stderr, cwd: undefined };
  const line = stderr.slice(at + marker.length + 2, -1);
  if (line.includes("\n")) return { stderr, cwd: undefined };
  return { stderr: stderr.slice(0, at), cwd: line.startsWith("/") ? line : undefined };
}

export class SingularityEnvironment implements Environment {
  readonly kind = "singularity";
  /** The task folder's own file system (`disk`), removed after the instance (its files copied out when kept). */
  quota: { quota: DiskQuota; keepFiles: boolean } | undefined;
  private readonly background: BackgroundProcessManager;
  private cleaning: Promise<void> | undefined;
  /** The terminal's state carried between its commands (cwd, exports), in the instance's /tmp. */
  private readonly carried: CarriedState;

  /** The terminal's current directory (Environment.cwd). */
  get cwd(): string {
    return this.carried.cwd;
  }

  constructor(
    readonly binary: string,
    readonly instanceName: string,
    readonly workdir: string,
    /** The host folder bound at workdir. */
    readonly hostDir: string,
    private readonly watchdogPid: number | undefined,
    private readonly options: SingularityOptions,
    /** The run-wide sandbox permit, released by cleanup. */
    private readonly permit: SandboxPermit = { release() {} },
  ) {
    this.carried = new CarriedState(workdir, "/tmp");
    this.background = new BackgroundProcessManager((cmd, o) => this.exec(cmd, o), {
      stateDir: `/tmp/.hermes-bg-${instanceName}`,
      shell: "sh",
      maxOutputChars: options.maxOutputChars,
    });
  }

  resolvePath(path: string): string {
    return posix.isAbsolute(path) ? posix.normalize(path) : posix.normalize(posix.join(this.workdir, path));
  }

  /** The host path of a container path inside the bound workdir, else undefined. */
  private hostPathOf(containerPath: string): string | undefined {
    if (containerPath === this.workdir) return this.hostDir;
    if (!containerPath.startsWith(`${this.workdir}/`)) return undefined;
    const rel = containerPath.slice(this.workdir.length + 1);
    const host = resolveHost(this.hostDir, rel);
    return host.startsWith(`${this.hostDir}/`) || host === this.hostDir ? host : undefined;
  }

  /** The full argv of one command (exported shape for tests). */
  execArgs(command: string, cwd: string, env: Record<string, string> = {}): string[] {
    const args = ["exec", "--cleanenv", "--pwd", cwd];
    for (const [k, v] of Object.entries(env)) args.push("--env", `${k}=${v}`);
    args.push(`instance://${this.instanceName}`, "sh", "-c", SHELL_WRAPPER, "hb", command);
    return args;
  }

  /** A process in the instance whose stdin and stdout the harness holds (an MCP server): one `exec` client as a child. */
  spawnPiped(argv: string[], opts?: PipedSpawnOptions): Promise<PipedProcess> {
    if (this.cleaning) throw new Error(`singularity environment ${this.instanceName} was already cleaned up`);
    const cwd = opts?.cwd ? this.resolvePath(opts.cwd) : this.workdir;
    const args = ["exec", "--cleanenv", "--pwd", cwd];
    for (const [k, v] of Object.entries(opts?.env ?? {})) args.push("--env", `${k}=${v}`);
    return spawnOnHost(this.hostDir, runtimeEnv(), [this.binary, ...args, `instance://${this.instanceName}`, ...argv]);
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    if (this.cleaning) throw new Error(`singularity environment ${this.instanceName} was already cleaned up`);
    for (const name of Object.keys(opts.env ?? {})) {
      if (!ENV_NAME.test(name)) throw new Error(`invalid environment variable name '${name}'`);
    }
    const cwd = this.carried.startCwd(opts, (p) => this.resolvePath(p), this.workdir);
    const cap = opts.maxOutputChars ?? this.options.maxOutputChars;
    const state = this.carried.stateFor(opts);
    const marker = `__HB_${randomBytes(8).toString("hex")}__`;
    const args = state
      ? this.carriedExecArgs(command, cwd, state, marker, opts.env)
      : this.execArgs(command, cwd, opts.env);
    const result = await runInProcessGroup(this.binary, args, {
      env: runtimeEnv(),
      stdin: opts.stdin,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      maxOutputChars: cap,
    });
    const { spawnError, ...rest } = result;
    const execResult: ExecResult = rest;
    if (spawnError) execResult.stderr = `could not run ${this.binary}: ${spawnError.message}`;
    else if (state) {
      const report = takeCwdReport(execResult.stderr, marker);
      execResult.stderr = report.stderr;
      if (opts.carry === true && report.cwd) execResult.cwd = report.cwd;
    }
    return this.carried.after(opts, execResult);
  }

  /** A carried command's argv: started in the workdir (the tracked cwd may be gone: the wrapper says so with 126). */
  private carriedExecArgs(
    command: string,
    cwd: string,
    state: string,
    marker: string,
    env: Record<string, string> = {},
  ): string[] {
    const args = ["exec", "--cleanenv", "--pwd", this.workdir];
    for (const [k, v] of Object.entries(env)) args.push("--env", `${k}=${v}`);
    args.push(`instance://${this.instanceName}`, "sh", "-c", CARRIED_WRAPPER, "hb", marker, carriedCommand(command));
    args.push(state, cwd);
    return args;
  }

  /**
   * The host path to read or write a workdir path at from here, when every link on the way (the agent makes
   * them) stays inside the task folder; otherwise undefined, and the container resolves the path itself (with
   * --contain it sees none of the host's files). Read from here, a link `leak -> /home/u/.ssh/id_rsa` in the task
   * folder would show the agent the host's file, and a write through one overwrite it, with the harness's rights.
   * A path that does not exist yet is judged by the deepest folder on the way that does; a link that leads
   * nowhere goes to the container (written through here, it would create its target on the host).
   */
  private async hostPathInside(containerPath: string): Promise<string | undefined> {
    const host = this.hostPathOf(containerPath);
    if (!host) return undefined;
    const root = await realpath(this.hostDir).catch(() => undefined);
    if (!root) return undefined;
    let probe = host;
    for (;;) {
      const real = await realpath(probe).catch(() => undefined);
      if (real !== undefined) {
        if (real !== root && !real.startsWith(`${root}/`)) return undefined;
        return probe === host ? real : join(real, host.slice(probe.length + 1));
      }
      if (
        await lstat(probe).then(
          () => true,
          () => false,
        )
      )
        return undefined; // a link to nothing, or unreadable
      if (probe === this.hostDir || dirname(probe) === probe) return undefined;
      probe = dirname(probe);
    }
  }

  async readFile(path: string): Promise<Buffer> {
    const full = this.resolvePath(path);
    const host = await this.hostPathInside(full);
    if (host) return readRegularFile(host, { followLinks: false });
    const r = await execa(this.binary, ["exec", "--cleanenv", `instance://${this.instanceName}`, "cat", full], {
      env: runtimeEnv(),
      extendEnv: false,
      reject: false,
      encoding: "buffer",
      stdin: "ignore",
      timeout: 60_000,
    });
    if (r.exitCode !== 0)
      throw new Error(
        `${full}: ${Buffer.from(r.stderr).toString("utf8").trim() || `cannot read (exit ${r.exitCode})`}`,
      );
    return Buffer.from(r.stdout);
  }

  async writeFile(path: string, data: string | Buffer): Promise<void> {
    const full = this.resolvePath(path);
    const host = await this.hostPathInside(full);
    if (host) {
      await mkdir(dirname(host), { recursive: true });
      await writeRegularFile(host, data, { followLinks: false });
      return;
    }
    const script = 'd=${1%/*}; if [ -n "$d" ]; then mkdir -p "$d" || exit 1; fi; cat > "$1"';
    const r = await execa(
      this.binary,
      ["exec", "--cleanenv", `instance://${this.instanceName}`, "sh", "-c", script, "hb", full],
      {
        env: runtimeEnv(),
        extendEnv: false,
        reject: false,
        input: typeof data === "string" ? Buffer.from(data) : data,
        timeout: 60_000,
      },
    );
    if (r.exitCode !== 0)
      throw new ShellWriteError(`${full}: ${`${r.stderr}`.trim() || `cannot write (exit ${r.exitCode})`}`);
  }

  startBackground(command: string, opts?: BackgroundStartOptions): Promise<BackgroundStarted> {
    const cwd = opts?.cwd ? this.resolvePath(opts.cwd) : opts?.carry ? this.carried.cwd : this.workdir;
    return this.background.start(command, { ...opts, cwd });
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

  /** Stops the instance (which ends every process in it) and the watchdog. Idempotent. */
  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      liveInstances.delete(this);
      try {
        await this.stopInstance();
      } finally {
        this.permit.release();
        await this.quota?.quota.remove(this.quota.keepFiles);
      }
    })();
    return this.cleaning;
  }

  private async stopInstance(): Promise<void> {
    {
      if (this.watchdogPid !== undefined) {
        try {
          process.kill(-this.watchdogPid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      const r = await execa(this.binary, ["instance", "stop", this.instanceName], {
        env: runtimeEnv(),
        extendEnv: false,
        reject: false,
        stdin: "ignore",
        timeout: INSTANCE_STOP_TIMEOUT_MS,
      });
      if (r.exitCode !== 0) {
        const msg = `${r.stderr}`.trim();
        // Already stopped (by the watchdog, or never fully started) is fine.
        if (!/no instance found|not found|does not exist/i.test(msg)) {
          throw new Error(`could not stop instance ${this.instanceName}: ${msg || `exit ${r.exitCode}`}`);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Instance names carry the run and the task (Apptainer has no labels): `gc` and crash cleanup find leftovers
// by them. hb_<run hash 8><task hash 8>_<run>_<task>_<random>, the readable parts cut to letters and digits.

function readable(s: string, max: number): string {
  return s.replace(/[^a-zA-Z0-9]+/g, "").slice(0, max) || "x";
}

function hash8(s: string): string {
  return createHash("sha256").update(s).digest("hex").slice(0, 8);
}

export function instanceNameFor(runName: string, taskId: string): string {
  return `hb_${hash8(runName)}${hash8(taskId)}_${readable(runName, 16)}_${readable(taskId, 24)}_${randomBytes(4).toString("hex")}`;
}

const INSTANCE_NAME = /^hb_([0-9a-f]{8})([0-9a-f]{8})_([a-zA-Z0-9]+)_([a-zA-Z0-9]+)_[0-9a-f]{8}$/;

const instanceListSchema = z.object({
  instances: z
    .array(z.object({ instance: z.string(), pid: z.number().optional(), img: z.string().optional() }).passthrough())
    .nullish(),
});

/** This user's hermes-batch instances (`instance list --json`), of one run or task, or all. */
export async function listSingularityLeftovers(filter: LeftoverFilter = {}): Promise<LeftoverSandbox[]> {
  // Instances carry no owner mark (their task's crash clean-up finds them by run and task).
  if ((filter.role !== undefined && filter.role !== "task") || filter.owner !== undefined) return [];
  const binary = await requireRuntime();
  const r = await execa(binary, ["instance", "list", "--json"], {
    env: runtimeEnv(),
    extendEnv: false,
    reject: false,
    stdin: "ignore",
    timeout: 30_000,
  });
  if (r.exitCode !== 0)
    throw new Error(`${binary} instance list --json: ${`${r.stderr}`.trim() || `exit ${r.exitCode}`}`);
  const text = `${r.stdout}`.trim();
  let parsed: z.infer<typeof instanceListSchema>;
  try {
    parsed = instanceListSchema.parse(text === "" ? {} : JSON.parse(text));
  } catch (err) {
    throw new Error(
      `${binary} instance list --json printed something else than the documented JSON: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`,
    );
  }
  const out: LeftoverSandbox[] = [];
  for (const i of parsed.instances ?? []) {
    const m = INSTANCE_NAME.exec(i.instance);
    if (!m) continue;
    if (filter.run !== undefined && m[1] !== hash8(filter.run)) continue;
    if (filter.task !== undefined && m[2] !== hash8(filter.task)) continue;
    out.push({
      backend: "singularity",
      id: i.instance,
      name: i.instance,
      run: filter.run ?? m[3]!,
      task: filter.task ?? m[4]!,
      role: "task",
      state: "running",
    });
  }
  return out;
}

/** Stops the leftover instances (of one run, of one task, or all hermes-batch instances of this user). */
export async function removeSingularityLeftovers(
  filter: LeftoverFilter & { dryRun?: boolean } = {},
): Promise<RemovedLeftovers> {
  const found = await listSingularityLeftovers(filter);
  if (filter.dryRun) return { removed: found, failed: [] };
  const binary = await requireRuntime();
  const removed: LeftoverSandbox[] = [];
  const failed: RemovedLeftovers["failed"] = [];
  await Promise.all(
    found.map(async (c) => {
      const r = await execa(binary, ["instance", "stop", c.name], {
        env: runtimeEnv(),
        extendEnv: false,
        reject: false,
        stdin: "ignore",
        timeout: INSTANCE_STOP_TIMEOUT_MS,
      });
      const msg = `${r.stderr}`.trim();
      if (r.exitCode === 0 || /no instance found|not found|does not exist/i.test(msg)) removed.push(c);
      else failed.push({ sandbox: c, error: msg || `exit ${r.exitCode}` });
    }),
  );
  return { removed, failed };
}

/** A host process, outside our process group, that stops the instance when its time is up. */
function startWatchdog(binary: string, name: string, seconds: number): number | undefined {
  const child = spawn("sh", ["-c", 'sleep "$1"; exec "$2" instance stop "$3"', "hb", String(seconds), binary, name], {
    detached: true,
    stdio: "ignore",
    env: runtimeEnv(),
  });
  child.unref();
  return child.pid;
}

/** Before a task spends tokens: the runtime exists and the image can be resolved. */
export async function preflightSingularity(spec: EnvironmentSpec, options: EnvironmentOptions): Promise<void> {
  const opts = parseOptions(options);
  const binary = await requireRuntime();
  const image = spec.image ?? opts.image;
  if (!image)
    throw new Error(
      "singularity environment needs an image (a docker:// URI or a .sif file): give --image or the row's image",
    );
  await resolveSingularityImage(binary, image, opts.singularityCacheDir ?? defaultSifCacheDir());
}

/** The runtime's cgroup limits apply: a root harness, or a user who says its cgroups are delegated. */
export function singularityCgroupLimits(opts: { singularityCgroupLimits?: boolean }): boolean {
  return process.getuid?.() === 0 || opts.singularityCgroupLimits === true;
}

interface InstancePlan {
  binary: string;
  name: string;
  image: string;
  hostDir: string;
  workdir: string;
  isolateNetwork: boolean;
  lifetimeSec: number;
  opts: SingularityOptions;
}

/** Starts the instance and its watchdog; a half-started instance is stopped before the error goes up. */
async function startInstance(p: InstancePlan, permit: SandboxPermit): Promise<SingularityEnvironment> {
  const args = instanceStartArgs({
    hostDir: p.hostDir,
    workdir: p.workdir,
    image: p.image,
    name: p.name,
    isolateNetwork: p.isolateNetwork,
    ...(singularityCgroupLimits(p.opts)
      ? { memoryMb: p.opts.memoryMb, cpus: p.opts.cpus, pidsLimit: p.opts.pidsLimit }
      : {}),
  });
  const started = await execa(p.binary, args, {
    env: runtimeEnv(),
    extendEnv: false,
    reject: false,
    stdin: "ignore",
    timeout: INSTANCE_START_TIMEOUT_MS,
  });
  if (started.exitCode !== 0) {
    await execa(p.binary, ["instance", "stop", p.name], {
      env: runtimeEnv(),
      extendEnv: false,
      reject: false,
      stdin: "ignore",
      timeout: INSTANCE_STOP_TIMEOUT_MS,
    });
    const why = started.timedOut
      ? `no answer within ${INSTANCE_START_TIMEOUT_MS / 1000} s`
      : `${started.stderr}`.trim() || `exit ${started.exitCode}`;
    throw new Error(`could not start singularity instance from ${p.image}: ${why}`);
  }
  const watchdog = startWatchdog(p.binary, p.name, p.lifetimeSec);
  const env = new SingularityEnvironment(p.binary, p.name, p.workdir, p.hostDir, watchdog, p.opts, permit);
  liveInstances.add(env);
  return env;
}

export const createSingularityEnvironment: EnvironmentFactory = async (
  spec: EnvironmentSpec,
  options: EnvironmentOptions,
) => {
  const opts = parseOptions(options);
  const binary = await requireRuntime();
  const imageRef = spec.image ?? opts.image;
  if (!imageRef)
    throw new Error(
      "singularity environment needs an image (a docker:// URI or a .sif file): give --image or the row's image",
    );
  const { image } = await resolveSingularityImage(binary, imageRef, opts.singularityCacheDir ?? defaultSifCacheDir());

  const hostDir = resolveHost(spec.hostTaskDir);
  await makeTaskDir(hostDir, spec.freshTaskDir);
  if (!(await stat(hostDir)).isDirectory()) throw new Error(`task folder ${hostDir} is not a directory`);
  const workdir =
    spec.cwd && posix.isAbsolute(spec.cwd) ? posix.normalize(spec.cwd) : posix.join(DEFAULT_WORKDIR, spec.cwd ?? "");
  const isolateNetwork = networkOff(spec.network ?? opts.network) && (await supportsNetworkNone(binary));
  const lifetimeSec =
    (spec.taskTimeoutSec && spec.taskTimeoutSec > 0 ? spec.taskTimeoutSec : DEFAULT_LIFETIME_SEC) +
    opts.deadmanMarginSec;

  const gates = gatesFor(options);
  const permit = await gates.acquireSandbox(spec.signal);
  // The task folder as a file system of its own (root harness): the instance binds where it is mounted.
  const quota =
    opts.disk !== undefined && diskQuotaUnavailable() === undefined
      ? await DiskQuota.create(hostDir, parseSize(opts.disk)!, process.getuid!(), process.getgid!(), spec.freshTaskDir)
      : undefined;
  try {
    await gates.startTurn(spec.signal);
    const env = await startInstance(
      {
        binary,
        name: instanceNameFor(spec.runName, spec.taskId),
        image,
        hostDir: quota?.mountPoint ?? hostDir,
        workdir,
        isolateNetwork,
        lifetimeSec,
        opts,
      },
      permit,
    );
    env.quota = quota && { quota, keepFiles: options.removeTaskDirOnCleanup !== true };
    return env;
  } catch (err) {
    permit.release();
    await quota?.remove(options.removeTaskDirOnCleanup !== true);
    throw err;
  }
};
