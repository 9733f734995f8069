/**
 * The one way a model is called: every call of the agent, the approver and a judge goes through
 * `scheduleModel`, which waits for a run-wide connection permit, gives each attempt its deadline, retries
 * what may be retried (retryable statuses, Retry-After, back-off), feeds the adaptive limit, and reports
 * each retry and each limit change as an event.
 */
import { ModelError, type ChatModel, type ChatRequest, type ChatResponse } from "../core/chat.js";
import { isSettlingOnAbort, ModelAbortError, ProviderError } from "../models/provider.js";
import { AttemptSignals } from "./attempt_signal.js";
import { deadlinesFor, type Deadlines } from "./deadlines.js";
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
  return new ScheduledModel(provider, opts);
}

/** Retry policies resolved from the partial one a run gives every task's models (one object per run). */
const resolvedPolicies = new WeakMap<Partial<RetryPolicy>, RetryPolicy>();

function resolvePolicy(given: Partial<RetryPolicy> | undefined): RetryPolicy {
  const known = given && resolvedPolicies.get(given);
  if (known) return known;
  const policy: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    ...given,
    backoff: { ...DEFAULT_RETRY_POLICY.backoff, ...given?.backoff },
  };
  if (given) resolvedPolicies.set(given, policy);
  return policy;
}

/**
 * A scheduled model: a class, not closures, because one is made for every task (its methods shared, its
 * state a few fields).
 */
class ScheduledModel implements ChatModel {
  readonly name: string;
  private readonly policy: RetryPolicy;
  private readonly clock: Clock;
  private readonly signals = new AttemptSignals();
  /** No race (a promise, its resolvers and a reaction kept per call for the whole wait) when not needed. */
  private readonly settlesByItself: boolean;
  private readonly deadlines: Deadlines;
  private noUsageReported = false;
  private badUsageReported = false;

  constructor(
    private readonly provider: ChatModel,
    private readonly opts: ScheduleOptions,
  ) {
    this.name = provider.name;
    this.policy = resolvePolicy(opts.policy);
    this.clock = opts.clock ?? systemClock;
    this.settlesByItself = isSettlingOnAbort(provider);
    this.deadlines = deadlinesFor(this.clock, this.policy.requestTimeoutMs);
  }

  complete(req: ChatRequest): Promise<ChatResponse> {
    return this.attempt(req, 0);
  }

  /**
   * One attempt, and on a retryable failure the wait and the next attempt. The attempt is in this frame rather
   * than in an async function of its own: a second frame, promise and await per call were kept for the whole
   * wait for the answer. A retry calls this again from the frame of the failed attempt (retries are rare).
   */
  private async attempt(req: ChatRequest, tryNo: number): Promise<ChatResponse> {
    const { limiter } = this.opts;
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
    const bound = this.signals.take(userSignal);
    const request: ChatRequest = {
      messages: req.messages,
      tools: req.tools,
      signal: bound.signal,
      responseFormat: req.responseFormat,
    };
    const answer = this.settlesByItself
      ? this.provider.complete(request)
      : new Promise<ChatResponse>((resolve, reject) => {
          bound.onAbort = reject;
          this.provider.complete(request).then(resolve, reject);
        });
    this.deadlines.add(bound);
    let failure: ModelError;
    try {
      const res = await answer;
      this.emitChange(limiter?.recordSuccess());
      this.noteUsage(res);
      return res;
    } catch (err) {
      if (userSignal?.aborted) throw new ModelAbortError(userSignal.reason);
      if (bound.timedOut)
        failure = new ProviderError(`request timed out after ${this.policy.requestTimeoutMs} ms`, { retryable: true });
      // An exception that is not a model failure (a bug) is not retried.
      else if (!(err instanceof ModelError)) throw err;
      else failure = err;
    } finally {
      this.deadlines.remove(bound);
      this.signals.give(bound);
      limiter?.release();
    }
    await this.waitToRetry(failure, tryNo, req.signal);
    return this.attempt(req, tryNo + 1);
  }

  private emitChange(change: LimitChange | undefined): void {
    const { purpose, endpoint } = this.opts;
    if (change) this.opts.onEvent?.({ kind: "limit", at: this.clock.now(), purpose, endpoint, ...change });
  }

  private noteUsage(res: ChatResponse): void {
    const { purpose, endpoint, onEvent } = this.opts;
    if (res.usageMissing && !this.noUsageReported) {
      this.noUsageReported = true;
      onEvent?.({ kind: "no_usage", at: this.clock.now(), purpose, endpoint });
    }
    if (res.usageInvalid && !this.badUsageReported) {
      this.badUsageReported = true;
      onEvent?.({ kind: "bad_usage", at: this.clock.now(), purpose, endpoint, fields: res.usageInvalid });
    }
  }

  /** After failed attempt `tryNo`: the back-off (reported), or the call's final error when no retry is left. */
  private async waitToRetry(failure: ModelError, tryNo: number, signal: AbortSignal | undefined): Promise<void> {
    const { limiter, purpose, endpoint } = this.opts;
    const { policy, clock } = this;
    if (failure instanceof ProviderError && failure.rateLimited) this.emitChange(limiter?.recordRateLimit());
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
    this.opts.onEvent?.({
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
}
