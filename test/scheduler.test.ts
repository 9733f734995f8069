/**
 * The scheduler every model call goes through: the retry layer on a fake clock (no real sleeps), the
 * run-wide adaptive limit shared through SharedArrayBuffers, and the events it reports.
 */
import { describe, expect, it } from "vitest";
import { ModelError, type ChatModel, type ChatRequest, type ChatResponse } from "../src/core/chat.js";
import { ModelAbortError, ProviderError } from "../src/models/provider.js";
import { SharedAdaptiveLimiter } from "../src/scheduler/adaptive_limit.js";
import { backoffDelay, retryDelay, DEFAULT_RETRY_POLICY } from "../src/scheduler/retry.js";
import {
  describeModelEvent,
  scheduleModel,
  type ModelEvent,
  type ScheduleOptions,
} from "../src/scheduler/scheduler.js";
import { FakeClock } from "./helpers/fake_clock.js";

const ok = (content = "ok"): ChatResponse => ({
  message: { role: "assistant", content },
  finishReason: "stop",
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});
const ask: ChatRequest = { messages: [{ role: "user", content: "hi" }] };
const rateLimited = (retryAfterMs?: number) =>
  new ProviderError("429 rate limited: slow down", { status: 429, retryable: true, rateLimited: true, retryAfterMs });
const serverError = () => new ProviderError("500: boom", { status: 500, retryable: true });

/** A provider that answers each attempt with the next scripted outcome (an Error is thrown). */
function scripted(outcomes: (ChatResponse | Error | "hang")[]) {
  const seen: ChatRequest[] = [];
  const model: ChatModel = {
    name: "fake",
    async complete(req) {
      seen.push(req);
      const next = outcomes.shift() ?? ok();
      if (next === "hang") {
        return new Promise((_, reject) =>
          req.signal?.addEventListener("abort", () => reject(new Error("aborted by signal")), { once: true }),
        );
      }
      if (next instanceof Error) throw next;
      return next;
    },
  };
  return { model, seen };
}

