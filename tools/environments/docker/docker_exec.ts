/**
 * One command = one Docker exec (the plain path, ≈50 ms a round trip; the persistent shell in
 * docker_shell.ts is the fast path). Output is demultiplexed from the attach stream as it arrives.
 *
 * Docker has no API to kill a running exec, and killing the exec's host pid leaves its children. An exec's
 * process is a session and process-group leader inside the container, so the wrapper reports its pid
 * (first line on stderr, stripped) and a timeout or abort kills that whole group from a second exec
 * (`kill -9 -PGID`), which works in busybox images and with remote engines alike.
 */
import { randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type Docker from "dockerode";
import type { ExecResult } from "../base.js";
import { OutputCollector } from "../shell/output_capture.js";
import { carriedCommand } from "../shell/shell_session.js";
import { sleep } from "../../../src/core/abort.js";

/** Exit codes as the local backend reports them. */
export { INTERRUPT_EXIT_CODE, TIMEOUT_EXIT_CODE } from "../shell/command_stop.js";
import { CommandStop } from "../shell/command_stop.js";

/** After the exec's process ended, how long children may keep its output pipes open. */
const LINGER_MS = 300;

export interface StartedExec {
  exec: Docker.Exec;
  stream: Duplex;
}

export interface ExecStartOptions {
  cmd: string[];
  env?: string[];
  user?: string;
  workingDir?: string;
  attachStdin?: boolean;
}

export async function startExec(container: Docker.Container, o: ExecStartOptions): Promise<StartedExec> {
  const exec = await container.exec({
    Cmd: o.cmd,
    Env: o.env,
    User: o.user || undefined,
    WorkingDir: o.workingDir,
    AttachStdin: o.attachStdin === true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: o.attachStdin === true })) as Duplex;
  return { exec, stream };
}

/** Splits Docker's multiplexed attach stream (8-byte frame headers) into stdout and stderr chunks. */
export function demux(stream: Duplex, onStdout: (b: Buffer) => void, onStderr: (b: Buffer) => void): void {
  let pending: Buffer = Buffer.alloc(0);
  stream.on("data", (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const payload = pending.subarray(8, 8 + size);
      if (pending[0] === 2) onStderr(payload);
      else onStdout(payload);
      pending = pending.subarray(8 + size);
    }
  });
}

export function streamClosed(stream: Duplex): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.readableEnded) return resolve();
    const done = () => resolve();
    stream.once("end", done);
    stream.once("close", done);
    stream.once("error", done);
  });
}

/** The exec's exit code once the engine has recorded it (it may lag the stream's end by a moment). */
export async function execExitCode(exec: Docker.Exec): Promise<number | null> {
  for (let i = 0; i < 40; i++) {
    const info = await exec.inspect();
    if (!info.Running && info.ExitCode !== null && info.ExitCode !== undefined) return info.ExitCode;
    await sleep(25);
  }
  return null;
}

