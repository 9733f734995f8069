/**
 * Connecting to one MCP server with the official SDK's Client: a stdio server on the host (`where: host`), one
 * inside the task's environment (`PipedTransport` over the environment's `spawnPiped`), or a server at a URL
 * (streamable HTTP, falling back to SSE when the server refuses it with a 4xx).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { BroadcastChannel, isMainThread } from "node:worker_threads";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Environment } from "../environments/base.js";
import { canSpawnPiped, type PipedProcess } from "../environments/piped_process.js";
import { describeError } from "./errors.js";
import type { McpServerConfig } from "./types.js";

export const CLIENT_INFO = { name: "hermes-batch", version: "0.1.0" };

/** A connected server: its client, what it said about itself, and how to end it. */
export interface McpConnection {
  client: Client;
  serverInfo?: { name: string; version: string };
  protocolVersion?: string;
  /** The last part of the server's stderr (stdio servers), for an error message. */
  stderrTail(): Promise<string>;
  /** Whether the connection has ended (a stdio server that exited): no call can reach the server any more. */
  ended(): boolean;
  /** Why this side ended it, when it did (a message too long); undefined when the server went. */
  endReason(): string | undefined;
  /** When it ended (Date.now() time), once it has. */
  endedAt(): number | undefined;
  /**
   * What a failed request's error says about the server: `not_sent` (the request cannot have reached it: its
   * process had ended, its URL refused the connection), `session_dropped` (an HTTP 404 for the session: the
   * server no longer knows it), or undefined (anything else, such as a server that went away during the call).
   * `params`: the request's params object as given to the SDK (which sends that object): a stdio request not
   * written when the connection ended is `not_sent` whatever the error (its end can be seen before the write's
   * failure).
   */
  failureKind(err: unknown, params?: object): McpFailureKind | undefined;
  close(): Promise<void>;
}

export type McpFailureKind = "not_sent" | "session_dropped";

/** A message that was not written to the server: its process had ended, or its stdin was gone. */
export class NotSentError extends Error {}

/** See McpConnection.failureKind. */
export function failureKind(err: unknown): McpFailureKind | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) {
    if (e instanceof NotSentError) return "not_sent";
    const code = (e as { code?: unknown }).code;
    // A refused connection, a write to a pipe whose reader is gone: nothing reached the server.
    if (code === "ECONNREFUSED" || code === "EPIPE") return "not_sent";
    if (e instanceof StreamableHTTPError && e.code === 404) return "session_dropped";
    if (e instanceof Error) {
      // The SSE transport's POST to a session the server no longer has.
      if (/^Error POSTing to endpoint \(HTTP 404\)/.test(e.message)) return "session_dropped";
      // The SDK's client after its transport closed.
      if (e.message === "Not connected") return "not_sent";
    }
  }
  return undefined;
}

/** The largest message a stdio server may write (a line of JSON); a longer one ends the connection. */
export const MAX_STDIO_MESSAGE_BYTES = 32 * 2 ** 20;

