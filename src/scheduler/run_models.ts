/**
 * The models of a run, built once per worker thread: one provider per endpoint (one keep-alive pool), each
 * wrapped per task by the scheduler with the run-wide limiter of its endpoint. The main thread creates the
 * limiters (`ModelGates.create`) and passes their buffers to every worker, so `--max-connections` and the
 * 429 back-off hold for the whole run, whatever the thread count.
 */
import type { RunConfig } from "../config/run_config.js";
import type { ChatModel, ChatRequest, ChatResponse } from "../core/chat.js";
import { modelProviders, runEndpoints, type ModelEndpoint, type RunEndpoints } from "../models/factory.js";
import { SharedAdaptiveLimiter, type AdaptiveLimitBuffers, type LimiterCounts } from "./adaptive_limit.js";
import type { RetryPolicy } from "./retry.js";
import { scheduleModel, type ModelEvent, type ModelPurpose } from "./scheduler.js";

/** Limiter state per endpoint key, as it crosses to the workers. */
export type ModelGateBuffers = Record<string, AdaptiveLimitBuffers>;

/** Run-wide totals over every endpoint, for statistics.json and the progress line. */
export interface ModelCallCounts {
  calls: number;
  retries: number;
  rate_limited: number;
  failed_calls: number;
  limit_decreases: number;
  limit_increases: number;
  endpoints: Record<string, LimiterCounts>;
}

export function connectionLimit(config: RunConfig): number {
  return config.max_connections ?? config.concurrency;
}

export class ModelGates {
  private readonly limiters = new Map<string, SharedAdaptiveLimiter>();

  constructor(readonly buffers: ModelGateBuffers) {
    for (const [key, b] of Object.entries(buffers)) this.limiters.set(key, new SharedAdaptiveLimiter(b));
  }

  /** Main thread: one limiter of `--max-connections` for each endpoint the run calls. */
  static create(config: RunConfig): ModelGates {
    const buffers: ModelGateBuffers = {};
    for (const ep of Object.values(runEndpoints(config))) {
      if (ep && !buffers[ep.key]) buffers[ep.key] = SharedAdaptiveLimiter.create(connectionLimit(config)).buffers;
    }
    return new ModelGates(buffers);
  }

  /** Main thread: returns the model connection permits a dead worker thread held; how many. */
  releaseThread(threadId: number): number {
    let n = 0;
    for (const l of this.limiters.values()) n += l.releaseThread(threadId);
    return n;
  }

  limiter(key: string): SharedAdaptiveLimiter | undefined {
    return this.limiters.get(key);
  }

  counts(): ModelCallCounts {
    const out: ModelCallCounts = {
      calls: 0,
      retries: 0,
      rate_limited: 0,
      failed_calls: 0,
      limit_decreases: 0,
      limit_increases: 0,
      endpoints: {},
    };
    for (const [key, l] of this.limiters) {
      const c = l.counts();
      out.endpoints[key] = c;
      out.calls += c.calls;
      out.retries += c.retries;
      out.rate_limited += c.rate_limited;
      out.failed_calls += c.failed_calls;
      out.limit_decreases += c.limit_decreases;
      out.limit_increases += c.limit_increases;
    }
    return out;
  }
}

/** The models one task calls (one per endpoint of `runEndpoints`), their retries and limit changes reported to that task. */
export type TaskModels = {
  [P in keyof RunEndpoints]: RunEndpoints[P] extends ModelEndpoint ? ChatModel : ChatModel | undefined;
};

export interface RunModels {
  forTask(onEvent?: (e: ModelEvent) => void): TaskModels;
}

/** Worker thread: a provider for each of the run's endpoints (one keep-alive pool each), scheduled through the shared gates. */
export async function createRunModels(config: RunConfig, gates: ModelGates): Promise<RunModels> {
  const policy: Partial<RetryPolicy> = {
    maxRetries: config.max_retries,
    requestTimeoutMs: config.request_timeout * 1000,
  };
  const local = new Map<string, SharedAdaptiveLimiter>();
  // An endpoint the main thread did not plan for (in-process use) gets a limiter of this thread alone.
  const limiterOf = (key: string) =>
    gates.limiter(key) ??
    local.get(key) ??
    local.set(key, SharedAdaptiveLimiter.create(connectionLimit(config))).get(key)!;

  const builders: ModelBuilder[] = [];
  for (const [purpose, ep] of Object.entries(runEndpoints(config)) as [ModelPurpose, ModelEndpoint | undefined][]) {
    if (!ep) continue;
    const provider = await modelProviders.load(ep.provider);
    const limiter = limiterOf(ep.key);
    const model = provider.create({ ...ep.options, maxSockets: limiter.max });
    builders.push({
      purpose,
      name: model.name,
      build: (onEvent) => scheduleModel(model, { endpoint: ep.key, purpose, limiter, policy, onEvent }),
    });
  }
  return {
    forTask(onEvent) {
      const models: Partial<Record<ModelPurpose, ChatModel>> = {};
      for (const b of builders)
        models[b.purpose] = b.purpose === "agent" ? b.build(onEvent) : new LazyModel(b.name, b.build, onEvent);
      return models as TaskModels;
    },
  };
}

interface ModelBuilder {
  purpose: ModelPurpose;
  name: string;
  build: (onEvent?: (e: ModelEvent) => void) => ChatModel;
}

/**
 * A task's approver or judge, scheduled on its first call: most tasks never call them, and a scheduled model
 * (its retry policy, attempt signals and closures) would otherwise be made for each task and kept to its end.
 */
class LazyModel implements ChatModel {
  private model: ChatModel | undefined;

  constructor(
    readonly name: string,
    private readonly build: ModelBuilder["build"],
    private readonly onEvent: ((e: ModelEvent) => void) | undefined,
  ) {}

  complete(req: ChatRequest): Promise<ChatResponse> {
    return (this.model ??= this.build(this.onEvent)).complete(req);
  }
}