/** Runs an exec to completion, collecting raw bytes (for file transfer through `cat`). */
export async function runExecRaw(
  container: Docker.Container,
  o: ExecStartOptions & { stdin?: Buffer },
): Promise<{ exitCode: number | null; stdout: Buffer; stderr: Buffer }> {
  const { exec, stream } = await startExec(container, { ...o, attachStdin: o.stdin !== undefined });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  demux(
    stream,
    (b) => out.push(Buffer.from(b)),
    (b) => err.push(Buffer.from(b)),
  );
  const closed = streamClosed(stream);
  if (o.stdin !== undefined) stream.end(o.stdin);
  await closed;
  return { exitCode: await execExitCode(exec), stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
}

/** SIGKILLs each process group (and the leader itself, in case it is not a group leader) inside the container. */
export async function killInContainer(
  container: Docker.Container,
  user: string | undefined,
  pids: number[],
): Promise<void> {
  const valid = pids.filter((p) => Number.isInteger(p) && p > 1);
  if (valid.length === 0) return;
  const script = valid.map((p) => `kill -9 -${p} 2>/dev/null; kill -9 ${p} 2>/dev/null`).join("; ") + "; true";
  try {
    await runExecRaw(container, { cmd: ["sh", "-c", script], user });
  } catch {
    // The container may already be gone; nothing left to kill then.
  }
}

/**
 * SIGKILLs the process group of the command a persistent shell runs now: the shell's child (bash job control
 * or setsid make it a group leader), found through /proc (its `children` file, else a scan of every process's
 * parent). A kill may race the fork of that child, so the search is repeated for a moment.
 */
export async function killShellCommandInContainer(
  container: Docker.Container,
  user: string | undefined,
  shellPid: number,
): Promise<void> {
  if (!Number.isInteger(shellPid) || shellPid <= 1) return;
  const s = shellPid;
  const script = [
    `kids() { cat /proc/${s}/task/${s}/children 2>/dev/null && return; for f in /proc/[0-9]*/stat; do read -r l 2>/dev/null < "$f" || continue; r=\${l##*) }; set -- $r; [ "$2" = ${s} ] && { p=\${f#/proc/}; echo "\${p%/stat}"; }; done; }`,
    `i=0; while [ $i -lt 10 ]; do k=$(kids); if [ -n "$k" ]; then for c in $k; do kill -9 -$c 2>/dev/null; kill -9 $c 2>/dev/null; done; exit 0; fi; i=$((i+1)); sleep 0.05; done`,
  ].join("\n");
  try {
    await runExecRaw(container, { cmd: ["sh", "-c", script], user });
  } catch {
    // The container may already be gone; nothing left to kill then.
  }
}

export interface PlainCommand {
  command: string;
  cwd: string;
  /** Carried state's path prefix (ShellCommand.state). */
  state?: string;
  env?: Record<string, string>;
  user?: string;
  stdin?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  cap: number;
}

// $1 marker, $2 cwd, $3 command. The first stderr line reports the exec's pid (= its process group).
// $4 (carried commands only) the state prefix: its exports sourced, the cwd entered (126 when gone), and the state
// saved after the command (carriedCommand, $5), as the persistent shell does; bash named `bash`, as the original's
// `docker exec … bash -c`.
const PLAIN_WRAPPER =
  'printf "%s %s\\n" "$1" "$$" >&2; ' +
  'if [ -n "$4" ]; then if command -v bash >/dev/null 2>&1; then exec bash -c "$5" bash "$4" "$2"; fi; ' +
  'exec sh -c "$5" sh "$4" "$2"; fi; ' +
  'cd "$2" || exit 1; if command -v bash >/dev/null 2>&1; then exec bash -c "$3"; fi; exec sh -c "$3"';

export function envList(env: Record<string, string> | undefined): string[] | undefined {
  if (!env) return undefined;
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

/** One command as one exec: output, exit code, cwd, env, stdin; the timeout kills its whole process group. */
export async function runPlainCommand(container: Docker.Container, c: PlainCommand): Promise<ExecResult> {
  const marker = `__HB_${randomBytes(8).toString("hex")}__`;
  const { exec, stream } = await startExec(container, {
    cmd: [
      "sh",
      "-c",
      PLAIN_WRAPPER,
      "hb",
      marker,
      c.cwd,
      c.command,
      ...(c.state ? [c.state, carriedCommand(c.command)] : []),
    ],
    env: envList(c.env),
    user: c.user,
    attachStdin: c.stdin !== undefined,
  });
  const stdout = new OutputCollector(c.cap);
  const stderr = new OutputCollector(c.cap);
  const outDecoder = new StringDecoder("utf8");
  const errDecoder = new StringDecoder("utf8");
  let pid: number | undefined;
  let errHead: string | undefined = "";
  let firstLineRead = () => {};
  const firstLine = new Promise<void>((resolve) => (firstLineRead = resolve));
  demux(
    stream,
    (b) => stdout.push(outDecoder.write(b)),
    (b) => {
      const text = errDecoder.write(b);
      if (errHead === undefined) return stderr.push(text);
      errHead += text;
      const nl = errHead.indexOf("\n");
      if (nl < 0 && errHead.length < marker.length + 32) return;
      const first = nl >= 0 ? errHead.slice(0, nl) : "";
      const m = first.startsWith(`${marker} `) ? /^\S+ (\d+)$/.exec(first) : null;
      if (m) pid = Number(m[1]);
      stderr.push(m ? errHead.slice(nl + 1) : errHead);
      errHead = undefined;
      firstLineRead();
    },
  );
  const closed = streamClosed(stream);
  if (c.stdin !== undefined) stream.end(c.stdin);

  let killing: Promise<void> | undefined;
  const stop = () => {
    killing ??= (async () => {
      // The pid line comes first: a kill that raced the start waits for it (or for the exec's end), however late
      // a loaded engine relays it. A fixed wait let a command outlive its timeout when the line came after it.
      await Promise.race([firstLine, closed]);
      if (pid !== undefined) await killInContainer(container, c.user, [pid]);
    })();
  };
  const limits = new CommandStop(c, stop);

  // Children that keep the output pipes open (e.g. `server &`) must not hold the result: once the exec's
  // own process has ended, give them LINGER_MS and then drop the stream.
  let lingerPoll: NodeJS.Timeout | undefined;
  const lingerWatch = setTimeout(() => {
    lingerPoll = setInterval(() => {
      exec.inspect().then(
        (info) => {
          if (!info.Running) {
            if (lingerPoll) clearInterval(lingerPoll);
            setTimeout(() => stream.destroy(), LINGER_MS);
          }
        },
        () => undefined,
      );
    }, 250);
  }, 1000);

  try {
    await closed;
    if (killing) {
      await killing;
    }
  } finally {
    limits.dispose();
    clearTimeout(lingerWatch);
    if (lingerPoll) clearInterval(lingerPoll);
  }
  if (errHead) stderr.push(errHead);
  stdout.push(outDecoder.end());
  stderr.push(errDecoder.end());

  const exitCode = limits.stopped ? limits.exitCode(-1) : ((await execExitCode(exec)) ?? -1);
  const out = stdout.render();
  const err = stderr.render();
  return {
    exitCode,
    stdout: out.text,
    stderr: err.text,
    timedOut: limits.timedOut,
    truncated: out.truncated || err.truncated,
  };
}
