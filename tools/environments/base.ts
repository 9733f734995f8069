/**
 * The environment interface: where a task's terminal and file tools run.
 * One environment per task, created on first use, cleaned up when the task ends.
 */
import type { SandboxGates } from "./sandbox_gates.js";

export interface ExecOptions {
  /** Working directory inside the environment (default: the environment's workdir). */
  cwd?: string;
  /** Kill the command (and everything it started) after this long. */
  timeoutMs?: number;
  env?: Record<string, string>;
  stdin?: string;
  signal?: AbortSignal;
  /** Cap on stdout and on stderr, each, in characters (head and tail kept). */
  maxOutputChars?: number;
  /**
   * The terminal's own command (as the original's one shell per task): it starts in the tracked cwd (`cwd`
   * overrides it) with the variables earlier carried commands exported, and its final cwd and exports carry to the
   * next one. Its own `exit`, a timeout or a kill carries nothing; a tracked cwd that is gone fails it with 126.
   * "start": starts from that state but moves nothing (a background process's start, as the original's).
   */
  carry?: boolean | "start";
}

export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** True when stdout or stderr was cut to the cap. */
  truncated: boolean;
  /** With `carry`: the cwd the command ended in, when it saved one (not after its own `exit`, a kill or a gone cwd). */
  cwd?: string;
}

/** The verify step's files and bounds (Environment.runVerify). */
export interface VerifyOptions {
  /** Written before the command runs, over whatever is at each path (a link there is replaced, not followed). */
  files?: { path: string; data: Buffer }[];
  timeoutMs?: number;
  signal?: AbortSignal;
  maxOutputChars?: number;
}

export interface BackgroundStatus {
  id: string;
  running: boolean;
  exitCode: number | null;
  /** Output so far (stdout and stderr merged), capped to the tail. */
  output: string;
  /** Bytes of output written so far (more than `output` holds once it was capped), when the backend can tell. */
  outputBytes?: number;
  /** True when it ended by killBackground (the original reports exit code -15, its SIGTERM, then). */
  killed?: boolean;
  /** What the process was started with, when the backend keeps it (for the process tool's list and poll). */
  started?: { command: string; pid: number; at: number; cwd?: string; pty: boolean };
}

export interface BackgroundStartOptions {
  cwd?: string;
  /** Start from the terminal's carried state (its cwd unless `cwd`, its exports), as the original's background. */
  carry?: boolean;
  env?: Record<string, string>;
  /** Run the command on a pseudo-terminal (`script` from util-linux inside the environment); without one there, as if not asked. */
  pty?: boolean;
}

export interface BackgroundStarted {
  id: string;
  /** The process id as the environment sees it, when known. */
  pid?: number;
}

export interface Environment {
  readonly kind: string;
  /** The default working directory inside the environment. */
  readonly workdir: string;
  /**
   * The terminal's current directory: where the last carried command ended (starts at `workdir`). Relative paths
   * of the file tools and the approval gate resolve against it. Left out by backends that carry no state.
   */
  readonly cwd?: string;
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  readFile(path: string): Promise<Buffer>;
  /** Creates parent directories as needed. */
  writeFile(path: string, data: string | Buffer): Promise<void>;
  startBackground(command: string, opts?: BackgroundStartOptions): Promise<BackgroundStarted>;
  pollBackground(id: string): Promise<BackgroundStatus>;
  killBackground(id: string): Promise<void>;
  listBackground(): Promise<BackgroundStatus[]>;
  /** Sends data to a background process's stdin (process write/submit); backends without stdin leave it out. */
  writeBackground?(id: string, data: string): Promise<void>;
  /** Closes a background process's stdin, so it reads EOF (process close). */
  closeBackgroundStdin?(id: string): Promise<void>;
  /**
   * The real path of `path` as the environment sees it (symlinks resolved there); null when it does not exist.
   * Given to the approval gate, so a delete through a link is judged by where the link leads.
   */
  realpath?(path: string): Promise<string | null>;
  /** Kills background processes and removes the sandbox. Safe to call twice. */
  cleanup(): Promise<void>;
  /** Ends every process the agent started, as far as the backend can tell them apart (before `verify`). */
  stopProcesses?(): Promise<void>;
  /**
   * The verify step out of the agent's reach, after stopProcesses: `files` put in place, then `command` in a new
   * process whose exit status the harness reads itself, never through the agent's persistent shell and its
   * markers. Backends without it run verify through exec (after stopProcesses).
   */
  runVerify?(command: string, opts?: VerifyOptions): Promise<ExecResult>;
  /**
   * A fresh environment from a snapshot of this one's files, with none of its processes (for
   * `--verify-isolated`); the caller cleans it up. Backends that cannot snapshot leave it out.
   */
  isolatedCopy?(signal?: AbortSignal): Promise<Environment>;
  /**
   * A command in a process of its own as `user` (a name or uid[:gid]; "0:0" is root), never the agent's shell:
   * the harness's own steps inside the sandbox (a Harbor task's setup, oracle and verifier). Docker only.
   */
  execAs?(command: string, opts: ExecOptions & { user?: string }): Promise<ExecResult>;
  /** Connects the sandbox to the network (`bridge` or a named one), or disconnects it (`connected` false). Docker only. */
  setNetwork?(network: string, connected: boolean): Promise<void>;
}

