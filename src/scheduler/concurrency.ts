/**
 * Adaptive (AIMD) cap on in-flight requests toward one model endpoint (`--max-connections`).
 *
 * A 429 halves the limit (multiplicative decrease, at most once per `decreaseWindowMs`, so a burst of 429s
 * from requests that were all in flight together counts once); successes raise it by one (additive
 * increase) every `recoverAfterSuccesses` successes or after `recoverIntervalMs` without a 429, back up to
 * `max`. No timers are kept, so an idle limiter holds nothing open.
 *
 * Scope: one limiter per (baseURL, model) per worker thread, via `sharedLimiter`. Each Piscina worker has
 * its own limiter, so the caller gives each one `max = maxConnections / workers` (the run command does this);
 * the sum over workers then respects `--max-connections`.
 */

export interface AdaptiveLimiterOptions {
  /** Upper bound of the limit, and its starting value. */
  max: number;
  /** Starting limit (default `max`). */
  initial?: number;
  /** Minimum time between two decreases (default 2000 ms). */
  decreaseWindowMs?: number;
  /** +1 after this many successes since the last change (default 5). */
  recoverAfterSuccesses?: number;
  /** +1 on a success when this long has passed since the last change (default 5000 ms). */
  recoverIntervalMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class LimiterAbortError extends Error {
  override readonly name = "AbortError";
  constructor(reason?: unknown) {
    super("aborted while waiting for a model connection slot", { cause: reason });
  }
}

export class AdaptiveLimiter {
  readonly max: number;
  private currentLimit: number;
  private active = 0;
  private readonly queue: Waiter[] = [];
  private successesSinceChange = 0;
  private lastChangeAt: number;
  private lastDecreaseAt = Number.NEGATIVE_INFINITY;
  private rateLimitCount = 0;
  private readonly decreaseWindowMs: number;
  private readonly recoverAfterSuccesses: number;
  private readonly recoverIntervalMs: number;
  private readonly now: () => number;

  constructor(opts: AdaptiveLimiterOptions) {
    if (!Number.isFinite(opts.max) || opts.max < 1) throw new RangeError(`limiter max must be >= 1, got ${opts.max}`);
    this.max = Math.floor(opts.max);
    this.currentLimit = clamp(Math.floor(opts.initial ?? this.max), 1, this.max);
    this.decreaseWindowMs = opts.decreaseWindowMs ?? 2000;
    this.recoverAfterSuccesses = Math.max(1, opts.recoverAfterSuccesses ?? 5);
    this.recoverIntervalMs = opts.recoverIntervalMs ?? 5000;
    this.now = opts.now ?? Date.now;
    this.lastChangeAt = this.now();
  }

  /** The current cap on in-flight requests. */
  get limit(): number {
    return this.currentLimit;
  }
  /** Requests holding a slot now. */
  get inFlight(): number {
    return this.active;
  }
  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.queue.length;
  }
  /** 429s seen (all of them, also those inside a decrease window). */
  get rateLimited(): number {
    return this.rateLimitCount;
  }

  /** Waits for a slot. Rejects with an AbortError if `signal` aborts first. Pair every success with `release()`. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(new LimiterAbortError(signal.reason));
    if (this.active < this.currentLimit && this.queue.length === 0) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          reject(new LimiterAbortError(signal.reason));
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.queue.push(waiter);
    });
  }

  release(): void {
    if (this.active <= 0) throw new Error("AdaptiveLimiter.release() without a matching acquire()");
    this.active--;
    this.drain();
  }

  /** The endpoint answered 429: halve the limit, unless it was already halved within the window. */
  recordRateLimit(): void {
    this.rateLimitCount++;
    const t = this.now();
    this.successesSinceChange = 0;
    if (t - this.lastDecreaseAt < this.decreaseWindowMs) return;
    this.currentLimit = Math.max(1, Math.floor(this.currentLimit / 2));
    this.lastDecreaseAt = t;
    this.lastChangeAt = t;
  }

  /** A request succeeded: count toward recovery of the limit. */
  recordSuccess(): void {
    if (this.currentLimit >= this.max) return;
    this.successesSinceChange++;
    const t = this.now();
    if (this.successesSinceChange >= this.recoverAfterSuccesses || t - this.lastChangeAt >= this.recoverIntervalMs) {
      this.currentLimit++;
      this.successesSinceChange = 0;
      this.lastChangeAt = t;
      this.drain();
    }
  }

  private drain(): void {
    while (this.active < this.currentLimit && this.queue.length > 0) {
      const w = this.queue.shift()!;
      if (w.signal && w.onAbort) w.signal.removeEventListener("abort", w.onAbort);
      this.active++;
      w.resolve();
    }
  }
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}

const shared = new Map<string, AdaptiveLimiter>();

/**
 * The limiter for `key` (use `limiterKey(baseURL, model)`) in this thread, created with `max` on first use.
 * Later calls with the same key return the same limiter whatever `max` they pass.
 */
export function sharedLimiter(key: string, max: number, opts: Omit<AdaptiveLimiterOptions, "max"> = {}): AdaptiveLimiter {
  let limiter = shared.get(key);
  if (!limiter) {
    limiter = new AdaptiveLimiter({ ...opts, max });
    shared.set(key, limiter);
  }
  return limiter;
}

/** The sharing key of an endpoint: base URL (without trailing slashes) and model. Never include the API key. */
export function limiterKey(baseURL: string, model: string): string {
  return `${baseURL.replace(/\/+$/, "")}#${model}`;
}
