/**
 * Retry with exponential back-off and jitter for container creation and start when the engine answers with a
 * transient error (overload, a conflict of the moment, a dropped connection, a failed fork); a deterministic
 * error (a missing image, a bad option) goes up at once.
 */
import { sleep } from "../../../src/core/abort.js";
import { dockerErrorMessage, statusCodeOf } from "./docker_client.js";

const TRANSIENT_STATUS = new Set([409, 429, 500, 502, 503, 504]);
const TRANSIENT_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EAGAIN",
  "ECONNABORTED",
  "ENOTCONN",
  "UND_ERR_SOCKET",
]);
const TRANSIENT_TEXT =
  /socket hang up|resource temporarily unavailable|too many requests|connection reset|EAGAIN|timed? ?out|try again/i;
/** Engine answers with a 5xx that no retry can fix. */
const DETERMINISTIC_TEXT =
  /no such image|executable file not found|invalid (argument|reference|mount|parameter)|not supported/i;

/** True for an engine error worth another attempt. */
export function isTransientEngineError(err: unknown): boolean {
  const message = dockerErrorMessage(err);
  if (DETERMINISTIC_TEXT.test(message)) return false;
  const status = statusCodeOf(err);
  if (status !== undefined) return TRANSIENT_STATUS.has(status);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && TRANSIENT_CODES.has(code)) return true;
  return TRANSIENT_TEXT.test(message);
}

export interface EngineRetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** The first back-off; each next one doubles, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_ENGINE_RETRY: EngineRetryPolicy = { attempts: 6, baseDelayMs: 250, maxDelayMs: 8000 };

/** The wait before retry number `retry` (1-based): exponential, with jitter over its upper half. */
export function backOffMs(retry: number, policy: EngineRetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export interface EngineRetry {
  attempt: number;
  attempts: number;
  delayMs: number;
  reason: string;
}

export interface EngineRetryOptions {
  policy?: EngineRetryPolicy;
  signal?: AbortSignal;
  /** Called before each back-off (for events and for slowing the run-wide start rate). */
  onRetry?: (retry: EngineRetry) => void;
  /** Undoes what a failed attempt may have left (a created container) before the next one. */
  beforeRetry?: () => Promise<void>;
  /** No further attempt when this says so (the run is shutting down). */
  giveUp?: () => boolean;
}

/** Runs `attempt` until it succeeds, fails deterministically, runs out of attempts, or the signal aborts. */
export async function withEngineRetry<T>(attempt: () => Promise<T>, o: EngineRetryOptions = {}): Promise<T> {
  const policy = o.policy ?? DEFAULT_ENGINE_RETRY;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (n >= policy.attempts || !isTransientEngineError(err) || o.signal?.aborted || o.giveUp?.()) throw err;
      const delayMs = backOffMs(n, policy);
      o.onRetry?.({ attempt: n, attempts: policy.attempts, delayMs, reason: dockerErrorMessage(err) });
      await o.beforeRetry?.();
      await sleep(delayMs, o.signal);
    }
  }
}
