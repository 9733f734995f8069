import { afterEach, describe, expect, it } from "vitest";
/**
 * The model client behind a gateway, over real HTTP on 127.0.0.1: error bodies of any shape, in-stream
 * rate limits, token details, replies without usage. Back-off sleeps are recorded, not slept.
 */
import { openaiProvider } from "../src/models/openai_compatible.js";
import { describeErrorBody } from "../src/models/error_body.js";
import type { ModelEndpointOptions } from "../src/models/provider.js";
import { SharedAdaptiveLimiter } from "../src/scheduler/adaptive_limit.js";
import { describeModelEvent, scheduleModel, type ModelEvent } from "../src/scheduler/scheduler.js";
import { systemClock, type Clock } from "../src/scheduler/retry.js";
import { addUsage, emptyUsage, ModelError, type ChatMessage } from "../src/core/chat.js";
import { completion, startFakeOpenAI, text, type FakeOpenAI, type Reply } from "./helpers/fake_openai.js";

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

async function serve(handler: (i: number, body: any) => Reply | Promise<Reply>): Promise<FakeOpenAI> {
  const s = await startFakeOpenAI((r) => handler(r.index, r.body));
  servers.push(s);
  return s;
}

const clock: Clock = { ...systemClock, sleep: async (_ms, signal) => signal?.throwIfAborted() };
const ask: ChatMessage[] = [{ role: "user", content: "hi" }];

function model(
  s: FakeOpenAI,
  opts: Partial<ModelEndpointOptions> & {
    limiter?: SharedAdaptiveLimiter;
    events?: ModelEvent[];
    maxRetries?: number;
  } = {},
) {
  const { limiter, events, maxRetries, ...endpoint } = opts;
  return scheduleModel(
    openaiProvider.create({ model: "fake-model", baseURL: s.baseURL, apiKey: "sk-test", ...endpoint }),
    {
      endpoint: "ep",
      purpose: "agent",
      limiter,
      clock,
      policy: { requestTimeoutMs: 10_000, maxRetries: maxRetries ?? 3 },
      onEvent: (e) => events?.push(e),
    },
  );
}

async function failureOf(s: FakeOpenAI, opts: Parameters<typeof model>[1] = {}): Promise<ModelError> {
  const err = await model(s, opts)
    .complete({ messages: ask })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(ModelError);
  return err as ModelError;
}

