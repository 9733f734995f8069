/**
 * Background processes for any backend, built only on the environment's `exec`.
 *
 * Each process runs detached (`setsid`, so it leads its own process group) with its output in
 * `<stateDir>/<id>.out` and, once it ends, its exit code in `<stateDir>/<id>.exit`. Polling, killing and
 * cleanup are further short `exec` calls using POSIX sh, busybox-compatible commands only
 * (`kill -TERM -PGID`, `tail -c`, `wc -c`, `/proc/<pid>/stat`), so the same class serves the local,
 * Docker and Singularity backends.
 *
 * Usage inside a backend:
 *   this.background = new BackgroundProcessManager((cmd, opts) => this.exec(cmd, opts), { stateDir: "/tmp/.hermes-bg" });
 *   startBackground = (c, o) => this.background.start(c, o);   pollBackground = (id) => this.background.poll(id);
 *   killBackground = (id) => this.background.kill(id);          listBackground = () => this.background.list();
 *   cleanup: await this.background.cleanup();
 */
import { randomBytes } from "node:crypto";
import {
  DEFAULT_OUTPUT_CAP,
  shellQuote,
  type BackgroundStartOptions,
  type BackgroundStarted,
  type BackgroundStatus,
  type ExecOptions,
  type ExecResult,
} from "./base.js";

export type ExecFn = (command: string, opts?: ExecOptions) => Promise<ExecResult>;

export interface BackgroundManagerOptions {
  /** Directory inside the environment for output and exit files (created on the first start). */
  stateDir: string;
  /** Shell that runs the command inside the environment ("bash" where present). Default "sh". */
  shell?: string;
  /** Characters of output tail returned by poll. Default DEFAULT_OUTPUT_CAP (50,000). */
  maxOutputChars?: number;
  /** Timeout of each bookkeeping exec. Default 30 s. */
  execTimeoutMs?: number;
}

interface BackgroundRecord {
  id: string;
  pid: number;
  command: string;
  startedAt: number;
  cwd?: string;
  pty: boolean;
  /** Ended by kill(). */
  killed?: boolean;
  /** Set once a poll saw the process end (so kill does not signal a pid that may be reused). */
  finished: boolean;
  exitCode: number | null;
}

export class UnknownBackgroundProcessError extends Error {
  constructor(id: string) {
    super(`unknown background process '${id}'`);
    this.name = "UnknownBackgroundProcessError";
  }
}

const OUTPUT_MARK = "__HERMES_BG_OUTPUT__";

export class BackgroundProcessManager {
  private readonly records = new Map<string, BackgroundRecord>();
  private readonly stateDir: string;
  private readonly shell: string;
  private readonly maxOutputChars: number;
  private readonly execTimeoutMs: number;

  constructor(
    private readonly exec: ExecFn,
    options: BackgroundManagerOptions,
  ) {
    this.stateDir = options.stateDir.replace(/\/+$/, "") || "/";
    this.shell = options.shell ?? "sh";
    this.maxOutputChars = options.maxOutputChars ?? DEFAULT_OUTPUT_CAP;
    this.execTimeoutMs = options.execTimeoutMs ?? 30_000;
  }

  private paths(id: string) {
    return {
      out: `${this.stateDir}/${id}.out`,
      exit: `${this.stateDir}/${id}.exit`,
      exitTmp: `${this.stateDir}/${id}.exit.tmp`,
      stdin: `${this.stateDir}/${id}.in`,
      holder: `${this.stateDir}/${id}.hold`,
      session: `${this.stateDir}/${id}.pty`,
    };
  }

  private async run(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    return this.exec(command, { timeoutMs: this.execTimeoutMs, ...opts });
  }

