import { afterEach, describe, expect, it } from "vitest";
/**
 * The `openai` provider over real HTTP on 127.0.0.1 (one attempt each, failures classified), under the
 * scheduler's retry layer. Back-off sleeps go through a clock that records them instead of sleeping.
 */
import { SharedAdaptiveLimiter } from "../src/scheduler/adaptive_limit.js";
import {
  buildRequestBody,
  classifyFailure,
  openaiProvider,
  parseCompletion,
  parseRetryAfter,
  serializeRequestBody,
} from "../src/models/openai_compatible.js";
import { ModelAbortError, ProviderError, type ModelEndpointOptions } from "../src/models/provider.js";
import { scheduleModel, type ModelEvent } from "../src/scheduler/scheduler.js";
import { systemClock, type Clock, type RetryPolicy } from "../src/scheduler/retry.js";
import { extractReasoning } from "../src/models/reasoning.js";
import { addUsage, emptyUsage, ModelError, type ChatMessage } from "../src/core/chat.js";
import { completion, httpError, startFakeOpenAI, text, type FakeOpenAI, type Reply } from "./helpers/fake_openai.js";

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

async function serve(handler: (i: number, body: any) => Reply | Promise<Reply>): Promise<FakeOpenAI> {
  const s = await startFakeOpenAI((r) => handler(r.index, r.body));
  servers.push(s);
  return s;
}

/** Real time, but a back-off sleep is only recorded (and still honours an abort). */
function recordingClock(): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    ...systemClock,
    sleeps,
    async sleep(ms, signal) {
      sleeps.push(ms);
      signal?.throwIfAborted();
    },
  };
}

interface ModelOptions extends Partial<ModelEndpointOptions> {
  policy?: Partial<RetryPolicy>;
  limiter?: SharedAdaptiveLimiter;
  clock?: Clock;
  onRetry?: (e: Extract<ModelEvent, { kind: "retry" }>) => void;
}

/** The openai provider for `baseURL`, scheduled like every model call of a run. */
function scheduledOpenAI(baseURL: string, extra: ModelOptions = {}) {
  const { policy, limiter, clock, onRetry, ...endpoint } = extra;
  return scheduleModel(openaiProvider.create({ model: "m", baseURL, maxSockets: limiter?.max, ...endpoint }), {
    endpoint: baseURL,
    purpose: "agent",
    limiter,
    clock: clock ?? recordingClock(),
    policy: { requestTimeoutMs: 5000, ...policy },
    onEvent: (e) => e.kind === "retry" && onRetry?.(e),
  });
}

function model(s: FakeOpenAI, extra: ModelOptions = {}) {
  return scheduledOpenAI(s.baseURL, { model: "fake-model", apiKey: "sk-test", ...extra });
}

type RetryInfo = Extract<ModelEvent, { kind: "retry" }>;

const ask: ChatMessage[] = [
  { role: "system", content: "sys" },
  { role: "user", content: "hi" },
];

const tools = [
  {
    type: "function" as const,
    function: {
      name: "terminal",
      description: "run",
      parameters: { type: "object", properties: { command: { type: "string" } } },
    },
  },
];

