/**
 * `--env host`: commands run directly on this machine, in the task's own folder (see src/run/task_folders.ts).
 *
 * No isolation beyond the working directory and an environment built from the allow-list of task_env.ts
 * (plus HOME and the --pass-env names). Each command runs in its own process group so a timeout or abort kills
 * everything it started, not only the shell.
 *
 * Commands run in one persistent shell per environment (HostShell, started on the first exec), so a command
 * costs a fork of a small shell instead of a fork of this large process. A command given stdin, a call that
 * overlaps a running one, or a host where that shell cannot start takes the one-process-per-command path.
 * Output a command's leftover children write after it ended is dropped, as with Docker's persistent shell.
 *
 * Children that outlive their command (`server &`) do not hold up its result; every process started
 * here carries HERMES_BATCH_ENV_ID=<marker> in its environment, and cleanup() kills all of them (found
 * through /proc), background processes included.
 *
 * Options (EnvironmentOptions): `removeTaskDirOnCleanup` (default false: the task folder is the task's
 * output and stays), `maxOutputChars` (default DEFAULT_OUTPUT_CAP).
 */
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { readRegularFile, writeRegularFile } from "../host_files.js";
import { forgetTempDir, makeTempDir } from "../temp_dirs.js";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { CarriedState } from "../shell/carried_state.js";
import { carriedCommand } from "../shell/shell_session.js";
import { BackgroundProcessManager } from "../background.js";
import {
  HostShell,
  INTERRUPT_EXIT_CODE,
  TIMEOUT_EXIT_CODE,
  killGroup,
  originalBashName,
  runInProcessGroup,
} from "../shell/host_process.js";
import {
  DEFAULT_OUTPUT_CAP,
  type BackgroundStatus,
  type Environment,
  type EnvironmentFactory,
  type EnvironmentOptions,
  type EnvironmentSpec,
  type ExecOptions,
  type ExecResult,
  type BackgroundStartOptions,
  type BackgroundStarted,
} from "../base.js";
import { sleep } from "../../../src/core/abort.js";
import { taskEnvironment } from "../task_env.js";
import { looksLikeSecretName } from "../../../src/core/secret_names.js";
import { spawnOnHost, type PipedProcess, type PipedSpawnOptions } from "../piped_process.js";
import { makeTaskDir } from "../task_dir.js";

/** Variable set in every command's environment, so cleanup can find leftovers. */
export const ENV_MARKER_VAR = "HERMES_BATCH_ENV_ID";
export { INTERRUPT_EXIT_CODE, TIMEOUT_EXIT_CODE };

/** A shell can export only names like these; commands with other names take the one-process path. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Starts of the persistent shell per environment (it is restarted if a command kills it). */
const MAX_SHELL_STARTS = 3;

export { looksLikeSecretName };

/** The host environment without variables whose names look like secrets. */
export function scrubbedProcessEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) {
    if (v !== undefined && !looksLikeSecretName(k)) out[k] = v;
  }
  return out;
}

let detectedShell: string | undefined;

/** bash when present, else sh. */
export function hostShell(): string {
  if (!detectedShell) {
    const dirs = ["/bin", "/usr/bin", "/usr/local/bin", ...(process.env.PATH ?? "").split(":").filter(Boolean)];
    detectedShell = dirs.map((d) => join(d, "bash")).find((p) => existsSync(p)) ?? "/bin/sh";
  }
  return detectedShell;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * /proc/<pid>/environ, read again when it comes back empty: a process between fork and exec when the file was
 * opened and after exec when it was read shows an empty environment (the kernel reads the mm it had at open,
 * which exec has dropped), and would escape a clean-up that looks for its marker.
 */
function readEnviron(pid: string, read: (path: string) => Buffer): Buffer {
  let environ = read(`/proc/${pid}/environ`);
  for (let again = 0; environ.length === 0 && again < 2; again++) environ = read(`/proc/${pid}/environ`);
  return environ;
}

/** Live (non-zombie) processes whose initial environment carries HERMES_BATCH_ENV_ID=<marker>. */
export function processesWithMarker(
  marker: string,
  read: (path: string) => Buffer = (path) => readFileSync(path),
): number[] {
  const needle = Buffer.from(`${ENV_MARKER_VAR}=${marker}\0`);
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const environ = readEnviron(name, read);
      if (environ.indexOf(needle) < 0) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      if (state !== "Z" && state !== "X") found.push(Number(name));
    } catch {
      // Vanished or not ours.
    }
  }
  return found;
}