  /**
   * The command line that runs `command`: under util-linux `script` for a pseudo-terminal when asked and
   * present (30 rows, 120 columns, as the original's pty), otherwise in a plain shell.
   * On the pty, the session `script` starts records its id (`session`) before anything else: the kill ends that
   * session too, and `script` failing without it (no pty to get: "failed to create pseudo-terminal") ran nothing,
   * so the command then runs without a pty, as the original's does when it cannot get one. Never twice: a command
   * that ran on the pty and failed leaves the record behind. What `script` itself says goes nowhere.
   */
  private runner(command: string, pty: boolean, session: string): string {
    const plain = `${this.shell} -c ${shellQuote(command)}`;
    if (!pty) return plain;
    const s = shellQuote(session);
    const onPty = `echo $$ > ${s} || exit 1; stty rows 30 cols 120 2>/dev/null; ${plain}`;
    const inPty = `script -qefc ${shellQuote(onPty)} /dev/null 2>/dev/null; r=$?; if [ $r -ne 0 ] && [ ! -s ${s} ]; then ${plain}; else (exit $r); fi`;
    return `{ if script -V 2>/dev/null | grep -q util-linux; then rm -f ${s}; ${inPty}; else ${plain}; fi; }`;
  }

  async start(command: string, opts: BackgroundStartOptions = {}): Promise<BackgroundStarted> {
    const id = `proc_${randomBytes(6).toString("hex")}`;
    const p = this.paths(id);
    // The command runs in its own shell so `exit N` inside it still lets the wrapper record N. Its stdin
    // is a FIFO (for `writeStdin`) held open by a sleeping holder, so it sees EOF only on `closeStdin`;
    // without mkfifo it reads /dev/null.
    // The FIFO gets its final name only once the holder has it open: data written before that would be
    // dropped with the last open end.
    const fifo = shellQuote(p.stdin);
    const fifoTmp = shellQuote(`${p.stdin}.tmp`);
    const wrapper = [
      `if mkfifo ${fifoTmp} 2>/dev/null; then`,
      `  exec 3<> ${fifoTmp}`,
      `  sleep 2147483647 <&3 & echo $! > ${shellQuote(p.holder)}`,
      `  exec 3<&-`,
      `  mv ${fifoTmp} ${fifo}`,
      `  ${this.runner(command, opts.pty ?? false, p.session)} < ${fifo}`,
      `else ${this.runner(command, opts.pty ?? false, p.session)}; fi`,
      `echo $? > ${shellQuote(p.exitTmp)} && mv ${shellQuote(p.exitTmp)} ${shellQuote(p.exit)}`,
      // closeStdin may remove the holder's pid file at any moment: nothing of this goes to the output.
      `[ -f ${shellQuote(p.holder)} ] && kill $(cat ${shellQuote(p.holder)} 2>/dev/null) 2>/dev/null; rm -f ${fifo}`,
    ].join("\n");
    const launch = `${this.shell} -c ${shellQuote(wrapper)} > ${shellQuote(p.out)} 2>&1 < /dev/null &`;
    const script = [
      `mkdir -p ${shellQuote(this.stateDir)} || exit 1`,
      `if command -v setsid >/dev/null 2>&1; then setsid ${launch}`,
      `elif command -v nohup >/dev/null 2>&1; then nohup ${launch}`,
      `else ${launch}`,
      `fi`,
      `echo "pid=$!"`,
    ].join("\n");
    const res = await this.run(script, {
      cwd: opts.cwd,
      env: opts.env,
      ...(opts.carry ? { carry: "start" as const } : {}),
    });
    const pid = Number(/pid=(\d+)/.exec(res.stdout)?.[1]);
    if (res.exitCode !== 0 || !Number.isInteger(pid) || pid <= 0) {
      throw new Error(
        `could not start background process: ${(res.stderr || res.stdout).trim() || `exit ${res.exitCode}`}`,
      );
    }
    this.records.set(id, {
      id,
      pid,
      command,
      startedAt: Date.now(),
      cwd: opts.cwd,
      pty: opts.pty ?? false,
      finished: false,
      exitCode: null,
    });
    return { id, pid };
  }

  private record(id: string): BackgroundRecord {
    const rec = this.records.get(id);
    if (!rec) throw new UnknownBackgroundProcessError(id);
    return rec;
  }

  /** The command a process was started with (for listings). */
  commandOf(id: string): string | undefined {
    return this.records.get(id)?.command;
  }

  ids(): string[] {
    return [...this.records.keys()];
  }

