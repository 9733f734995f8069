/**
 * A persistent shell per container: one long-lived exec running `sh`, fed commands on stdin, so a command
 * costs a fork inside the container instead of an exec round trip through the engine (≈50 ms).
 *
 * Protocol (all markers carry a per-shell random nonce, so command output cannot forge them):
 *   host  → shell: `hb_run SEQ 'cwd' 'command' 'K=V'...`
 *   shell → host:  stdout and stderr each get `MARK SEQ S<pid>\n` before the command runs (the pid leads
 *                  the command's own session/process group), then the command's output, then
 *                  `\nMARK SEQ E<exit code>\n` after it ends. The leading "\n" of the end marker is always
 *                  added, so stripping it restores the output byte for byte.
 * Each command gets stdin from /dev/null (the shell's stdin carries the protocol), its own session via
 * `setsid` (so a timeout kills its whole tree with `kill -9 -PGID` from a second exec), and a subshell
 * (so `cd`, `exit` or `export` in one command do not leak into the next). Output written between commands
 * (by processes a previous command left running) is dropped.
 * Images without `setsid` or /proc report UNSUPPORTED and the caller falls back to one exec per command.
 */
import { randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type Docker from "dockerode";
import { shellQuote, type ExecResult } from "./base.js";
import { INTERRUPT_EXIT_CODE, TIMEOUT_EXIT_CODE, demux, killInContainer, startExec, type StartedExec } from "./docker_exec.js";
import { OutputCollector } from "./docker_output.js";

/** After a kill, how long we wait for the shell to report the command's end before giving up on the shell. */
const AFTER_KILL_GRACE_MS = 5000;
const BOOT_TIMEOUT_MS = 15_000;

function bootScript(mark: string): string {
  return [
    `hb_mark='${mark}'`,
    `if command -v bash >/dev/null 2>&1; then hb_shell=bash; else hb_shell=sh; fi`,
    `hb_run() {`,
    `  hb_seq=$1; hb_dir=$2; hb_cmd=$3; shift 3`,
    `  (`,
    `    read -r hb_self hb_rest < /proc/self/stat`,
    `    printf '%s %s S%s\\n' "$hb_mark" "$hb_seq" "$hb_self"`,
    `    printf '%s %s S%s\\n' "$hb_mark" "$hb_seq" "$hb_self" >&2`,
    `    cd "$hb_dir" || exit 1`,
    `    for hb_kv in "$@"; do export "$hb_kv"; done`,
    `    exec setsid $hb_shell -c "$hb_cmd"`,
    `  ) < /dev/null &`,
    `  wait $!`,
    `  hb_rc=$?`,
    `  printf '\\n%s %s E%s\\n' "$hb_mark" "$hb_seq" "$hb_rc"`,
    `  printf '\\n%s %s E%s\\n' "$hb_mark" "$hb_seq" "$hb_rc" >&2`,
    `}`,
    `if command -v setsid >/dev/null 2>&1 && [ -r /proc/self/stat ]; then printf '%s READY %s\\n' "$hb_mark" "$$"; else printf '%s UNSUPPORTED\\n' "$hb_mark"; exit 0; fi`,
    ``,
  ].join("\n");
}

/** Cuts one command's part out of one output stream: drops everything before its start marker. */
class StreamCut {
  private carry = "";
  private phase: "start" | "body" | "done" = "start";
  pid: number | undefined;
  exitCode: number | undefined;

  constructor(
    private readonly startTag: string,
    private readonly endTag: string,
    private readonly sink: OutputCollector,
  ) {}

  get done(): boolean {
    return this.phase === "done";
  }

  feed(text: string): void {
    let t = this.carry + text;
    this.carry = "";
    if (this.phase === "start") {
      const i = t.indexOf(this.startTag);
      if (i < 0) {
        this.carry = t.slice(Math.max(0, t.length - this.startTag.length));
        return;
      }
      const nl = t.indexOf("\n", i);
      if (nl < 0) {
        this.carry = t.slice(i);
        return;
      }
      this.pid = Number(t.slice(i + this.startTag.length, nl));
      t = t.slice(nl + 1);
      this.phase = "body";
    }
    if (this.phase === "body") {
      const i = t.indexOf(this.endTag);
      if (i >= 0) {
        this.sink.push(t.slice(0, i));
        const nl = t.indexOf("\n", i + this.endTag.length);
        if (nl < 0) {
          this.carry = t.slice(i);
          return;
        }
        this.exitCode = Number(t.slice(i + this.endTag.length, nl));
        this.phase = "done";
        return;
      }
      // Whatever could be the beginning of the end marker waits for the next chunk.
      const keep = Math.min(t.length, this.endTag.length + 8);
      this.sink.push(t.slice(0, t.length - keep));
      this.carry = t.slice(t.length - keep);
    }
  }

  /** The part still held back (when the command ends without a marker). */
  flush(): void {
    if (this.phase === "body") this.sink.push(this.carry);
    this.carry = "";
  }
}

export interface ShellCommand {
  command: string;
  cwd: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
  cap: number;
}

interface Running {
  seq: number;
  out: StreamCut;
  err: StreamCut;
  stdout: OutputCollector;
  stderr: OutputCollector;
  finish: (ended: "normal" | "shell-died") => void;
}

export class PersistentShell {
  private readonly mark: string;
  private seq = 0;
  private current: Running | undefined;
  private dead = false;
  private shellPid: number | undefined;
  private readonly outDecoder = new StringDecoder("utf8");
  private readonly errDecoder = new StringDecoder("utf8");
  private bootText = "";
  private bootWaiter: ((ok: boolean) => void) | undefined;

  private constructor(
    private readonly container: Docker.Container,
    private readonly user: string | undefined,
    private readonly started: StartedExec,
    mark: string,
  ) {
    this.mark = mark;
    demux(
      started.stream,
      (b) => this.onData("out", this.outDecoder.write(b)),
      (b) => this.onData("err", this.errDecoder.write(b)),
    );
    const onGone = () => this.onShellGone();
    started.stream.once("end", onGone);
    started.stream.once("close", onGone);
    started.stream.once("error", onGone);
  }

  /** Starts the shell; resolves undefined when the image cannot host it (no setsid or /proc). */
  static async start(container: Docker.Container, user: string | undefined): Promise<PersistentShell | undefined> {
    const mark = `__HB_${randomBytes(8).toString("hex")}__`;
    const started = await startExec(container, { cmd: ["sh"], user, attachStdin: true });
    const shell = new PersistentShell(container, user, started, mark);
    const ok = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), BOOT_TIMEOUT_MS);
      shell.bootWaiter = (v) => {
        clearTimeout(timer);
        resolve(v);
      };
      started.stream.write(bootScript(mark));
    });
    shell.bootWaiter = undefined;
    if (!ok) {
      shell.close();
      return undefined;
    }
    return shell;
  }

  get alive(): boolean {
    return !this.dead;
  }

  get busy(): boolean {
    return this.current !== undefined;
  }

  private onData(stream: "out" | "err", text: string): void {
    if (this.bootWaiter) {
      if (stream !== "out") return;
      this.bootText += text;
      const ready = new RegExp(`${this.mark} READY (\\d+)\\n`).exec(this.bootText);
      if (ready) {
        this.shellPid = Number(ready[1]);
        this.bootWaiter(true);
      } else if (this.bootText.includes(`${this.mark} UNSUPPORTED`)) {
        this.bootWaiter(false);
      }
      return;
    }
    const cur = this.current;
    if (!cur) return;
    (stream === "out" ? cur.out : cur.err).feed(text);
    if (cur.out.done && cur.err.done) cur.finish("normal");
  }

  private onShellGone(): void {
    if (this.dead) return;
    this.dead = true;
    this.bootWaiter?.(false);
    this.current?.finish("shell-died");
  }

  /** Runs one command. Callers must not overlap calls (check `busy`). */
  run(c: ShellCommand): Promise<ExecResult> {
    if (this.dead) return Promise.reject(new Error("persistent shell is not running"));
    if (this.current) return Promise.reject(new Error("persistent shell is busy"));
    const seq = ++this.seq;
    const stdout = new OutputCollector(c.cap);
    const stderr = new OutputCollector(c.cap);
    const out = new StreamCut(`${this.mark} ${seq} S`, `\n${this.mark} ${seq} E`, stdout);
    const err = new StreamCut(`${this.mark} ${seq} S`, `\n${this.mark} ${seq} E`, stderr);

    return new Promise<ExecResult>((resolve) => {
      let timedOut = false;
      let aborted = false;
      let graceTimer: NodeJS.Timeout | undefined;
      const stop = () => {
        const pid = out.pid ?? err.pid;
        // Before the command reported its pid, only killing the whole shell is sure to stop it.
        const targets = pid !== undefined ? [pid] : this.shellPid !== undefined ? [this.shellPid] : [];
        void killInContainer(this.container, this.user, targets);
        graceTimer ??= setTimeout(() => {
          // The shell did not report the end: it is wedged; give up on it.
          this.close();
        }, AFTER_KILL_GRACE_MS);
      };
      const timer =
        c.timeoutMs !== undefined && c.timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              stop();
            }, c.timeoutMs)
          : undefined;
      const onAbort = () => {
        aborted = true;
        stop();
      };

      this.current = {
        seq,
        out,
        err,
        stdout,
        stderr,
        finish: (ended) => {
          if (this.current?.seq !== seq) return;
          this.current = undefined;
          if (timer) clearTimeout(timer);
          if (graceTimer) clearTimeout(graceTimer);
          c.signal?.removeEventListener("abort", onAbort);
          out.flush();
          err.flush();
          let exitCode = out.exitCode ?? err.exitCode ?? -1;
          if (timedOut) exitCode = TIMEOUT_EXIT_CODE;
          else if (aborted) exitCode = INTERRUPT_EXIT_CODE;
          const o = stdout.render();
          const e = stderr.render();
          if (ended === "shell-died" && !timedOut && !aborted) {
            e.text += `${e.text && !e.text.endsWith("\n") ? "\n" : ""}[sandbox shell ended unexpectedly]`;
          }
          resolve({ exitCode, stdout: o.text, stderr: e.text, timedOut, truncated: o.truncated || e.truncated });
        },
      };
      if (c.signal?.aborted) onAbort();
      else c.signal?.addEventListener("abort", onAbort, { once: true });

      const args = [String(seq), shellQuote(c.cwd), shellQuote(c.command)];
      for (const [k, v] of Object.entries(c.env ?? {})) args.push(shellQuote(`${k}=${v}`));
      this.started.stream.write(`hb_run ${args.join(" ")}\n`);
    });
  }

  /** Ends the shell (its process group inside the container dies with the exec's stdin closed or killed). */
  close(): void {
    if (!this.dead && this.shellPid !== undefined) void killInContainer(this.container, this.user, [this.shellPid]);
    this.onShellGone();
    this.started.stream.destroy();
  }
}
