/**
 * The one way a model is called: every call of the agent, the approver and a judge goes through
 * `scheduleModel`, which waits for a run-wide connection permit, gives each attempt its deadline, retries
 * what may be retried (retryable statuses, Retry-After, back-off), feeds the adaptive limit, and reports
 * each retry and each limit change as an event.
 */
import { ModelError, type ChatModel, type ChatRequest, type ChatResponse } from "../core/chat.js";
import { isSettlingOnAbort, ModelAbortError, ProviderError } from "../models/provider.js";
import { AttemptSignals } from "./attempt_signal.js";
import { deadlinesFor } from "./deadlines.js";
import type { LimitChange, SharedAdaptiveLimiter } from "./adaptive_limit.js";
import { DEFAULT_RETRY_POLICY, retryDelay, systemClock, type Clock, type RetryPolicy } from "./retry.js";

/** Who is asking: the agent loop, the smart approver, a judge. */
export type ModelPurpose = "agent" | "approver" | "judge";

export type ModelEvent =
  | {
      kind: "retry";
      at: number;
      purpose: ModelPurpose;
      endpoint: string;
      attempt: number;
      maxRetries: number;
      delayMs: number;
      status?: number;
      reason: string;
    }
  | {
      kind: "limit";
      at: number;
      purpose: ModelPurpose;
      endpoint: string;
      from: number;
      to: number;
      reason: LimitChange["reason"];
    }
  /** The endpoint answered without any usage: token counts of such calls are zeros, not measurements. */
  | { kind: "no_usage"; at: number; purpose: ModelPurpose; endpoint: string }
  /** The endpoint sent usage values that are not token counts (ignored: counted as 0). */
  | { kind: "bad_usage"; at: number; purpose: ModelPurpose; endpoint: string; fields: string[] };

/** One line for events.log. */
export function describeModelEvent(e: ModelEvent): string {
  if (e.kind === "retry") {
    const status = e.status !== undefined ? `status ${e.status}` : "no status";
    return `model retry ${e.attempt}/${e.maxRetries} (${e.purpose}, ${e.endpoint}, ${status}) in ${e.delayMs} ms: ${e.reason}`;
  }
  if (e.kind === "no_usage") {
    return `warning: ${e.endpoint} sends no token usage (${e.purpose} calls): token counts and costs of its calls are 0`;
  }
  if (e.kind === "bad_usage") {
    return `warning: ${e.endpoint} sends usage values that are not token counts (${e.fields.join(", ")}; ${e.purpose} calls): they are ignored`;
  }
  const why = e.reason === "rate_limited" ? "429 rate limited" : "recovered after successes";
  return `model connection limit ${e.from} → ${e.to} (${e.endpoint}, ${why})`;
}

export interface ScheduleOptions {
  /** The endpoint's identity for events (base URL and model; never a key). */
  endpoint: string;
  purpose: ModelPurpose;
  /** The run-wide limiter of this endpoint (absent: no connection limit). */
  limiter?: SharedAdaptiveLimiter;
  policy?: Partial<RetryPolicy>;
  clock?: Clock;
  onEvent?: (e: ModelEvent) => void;
}