  async poll(id: string): Promise<BackgroundStatus> {
    const rec = this.record(id);
    const p = this.paths(id);
    const exitFile = shellQuote(p.exit);
    const out = shellQuote(p.out);
    // A zombie (parent gone, init not reaping) still answers kill -0, so /proc state Z counts as dead.
    const script = [
      `alive() { kill -0 ${rec.pid} 2>/dev/null || return 1; s=$(cat /proc/${rec.pid}/stat 2>/dev/null) || return 0; s=\${s##*) }; case "$s" in Z*|X*) return 1;; esac; return 0; }`,
      `if [ -f ${exitFile} ]; then echo "state=exited code=$(cat ${exitFile})"`,
      `elif alive; then echo state=running`,
      `elif [ -f ${exitFile} ]; then echo "state=exited code=$(cat ${exitFile})"`,
      `else echo state=gone; fi`,
      `echo "size=$(wc -c < ${out} 2>/dev/null || echo 0)"`,
      `echo ${OUTPUT_MARK}`,
      `tail -c ${this.maxOutputChars} ${out} 2>/dev/null`,
      `true`,
    ].join("\n");
    const res = await this.run(script, { maxOutputChars: this.maxOutputChars * 2 });
    const markAt = res.stdout.indexOf(`${OUTPUT_MARK}\n`);
    const head = markAt >= 0 ? res.stdout.slice(0, markAt) : res.stdout;
    let output = markAt >= 0 ? res.stdout.slice(markAt + OUTPUT_MARK.length + 1) : "";
    const state = /state=(\w+)/.exec(head)?.[1] ?? "gone";
    const code = /code=(-?\d+)/.exec(head)?.[1];
    const size = Number(/size=\s*(\d+)/.exec(head)?.[1] ?? 0);
    if (size > this.maxOutputChars) {
      output = `[... earlier output omitted; showing the last ${this.maxOutputChars} of ${size} bytes]\n${output}`;
    }
    if (state !== "running") {
      rec.finished = true;
      if (state === "exited" && code !== undefined) rec.exitCode = Number(code);
    }
    return {
      id,
      running: state === "running",
      exitCode: state === "exited" ? rec.exitCode : null,
      output,
      outputBytes: size,
      killed: rec.killed && state !== "exited",
      started: { command: rec.command, pid: rec.pid, at: rec.startedAt, cwd: rec.cwd, pty: rec.pty },
    };
  }

  /**
   * Sends `data` to the process's stdin. Throws when the process has ended, its stdin was closed, or it
   * does not read what is sent within the bookkeeping timeout (a full pipe).
   */
  async writeStdin(id: string, data: string): Promise<void> {
    const rec = this.record(id);
    const p = this.paths(id);
    const fifo = shellQuote(p.stdin);
    const script = [
      `if [ -f ${shellQuote(p.exit)} ]; then echo state=exited; exit 0; fi`,
      // Just started: the wrapper may not have made the FIFO yet.
      `i=0; while [ ! -p ${fifo} ] && [ ! -f ${shellQuote(p.exit)} ] && [ $i -lt 30 ]; do sleep 0.1 2>/dev/null || sleep 1; i=$((i+1)); done`,
      `if [ ! -p ${fifo} ]; then echo state=nostdin; exit 0; fi`,
      // Read-write open: never blocks on open, even when no reader is left.
      `printf '%s' ${shellQuote(data)} 1<> ${fifo} && echo state=written`,
    ].join("\n");
    const res = await this.run(script);
    const state = /state=(\w+)/.exec(res.stdout)?.[1];
    if (state === "written") return;
    if (state === "exited" || rec.finished) throw new Error(`process ${id} has exited; nothing was sent`);
    if (state === "nostdin")
      throw new Error(`process ${id} has no open stdin (closed, or mkfifo is missing in this environment)`);
    throw new Error(
      res.timedOut
        ? `process ${id} did not read its stdin (the pipe is full)`
        : `could not write to ${id}: ${(res.stderr || res.stdout).trim() || `exit ${res.exitCode}`}`,
    );
  }

