/**
 * Starts long-lived processes (the local backend's sandboxes) from a small helper shell instead of from this
 * process. Creating a process means forking its creator: a fork of the harness (hundreds of MB mapped, several
 * threads) costs many milliseconds of CPU and stalls every thread of the harness while the page tables are
 * copied, and makes the next writes of every thread fault (copy-on-write). A fork of a small bash costs a
 * fraction of that and stalls nothing here.
 *
 * One helper per thread, started on first use (one fork of the harness), spawned in its own session (a Ctrl-C
 * at the terminal does not reach it). It reads shell lines on its stdin, each after its length, and answers with
 * one line each on its stdout. A launched process is the helper's background job with its stdio on FIFOs that this
 * process opens itself (never blocking: both ends are opened here before the helper's child opens its end, and
 * the write ends of stdout/stderr kept by this process until `started()`, so an early read never sees EOF).
 * Extra descriptors are passed as `/proc/<this pid>/fd/N` (a directory opened here, without a new path lookup)
 * or as a file the helper creates (for `bwrap --info-fd`).
 *
 * The helper exits when its stdin closes (this thread or process ended, even by SIGKILL): processes started with
 * a parent-death signal (bwrap --die-with-parent) die with it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, closeSync, constants, openSync, readFileSync, unlinkSync } from "node:fs";
import { makeTempDirSync } from "../temp_dirs.js";
import { Socket } from "node:net";
import { join } from "node:path";
import { shellQuote } from "../base.js";
import { pidAlive } from "../../../src/core/pid_alive.js";

/**
 * A bash line that closes every descriptor above `highest` the shell has. A process started from this one inherits
 * whatever descriptors it holds without close-on-exec, and Node passes on those this process itself inherited
 * (a parent's `exec 100<DIR`, a job runner's pipe): in a sandbox, an open folder reaches every host file below it
 * through `/proc/self/fd/N/…` and an open file is written outside the sandbox. A launched process gets only the
 * descriptors named for it.
 */
export function closeInheritedFds(highest: number): string {
  return `for hb_fd in /proc/$$/fd/*; do hb_fd=\${hb_fd##*/}; [ "$hb_fd" -gt ${highest} ] 2>/dev/null && eval "exec $hb_fd>&-"; done; unset hb_fd`;
}

/**
 * Each request is its length in bytes on a line, then that many bytes: `read -N` takes them from the pipe in one
 * read (LC_ALL=C: characters are bytes), where `read -d ''` made one read system call per byte (2 KB a launch).
 */
const HELPER_SCRIPT = `${closeInheritedFds(2)}
while IFS= read -r hb_n && IFS= read -r -N "$hb_n" hb_req; do eval "$hb_req"; done`;
/** FIFOs made by one `mkfifo` call: enough for this many launches (doubles up to the cap as launches come). */
const FIFO_BATCH_START = 4;
const FIFO_BATCH_MAX = 64;
const O_NONBLOCK = constants.O_NONBLOCK;
const EXIT_POLL_MS = 100;

/** A descriptor the launched process gets besides 0–2. */
export type ExtraFd = { fd: number; dirFd: number } | { fd: number; outputFile: true };

export interface LaunchedProcess {
  /** The host pid of the launched process. */
  readonly pid: number;
  readonly stdin: Socket;
  readonly stdout: Socket;
  readonly stderr: Socket;
  /** Runs once when both stdout and stderr have ended (every writer in the process tree is gone). */
  onClosed(listener: () => void): void;
  /**
   * The process has opened its stdio (it answered on stdout or stderr): an end of stdout/stderr now means it is
   * gone. Called earlier, an end may be seen before the process opened its end.
   */
  started(): void;
  /** What the process wrote to extra descriptor `fd` declared with `outputFile` (read once, then removed). */
  takeOutput(fd: number): string | undefined;
  /** Closes every descriptor this side holds (the process sees EOF on stdin). */
  destroy(): void;
}

interface Pending {
  resolve: (line: string) => void;
  reject: (err: Error) => void;
}

export class SpawnHelper {
  private static perThread: SpawnHelper | undefined;
  private readonly dir: string;
  private child: ChildProcess | undefined;
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  private buffered = "";
  private stderrTail = "";
  private fifos: string[] = [];
  private fifoBatch = FIFO_BATCH_START;
  private making: Promise<void> | undefined;
  private fifoSeq = 0;

  private constructor(private readonly bash: string) {
    this.dir = makeTempDirSync("spawn");
  }