describe("error bodies of any shape reach the error message", () => {
  const cases: [string, Reply, RegExp][] = [
    [
      "plain text",
      {
        kind: "raw",
        status: 400,
        headers: { "content-type": "text/plain" },
        text: "model 'x' is not routed by this gateway",
      },
      /400: model 'x' is not routed by this gateway$/,
    ],
    [
      "JSON with detail",
      {
        kind: "raw",
        status: 422,
        text: JSON.stringify({ detail: [{ loc: ["body", "messages"], msg: "field required" }] }),
      },
      /422: body.messages: field required$/,
    ],
    [
      "JSON with a string error",
      { kind: "raw", status: 403, text: JSON.stringify({ error: "key not allowed for this route" }) },
      /403: key not allowed for this route$/,
    ],
    [
      "JSON with message",
      { kind: "raw", status: 404, text: JSON.stringify({ message: "no such deployment", code: "E404" }) },
      /404: no such deployment$/,
    ],
    [
      "JSON without any message",
      { kind: "raw", status: 400, text: JSON.stringify({ ok: false, code: 17 }) },
      /400: \{"ok":false,"code":17\}$/,
    ],
    [
      "HTML from a proxy",
      {
        kind: "raw",
        status: 401,
        headers: { "content-type": "text/html" },
        text: "<html><head><title>401 Authorization Required</title></head><body><center><h1>401 Authorization Required</h1></center><hr><center>nginx</center></body></html>",
      },
      /401: 401 Authorization Required nginx$/,
    ],
    ["an empty body", { kind: "raw", status: 400, text: "" }, /400: \(empty body\)$/],
  ];
  for (const [label, reply, expected] of cases) {
    it(`${label}: not retried, message from the body`, async () => {
      const s = await serve(() => reply);
      const err = await failureOf(s);
      expect(err.message).toMatch(expected);
      expect(err.message).not.toContain("status code (no body)");
      expect(err.retryable).toBe(false);
      expect(err.deterministic).toBe(true);
      expect(s.requests).toHaveLength(1);
    });
  }

  it("a 502 HTML page is retried and its title kept; a 'Gateway Timeout' body is not mistaken for a client timeout", async () => {
    const page = (title: string) =>
      `<!DOCTYPE html><html><head><title>${title}</title><style>p{}</style></head><body><p>${title}</p></body></html>`;
    const s = await serve((i) => ({
      kind: "raw",
      status: i === 0 ? 502 : 504,
      headers: { "content-type": "text/html; charset=utf-8" },
      text: page(i === 0 ? "502 Bad Gateway" : "504 Gateway Timeout"),
    }));
    const events: ModelEvent[] = [];
    const err = await failureOf(s, { events, maxRetries: 1 });
    expect(err.retryable).toBe(true);
    expect(err.deterministic).toBe(false);
    expect(err.message).toContain("504: 504 Gateway Timeout");
    const retry = events.find((e) => e.kind === "retry")!;
    expect(retry).toMatchObject({ status: 502, reason: "502: 502 Bad Gateway" });
    expect(describeModelEvent(retry)).toMatch(/status 502\) in \d+ ms: 502: 502 Bad Gateway/);
  });

  it("a long body is truncated, and OpenRouter's upstream words (metadata.raw) are kept", async () => {
    expect(describeErrorBody("x".repeat(5000)).length).toBeLessThan(700);
    expect(describeErrorBody("x".repeat(5000))).toMatch(/… \(4400 more characters\)$/);
    const body = JSON.stringify({
      error: { message: "Provider returned error", code: 400, metadata: { raw: "context length exceeded" } },
    });
    expect(describeErrorBody(body)).toBe("Provider returned error (context length exceeded)");
  });

  it("a message beats a bare error string; HTML inside JSON becomes title and text; validation details keep loc and msg", () => {
    expect(
      describeErrorBody(
        JSON.stringify({ error: "TypeError", message: "Cannot read properties of undefined (reading 'content')" }),
      ),
    ).toBe("Cannot read properties of undefined (reading 'content')");
    const page =
      "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>The upstream did not answer.</p></body></html>";
    expect(describeErrorBody(JSON.stringify({ "html-message": page }))).toBe(
      "502 Bad Gateway: Bad Gateway The upstream did not answer.",
    );
    expect(describeErrorBody(JSON.stringify({ error: page }))).toBe(
      "502 Bad Gateway: Bad Gateway The upstream did not answer.",
    );
    const detail = {
      detail: [
        { loc: ["body", "messages", 0, "content"], msg: "field required", type: "value_error.missing" },
        { loc: ["body", "temperature"], msg: "ensure this value is less than or equal to 2", type: "value_error" },
      ],
    };
    expect(describeErrorBody(JSON.stringify(detail))).toBe(
      "body.messages.0.content: field required; body.temperature: ensure this value is less than or equal to 2",
    );
    expect(describeErrorBody(JSON.stringify({ error: "Bad Request" }))).toBe("Bad Request");
  });
});

describe("errors inside a stream", () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "c",
    object: "chat.completion.chunk",
    created: 1,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  it("an in-stream rate-limit error counts as a 429 for the limiter and is retried", async () => {
    const s = await serve((i) =>
      i === 0
        ? {
            kind: "sse",
            chunks: [
              chunk({ role: "assistant", content: "Hel" }),
              { error: { code: 429, message: "Rate limit exceeded: upstream busy" } },
            ],
            done: false,
          }
        : text("fine"),
    );
    const limiter = SharedAdaptiveLimiter.create(8);
    const events: ModelEvent[] = [];
    const res = await model(s, { stream: true, limiter, events }).complete({ messages: ask });
    expect(res.message.content).toBe("fine");
    expect(s.requests).toHaveLength(2);
    const retry = events.find((e) => e.kind === "retry");
    expect(retry).toMatchObject({ status: 429 });
    expect(retry && retry.kind === "retry" && retry.reason).toMatch(
      /429 rate limited \(in stream\): Rate limit exceeded/,
    );
    expect(limiter.counts().rate_limited).toBe(1);
    expect(limiter.limit).toBe(4);
    expect(events.some((e) => e.kind === "limit" && e.to === 4)).toBe(true);
  });

  it("a rate limit named only by its type (no code) is a 429 too; another in-stream error is retried without halving the limit", async () => {
    const s = await serve((i) =>
      i === 0
        ? { kind: "sse", chunks: [{ error: { type: "rate_limit_exceeded", message: "slow down" } }] }
        : i === 1
          ? { kind: "sse", chunks: [chunk({ content: "x" }), { error: { code: 502, message: "upstream closed" } }] }
          : text("ok"),
    );
    const limiter = SharedAdaptiveLimiter.create(8, { decreaseWindowMs: 0 });
    const events: ModelEvent[] = [];
    await model(s, { stream: true, limiter, events }).complete({ messages: ask });
    const retries = events.filter((e): e is Extract<ModelEvent, { kind: "retry" }> => e.kind === "retry");
    expect(retries.map((r) => r.status)).toEqual([429, 502]);
    expect(retries[1]!.reason).toBe("stream error 502: upstream closed");
    expect(limiter.counts().rate_limited).toBe(1);
  });
});

