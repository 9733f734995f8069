/**
 * The run-wide adaptive (AIMD) cap on requests in flight toward one model endpoint (`--max-connections`).
 *
 * Permits come from a SharedSemaphore; the AIMD state (successes since the last change, when the limit last
 * moved, the counters) lives in a second SharedArrayBuffer. The main thread creates both and hands them to
 * every worker thread, so one 429 halves the limit seen by all threads, and the run learns one back-off.
 *
 * A 429 halves the limit (at most once per `decreaseWindowMs`: a burst of 429s from requests that were in
 * flight together counts once); successes raise it by one every `recoverAfterSuccesses` successes, or on a
 * success once `recoverIntervalMs` passed since the last change, back up to `max`.
 */
import { threadId as currentThreadId } from "node:worker_threads";
import { SharedSemaphore } from "../core/shared_gate.js";

export interface AdaptivePolicy {
  /** Minimum time between two decreases (default 2000 ms). */
  decreaseWindowMs: number;
  /** +1 after this many successes since the last change (default 5). */
  recoverAfterSuccesses: number;
  /** +1 on a success when this long has passed since the last change (default 5000 ms). */
  recoverIntervalMs: number;
}

export const DEFAULT_ADAPTIVE_POLICY: AdaptivePolicy = {
  decreaseWindowMs: 2000,
  recoverAfterSuccesses: 5,
  recoverIntervalMs: 5000,
};

/** What crosses to the worker threads (in `workerData`). */
export interface AdaptiveLimitBuffers {
  gate: SharedArrayBuffer;
  state: SharedArrayBuffer;
  /** Permits held per worker thread, so the main thread can return those of a thread that died. */
  ledger: SharedArrayBuffer;
}

/** Worker threads a ledger tracks at once (a dead thread's slot is freed and reused). */
const LEDGER_SLOTS = 256;
const OWNER = 0;
const HELD = 1;

export interface LimitChange {
  from: number;
  to: number;
  reason: "rate_limited" | "recovered";
}

/** Run-wide counts of one endpoint, for statistics.json and the progress line. */
export interface LimiterCounts {
  max: number;
  limit: number;
  in_flight: number;
  peak_in_flight: number;
  calls: number;
  retries: number;
  rate_limited: number;
  failed_calls: number;
  limit_decreases: number;
  limit_increases: number;
  lowest_limit: number;
}

const LOCK = 0;
const MAX = 1;
const SUCCESSES = 2;
const LAST_CHANGE = 3;
const LAST_DECREASE = 4;
const WINDOW = 5;
const RECOVER_N = 6;
const RECOVER_MS = 7;
const CALLS = 8;
const RETRIES = 9;
const RATE_LIMITED = 10;
const FAILED = 11;
const DECREASES = 12;
const INCREASES = 13;
const LOWEST = 14;
const CELLS = 15;
const NEVER = -(2n ** 62n);

export class SharedAdaptiveLimiter {
  readonly gate: SharedSemaphore;
  private readonly cells: BigInt64Array;
  private readonly ledger: Int32Array;
  private slot: number | undefined;

  constructor(
    readonly buffers: AdaptiveLimitBuffers,
    private readonly now: () => number = Date.now,
    private readonly threadId: number = currentThreadId,
  ) {
    this.gate = new SharedSemaphore(buffers.gate);
    this.cells = new BigInt64Array(buffers.state);
    this.ledger = new Int32Array(buffers.ledger);
    if (this.cells.length < CELLS) throw new RangeError("adaptive limiter state buffer too small");
  }