  /** This thread's helper (started on first launch). */
  static forThread(bash = "/bin/bash"): SpawnHelper {
    SpawnHelper.perThread ??= new SpawnHelper(bash);
    return SpawnHelper.perThread;
  }

  private ensureChild(): ChildProcess {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null && !this.child.killed)
      return this.child;
    const child = spawn(this.bash, ["--norc", "--noprofile", "-c", HELPER_SCRIPT], {
      cwd: this.dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    child.stdin!.on("error", () => undefined);
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (text: string) => this.onAnswer(text));
    child.stderr!.on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-2000);
    });
    const gone = () => {
      if (this.child !== child) return;
      this.child = undefined;
      const err = new Error(
        `the spawn helper ended${this.stderrTail.trim() ? `: ${this.stderrTail.trim().split("\n").pop()}` : ""}`,
      );
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    child.once("error", gone);
    child.once("exit", gone);
    this.setRef(false);
    return child;
  }

  private setRef(ref: boolean): void {
    const c = this.child;
    if (!c) return;
    for (const h of [c, c.stdin, c.stdout, c.stderr] as ({ ref?: () => void; unref?: () => void } | null)[]) {
      if (ref) h?.ref?.();
      else h?.unref?.();
    }
  }

  private onAnswer(text: string): void {
    this.buffered += text;
    let nl: number;
    while ((nl = this.buffered.indexOf("\n")) >= 0) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      const sp = line.indexOf(" ");
      const seq = Number(line.slice(0, sp));
      const p = this.pending.get(seq);
      if (!p) continue;
      this.pending.delete(seq);
      p.resolve(line.slice(sp + 1));
    }
    if (this.pending.size === 0) this.setRef(false);
  }

  /** Runs one shell line in the helper; `answer` is a shell expression whose value comes back. */
  /** `answersItself`: the line prints `$hb_seq <answer>` by itself (a background job), `answer` is not printed. */
  private request(line: string, answer: string, answersItself = false): Promise<string> {
    const child = this.ensureChild();
    const seq = ++this.seq;
    return new Promise<string>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      this.setRef(true);
      const payload = answersItself ? `hb_seq=${seq}\n${line}` : `${line}\nprintf '%s %s\\n' ${seq} "${answer}"`;
      child.stdin!.write(`${Buffer.byteLength(payload)}\n${payload}`);
    });
  }

  /**
   * Runs a shell command line as a background job of the helper, so launches do not wait for it (mke2fs, mount):
   * resolves with its exit status, or rejects with the last line it wrote on stderr.
   */
  async runCommand(line: string): Promise<void> {
    const answer = await this.request(
      `( hb_err=$( { ${line} ; } 2>&1 >/dev/null ); hb_s=$?; printf '%s %s %s\\n' "$hb_seq" "$hb_s" "\${hb_err##*$'\\n'}" ) &`,
      "bg",
      true,
    );
    const sp = answer.indexOf(" ");
    const status = answer.slice(0, sp < 0 ? undefined : sp);
    if (status !== "0")
      throw new Error(`${line.split(" ")[0]}: ${(sp < 0 ? "" : answer.slice(sp + 1)) || `exit ${status}`}`);
  }

  private async takeFifos(n: number): Promise<string[]> {
    while (this.fifos.length < n) {
      this.making ??= (async () => {
        const names: string[] = [];
        for (let i = 0; i < this.fifoBatch * 3; i++) names.push(join(this.dir, `f${++this.fifoSeq}`));
        this.fifoBatch = Math.min(FIFO_BATCH_MAX, this.fifoBatch * 2);
        const status = await this.request(`mkfifo -m 600 -- ${names.map(shellQuote).join(" ")}`, "$?");
        if (status !== "0")
          throw new Error(
            `the spawn helper could not make FIFOs (mkfifo exit ${status}${this.stderrTail.trim() ? `: ${this.stderrTail.trim().split("\n").pop()}` : ""})`,
          );
        this.fifos.push(...names);
      })().finally(() => {
        this.making = undefined;
      });
      await this.making;
    }
    return this.fifos.splice(0, n);
  }

  /** Starts `file args…` as the helper's background job, its stdio on FIFOs opened here. */
  async launch(file: string, args: string[], extra: ExtraFd[] = [], enter: string[] = []): Promise<LaunchedProcess> {
    const [inPath, outPath, errPath] = (await this.takeFifos(3)) as [string, string, string];
    const opened: number[] = [];
    const open = (path: string, flags: number) => {
      const fd = openSync(path, flags);
      opened.push(fd);
      return fd;
    };
    const outputs = new Map<number, string>();
    try {
      // Never blocks: O_RDWR on a FIFO, and O_NONBLOCK reads; the write ends kept here open at once because a reader exists.
      const inFd = open(inPath, constants.O_RDWR | O_NONBLOCK);
      const outFd = open(outPath, constants.O_RDONLY | O_NONBLOCK);
      const errFd = open(errPath, constants.O_RDONLY | O_NONBLOCK);
      const holders = [open(outPath, constants.O_WRONLY | O_NONBLOCK), open(errPath, constants.O_WRONLY | O_NONBLOCK)];
      const redirects = [`0<${shellQuote(inPath)}`, `1>${shellQuote(outPath)}`, `2>${shellQuote(errPath)}`];
      for (const e of extra) {
        if ("dirFd" in e) redirects.push(`${e.fd}</proc/${process.pid}/fd/${e.dirFd}`);
        else {
          const path = join(this.dir, `o${++this.fifoSeq}`);
          outputs.set(e.fd, path);
          redirects.push(`${e.fd}>${shellQuote(path)}`);
        }
      }
      // `enter`: files (cgroup.procs) the job writes its own pid to before it becomes `file`, so all it starts is counted there.
      const command = [file, ...args].map(shellQuote).join(" ");
      const job = enter.length
        ? `{ ${enter.map((f) => `echo $BASHPID > ${shellQuote(f)} 2>/dev/null;`).join(" ")} exec ${command}; }`
        : command;
      const pidText = await this.request(`${job} ${redirects.join(" ")} &`, "$!");
      const pid = Number(pidText);
      if (!Number.isInteger(pid) || pid <= 0) throw new Error(`the spawn helper did not start ${file}`);
      return new HelperProcess(pid, inFd, outFd, errFd, holders, [inPath, outPath, errPath], outputs);
    } catch (err) {
      for (const fd of opened) closeQuietly(fd);
      for (const p of [inPath, outPath, errPath, ...outputs.values()]) unlinkQuietly(p);
      throw err;
    }
  }
}