export class LocalEnvironment implements Environment {
  readonly kind = "local";
  readonly workdir: string;
  private readonly background: BackgroundProcessManager;
  private readonly maxOutputChars: number;
  /** Every process started here inherits HERMES_BATCH_ENV_ID=<marker>; cleanup kills them by it. */
  readonly marker = randomUUID();
  private readonly runningGroups = new Set<number>();
  private cleaned = false;
  private shell: HostShell | undefined;
  private shellStarting: Promise<HostShell | undefined> | undefined;
  private shellStarts = 0;
  /** The environment the shell was started with; each command passes only the differences. */
  private shellEnv: Record<string, string> = {};
  /** The terminal's state carried between its commands (cwd, exports). */
  private readonly carried: CarriedState;

  /** The terminal's current directory (Environment.cwd). */
  get cwd(): string {
    return this.carried.cwd;
  }

  constructor(
    /** The task folder (kept after cleanup unless removeTaskDirOnCleanup). */
    readonly taskDir: string,
    workdir: string,
    private readonly bgStateDir: string,
    private readonly options: { removeTaskDirOnCleanup?: boolean; maxOutputChars?: number; passEnv?: string[] } = {},
  ) {
    this.workdir = workdir;
    this.maxOutputChars = options.maxOutputChars ?? DEFAULT_OUTPUT_CAP;
    this.carried = new CarriedState(workdir, bgStateDir);
    this.background = new BackgroundProcessManager((cmd, opts) => this.exec(cmd, opts), {
      stateDir: bgStateDir,
      shell: hostShell(),
      maxOutputChars: this.maxOutputChars,
    });
  }

  resolvePath(path: string): string {
    return isAbsolute(path) ? path : resolve(this.workdir, path);
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const cwd = this.carried.startCwd(opts, (p) => this.resolvePath(p), this.workdir);
    if (!isDirectory(cwd)) {
      // 126 for a carried command, as the original's `builtin cd <cwd> || exit 126`.
      const exitCode = opts.carry ? 126 : 1;
      return { exitCode, stdout: "", stderr: `cd: ${cwd}: No such directory`, timedOut: false, truncated: false };
    }
    const env = { ...this.baseEnv(), ...(opts.env ?? {}), [ENV_MARKER_VAR]: this.marker };
    if (opts.stdin === undefined) {
      const shell = await this.getShell();
      const changes = this.envChanges(env);
      // A busy shell means a concurrent call: that one takes the plain path instead of queueing.
      if (shell?.alive && !shell.busy && Object.keys(changes).every((k) => ENV_NAME.test(k))) {
        const state = this.carried.stateFor(opts);
        const result = await shell.run({
          command,
          cwd,
          env: changes,
          timeoutMs: opts.timeoutMs,
          signal: opts.signal,
          cap: opts.maxOutputChars ?? this.maxOutputChars,
          ...(state ? { state } : {}),
        });
        return this.carried.after(opts, result);
      }
    }
    // A carried command outside the shell (busy, or stdin given) sources, enters and saves as the shell does.
    const state = this.carried.stateFor(opts);
    // --norc: a bash whose stdin is a socket (a command given stdin) would source the user's ~/.bashrc.
    const rc = /(^|\/)bash$/.test(hostShell()) ? ["--norc", "--noprofile"] : [];
    const args = [
      ...rc,
      ...(state ? ["-c", carriedCommand(command), originalBashName(), state, cwd] : ["-c", command]),
    ];
    const result = await runInProcessGroup(hostShell(), args, {
      cwd,
      env,
      stdin: opts.stdin,
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      maxOutputChars: opts.maxOutputChars ?? this.maxOutputChars,
      onGroup: (pgid, running) => (running ? this.runningGroups.add(pgid) : this.runningGroups.delete(pgid)),
    });
    const { spawnError: _ignored, ...rest } = result;
    const execResult: ExecResult = rest;
    if (state && opts.carry === true) {
      // The saved cwd, read here after the command ended (never from its output), then reset.
      const file = `${state}.cwd`;
      const line = (await readFile(file, "utf8").catch(() => "")).split("\n")[0] ?? "";
      if (line.startsWith("/")) execResult.cwd = line;
      await writeFile(file, "\n", { flag: "r+" }).catch(() => undefined);
    }
    return this.carried.after(opts, execResult);
  }