  /** Closes the process's stdin: it reads EOF once it has consumed what was sent. */
  async closeStdin(id: string): Promise<void> {
    this.record(id);
    const p = this.paths(id);
    const holder = shellQuote(p.holder);
    await this.run(
      `if [ -f ${holder} ]; then kill $(cat ${holder} 2>/dev/null) 2>/dev/null; fi; rm -f ${shellQuote(p.stdin)} ${holder}; true`,
    );
  }

  /** Ends the process and its whole process group: SIGTERM, then SIGKILL after about 1 s. */
  async kill(id: string): Promise<void> {
    const rec = this.record(id);
    await this.run(this.killScript([rec]));
    if (!rec.finished) rec.killed = true;
    rec.finished = true;
  }

  async list(): Promise<BackgroundStatus[]> {
    const out: BackgroundStatus[] = [];
    for (const id of this.records.keys()) out.push(await this.poll(id));
    return out;
  }

  /** Kills every process started here (and their groups) in one exec. */
  async killAll(): Promise<void> {
    const recs = [...this.records.values()];
    if (recs.length === 0) return;
    await this.run(this.killScript(recs));
    for (const r of recs) r.finished = true;
  }

  /** Kills everything and removes the state directory. Safe to call twice. */
  async cleanup(): Promise<void> {
    const recs = [...this.records.values()];
    // Nothing was ever started, so the state directory was never made: spare the exec (a fork per task).
    if (recs.length === 0) return;
    const parts: string[] = [];
    if (recs.length > 0) parts.push(this.killScript(recs));
    parts.push(`rm -rf ${shellQuote(this.stateDir)}`);
    await this.run(parts.join("\n"));
    for (const r of recs) r.finished = true;
  }

  private killScript(recs: BackgroundRecord[]): string {
    // Group kill is always safe while the group exists (Linux never hands out a pid equal to a live
    // pgid); a bare-pid kill only while the process is not known to have ended.
    // On a pty, `script` starts the command in a session (and group) of its own, out of reach of the wrapper's
    // group: its id, as the session recorded it, is read once (`sN`), before anything is signalled.
    const ptys = recs.flatMap((r, i) => (r.pty ? [[r, i] as const] : []));
    const sessions = ptys.map(
      ([r, i]) => `s${i}=$(cat ${shellQuote(this.paths(r.id).session)} 2>/dev/null); s${i}=\${s${i}:-0}`,
    );
    const signal = (sig: string) =>
      recs
        .map(
          (r, i) =>
            `kill -${sig} -${r.pid} 2>/dev/null${r.finished ? "" : `; kill -${sig} ${r.pid} 2>/dev/null`}` +
            (r.pty ? `; [ "$s${i}" -gt 1 ] 2>/dev/null && kill -${sig} -$s${i} 2>/dev/null` : ""),
        )
        .join("; ");
    // A process group counts as alive while it has a member that is not a zombie (init may not reap).
    const groupAlive = `galive() { if [ ! -r /proc/self/stat ]; then kill -0 -$1 2>/dev/null; return; fi; for f in /proc/[0-9]*/stat; do read -r s 2>/dev/null < "$f" || continue; s=\${s##*) }; set -- $1 $s; [ "$4" = "$1" ] && case "$2" in Z*|X*) ;; *) return 0;; esac; done; return 1; }`;
    const anyAlive = [
      ...recs.map((r) => `galive ${r.pid}`),
      ...ptys.map(([, i]) => `{ [ "$s${i}" -gt 1 ] 2>/dev/null && galive $s${i}; }`),
    ].join(" || ");
    const waitGone = (tenths: number) =>
      `i=0; while [ $i -lt ${tenths} ] && { ${anyAlive}; }; do sleep 0.1 2>/dev/null || sleep 1; i=$((i+1)); done`;
    return [
      groupAlive,
      ...sessions,
      signal("TERM"),
      // A second of grace for SIGTERM.
      waitGone(10),
      signal("KILL"),
      // A killed process is gone only once the kernel has run its exit: the next poll must not see it running. On a
      // loaded machine that took more than a second once (a fresh-clone CI run); SIGKILL always ends it, so wait on.
      waitGone(100),
      `true`,
    ].join("\n");
  }
}