/** The SDK transport over a process's stdin and stdout: newline-delimited JSON-RPC, as the SDK's stdio transport speaks it. */
export class PipedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Why this side ended the connection (a message too long), for the error of the calls it cut off. */
  endReason?: string;
  /** The current line's parts so far (kept as parts: one concatenation per line, not one per chunk). */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private closed = false;
  /**
   * Whether each request was written, by its params object. Node calls a write's callback as soon as the write is
   * done (before any later I/O event is handled): a request whose connection ended before it was written cannot
   * have reached the server.
   */
  readonly written = new WeakMap<object, boolean>();

  constructor(private readonly proc: PipedProcess) {}

  async start(): Promise<void> {
    this.proc.stdout.on("data", (chunk: Buffer) => this.received(chunk));
    this.proc.stdout.on("error", (err: Error) => this.onerror?.(err));
    this.proc.stdout.on("close", () => void this.close());
  }

  /**
   * Splits what the server wrote into lines, each a JSON-RPC message; a line that is not one is reported to
   * onerror and skipped. Never throws (this runs in a stream's event: a throw would end the worker thread and
   * every task on it).
   */
  private received(chunk: Buffer): void {
    if (this.closed) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const part = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      if (this.partsBytes + part.length > MAX_STDIO_MESSAGE_BYTES) {
        this.parts = [];
        this.partsBytes = 0;
        this.endReason = `the server wrote a message over ${MAX_STDIO_MESSAGE_BYTES / 2 ** 20} MB, so the connection was closed`;
        this.onerror?.(new Error(this.endReason));
        void this.close();
        return;
      }
      if (nl === -1) {
        if (part.length) {
          this.parts.push(part);
          this.partsBytes += part.length;
        }
        return;
      }
      const line = (this.parts.length ? Buffer.concat([...this.parts, part]) : part)
        .toString("utf8")
        .replace(/\r$/, "");
      this.parts = [];
      this.partsBytes = 0;
      start = nl + 1;
      if (line.trim() === "") continue;
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line);
      } catch (err) {
        this.onerror?.(err as Error);
        continue;
      }
      this.onmessage?.(message);
    }
  }

  /**
   * Resolves once the message is written (its write's callback: after a full pipe drained too), rejects with a
   * NotSentError when it could not be (a process that exited: EPIPE), so a call to a server that has just exited,
   * before its stdout's end was seen here, is known not to have reached it.
   */
  send(message: JSONRPCMessage): Promise<void> {
    const params = "method" in message && "id" in message ? message.params : undefined;
    if (params) this.written.set(params, false);
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new NotSentError("the server's process has ended"));
      this.proc.stdin.write(serializeMessage(message), (err?: Error | null) => {
        if (err) return reject(new NotSentError(`could not write to the server: ${err.message}`, { cause: err }));
        if (params) this.written.set(params, true);
        resolve();
      });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.parts = [];
    this.partsBytes = 0;
    await this.proc.kill();
    this.onclose?.();
  }
}