  private async getShell(): Promise<HostShell | undefined> {
    if (this.shell?.alive) return this.shell;
    if (this.cleaned || this.shellStarts >= MAX_SHELL_STARTS) return undefined;
    this.shellStarting ??= (async () => {
      this.shellStarts++;
      const env = { ...this.baseEnv(), [ENV_MARKER_VAR]: this.marker };
      const shell = await HostShell.start({
        innerShell: hostShell(),
        cwd: this.workdir,
        env,
        argv0: originalBashName(),
      });
      if (!shell) this.shellStarts = MAX_SHELL_STARTS;
      this.shellEnv = env;
      this.shell = shell;
      if (this.cleaned) shell?.close();
      return shell;
    })().finally(() => {
      this.shellStarting = undefined;
    });
    return this.shellStarting;
  }

  /** The allow-listed variables, the --pass-env ones and the user's HOME. */
  private baseEnv(): Record<string, string> {
    return taskEnvironment(process.env, this.options.passEnv ?? [], process.env.HOME ? { HOME: process.env.HOME } : {});
  }

  /** What differs from the shell's own environment: changed or added variables, and null for removed ones. */
  private envChanges(env: Record<string, string>): Record<string, string | null> {
    const changes: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(env)) if (this.shellEnv[k] !== v) changes[k] = v;
    for (const k of Object.keys(this.shellEnv)) if (!(k in env)) changes[k] = null;
    return changes;
  }

  async readFile(path: string): Promise<Buffer> {
    return readRegularFile(this.resolvePath(path), { followLinks: true });
  }

  async realpath(path: string): Promise<string | null> {
    try {
      return await realpath(this.resolvePath(path));
    } catch {
      return null;
    }
  }

  async writeFile(path: string, data: string | Buffer): Promise<void> {
    const full = this.resolvePath(path);
    await mkdir(dirname(full), { recursive: true });
    await writeRegularFile(full, data, { followLinks: true });
  }

  /** A process in the task's folder whose stdin and stdout the harness holds (an MCP server; piped_process.ts). */
  spawnPiped(argv: string[], opts?: PipedSpawnOptions): Promise<PipedProcess> {
    return spawnOnHost(
      opts?.cwd ? this.resolvePath(opts.cwd) : this.workdir,
      { ...this.baseEnv(), ...opts?.env },
      argv,
    );
  }

  startBackground(command: string, opts?: BackgroundStartOptions): Promise<BackgroundStarted> {
    return this.background.start(command, opts);
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

  async cleanup(): Promise<void> {
    if (this.cleaned) return;
    this.cleaned = true;
    try {
      await this.background.cleanup();
    } catch {
      // The state dir is removed below either way.
    }
    this.shell?.close();
    for (const pgid of this.runningGroups) killGroup(pgid, "SIGKILL");
    // Leftovers such as `server &` of a finished command, even ones that left the process group.
    for (let pass = 0; pass < 3; pass++) {
      const pids = processesWithMarker(this.marker);
      if (pids.length === 0) break;
      for (const p of pids) {
        try {
          process.kill(p, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      await sleep(50);
    }
    await rm(this.bgStateDir, { recursive: true, force: true });
    forgetTempDir(this.bgStateDir);
    if (this.options.removeTaskDirOnCleanup) await rm(this.taskDir, { recursive: true, force: true });
  }
}

/** Creates the task folder (spec.hostTaskDir) and a local environment working in it (or in spec.cwd). */
export const createLocalEnvironment: EnvironmentFactory = async (
  spec: EnvironmentSpec,
  options: EnvironmentOptions,
) => {
  const taskDir = resolve(spec.hostTaskDir);
  await makeTaskDir(taskDir, spec.freshTaskDir);
  let workdir = taskDir;
  if (spec.cwd && isAbsolute(spec.cwd)) {
    // An absolute cwd is a host path: use it only if it exists, never create host directories.
    if (!isDirectory(spec.cwd))
      throw new Error(`local environment: cwd '${spec.cwd}' is not an existing directory on this host`);
    workdir = resolve(spec.cwd);
  } else if (spec.cwd) {
    workdir = resolve(taskDir, spec.cwd);
    await mkdir(workdir, { recursive: true });
  }
  const bgStateDir = await makeTempDir("bg");
  return new LocalEnvironment(taskDir, workdir, bgStateDir, {
    removeTaskDirOnCleanup: options.removeTaskDirOnCleanup === true,
    maxOutputChars: typeof options.maxOutputChars === "number" ? options.maxOutputChars : undefined,
    passEnv: Array.isArray(options.passEnv) ? (options.passEnv as string[]) : [],
  });
};