  static create(
    max: number,
    policy: Partial<AdaptivePolicy> = {},
    now: () => number = Date.now,
  ): SharedAdaptiveLimiter {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`limiter max must be an integer >= 1, got ${max}`);
    const p = { ...DEFAULT_ADAPTIVE_POLICY, ...policy };
    const gate = SharedSemaphore.create(max);
    const limiter = new SharedAdaptiveLimiter(
      {
        gate: gate.buffer,
        state: new SharedArrayBuffer(CELLS * BigInt64Array.BYTES_PER_ELEMENT),
        ledger: new SharedArrayBuffer(LEDGER_SLOTS * 2 * Int32Array.BYTES_PER_ELEMENT),
      },
      now,
    );
    const c = limiter.cells;
    c[MAX] = BigInt(max);
    c[LOWEST] = BigInt(max);
    c[LAST_CHANGE] = BigInt(Math.round(now()));
    c[LAST_DECREASE] = NEVER;
    c[WINDOW] = BigInt(Math.max(0, Math.round(p.decreaseWindowMs)));
    c[RECOVER_N] = BigInt(Math.max(1, Math.round(p.recoverAfterSuccesses)));
    c[RECOVER_MS] = BigInt(Math.max(0, Math.round(p.recoverIntervalMs)));
    return limiter;
  }

  get max(): number {
    return Number(Atomics.load(this.cells, MAX));
  }

  /** The current run-wide cap on requests in flight. */
  get limit(): number {
    return this.gate.limit;
  }

  /** Waits for a permit (rejects with the signal's reason if it aborts first). Pair with `release()`. */
  async acquire(signal?: AbortSignal): Promise<void> {
    await this.gate.acquire(signal);
    this.note(1);
  }

  /** Takes a permit if one is free now, without waiting; true when it did. Pair with `release()`. */
  tryAcquire(): boolean {
    if (!this.gate.tryAcquire()) return false;
    this.note(1);
    return true;
  }

  release(): void {
    this.note(-1);
    this.gate.release();
  }

  /** Main thread: gives back the permits a worker thread held when it died; returns how many. */
  releaseThread(threadId: number): number {
    for (let i = 0; i < LEDGER_SLOTS; i++) {
      if (Atomics.load(this.ledger, i * 2 + OWNER) !== threadId) continue;
      const held = Atomics.exchange(this.ledger, i * 2 + HELD, 0);
      Atomics.store(this.ledger, i * 2 + OWNER, 0);
      for (let n = 0; n < held; n++) this.gate.release();
      return held;
    }
    return 0;
  }

  /** Counts this thread's permits in its ledger slot, claimed on first use (the main thread, id 0, keeps none). */
  private note(delta: number): void {
    if (this.threadId === 0) return;
    if (this.slot === undefined) {
      for (let i = 0; i < LEDGER_SLOTS && this.slot === undefined; i++) {
        if (Atomics.load(this.ledger, i * 2 + OWNER) === this.threadId) this.slot = i;
      }
      for (let i = 0; i < LEDGER_SLOTS && this.slot === undefined; i++) {
        if (Atomics.compareExchange(this.ledger, i * 2 + OWNER, 0, this.threadId) === 0) this.slot = i;
      }
      if (this.slot === undefined) return; // more live threads than slots: those permits cannot be reclaimed
    }
    Atomics.add(this.ledger, this.slot * 2 + HELD, delta);
  }

  noteCall(): void {
    Atomics.add(this.cells, CALLS, 1n);
  }

  noteRetry(): void {
    Atomics.add(this.cells, RETRIES, 1n);
  }

  /** A call failed for good (not retryable, or out of retries). */
  noteFailure(): void {
    Atomics.add(this.cells, FAILED, 1n);
  }

  /** The endpoint answered 429: halve the limit, unless it was already halved within the window. */
  recordRateLimit(): LimitChange | undefined {
    Atomics.add(this.cells, RATE_LIMITED, 1n);
    return this.locked(() => {
      const c = this.cells;
      const t = BigInt(Math.round(this.now()));
      c[SUCCESSES] = 0n;
      if (t - c[LAST_DECREASE]! < c[WINDOW]!) return undefined;
      c[LAST_DECREASE] = t;
      const from = this.gate.limit;
      const to = Math.max(1, Math.floor(from / 2));
      if (to === from) return undefined;
      c[LAST_CHANGE] = t;
      c[DECREASES]! += 1n;
      if (BigInt(to) < c[LOWEST]!) c[LOWEST] = BigInt(to);
      this.gate.setLimit(to);
      return { from, to, reason: "rate_limited" };
    });
  }

  /** A request succeeded: count toward recovery of the limit. */
  recordSuccess(): LimitChange | undefined {
    if (this.gate.limit >= this.max) return undefined;
    return this.locked(() => {
      const c = this.cells;
      const from = this.gate.limit;
      if (from >= this.max) return undefined;
      c[SUCCESSES]! += 1n;
      const t = BigInt(Math.round(this.now()));
      if (c[SUCCESSES]! < c[RECOVER_N]! && t - c[LAST_CHANGE]! < c[RECOVER_MS]!) return undefined;
      c[SUCCESSES] = 0n;
      c[LAST_CHANGE] = t;
      c[INCREASES]! += 1n;
      this.gate.setLimit(from + 1);
      return { from, to: from + 1, reason: "recovered" };
    });
  }

  counts(): LimiterCounts {
    const n = (i: number) => Number(Atomics.load(this.cells, i));
    return {
      max: n(MAX),
      limit: this.gate.limit,
      in_flight: this.gate.inUse,
      peak_in_flight: this.gate.peak,
      calls: n(CALLS),
      retries: n(RETRIES),
      rate_limited: n(RATE_LIMITED),
      failed_calls: n(FAILED),
      limit_decreases: n(DECREASES),
      limit_increases: n(INCREASES),
      lowest_limit: n(LOWEST),
    };
  }

  /** The AIMD update is a read-modify-write of several cells: one thread at a time (a few operations long). */
  private locked<T>(fn: () => T): T {
    while (Atomics.compareExchange(this.cells, LOCK, 0n, 1n) !== 0n) {
      // spin: the holder runs a handful of plain operations and never awaits
    }
    try {
      return fn();
    } finally {
      Atomics.store(this.cells, LOCK, 0n);
    }
  }
}