/** What the runner knows about a task when it asks for its environment. */
export interface EnvironmentSpec {
  runName: string;
  taskId: string;
  /** Folder for this task on the host (local backend's workdir; scratch for others). */
  hostTaskDir: string;
  image?: string;
  cwd?: string;
  network?: string;
  /** Task timeout in seconds; container backends arm a dead-man's switch from it. */
  taskTimeoutSec?: number;
  /** The task's signal: a creation still waiting for a sandbox permit or its start turn gives up when it aborts. */
  signal?: AbortSignal;
  /**
   * A backend calls this when the sandbox can no longer serve the task (container gone, shell dead, no process
   * can start): the task ends as `environment_error` (retryable) instead of going on against a broken sandbox.
   */
  reportLost?: (reason: string) => void;
  /** Something about this task's environment for the run's events.log (e.g. a sandbox start retried). */
  onEvent?: (message: string) => void;
  /**
   * A new attempt of its task (not a look at a kept folder, as `score` takes): whatever an earlier attempt left at
   * hostTaskDir (a `--keep-workspaces` folder, a killed run's) is removed first, so the agent starts in an empty
   * folder and never sees the verify files an earlier verify put there, nor the earlier agent's work.
   */
  freshTaskDir?: boolean;
}

/** Thrown by a backend's operations once its sandbox is lost (see `EnvironmentSpec.reportLost`). */
export class EnvironmentLostError extends Error {
  override name = "EnvironmentLostError";
}

/** Backend options from the run configuration (flags and YAML). */
export interface EnvironmentOptions {
  /** The run's sandbox gates (shared by every worker thread); without them a backend uses per-process ones. */
  gates?: SandboxGates;
  /** Limits for per-process gates when no `gates` are given (direct use, tests). */
  maxSandboxes?: number;
  prewarm?: number;
  startsPerSecond?: number;
  image?: string;
  network?: string;
  memoryMb?: number;
  cpus?: number;
  pidsLimit?: number;
  readOnlyRoot?: boolean;
  pull?: boolean;
  singularityCacheDir?: string;
  [key: string]: unknown;
}

export type EnvironmentFactory = (spec: EnvironmentSpec, options: EnvironmentOptions) => Promise<Environment>;

export const DEFAULT_OUTPUT_CAP = 50_000;

/**
 * A file larger than this is not read whole (Environment.readFile: patch, the approval gate's look at files earlier
 * calls wrote), in any backend.
 */
export const MAX_FILE_READ_BYTES = 256 * 1024 * 1024;

/** Keeps 40 % head and 60 % tail of an over-long output with a notice stating the cap. */
export function capOutput(text: string, cap = DEFAULT_OUTPUT_CAP): { text: string; truncated: boolean } {
  if (text.length <= cap) return { text, truncated: false };
  const head = Math.floor(cap * 0.4);
  const tail = cap - head;
  const omitted = text.length - cap;
  return {
    text: `${text.slice(0, head)}\n\n... [OUTPUT TRUNCATED - ${omitted} chars omitted out of ${text.length} total; cap is ${cap} chars] ...\n\n${text.slice(text.length - tail)}`,
    truncated: true,
  };
}

/** Single-quotes a string for POSIX sh. */
/** The errno codes a shell's message about a failed write names (mkdir -p, or `cat > PATH`). */
export type ShellWriteErrorCode = "ENOTDIR" | "EISDIR" | "EACCES" | "EPERM" | "EROFS" | "ENOSPC" | "EDQUOT";

const SHELL_WRITE_ERRORS: [RegExp, ShellWriteErrorCode][] = [
  // `mkdir -p` meeting a file on the way says "File exists"; the redirection says "Not a directory".
  [/File exists|Not a directory/, "ENOTDIR"],
  [/Is a directory/, "EISDIR"],
  [/Permission denied/, "EACCES"],
  [/Operation not permitted/, "EPERM"],
  [/Read-only file system/, "EROFS"],
  [/No space left on device/, "ENOSPC"],
  [/Disk quota exceeded/, "EDQUOT"],
];

/** The errno code of a failed shell write, from its message, when it is a usual one (so tools can word it without the path inside the sandbox). */
export function shellWriteErrorCode(message: string): ShellWriteErrorCode | undefined {
  return SHELL_WRITE_ERRORS.find(([re]) => re.test(message))?.[1];
}

/** A write that failed in the environment's shell: the shell's message, and the errno code it names when it names a usual one. */
export class ShellWriteError extends Error {
  readonly code: ShellWriteErrorCode | undefined;
  constructor(message: string) {
    super(message);
    this.name = "ShellWriteError";
    this.code = shellWriteErrorCode(message);
  }
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Shell text (POSIX sh) for the verify step: for a verify file `D/N.py` just put at the path in `$var`, removes
 * what Python would import instead of it, which the agent could have left: its bytecode in `D/__pycache__/` (an
 * unchecked hash-based .pyc is never compared with its source: PEP 552), an extension module `D/N.so` or
 * `D/N.*.so`, and a package folder `D/N/` (each found before the module). `fail` runs when one cannot be removed.
 */
export function removePythonShadows(variable: string, fail: string): string {
  return (
    `case $${variable} in *.py) hb_d=\${${variable}%/*}; hb_n=\${${variable}##*/}; hb_n=\${hb_n%.py}; ` +
    `${writableTree('"$hb_d/$hb_n"')}; ${writableTree('"$hb_d/__pycache__"')}; ` +
    `rm -rf -- "$hb_d/$hb_n" "$hb_d/__pycache__/$hb_n".*pyc "$hb_d/$hb_n".so "$hb_d/$hb_n".*.so || ${fail} ;; esac`
  );
}

/**
 * POSIX sh: a folder at `path` (a quoted shell word; not a link) and everything in it made writable by its owner, so
 * that `rm -rf` can remove it: a folder the agent left read-only inside it would otherwise keep the verify's files
 * from being put in place (and the verify from running).
 */
export function writableTree(path: string): string {
  return `if [ -d ${path} ] && [ ! -L ${path} ]; then chmod -R u+rwx -- ${path} 2>/dev/null; fi`;
}