/** `provider` makes one attempt per call; the result retries and respects the run's limiter. */
export function scheduleModel(provider: ChatModel, opts: ScheduleOptions): ChatModel {
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    ...opts.policy,
    backoff: { ...DEFAULT_RETRY_POLICY.backoff, ...opts.policy?.backoff },
  };
  const clock = opts.clock ?? systemClock;
  const { limiter, endpoint, purpose } = opts;

  const signals = new AttemptSignals();
  // No race (a promise, its resolvers and a reaction kept per call for the whole wait) when not needed.
  const settlesByItself = isSettlingOnAbort(provider);
  const deadlines = deadlinesFor(clock, policy.requestTimeoutMs);
  let noUsageReported = false;
  let badUsageReported = false;
  const emitChange = (change: LimitChange | undefined) => {
    if (change) opts.onEvent?.({ kind: "limit", at: clock.now(), purpose, endpoint, ...change });
  };

  /**
   * One attempt, and on a retryable failure the wait and the next attempt. The attempt is in this frame rather
   * than in an async function of its own: a second frame, promise and await per call were kept for the whole
   * wait for the answer. A retry calls this again from the frame of the failed attempt (retries are rare).
   */
  async function complete(req: ChatRequest, tryNo = 0): Promise<ChatResponse> {
    const userSignal = req.signal;
    if (userSignal?.aborted) throw new ModelAbortError(userSignal.reason);
    // A free permit is taken at once; only a full gate costs the wait (and its promises).
    if (limiter && !limiter.tryAcquire()) {
      try {
        await limiter.acquire(userSignal);
      } catch (err) {
        throw userSignal?.aborted ? new ModelAbortError(userSignal.reason) : err;
      }
    }
    limiter?.noteCall();
    // The caller's abort and the attempt's deadline both abort the provider's signal and end the attempt at
    // once: a provider that ignores its signal is raced against it, so it cannot hold the call.
    const bound = signals.take(userSignal);
    const request: ChatRequest = {
      messages: req.messages,
      tools: req.tools,
      signal: bound.signal,
      responseFormat: req.responseFormat,
    };
    const answer = settlesByItself
      ? provider.complete(request)
      : new Promise<ChatResponse>((resolve, reject) => {
          bound.onAbort = reject;
          provider.complete(request).then(resolve, reject);
        });
    deadlines.add(bound);
    let failure: ModelError;
    try {
      const res = await answer;
      emitChange(limiter?.recordSuccess());
      noteUsage(res);
      return res;
    } catch (err) {
      if (userSignal?.aborted) throw new ModelAbortError(userSignal.reason);
      if (bound.timedOut)
        failure = new ProviderError(`request timed out after ${policy.requestTimeoutMs} ms`, { retryable: true });
      // An exception that is not a model failure (a bug) is not retried.
      else if (!(err instanceof ModelError)) throw err;
      else failure = err;
    } finally {
      deadlines.remove(bound);
      signals.give(bound);
      limiter?.release();
    }
    await waitToRetry(failure, tryNo, req.signal);
    return complete(req, tryNo + 1);
  }

  function noteUsage(res: ChatResponse): void {
    if (res.usageMissing && !noUsageReported) {
      noUsageReported = true;
      opts.onEvent?.({ kind: "no_usage", at: clock.now(), purpose, endpoint });
    }
    if (res.usageInvalid && !badUsageReported) {
      badUsageReported = true;
      opts.onEvent?.({ kind: "bad_usage", at: clock.now(), purpose, endpoint, fields: res.usageInvalid });
    }
  }

  /** After failed attempt `tryNo`: the back-off (reported), or the call's final error when no retry is left. */
  async function waitToRetry(failure: ModelError, tryNo: number, signal: AbortSignal | undefined): Promise<void> {
    if (failure instanceof ProviderError && failure.rateLimited) emitChange(limiter?.recordRateLimit());
    if (!failure.retryable) {
      limiter?.noteFailure();
      throw new ModelError(failure.message, failure.status, false);
    }
    if (tryNo >= policy.maxRetries) {
      limiter?.noteFailure();
      throw new ModelError(
        `model request failed after ${policy.maxRetries} retries: ${failure.message}`,
        failure.status,
        true,
      );
    }
    const retryAfterMs = failure instanceof ProviderError ? failure.retryAfterMs : undefined;
    const delayMs = retryDelay(tryNo + 1, retryAfterMs, policy, () => clock.random());
    limiter?.noteRetry();
    opts.onEvent?.({
      kind: "retry",
      at: clock.now(),
      purpose,
      endpoint,
      attempt: tryNo + 1,
      maxRetries: policy.maxRetries,
      delayMs,
      status: failure.status,
      reason: failure.message,
    });
    try {
      await clock.sleep(delayMs, signal);
    } catch {
      throw new ModelAbortError(signal?.reason);
    }
  }

  return { name: provider.name, complete: (req) => complete(req) };
}
