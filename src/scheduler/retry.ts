/** The retry rules of every model call: which failures, how long to wait, how long one attempt may take. */
import { MAX_TIMER_MS, sleep as abortableSleep } from "../core/abort.js";

export interface BackoffOptions {
  /** First retry waits up to this long (full jitter), doubling each attempt. Default 1000. */
  baseMs: number;
  /** Cap of the exponential part. Default 60_000. */
  maxMs: number;
}

export interface RetryPolicy {
  /** Retries after the first attempt. Default 6. */
  maxRetries: number;
  backoff: BackoffOptions;
  /** Deadline of one attempt, from sending to the last byte of the answer (streams too). Default 600_000. */
  requestTimeoutMs: number;
  /** Longest `retry-after` honoured as given (default 300_000); longer values are capped. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 6,
  backoff: { baseMs: 1000, maxMs: 60_000 },
  requestTimeoutMs: 600_000,
  maxRetryAfterMs: 300_000,
};

/** Time for the retry layer: the real one, or a fake in tests (no real sleeps). */
export interface Clock {
  now(): number;
  /** Milliseconds from any start that never jump (attempt deadlines); `now()` when absent. */
  monotonicNow?(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` after `ms`; the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
  /** Jitter source in [0, 1). */
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonicNow: () => performance.now(),
  sleep: abortableSleep,
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.min(MAX_TIMER_MS, Math.max(0, ms)));
    return () => clearTimeout(t);
  },
  random: Math.random,
};

/** Full jitter: uniform in [0, min(maxMs, baseMs·2^(attempt-1))]. `attempt` starts at 1. */
export function backoffDelay(attempt: number, backoff: BackoffOptions, random: () => number): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(random() * ceiling);
}

/** The wait before retry `attempt`: what the endpoint asked for (capped), else the back-off. */
export function retryDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  policy: RetryPolicy,
  random: () => number,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  return backoffDelay(attempt, policy.backoff, random);
}