describe("OpenAI chat model: responses", () => {
  it("returns a plain completion with usage and sends the request fields", async () => {
    const s = await serve(() =>
      completion({ content: "hello there", usage: { prompt_tokens: 12, completion_tokens: 3 } }),
    );
    const res = await model(s, {
      maxTokens: 100,
      temperature: 0.3,
      reasoningEffort: "high",
      extraBody: { top_k: 5 },
    }).complete({
      messages: ask,
      tools: [],
    });
    expect(res.message).toEqual({ role: "assistant", content: "hello there" });
    expect(res.finishReason).toBe("stop");
    expect(res.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    expect(s.requests).toHaveLength(1);
    const req = s.requests[0]!;
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer sk-test");
    expect(req.body).toMatchObject({
      model: "fake-model",
      max_tokens: 100,
      temperature: 0.3,
      reasoning_effort: "high",
      top_k: 5,
    });
    expect(req.body.tools).toBeUndefined();
    expect(req.body.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "hi" },
    ]);
  });

  it("maps history: tool messages keep tool_call_id, reasoning is not sent unless asked", async () => {
    const s = await serve(() => text("ok"));
    const history: ChatMessage[] = [
      ...ask,
      {
        role: "assistant",
        content: null,
        reasoning: "secret thoughts",
        tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: '{"command":"ls"}' } }],
      },
      { role: "tool", tool_call_id: "c1", name: "terminal", content: '{"output":"a"}' },
    ];
    await model(s).complete({ messages: history, tools });
    await model(s, { sendReasoningBack: true }).complete({ messages: history, tools });
    const [plain, withReasoning] = s.requests.map((r) => r.body);
    expect(plain.tools).toEqual(tools);
    expect(plain.messages[2]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: '{"command":"ls"}' } }],
    });
    expect(plain.messages[3]).toEqual({ role: "tool", tool_call_id: "c1", content: '{"output":"a"}' });
    expect(JSON.stringify(plain)).not.toContain("secret thoughts");
    expect(withReasoning.messages[2].reasoning_content).toBe("secret thoughts");
  });

  it("sends reasoning effort as extra_body.reasoning to OpenRouter-style URLs", () => {
    const body = buildRequestBody(
      {
        model: "m",
        baseURL: "https://openrouter.ai/api/v1",
        reasoningEffort: "low",
        extraBody: { provider: { only: ["x"] } },
      },
      { messages: ask },
    );
    expect(body.reasoning).toEqual({ enabled: true, effort: "low" });
    expect(body.reasoning_effort).toBeUndefined();
    expect(body.provider).toEqual({ only: ["x"] });
    const off = buildRequestBody(
      { model: "m", baseURL: "https://openrouter.ai/api/v1", reasoningEffort: "none" },
      { messages: ask },
    );
    expect(off.reasoning).toEqual({ effort: "none" });
  });

  for (const [label, calls] of [
    ["single", [{ name: "terminal", arguments: { command: "ls -la" }, id: "call_a" }]],
    [
      "parallel",
      [
        { name: "terminal", arguments: { command: "pwd" }, id: "call_a" },
        { name: "read_file", arguments: '{"path": "/etc/hostname"', id: "call_b" }, // bad JSON kept raw
        { name: "terminal", arguments: { command: "echo 'é ü'" }, id: "call_c" },
      ],
    ],
  ] as const) {
    it(`${label} tool calls: streaming and non-streaming give identical responses`, async () => {
      const s = await serve(() =>
        completion({
          content: "Let me look.",
          toolCalls: [...calls],
          reasoning: "plan it",
          usage: { prompt_tokens: 20, completion_tokens: 7 },
        }),
      );
      const plain = await model(s).complete({ messages: ask, tools });
      const streamed = await model(s, { stream: true }).complete({ messages: ask, tools });
      expect(s.requests[1]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      expect(s.requests[0]!.body.stream).toBeUndefined();
      expect(streamed).toEqual(plain);
      expect(plain.finishReason).toBe("tool_calls");
      expect(plain.usage).toEqual({ prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 });
      expect(plain.message.content).toBe("Let me look.");
      expect(plain.message.reasoning).toBe("plan it");
      expect(plain.message.tool_calls).toEqual(
        calls.map((c) => ({
          id: c.id,
          type: "function",
          function: {
            name: c.name,
            arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
          },
        })),
      );
    });
  }

  for (const field of ["reasoning_content", "reasoning"] as const) {
    it(`captures reasoning from the ${field} field, streaming and not`, async () => {
      const s = await serve(() =>
        completion({ content: "42", reasoning: `thinking via ${field}`, reasoningField: field }),
      );
      for (const stream of [false, true]) {
        const res = await model(s, { stream }).complete({ messages: ask });
        expect(res.message).toEqual({ role: "assistant", content: "42", reasoning: `thinking via ${field}` });
      }
    });
  }

  it("moves <think> blocks out of the content (also split across stream chunks), deduplicated", async () => {
    const s = await serve(() =>
      completion({ content: "<think>step one\nstep two</think>\n\nThe answer is 4.", reasoning: "step one\nstep two" }),
    );
    for (const stream of [false, true]) {
      const res = await model(s, { stream }).complete({ messages: ask });
      expect(res.message.content).toBe("The answer is 4.");
      expect(res.message.reasoning).toBe("step one\nstep two");
    }
  });

  it("returns an empty-choices response as a retryable failure, then succeeds", async () => {
    const s = await serve((i) =>
      i === 0 ? { kind: "json", body: { id: "x", object: "chat.completion", choices: [] } } : text("fine"),
    );
    const retries: RetryInfo[] = [];
    const res = await model(s, { onRetry: (r) => retries.push(r) }).complete({ messages: ask });
    expect(res.message.content).toBe("fine");
    expect(retries).toHaveLength(1);
    expect(retries[0]!.reason).toMatch(/empty choices/);
  });

  it("normalises missing usage to zeros and usage sums over calls", async () => {
    const s = await serve((i) => {
      if (i === 0) {
        const r = completion({ content: "a" }) as any;
        delete r.body.usage;
        return r;
      }
      return completion({ content: "b", usage: { prompt_tokens: 7, completion_tokens: 2 } });
    });
    const m = model(s);
    const total = emptyUsage();
    const first = await m.complete({ messages: ask });
    expect(first.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    addUsage(total, first.usage);
    addUsage(total, (await m.complete({ messages: ask })).usage);
    addUsage(total, (await m.complete({ messages: ask })).usage);
    expect(total).toEqual({ prompt_tokens: 14, completion_tokens: 4, total_tokens: 18 });
  });
});