function scheduled(provider: ChatModel, extra: Partial<ScheduleOptions> = {}) {
  const clock = new FakeClock();
  const events: ModelEvent[] = [];
  const model = scheduleModel(provider, {
    endpoint: "http://127.0.0.1:9/v1#m",
    purpose: "agent",
    clock,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return { model, clock, events };
}

describe("retry layer (fake clock)", () => {
  it("waits what Retry-After asks on a 429, reports the retry, then succeeds", async () => {
    const p = scripted([rateLimited(1000), ok("after wait")]);
    const { model, clock, events } = scheduled(p.model);
    const res = await clock.run(model.complete(ask));
    expect(res.message.content).toBe("after wait");
    expect(p.seen).toHaveLength(2);
    expect(clock.sleeps).toEqual([1000]);
    expect(clock.now()).toBe(1000);
    expect(events).toEqual([
      expect.objectContaining({
        kind: "retry",
        attempt: 1,
        maxRetries: 6,
        delayMs: 1000,
        status: 429,
        purpose: "agent",
      }),
    ]);
    expect(describeModelEvent(events[0]!)).toBe(
      "model retry 1/6 (agent, http://127.0.0.1:9/v1#m, status 429) in 1000 ms: 429 rate limited: slow down",
    );
  });

  it("caps a Retry-After longer than maxRetryAfterMs", async () => {
    const p = scripted([rateLimited(3_600_000), ok()]);
    const { model, clock } = scheduled(p.model, { policy: { maxRetryAfterMs: 5000 } });
    await clock.run(model.complete(ask));
    expect(clock.sleeps).toEqual([5000]);
  });

  it("backs off with full jitter, doubling up to the cap", async () => {
    const p = scripted([serverError(), serverError(), serverError(), ok("recovered")]);
    const { model, clock, events } = scheduled(p.model, { policy: { backoff: { baseMs: 1000, maxMs: 3000 } } });
    expect((await clock.run(model.complete(ask))).message.content).toBe("recovered");
    // jitter 0.5 of min(3000, 1000·2^(n-1))
    expect(clock.sleeps).toEqual([500, 1000, 1500]);
    expect(events.map((e) => e.kind === "retry" && [e.attempt, e.status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
    ]);
    expect(backoffDelay(10, { baseMs: 1000, maxMs: 60_000 }, () => 1)).toBe(60_000);
    expect(retryDelay(1, 0, DEFAULT_RETRY_POLICY, () => 1)).toBe(0);
  });

  it("fails at once on a failure that is not retryable", async () => {
    const p = scripted([
      new ProviderError("model endpoint returned 400: context length exceeded", { status: 400, retryable: false }),
    ]);
    const { model, clock, events } = scheduled(p.model);
    const err = await clock.run(model.complete(ask)).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect([err.status, err.retryable, err.message]).toEqual([
      400,
      false,
      "model endpoint returned 400: context length exceeded",
    ]);
    expect(p.seen).toHaveLength(1);
    expect(events).toEqual([]);
  });

  it("gives up after maxRetries with a retryable ModelError naming the last reason", async () => {
    const p = scripted([serverError(), serverError(), serverError()]);
    const { model, clock, events } = scheduled(p.model, { policy: { maxRetries: 2 } });
    const err = await clock.run(model.complete(ask)).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.retryable).toBe(true);
    expect(err.message).toBe("model request failed after 2 retries: 500: boom");
    expect(p.seen).toHaveLength(3);
    expect(events).toHaveLength(2);
  });

  it("ends an attempt at its deadline and retries it (the provider sees the abort)", async () => {
    const p = scripted(["hang", "hang", "hang"]);
    const { model, clock } = scheduled(p.model, {
      policy: { maxRetries: 2, requestTimeoutMs: 150_000, backoff: { baseMs: 10, maxMs: 10 } },
    });
    const err = await clock.run(model.complete(ask)).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.message).toBe("model request failed after 2 retries: request timed out after 150000 ms");
    expect(p.seen.every((r) => r.signal?.aborted)).toBe(true);
    expect(clock.now()).toBe(3 * 150_000 + 2 * 5);
  });

  it("attempts of several models started at different times each end at their own deadline; no timer is left after", async () => {
    const clock = new FakeClock();
    const policy = { maxRetries: 0, requestTimeoutMs: 1000 };
    const models = [0, 1, 2].map(() =>
      scheduleModel(scripted(["hang"]).model, { endpoint: "e", purpose: "agent", clock, policy }),
    );
    const ended: [number, number][] = [];
    const calls: Promise<unknown>[] = [];
    const start = (i: number) =>
      calls.push(models[i]!.complete(ask).catch((e: Error) => ended.push([i, clock.now()]) && e.message));
    start(0);
    await clock.settle();
    clock.setTimer(300, () => start(1));
    let timersWithThreeInFlight = -1;
    clock.setTimer(700, () => {
      start(2);
      timersWithThreeInFlight = clock.pendingTimers;
    });
    while (ended.length < 3 && (await clock.fireNext()));
    expect(ended).toEqual([
      [0, 1000],
      [1, 1300],
      [2, 1700],
    ]);
    expect(await Promise.all(calls)).toEqual(
      Array(3).fill("model request failed after 0 retries: request timed out after 1000 ms"),
    );
    // One timer for all of them while any is in flight, none once they ended (it would keep a process up).
    expect(timersWithThreeInFlight).toBe(1);
    expect(clock.pendingTimers).toBe(0);
    const ok1 = scheduleModel(scripted([ok("fine")]).model, { endpoint: "e", purpose: "agent", clock, policy });
    expect((await ok1.complete(ask)).message.content).toBe("fine");
    expect(clock.pendingTimers).toBe(0);
  });

  it("stops at once when the caller aborts during a back-off, and while a request is in flight", async () => {
    const ac = new AbortController();
    const p = scripted([rateLimited(30_000)]);
    const { model, clock } = scheduled(p.model, { onEvent: () => ac.abort(new Error("task cancelled")) });
    const err = await clock.run(model.complete({ ...ask, signal: ac.signal })).catch((e) => e);
    expect(err).toBeInstanceOf(ModelAbortError);
    expect(err).not.toBeInstanceOf(ModelError);
    expect(p.seen).toHaveLength(1);

    const ac2 = new AbortController();
    const hanging = scripted(["hang"]);
    const s2 = scheduled(hanging.model);
    const pending = s2.model.complete({ ...ask, signal: ac2.signal }).catch((e) => e);
    await s2.clock.settle();
    ac2.abort();
    expect(await pending).toBeInstanceOf(ModelAbortError);
    expect(hanging.seen[0]!.signal?.aborted).toBe(true);

    const none = scripted([]);
    expect(
      await scheduled(none.model)
        .model.complete({ ...ask, signal: AbortSignal.abort() })
        .catch((e) => e),
    ).toBeInstanceOf(ModelAbortError);
    expect(none.seen).toHaveLength(0);
  });

  it("does not retry an exception that is not a model failure (a bug)", async () => {
    const p = scripted([new TypeError("cannot read properties of undefined")]);
    const { model, clock } = scheduled(p.model);
    const err = await clock.run(model.complete(ask)).catch((e) => e);
    expect(err).toBeInstanceOf(TypeError);
    expect(p.seen).toHaveLength(1);
  });
});

describe("run-wide adaptive limit (SharedArrayBuffer)", () => {
  function clock(start = 0) {
    let t = start;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  }

  it("halves on 429 at most once per window, never below 1, and counts every 429", () => {
    const c = clock();
    const l = SharedAdaptiveLimiter.create(16, { decreaseWindowMs: 1000 }, c.now);
    expect(l.recordRateLimit()).toEqual({ from: 16, to: 8, reason: "rate_limited" });
    expect(l.recordRateLimit()).toBeUndefined();
    c.advance(999);
    l.recordRateLimit();
    expect(l.limit).toBe(8);
    c.advance(1);
    l.recordRateLimit();
    expect(l.limit).toBe(4);
    for (let i = 0; i < 10; i++) {
      c.advance(1000);
      l.recordRateLimit();
    }
    expect(l.limit).toBe(1);
    expect(l.counts()).toMatchObject({ rate_limited: 14, limit_decreases: 4, lowest_limit: 1, max: 16 });
  });

  it("recovers +1 per N successes or once the interval passed, never above max; a 429 resets the streak", () => {
    const c = clock();
    const l = SharedAdaptiveLimiter.create(
      4,
      { recoverAfterSuccesses: 3, recoverIntervalMs: 500, decreaseWindowMs: 10_000 },
      c.now,
    );
    l.recordRateLimit();
    expect(l.limit).toBe(2);
    l.recordSuccess();
    l.recordRateLimit(); // inside the window: no decrease, but the streak is gone
    l.recordSuccess();
    l.recordSuccess();
    expect(l.limit).toBe(2);
    expect(l.recordSuccess()).toEqual({ from: 2, to: 3, reason: "recovered" });
    c.advance(500);
    expect(l.recordSuccess()).toEqual({ from: 3, to: 4, reason: "recovered" });
    for (let i = 0; i < 10; i++) expect(l.recordSuccess()).toBeUndefined();
    expect(l.limit).toBe(4);
    expect(l.counts().limit_increases).toBe(2);
  });

  it("a 429 through one view lowers the limit another view (another thread) enforces", async () => {
    const a = SharedAdaptiveLimiter.create(4);
    const b = new SharedAdaptiveLimiter(a.buffers); // what a worker thread builds from workerData
    for (let i = 0; i < 3; i++) await b.acquire();
    a.recordRateLimit(); // limit 2, 3 held
    expect(b.limit).toBe(2);
    expect(b.gate.tryAcquire()).toBe(false);
    b.release();
    b.release();
    expect(b.gate.tryAcquire()).toBe(true); // 2 held = the new limit
    expect(a.counts()).toMatchObject({ limit: 2, in_flight: 2, rate_limited: 1, peak_in_flight: 3 });
    b.release();
    b.release();
  });

  it("the permits a dead worker thread held go back to the run (its ledger), and no others", async () => {
    const main = SharedAdaptiveLimiter.create(3);
    const dying = new SharedAdaptiveLimiter(main.buffers, Date.now, 7);
    const living = new SharedAdaptiveLimiter(main.buffers, Date.now, 8);
    await dying.acquire();
    await dying.acquire();
    await dying.acquire();
    dying.release();
    await living.acquire();
    expect(main.gate.tryAcquire()).toBe(false); // 2 + 1 held: the run is full
    expect(main.releaseThread(7)).toBe(2);
    expect(main.counts().in_flight).toBe(1);
    expect(main.releaseThread(7)).toBe(0);
    living.release();
    expect(main.counts().in_flight).toBe(0);
  });

  it("a waiting acquire gives up when its signal aborts, holding nothing", async () => {
    const l = SharedAdaptiveLimiter.create(1);
    await l.acquire();
    const ac = new AbortController();
    const waiting = l.acquire(ac.signal).catch((e) => e);
    ac.abort(new Error("cancelled"));
    expect(((await waiting) as Error).message).toBe("cancelled");
    l.release();
    expect(l.counts().in_flight).toBe(0);
  });
});

describe("scheduler with the shared limiter", () => {
  it("a burst of 429s halves the run-wide limit once; the retries then hold to it; every permit is returned", async () => {
    const limiter = SharedAdaptiveLimiter.create(8, {
      decreaseWindowMs: 10_000,
      recoverAfterSuccesses: 1000,
      recoverIntervalMs: 1e9,
    });
    let calls = 0;
    let live = 0;
    let peakRetries = 0;
    let releaseBurst!: () => void;
    const burst = new Promise<void>((r) => (releaseBurst = r));
    const provider: ChatModel = {
      name: "fake",
      async complete() {
        const n = ++calls;
        if (n <= 8) {
          if (n === 8) releaseBurst(); // all eight in flight together, then all answer 429
          await burst;
          throw rateLimited(100);
        }
        live++;
        peakRetries = Math.max(peakRetries, live);
        await new Promise((r) => setImmediate(r));
        live--;
        return ok();
      },
    };
    const clock = new FakeClock();
    const events: ModelEvent[] = [];
    // Two "threads": two views of the same buffers, four calls each.
    const views = [limiter, new SharedAdaptiveLimiter(limiter.buffers)];
    const models = views.map((l) =>
      scheduleModel(provider, { endpoint: "e", purpose: "agent", limiter: l, clock, onEvent: (e) => events.push(e) }),
    );
    const results = await clock.run(Promise.all(Array.from({ length: 8 }, (_, i) => models[i % 2]!.complete(ask))));
    expect(results).toHaveLength(8);
    expect(calls).toBe(16);
    expect(limiter.limit).toBe(4);
    expect(peakRetries).toBe(4);
    expect(events.filter((e) => e.kind === "limit")).toEqual([
      expect.objectContaining({ from: 8, to: 4, reason: "rate_limited" }),
    ]);
    expect(events.filter((e) => e.kind === "retry")).toHaveLength(8);
    expect(limiter.counts()).toMatchObject({
      calls: 16,
      retries: 8,
      rate_limited: 8,
      in_flight: 0,
      limit_decreases: 1,
    });
  });

  it("holds the cap across views: never more calls in flight than the limit", async () => {
    const limiter = SharedAdaptiveLimiter.create(3);
    let live = 0;
    let peak = 0;
    const provider: ChatModel = {
      name: "fake",
      async complete() {
        live++;
        peak = Math.max(peak, live);
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        live--;
        return ok();
      },
    };
    const views = [limiter, new SharedAdaptiveLimiter(limiter.buffers), new SharedAdaptiveLimiter(limiter.buffers)];
    const models = views.map((l) => scheduleModel(provider, { endpoint: "e", purpose: "agent", limiter: l }));
    await Promise.all(Array.from({ length: 12 }, (_, i) => models[i % 3]!.complete(ask)));
    expect(peak).toBe(3);
    expect(limiter.counts()).toMatchObject({ calls: 12, in_flight: 0, peak_in_flight: 3 });
  });
});

describe("progress line note", () => {
  it("is empty until the scheduler retried or lowered a limit, then names retries, 429s and each lowered limit", async () => {
    const { modelNote } = await import("../src/run/progress.js");
    const base = { done: 1, failed: 0, dropped: 0, tokens: 0 };
    expect(modelNote(base)).toBe("");
    expect(modelNote({ ...base, model: { retries: 0, rate_limited: 0, endpoints: { a: { limit: 4, max: 4 } } } })).toBe(
      "",
    );
    expect(
      modelNote({
        ...base,
        model: { retries: 3, rate_limited: 2, endpoints: { a: { limit: 2, max: 4 }, b: { limit: 8, max: 8 } } },
      }),
    ).toBe(" | model retries 3, 429s 2, connections 2/4");
  });
});

describe("the run's endpoints and gates", () => {
  const config = async (extra: Record<string, unknown>) =>
    (await import("../src/config/run_config.js")).RunConfigSchema.parse({
      dataset: "d.jsonl",
      model: "m",
      base_url: "http://127.0.0.1:9/v1/",
      max_connections: 3,
      ...extra,
    });

  it("one run-wide limiter per endpoint: the approver shares the agent's when it calls the same model there", async () => {
    const { ModelGates } = await import("../src/scheduler/run_models.js");
    const shared = ModelGates.create(await config({ approval: "smart" }));
    expect(Object.keys(shared.buffers)).toEqual(["http://127.0.0.1:9/v1#m"]);
    expect(shared.limiter("http://127.0.0.1:9/v1#m")!.max).toBe(3);
    const apart = ModelGates.create(await config({ approval: "smart", approval_model: "judge-small" }));
    expect(Object.keys(apart.buffers).sort()).toEqual(["http://127.0.0.1:9/v1#judge-small", "http://127.0.0.1:9/v1#m"]);
    expect(Object.keys(ModelGates.create(await config({ approval: "deny" })).buffers)).toEqual([
      "http://127.0.0.1:9/v1#m",
    ]);
    // A worker's view of the buffers sees what the main thread's limiter does.
    const worker = new ModelGates(shared.buffers);
    shared.limiter("http://127.0.0.1:9/v1#m")!.recordRateLimit();
    expect(worker.limiter("http://127.0.0.1:9/v1#m")!.limit).toBe(1);
    expect(worker.counts()).toMatchObject({ rate_limited: 1, limit_decreases: 1 });
  });

  it("a task's approver is scheduled like its agent: retried through the run's gate, its events the task's", async () => {
    const { ModelGates, createRunModels } = await import("../src/scheduler/run_models.js");
    const { httpError, startFakeOpenAI, text } = await import("./helpers/fake_openai.js");
    const server = await startFakeOpenAI((r) =>
      r.index === 0 ? httpError(503, "busy", { "retry-after": "0" }) : text("ok"),
    );
    try {
      const cfg = await config({ approval: "smart", base_url: server.baseURL });
      const gates = ModelGates.create(cfg);
      const events: ModelEvent[] = [];
      const { approver } = (await createRunModels(cfg, gates)).forTask((e) => events.push(e));
      const res = await approver!.complete({ messages: [{ role: "user", content: "allow?" }] });
      expect(res.message.content).toBe("ok");
      expect(events).toMatchObject([{ kind: "retry", purpose: "approver", status: 503, attempt: 1 }]);
      expect(gates.counts()).toMatchObject({ calls: 2, retries: 1 });
    } finally {
      await server.close();
    }
  });

  it("builds the task's models through the registry: the scripted demo has no approver (fail-closed)", async () => {
    const { ModelGates, createRunModels } = await import("../src/scheduler/run_models.js");
    const scripted = await config({ model: "scripted", base_url: undefined, approval: "smart" });
    const models = (await createRunModels(scripted, ModelGates.create(scripted))).forTask();
    expect(models.approver).toBeUndefined();
    const res = await models.agent.complete({ messages: [{ role: "user", content: "hello" }] });
    expect(res.finishReason).toBe("stop");
    const smart = await config({ approval: "smart" });
    expect((await createRunModels(smart, ModelGates.create(smart))).forTask().approver?.name).toBe("m");
    const { modelProviders } = await import("../src/models/factory.js");
    expect(modelProviders.names()).toEqual(["openai", "scripted"]);
    await expect(modelProviders.load("vertex")).rejects.toThrow(
      "unknown model provider 'vertex'; known: openai, scripted",
    );
  });
});
