/**
 * Starting an MCP server again after it went away (a stdio server's process exited, an HTTP server dropped the
 * session or refused the connection), with Hermes' limits (NousResearch/hermes-agent tools/mcp_tool.py,
 * mcp_tool_server_run.py, mcp_tool_common.py): at most 5 restarts in a row without a call answered in between
 * (`_MAX_RECONNECT_RETRIES`; an answered call starts the count again), the wait before each doubling from 1 s up
 * to 60 s, ±20 % at random (`_RetryBudget.backoff`, `_MAX_BACKOFF_SECONDS`, `_BACKOFF_JITTER`). Then Hermes parks
 * the server (a probe every 300 s, `_PARKED_RETRY_INTERVAL`); here it is given up on for the task (a shared
 * server: for 300 s, then tried once more).
 *
 * Restarts are lazy: the call that finds the server gone starts them (the wait before the first one counts from
 * when it went away) and waits for a new connection at most 15 s (`_STDIO_RESPAWN_WAIT_SEC`) and never past its
 * task's end; the restarts go on without it (the next call waits for them), until they succeed, the count is
 * used up or the slot is closed (its task ended).
 */
import type { McpConnection } from "./client.js";
import { describeError } from "./errors.js";
import type { McpServerConfig } from "./types.js";

/** Hermes' numbers (tests shorten the times). */
export const MCP_RESTARTS = {
  /** Restarts in a row without a call answered in between, before the server is given up on. */
  max: 5,
  /** The wait before the first restart; doubled for each next one, up to maxBackoffMs. */
  firstBackoffMs: 1000,
  maxBackoffMs: 60_000,
  /** Each wait is made up to this part longer or shorter, at random (restarts of many tasks do not line up). */
  jitter: 0.2,
  /** How long a call waits for its server to be back. */
  callWaitMs: 15_000,
  /** A shared server given up on is tried once more after this long. */
  retryGivenUpMs: 300_000,
};

/** The wait before restart `attempt` (1-based). */
export function backoffMs(attempt: number): number {
  const base = Math.min(MCP_RESTARTS.firstBackoffMs * 2 ** (attempt - 1), MCP_RESTARTS.maxBackoffMs);
  return Math.max(0, base * (1 + MCP_RESTARTS.jitter * (2 * Math.random() - 1)));
}

/** The server was given up on: its message is the call's error. */
export class GaveUpError extends Error {}

/** Resolves at `at` (Date.now() time), or rejects once `signal` aborts. */
function sleepUntil(at: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, at - Date.now()),
    );
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * One server's connection for a task (or, `shared: true`, for a worker thread): the first start, the restarts
 * after it went away and their count, the give-up. Every connection it made is closed by close().
 */
export class ServerSlot {
  private current?: Promise<McpConnection>;
  private climbing?: Promise<McpConnection>;
  /** Restarts since the last call answered. */
  private restarts = 0;
  private lastFailure?: string;
  private gaveUp?: { message: string; at: number };
  /** Why a connection that is not ended by itself can no longer be used (an HTTP session the server dropped). */
  private readonly dropped = new WeakMap<McpConnection, string>();
  private readonly made = new Set<McpConnection>();
  private readonly ending = new AbortController();
  private closed = false;

  constructor(
    private readonly server: McpServerConfig,
    private readonly connect: (signal: AbortSignal) => Promise<McpConnection>,
  ) {}

  /** "started again" (a process), "connected again" (a URL). */
  get again(): string {
    return this.server.transport === "stdio" ? "started again" : "connected again";
  }

  /**
   * The connection: the first start on the first call (a failed start stays failed for a task, whose start failure
   * ends it; a shared server's is tried again by the next call), then the last restart's.
   */
  connection(): Promise<McpConnection> {
    if (!this.current) {
      const started = this.track(this.connect(this.ending.signal));
      this.current = started;
      if (this.server.shared)
        started.catch(() => {
          if (this.current === started) this.current = undefined;
        });
    }
    return this.current;
  }

  /** The error of a server given up on (a shared one's until it may be tried again), or undefined. */
  givenUp(): string | undefined {
    if (this.gaveUp && this.server.shared && Date.now() - this.gaveUp.at >= MCP_RESTARTS.retryGivenUpMs)
      return undefined;
    return this.gaveUp?.message;
  }

  /** Why `conn` can no longer be used, or undefined while it can. */
  async deadReason(conn: McpConnection): Promise<string | undefined> {
    const dropped = this.dropped.get(conn);
    if (dropped) return dropped;
    if (!conn.ended()) return undefined;
    const own = conn.endReason();
    if (own) return `was disconnected (${own})`;
    if (this.server.transport !== "stdio") return "closed the connection";
    return `had exited${await stderrNote(conn)}`;
  }