describe("serializeRequestBody (cached message and tool JSON)", () => {
  const base: ModelEndpointOptions = { model: "m", baseURL: "http://127.0.0.1:1/v1" };
  const history: ChatMessage[] = [
    { role: "system", content: 'sys \u2028 "quoted"' },
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: null,
      reasoning: "thoughts",
      tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: '{"command":"ls"}' } }],
    },
    { role: "tool", tool_call_id: "c1", name: "terminal", content: '{"output":"a"}' },
    { role: "assistant", content: "done" },
  ];
  const variants: Array<[string, ModelEndpointOptions, Parameters<typeof serializeRequestBody>[1]]> = [
    ["plain", base, { messages: history, tools }],
    ["no tools, empty tools", base, { messages: history, tools: [] }],
    [
      "every option",
      {
        ...base,
        maxTokens: 9,
        temperature: 0,
        reasoningEffort: "low",
        stream: true,
        providerRouting: { only: ["a"] },
        extraBody: { top_k: 5, model: "other" },
      },
      { messages: history, tools },
    ],
    ["reasoning sent back", { ...base, sendReasoningBack: true }, { messages: history, tools }],
    [
      "response format",
      base,
      {
        messages: history,
        responseFormat: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } },
      },
    ],
    [
      "extra body replaces messages and tools",
      { ...base, extraBody: { messages: [], tools: "none" } },
      { messages: history, tools },
    ],
  ];
  it.each(variants)("is the same text as JSON.stringify(buildRequestBody): %s", (_name, opts, req) => {
    // Twice: the second call reads the caches the first one filled.
    expect(serializeRequestBody(opts, req)).toBe(JSON.stringify(buildRequestBody(opts, req)));
    expect(serializeRequestBody(opts, req)).toBe(JSON.stringify(buildRequestBody(opts, req)));
  });

  it("a grown history and the other reasoning setting each get their own right text", () => {
    const first = serializeRequestBody(base, { messages: history.slice(0, 2), tools });
    const grown = [...history.slice(0, 2), ...history.slice(2)];
    expect(JSON.parse(first).messages).toHaveLength(2);
    expect(serializeRequestBody(base, { messages: grown, tools })).toBe(
      JSON.stringify(buildRequestBody(base, { messages: grown, tools })),
    );
    const back = JSON.parse(serializeRequestBody({ ...base, sendReasoningBack: true }, { messages: grown }));
    expect(back.messages[2].reasoning_content).toBe("thoughts");
    expect(JSON.parse(serializeRequestBody(base, { messages: grown })).messages[2].reasoning_content).toBeUndefined();
  });
});