describe("token usage details", () => {
  it("keeps cached and reasoning tokens per call (streaming and not) and sums them", async () => {
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 40,
      prompt_tokens_details: { cached_tokens: 64 },
      completion_tokens_details: { reasoning_tokens: 30 },
    };
    const s = await serve(() => completion({ content: "ok", usage }));
    const plain = await model(s).complete({ messages: ask });
    const streamed = await model(s, { stream: true }).complete({ messages: ask });
    for (const r of [plain, streamed]) {
      expect(r.usage).toEqual({
        prompt_tokens: 100,
        completion_tokens: 40,
        total_tokens: 140,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 30 },
      });
      expect(r.usageMissing).toBeUndefined();
    }
    expect(s.requests[1]!.body.stream_options).toEqual({ include_usage: true });
    const sum = emptyUsage();
    addUsage(sum, plain.usage);
    addUsage(sum, { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 });
    addUsage(sum, streamed.usage);
    expect(sum).toEqual({
      prompt_tokens: 205,
      completion_tokens: 85,
      total_tokens: 290,
      prompt_tokens_details: { cached_tokens: 128 },
      completion_tokens_details: { reasoning_tokens: 60 },
    });
    const none = emptyUsage();
    addUsage(none, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
    expect(none).toEqual({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
  });

  it("a reply without usage is marked and reported once per scheduled model, streaming too", async () => {
    const s = await serve(() => completion({ content: "ok", usage: null }));
    for (const stream of [false, true]) {
      const events: ModelEvent[] = [];
      const m = model(s, { stream, events });
      const r = await m.complete({ messages: ask });
      await m.complete({ messages: ask });
      expect(r.usageMissing).toBe(true);
      expect(r.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
      expect(events.filter((e) => e.kind === "no_usage")).toHaveLength(1);
      expect(describeModelEvent(events[0]!)).toMatch(/sends no token usage/);
    }
    const withUsage: ModelEvent[] = [];
    const s2 = await serve(() => text("ok"));
    await model(s2, { events: withUsage }).complete({ messages: ask });
    expect(withUsage).toEqual([]);
  });
});

describe("the run's endpoints (runEndpoints)", () => {
  it("headers, key and provider routing reach a same-host approver or judge, not one on another host; reasoning only on agent calls", async () => {
    const { resolveRunConfig } = await import("../src/config/run_config.js");
    const { runEndpoints } = await import("../src/models/factory.js");
    process.env.HB_GW = "checked-at-start";
    const config = resolveRunConfig({
      dataset: "d.jsonl",
      model: "m",
      base_url: "https://u:p@openrouter.ai/api/v1",
      api_key: "sk-main-key",
      headers: { "X-Gw": "${HB_GW}", "X-Team": "all" },
      approval_headers: { "X-Team": "safety" },
      judge_base_url: "http://127.0.0.1:9/v1",
      judge_headers: { "X-Judge": "1" },
      providers_allowed: ["a"],
      provider_sort: "price",
    });
    delete process.env.HB_GW;
    const eps = runEndpoints(config, { HB_GW: "gw-value" });
    expect(eps.agent.key).toBe("https://openrouter.ai/api/v1#m");
    expect(eps.agent.options).toMatchObject({
      reasoningEffort: "medium",
      headers: { "X-Gw": "gw-value", "X-Team": "all" },
      providerRouting: { only: ["a"], sort: "price" },
    });
    expect(eps.approver!.options).toMatchObject({
      apiKey: "sk-main-key",
      headers: { "X-Gw": "gw-value", "X-Team": "safety" },
      providerRouting: { only: ["a"], sort: "price" },
    });
    expect(eps.approver!.options.reasoningEffort).toBeUndefined();
    expect(eps.judge!.options.apiKey).toBeUndefined();
    expect(eps.judge!.options.headers).toEqual({ "X-Judge": "1" });
    expect(eps.judge!.options.providerRouting).toBeUndefined();
    expect(runEndpoints({ ...config, reasoning_effort: "none" }, { HB_GW: "x" }).agent.options.reasoningEffort).toBe(
      "none",
    );
    expect(() => runEndpoints(config, {})).toThrow("environment variable HB_GW is not set");
  });

  it("credentials in the base URL are Basic auth on the wire, not part of the URL; a header's Authorization wins", async () => {
    const s = await serve(() => text("ok"));
    const withCreds = s.baseURL.replace("http://", "http://al%40ice:p%3Aw@");
    await model(s, { baseURL: withCreds }).complete({ messages: ask });
    await model(s, { baseURL: withCreds, headers: { authorization: "Token from-header" } }).complete({ messages: ask });
    expect(s.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from("al@ice:p:w").toString("base64")}`);
    expect(s.requests[0]!.path).toBe("/v1/chat/completions");
    expect(s.requests[1]!.headers.authorization).toBe("Token from-header");
  });
});