  /** `conn` is not to be used again (the server dropped its session, refused the connection): `why`. */
  drop(conn: McpConnection, why: string): void {
    this.dropped.set(conn, why);
  }

  /** A call was answered: the server works again, and the count of restarts starts again. */
  answered(): void {
    this.restarts = 0;
    this.lastFailure = undefined;
  }

  /**
   * A connection to use instead of `dead`, which went away (`why`): the restarts under way, or new ones. Rejects
   * with a GaveUpError once the count is used up, or with the reason the slot was closed.
   */
  restart(dead: McpConnection, why: string, onEvent?: (message: string) => void): Promise<McpConnection> {
    if (this.closed) return Promise.reject(new Error(`MCP server '${this.server.name}' was already closed`));
    if (this.climbing) return this.climbing;
    if (this.gaveUp && this.server.shared && Date.now() - this.gaveUp.at >= MCP_RESTARTS.retryGivenUpMs) {
      // Hermes' parked server's probe: one more restart, and given up on again if it fails.
      this.gaveUp = undefined;
      this.restarts = MCP_RESTARTS.max - 1;
    }
    if (this.gaveUp) return Promise.reject(new GaveUpError(this.gaveUp.message));
    const climbing = this.climb(dead, why, onEvent).finally(() => {
      if (this.climbing === climbing) this.climbing = undefined;
    });
    this.climbing = climbing;
    return climbing;
  }

  private async climb(dead: McpConnection, why: string, onEvent?: (message: string) => void): Promise<McpConnection> {
    const { name } = this.server;
    const max = MCP_RESTARTS.max;
    let since = dead.endedAt() ?? Date.now();
    // What is left of it (a process that went with its streams, an HTTP client).
    void dead.close();
    // The last restart worked, but the server went away before a call was answered.
    if (this.restarts > 0) this.lastFailure = `it ${why} again before a call was answered`;
    for (;;) {
      if (this.restarts >= max) {
        const until = this.server.shared
          ? ` for ${MCP_RESTARTS.retryGivenUpMs / 1000} s (this worker's tasks share it)`
          : ": its tools cannot be called again in this task";
        const message = `MCP server '${name}' ${why}, and ${max} restarts in a row did not bring it back (the last: ${this.lastFailure}); gave up on it${until}`;
        this.gaveUp = { message, at: Date.now() };
        onEvent?.(`MCP server '${name}': gave up on it after ${max} restarts in a row (the last: ${this.lastFailure})`);
        throw new GaveUpError(message);
      }
      const attempt = ++this.restarts;
      await sleepUntil(since + backoffMs(attempt), this.ending.signal);
      const head = `MCP server '${name}' ${why}; restart ${attempt} of ${max}`;
      try {
        const conn = await this.track(this.connect(this.ending.signal));
        this.current = Promise.resolve(conn);
        onEvent?.(`${head}: ${this.again}`);
        return conn;
      } catch (err) {
        if (this.ending.signal.aborted) throw err;
        this.lastFailure = describeError(err);
        onEvent?.(`${head}: failed: ${this.lastFailure}`);
        since = Date.now();
      }
    }
  }

  /** A start of this slot's: closed at once if it ends after the slot did. */
  private track(starting: Promise<McpConnection>): Promise<McpConnection> {
    return starting.then(async (conn) => {
      this.made.add(conn);
      if (this.closed) {
        await conn.close();
        throw new Error(`MCP server '${this.server.name}' was already closed`);
      }
      return conn;
    });
  }

  /** Stops the restarts under way and closes every connection made (ends the servers' processes). */
  async close(): Promise<void> {
    this.closed = true;
    this.ending.abort(new Error("the task ended"));
    await this.climbing?.catch(() => undefined);
    await this.current?.catch(() => undefined);
    await Promise.all([...this.made].map((c) => c.close().catch(() => undefined)));
  }
}

/** ` (its stderr ends: …)` with the last of what a server that exited wrote there, or nothing. */
export async function stderrNote(conn: McpConnection): Promise<string> {
  // Its stderr pipe can be read after its stdout closed: a moment for the last lines.
  await new Promise((r) => setTimeout(r, 100));
  const tail = describeError((await conn.stderrTail().catch(() => "")).trim()).slice(-800);
  return tail ? ` (its stderr ends: ${tail})` : "";
}