describe("OpenAI chat model: retries and failures", () => {
  it("honours retry-after on 429 before succeeding", async () => {
    const s = await serve((i) => (i === 0 ? httpError(429, "slow down", { "retry-after": "1" }) : text("after wait")));
    const retries: RetryInfo[] = [];
    const clock = recordingClock();
    const res = await model(s, { clock, onRetry: (r) => retries.push(r) }).complete({ messages: ask });
    expect(res.message.content).toBe("after wait");
    expect(s.requests).toHaveLength(2);
    expect(clock.sleeps).toEqual([1000]);
    expect(retries).toEqual([
      expect.objectContaining({ attempt: 1, status: 429, delayMs: 1000, reason: "429 rate limited: slow down" }),
    ]);
  });

  it("classifies failures for the retry layer: 429 (with retry-after), 5xx and 408 retryable, other 4xx not", async () => {
    const s = await serve(
      (r) =>
        [
          httpError(429, "slow", { "retry-after-ms": "250" }),
          httpError(503, "busy"),
          httpError(408, "late"),
          httpError(404, "no such model"),
        ][r]!,
    );
    const once = openaiProvider.create({ model: "m", baseURL: s.baseURL });
    const failures: ProviderError[] = [];
    for (let i = 0; i < 4; i++) failures.push(await once.complete({ messages: ask }).catch((e) => e));
    expect(failures.map((f) => [f.status, f.retryable, f.rateLimited, f.retryAfterMs])).toEqual([
      [429, true, true, 250],
      [503, true, false, undefined],
      [408, true, false, undefined],
      [404, false, false, undefined],
    ]);
    expect(failures[3]!.message).toBe("model endpoint returned 404: no such model");
    expect(s.requests).toHaveLength(4);
    expect(classifyFailure(new SyntaxError("Unexpected token")).retryable).toBe(true);
    expect(classifyFailure(new RangeError("bug")).retryable).toBe(false);
  });

  it("parses retry-after-ms, seconds and HTTP dates", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter({ "retry-after-ms": "250", "retry-after": "9" }, now)).toBe(250);
    expect(parseRetryAfter({ "retry-after": "2.5" }, now)).toBe(2500);
    expect(parseRetryAfter({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }, now)).toBe(3000);
    expect(parseRetryAfter({ "retry-after": ["4", "5"] }, now)).toBe(4000);
    expect(parseRetryAfter({ "retry-after": "soon" }, now)).toBeUndefined();
    expect(parseRetryAfter({}, now)).toBeUndefined();
  });

  it.each([false, true])("retries 500s with backoff, then succeeds (stream: %s)", async (stream) => {
    const s = await serve((i) => (i < 2 ? httpError(500, "boom") : text("recovered")));
    const retries: RetryInfo[] = [];
    const res = await model(s, { stream, onRetry: (r) => retries.push(r) }).complete({ messages: ask });
    expect(res.message.content).toBe("recovered");
    expect(s.requests).toHaveLength(3);
    expect(retries.map((r) => [r.attempt, r.status])).toEqual([
      [1, 500],
      [2, 500],
    ]);
    // full jitter under the default back-off: up to 1 s, then up to 2 s (recorded, not slept)
    expect(retries[0]!.delayMs).toBeLessThanOrEqual(1000);
    expect(retries[1]!.delayMs).toBeLessThanOrEqual(2000);
  });

  it("fails at once on a 400 with the server's message", async () => {
    const s = await serve(() => httpError(400, "context length exceeded"));
    const err = await model(s)
      .complete({ messages: ask })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.status).toBe(400);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain("context length exceeded");
    expect(s.requests).toHaveLength(1);
  });

  it("retries a connection reset", async () => {
    const s = await serve((i) => (i === 0 ? { kind: "reset" } : text("reconnected")));
    const retries: RetryInfo[] = [];
    const res = await model(s, { onRetry: (r) => retries.push(r) }).complete({ messages: ask });
    expect(res.message.content).toBe("reconnected");
    expect(retries[0]!.reason).toMatch(/connection/i);
  });

  it("retries a request that hangs past the timeout, then gives up with a retryable ModelError", async () => {
    const s = await serve(() => ({ kind: "hang" }));
    const retries: RetryInfo[] = [];
    const err = await model(s, { policy: { requestTimeoutMs: 150, maxRetries: 2 }, onRetry: (r) => retries.push(r) })
      .complete({ messages: ask })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.retryable).toBe(true);
    expect(err.message).toBe("model request failed after 2 retries: request timed out after 150 ms");
    // (how many of the three attempts reached the server before their deadline depends on the machine's load)
    expect(retries.map((r) => r.reason)).toEqual(["request timed out after 150 ms", "request timed out after 150 ms"]);
  });

  it("times out a stream that stalls after its headers", async () => {
    let n = 0;
    // A raw server that sends headers and one chunk, then stalls: the deadline must cover the body too.
    const { createServer } = await import("node:http");
    const stalled = createServer((_req, res) => {
      n++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(
        `data: ${JSON.stringify({ id: "s", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "par" } }] })}\n\n`,
      );
    });
    await new Promise<void>((r) => stalled.listen(0, "127.0.0.1", r));
    const port = (stalled.address() as import("node:net").AddressInfo).port;
    try {
      const m = scheduledOpenAI(`http://127.0.0.1:${port}/v1`, {
        stream: true,
        policy: { requestTimeoutMs: 1000, maxRetries: 0 },
      });
      const err = await m.complete({ messages: ask }).catch((e) => e);
      expect(err).toBeInstanceOf(ModelError);
      expect(err.message).toBe("model request failed after 0 retries: request timed out after 1000 ms");
      expect(n).toBe(1);
    } finally {
      stalled.closeAllConnections();
      await new Promise((r) => stalled.close(r));
    }
  });

  it("retries a stream cut off before its finish_reason", async () => {
    const { createServer } = await import("node:http");
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "s", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    let n = 0;
    const cut = createServer((_req, res) => {
      n++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ role: "assistant", content: "hal" }));
      if (n === 1) return void res.end(); // closed cleanly, no finish_reason, no [DONE]
      res.write(chunk({ content: "f" }, "stop"));
      res.end("data: [DONE]\n\n");
    });
    await new Promise<void>((r) => cut.listen(0, "127.0.0.1", r));
    const port = (cut.address() as import("node:net").AddressInfo).port;
    try {
      const retries: RetryInfo[] = [];
      const m = scheduledOpenAI(`http://127.0.0.1:${port}/v1`, { stream: true, onRetry: (r) => retries.push(r) });
      const res = await m.complete({ messages: ask });
      expect(res.message.content).toBe("half");
      expect(res.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
      expect(n).toBe(2);
      expect(retries[0]!.reason).toMatch(/truncated/);
    } finally {
      cut.closeAllConnections();
      await new Promise((r) => cut.close(r));
    }
  });

  it("stops at once when aborted during a backoff sleep", async () => {
    const s = await serve(() => httpError(503, "overloaded", { "retry-after": "30" }));
    const ac = new AbortController();
    // The real clock: a 30 s back-off that only the abort can end (the test's own timeout is the guard).
    const m = model(s, { clock: systemClock, onRetry: () => setImmediate(() => ac.abort()) });
    const err = await m.complete({ messages: ask, signal: ac.signal }).catch((e) => e);
    expect(err).toBeInstanceOf(ModelAbortError);
    expect(err).not.toBeInstanceOf(ModelError);
    expect(s.requests).toHaveLength(1);
  });

  it("stops at once when aborted during a request", async () => {
    const s = await serve(() => ({ kind: "hang" }));
    const ac = new AbortController();
    s.setHandler(() => {
      ac.abort(); // the request has reached the server and will never be answered
      return { kind: "hang" };
    });
    const err = await model(s)
      .complete({ messages: ask, signal: ac.signal })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ModelAbortError);
    expect(s.requests).toHaveLength(1);
  });

  it("rejects an already-aborted signal without a request", async () => {
    const s = await serve(() => text("never"));
    const err = await model(s)
      .complete({ messages: ask, signal: AbortSignal.abort() })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ModelAbortError);
    expect(s.requests).toHaveLength(0);
  });
});