/** `p`, or a rejection once `ms` have passed or `signal` aborts (a task's time limit, its end). */
function withTimeout<T>(p: Promise<T>, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${Math.round(ms / 1000)} s`)), ms);
    if (!signal) return;
    onAbort = () => reject(new Error(`${what} was still starting when its task ended`));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([p, t]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  });
}

/** Connects a client over `transport` (initialise handshake), recording the protocol version the server chose. */
async function handshake(
  transport: Transport,
  server: McpServerConfig,
  stderrTail: () => Promise<string>,
  onClose: () => Promise<void>,
  signal?: AbortSignal,
): Promise<McpConnection> {
  let protocolVersion: string | undefined;
  const set = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v: string) => {
    protocolVersion = v;
    set?.(v);
  };
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  try {
    await withTimeout(
      client.connect(transport, { timeout: server.connectTimeoutSec * 1000, signal }),
      server.connectTimeoutSec * 1000,
      `MCP server '${server.name}'`,
      signal,
    );
  } catch (err) {
    await client.close().catch(() => undefined);
    await onClose().catch(() => undefined);
    // What the server said before it failed is usually the reason.
    await new Promise((r) => setTimeout(r, 100));
    // On one line: an exit-2 line and the task's error are one line, and a traceback's point is at its end.
    const tail = (await stderrTail().catch(() => "")).trim().replace(/\s*\n\s*/g, " | ");
    const message = describeError(err);
    throw new Error(
      `MCP server '${server.name}' did not start: ${message}${tail ? `; its stderr ends: ${tail.slice(-800)}` : ""}`,
      { cause: err },
    );
  }
  const info = client.getServerVersion();
  let endedAt: number | undefined;
  const previous = client.onclose;
  client.onclose = () => {
    endedAt ??= Date.now();
    previous?.();
  };
  return {
    client,
    serverInfo: info ? { name: info.name, version: info.version } : undefined,
    protocolVersion,
    stderrTail,
    ended: () => endedAt !== undefined,
    endReason: () => (transport as { endReason?: string }).endReason,
    endedAt: () => endedAt,
    failureKind: (err, params) =>
      params && endedAt !== undefined && transport instanceof PipedTransport && transport.written.get(params) === false
        ? "not_sent"
        : failureKind(err),
    close: async () => {
      await client.close().catch(() => undefined);
      await onClose().catch(() => undefined);
    },
  };
}

/** A URL server: streamable HTTP first; a 4xx to it (an SSE-only server) and `transport: sse` go to SSE. */
async function connectHttp(server: McpServerConfig, signal?: AbortSignal): Promise<McpConnection> {
  const url = new URL(server.url!);
  const requestInit = { headers: server.headerValues };
  const none = async () => "";
  if (server.transport === "http") {
    try {
      return await handshake(
        new StreamableHTTPClientTransport(url, { requestInit }),
        server,
        none,
        async () => undefined,
        signal,
      );
    } catch (err) {
      const cause = (err as Error).cause;
      const code = cause instanceof StreamableHTTPError ? cause.code : undefined;
      if (!(code !== undefined && code >= 400 && code < 500)) throw err;
    }
  }
  return handshake(
    new SSEClientTransport(url, {
      requestInit,
      eventSourceInit: {
        fetch: (u, init) =>
          fetch(u, { ...init, headers: { ...server.headerValues, ...(init?.headers as Record<string, string>) } }),
      },
    }),
    server,
    none,
    async () => undefined,
    signal,
  );
}

/** How long a host server gets to exit after its stdin closed, and after TERM, before the next step. */
const EXIT_GRACE_MS = 1000;
const TERM_GRACE_MS = 2000;

/**
 * Starts a stdio server on this machine, leading its own process group. kill() closes its stdin, then sends TERM
 * and at last KILL to the whole group (what a wrapper such as `sh -c` or `npx` started too), and resolves only
 * once the server has exited: a task that ends, or a start given up, leaves no process behind.
 */
async function spawnHostServer(
  argv: string[],
  cwd: string | undefined,
  env: Record<string, string>,
): Promise<PipedProcess & { readonly pid: number }> {
  const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString("utf8")).slice(-4000);
  });
  // An 'error' without a listener would be thrown in this thread (every task on it would fail).
  child.stdin.on("error", () => undefined);
  child.stderr.on("error", () => undefined);
  child.on("error", () => undefined);
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", () => resolve());
    child.once("error", (err) => {
      // A cwd that is not there fails as ENOENT naming the command: say which it was.
      const badCwd = cwd !== undefined && !statSync(cwd, { throwIfNoEntry: false })?.isDirectory();
      reject(new Error(badCwd ? `its cwd ${cwd} is not a folder` : `could not start ${argv[0]}: ${err.message}`));
    });
  });
  const pid = child.pid!;
  trackHostServer(pid, exited);
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // the group is gone
    }
  };
  const within = (ms: number) =>
    Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
  let killing: Promise<void> | undefined;
  return {
    pid,
    stdin: child.stdin,
    stdout: child.stdout,
    stderrTail: async () => stderr,
    kill: () =>
      (killing ??= (async () => {
        child.stdin.end();
        if (!(await within(EXIT_GRACE_MS))) {
          group("SIGTERM");
          if (!(await within(TERM_GRACE_MS))) group("SIGKILL");
        }
        // What the server started and left running in its group goes with it.
        group("SIGKILL");
        child.stdout.destroy();
        child.stderr.destroy();
      })()),
  };
}

/** A stdio server on this machine: the SDK's minimal environment, the --pass-env names, then the server's own env. */
async function connectHost(
  server: McpServerConfig,
  passEnv: readonly string[],
  signal?: AbortSignal,
): Promise<McpConnection> {
  const env: Record<string, string> = getDefaultEnvironment();
  for (const name of passEnv) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  Object.assign(env, server.envValues);
  let proc: PipedProcess;
  try {
    proc = await spawnHostServer([server.command!, ...(server.args ?? [])], server.cwd, env);
  } catch (err) {
    throw new Error(`MCP server '${server.name}' did not start: ${(err as Error).message}`, { cause: err });
  }
  return handshake(
    new PipedTransport(proc),
    server,
    () => proc.stderrTail(),
    () => proc.kill(),
    signal,
  );
}

/**
 * Host servers still running when the process exits. A `shared: true` server lives as long as its worker
 * thread, and the pool ends its threads without an asynchronous clean-up: a server that does not exit when its
 * stdin closes (one stuck in a call) would outlive the run. Each thread reports the servers it starts and their
 * exits to the main thread (a BroadcastChannel), which at its exit ends the process groups still there: a moment
 * to exit on their own, then TERM, then KILL.
 */
const HOST_SERVERS_CHANNEL = "hermes-batch:mcp-host-servers";
type HostServerNote = { pid: number; running: boolean };
const runningHostServers = new Set<number>();
let hostServerChannel: BroadcastChannel | undefined;

function hostServersChannel(): BroadcastChannel {
  if (!hostServerChannel) {
    hostServerChannel = new BroadcastChannel(HOST_SERVERS_CHANNEL);
    // The channel must not keep a thread (or the process) alive.
    (hostServerChannel as unknown as { unref?: () => void }).unref?.();
  }
  return hostServerChannel;
}

if (isMainThread) {
  hostServersChannel().onmessage = (ev) => {
    const note = (ev as unknown as { data: HostServerNote }).data;
    if (typeof note?.pid !== "number") return;
    if (note.running) runningHostServers.add(note.pid);
    else runningHostServers.delete(note.pid);
  };
  process.on("exit", endHostServersAtExit);
}

function trackHostServer(pid: number, exited: Promise<void>): void {
  if (isMainThread) {
    runningHostServers.add(pid);
    void exited.then(() => runningHostServers.delete(pid));
    return;
  }
  hostServersChannel().postMessage({ pid, running: true } satisfies HostServerNote);
  void exited.then(() => hostServersChannel().postMessage({ pid, running: false } satisfies HostServerNote));
}

/** Whether a process is there and not a zombie (Linux /proc; elsewhere: whether signal 0 reaches it). */
function processRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    if (process.platform === "linux") return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // the group is gone
  }
}

/** Synchronous (an exit handler): waits up to `ms` for the processes to end. */
function waitForExit(pids: number[], ms: number): void {
  const tick = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + ms;
  while (pids.some(processRunning) && Date.now() < deadline) Atomics.wait(tick, 0, 0, 20);
}

function endHostServersAtExit(): void {
  const pids = [...runningHostServers];
  if (pids.length === 0) return;
  // Their stdin has closed with their thread: a well-behaved server is exiting now.
  waitForExit(pids, 500);
  for (const pid of pids) signalGroup(pid, "SIGTERM");
  waitForExit(pids, 1000);
  for (const pid of pids) signalGroup(pid, "SIGKILL");
}

/** A stdio server started inside the task's environment. */
async function connectInEnvironment(
  server: McpServerConfig,
  env: Environment,
  signal?: AbortSignal,
): Promise<McpConnection> {
  if (!canSpawnPiped(env)) {
    throw new Error(
      `MCP server '${server.name}' runs in the task's sandbox (where: sandbox), which the ${env.kind} environment cannot do yet; use --env local, or where: host for trusted code`,
    );
  }
  const proc = await env.spawnPiped([server.command!, ...(server.args ?? [])], {
    cwd: server.cwd,
    env: server.envValues,
    startTimeoutMs: server.connectTimeoutSec * 1000,
  });
  // Ending the process removes its stderr file: what it said is read first, for the error that follows.
  let tail: string | undefined;
  let killing: Promise<void> | undefined;
  const kill = () =>
    (killing ??= (async () => {
      tail = await proc.stderrTail().catch(() => "");
      await proc.kill();
    })());
  const ended: PipedProcess = {
    stdin: proc.stdin,
    stdout: proc.stdout,
    stderrTail: async () => tail ?? proc.stderrTail(),
    kill,
  };
  return handshake(new PipedTransport(ended), server, ended.stderrTail, kill, signal);
}

export interface ConnectOptions {
  /** The task's environment (needed for `where: sandbox` stdio servers). */
  getEnv?: () => Promise<Environment>;
  /** --pass-env: variables a host stdio server gets besides the SDK's minimal set. */
  passEnv?: readonly string[];
  /** Gives up a start still under way (its task ended): the process is ended, the promise rejects. */
  signal?: AbortSignal;
}

/** Connects to a server where its config says it runs; a failure's message ends with the server's stderr tail. */
export async function connectMcpServer(server: McpServerConfig, opts: ConnectOptions = {}): Promise<McpConnection> {
  opts.signal?.throwIfAborted();
  if (server.transport !== "stdio") return connectHttp(server, opts.signal);
  if (server.where === "host") return connectHost(server, opts.passEnv ?? [], opts.signal);
  if (!opts.getEnv)
    throw new Error(`MCP server '${server.name}' runs in the task's sandbox, and no environment was given`);
  return connectInEnvironment(server, await opts.getEnv(), opts.signal);
}