class HelperProcess implements LaunchedProcess {
  readonly stdin: Socket;
  readonly stdout: Socket;
  readonly stderr: Socket;
  private readonly closedListeners: (() => void)[] = [];
  private ended = 0;
  private closed = false;
  private readonly exitPoll: NodeJS.Timeout;

  constructor(
    readonly pid: number,
    inFd: number,
    outFd: number,
    errFd: number,
    private holders: number[],
    private paths: string[],
    private readonly outputs: Map<number, string>,
  ) {
    this.stdin = new Socket({ fd: inFd, readable: false, writable: true });
    this.stdout = new Socket({ fd: outFd, readable: true, writable: false });
    this.stderr = new Socket({ fd: errFd, readable: true, writable: false });
    this.stdin.on("error", () => undefined);
    // Until it answers, the ends kept here hide the process's end: a process that exits before (bwrap refusing its
    // arguments) is noticed by its pid (the helper reaps it), and its output still drains before the end.
    this.exitPoll = setInterval(() => {
      if (!pidAlive(pid)) this.started();
    }, EXIT_POLL_MS);
    this.exitPoll.unref();
    for (const s of [this.stdout, this.stderr]) {
      s.on("error", () => undefined);
      s.once("close", () => {
        if (++this.ended === 2) this.fireClosed();
      });
    }
  }

  private fireClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.removeFifos();
    for (const l of this.closedListeners.splice(0)) l();
  }

  private removeFifos(): void {
    for (const p of this.paths.splice(0)) unlinkQuietly(p);
  }

  onClosed(listener: () => void): void {
    if (this.closed) listener();
    else this.closedListeners.push(listener);
  }

  started(): void {
    clearInterval(this.exitPoll);
    for (const fd of this.holders.splice(0)) closeQuietly(fd);
    // Every end is open now: nobody may open them again (through /proc/<pid>/fd/N of a process that holds one,
    // such as a sandbox's init, a process of the same uid could otherwise write into the shell's stdin).
    for (const p of this.paths) chmodQuietly(p);
  }

  takeOutput(fd: number): string | undefined {
    const path = this.outputs.get(fd);
    if (!path) return undefined;
    this.outputs.delete(fd);
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    } finally {
      unlinkQuietly(path);
    }
  }

  destroy(): void {
    this.started();
    this.removeFifos();
    for (const path of this.outputs.values()) unlinkQuietly(path);
    this.outputs.clear();
    this.stdin.destroy();
    this.stdout.destroy();
    this.stderr.destroy();
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

function chmodQuietly(path: string): void {
  try {
    chmodSync(path, 0);
  } catch {
    // gone
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone
  }
}