describe("OpenAI chat model with the run-wide limiter", () => {
  it("never has more requests in flight at the server than the limit", async () => {
    let live = 0;
    let peak = 0;
    // Held in threes (then a moment more): the peak does not depend on the machine's speed, and a fourth
    // request let through would arrive while three are held.
    let held: (() => void)[] = [];
    const s = await serve(async () => {
      live++;
      peak = Math.max(peak, live);
      await new Promise<void>((resolve) => {
        held.push(resolve);
        if (held.length === 3) {
          const go = held;
          held = [];
          setTimeout(() => go.forEach((r) => r()), 20);
        }
      });
      live--;
      return text("ok");
    });
    const limiter = SharedAdaptiveLimiter.create(3);
    const m = model(s, { limiter });
    const results = await Promise.all(Array.from({ length: 12 }, () => m.complete({ messages: ask })));
    expect(results.every((r) => r.message.content === "ok")).toBe(true);
    expect(s.requests).toHaveLength(12);
    expect(peak).toBe(3);
    expect(limiter.counts()).toMatchObject({ in_flight: 0, peak_in_flight: 3, calls: 12 });
  });
});

describe("extractReasoning", () => {
  it("joins the fields in the original's order, skipping exact duplicates; inline tags only without a field", () => {
    const r = extractReasoning({
      content: "<think>a</think>text<think>b</think>",
      reasoning_content: "a",
      reasoning: "c",
      reasoning_details: [
        { type: "reasoning.text", text: "c" },
        { type: "reasoning.summary", summary: "d" },
      ],
    });
    expect(r).toEqual({ content: "text", reasoning: "c\n\na\n\nd", withoutDetails: "c\n\na" });
  });

  it("handles a dangling <think>, a lone </think> and content without reasoning", () => {
    expect(extractReasoning({ content: "<think>cut off mid-thou" })).toEqual({
      content: null,
      reasoning: "cut off mid-thou",
    });
    expect(extractReasoning({ content: "implicit start</think>\nAnswer" })).toEqual({
      content: "Answer",
      reasoning: "implicit start",
    });
    expect(extractReasoning({ content: "  plain  " })).toEqual({ content: "plain", reasoning: undefined });
    expect(extractReasoning({ content: null })).toEqual({ content: null, reasoning: undefined });
  });
});

describe("tool calls without an id", () => {
  it("keep an empty id for the agent loop to derive (the original's id from name + arguments), never a time-based one", () => {
    const body = {
      choices: [
        {
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{ type: "function", function: { name: "terminal", arguments: '{"command":"ls"}' } }],
          },
        },
      ],
    };
    const a = parseCompletion(body);
    expect(a.message.tool_calls).toEqual([
      { id: "", type: "function", function: { name: "terminal", arguments: '{"command":"ls"}' } },
    ]);
    expect(parseCompletion(body)).toEqual(a);
  });
});
