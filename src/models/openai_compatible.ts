/**
 * Provider `openai`: any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, vLLM, …) over our
 * keep-alive `node:http` transport. A plain (non-streaming) request goes out directly (direct_completion.ts:
 * the SDK's request, without its per-request work); a streaming one, one through an injected fetch, or one to
 * a base URL with a query string goes through the `openai` SDK, loaded on first use. One attempt per call:
 * the SDK's own retries are off (`maxRetries: 0`) and every failure is classified into a ProviderError for
 * the scheduler's retry layer.
 */
import type OpenAI from "openai";
import type { APIConnectionError, APIError } from "openai";
import { MAX_TIMER_MS } from "../core/abort.js";
import { completionsUrl, postCompletion, sdkRequestHeaders, transportFailure } from "./direct_completion.js";
import { findHttpStatusError, HttpStatusError, messageOfJson, withErrorBodies } from "./error_body.js";
import { createNodeHttpFetch } from "./http_fetch.js";
import { basicAuthorization, splitUrlCredentials } from "../core/url_credentials.js";
import { ProviderError, isOpenRouter, type ModelEndpointOptions, type ModelProvider } from "./provider.js";
import { extractReasoning } from "./reasoning.js";
import { RL_CAPTURE_FIELDS, samplingSent, StreamTokens, tokensOfCompletion } from "./token_capture.js";
import type { SamplingSent } from "../core/rl_tokens.js";
import {
  ModelError,
  type AssistantMessage,
  type ChatMessage,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type ToolCall,
  type Usage,
} from "../core/chat.js";

export { isOpenRouter };

/** Milliseconds asked by `retry-after-ms` or `retry-after` (seconds or an HTTP date); undefined if absent/bad. */
export function parseRetryAfter(
  headers: Headers | Record<string, string> | undefined,
  now = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const get = (name: string): string | null | undefined =>
    headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()]);
  const ms = get("retry-after-ms");
  if (ms != null && ms.trim() !== "") {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const ra = get("retry-after");
  if (ra == null || ra.trim() === "") return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs)) return secs >= 0 ? secs * 1000 : undefined;
  const date = Date.parse(ra);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Our messages in the API's shape. Assistant reasoning stays local unless `sendReasoningBack`. */
export function toApiMessages(messages: ChatMessage[], sendReasoningBack = false): Record<string, unknown>[] {
  return messages.map((m) => {
    switch (m.role) {
      case "system":
      case "user":
        return { role: m.role, content: m.content };
      case "tool":
        return { role: "tool", tool_call_id: m.tool_call_id, content: m.content };
      case "assistant": {
        const out: Record<string, unknown> = { role: "assistant" };
        const hasCalls = !!m.tool_calls?.length;
        out.content = m.content ?? (hasCalls ? null : "");
        if (hasCalls)
          out.tool_calls = m.tool_calls!.map((tc) => ({ id: tc.id, type: "function", function: { ...tc.function } }));
        if (sendReasoningBack && m.reasoning) out.reasoning_content = m.reasoning;
        return out;
      }
    }
  });
}

/** The JSON body of one chat-completions request. */
export function buildRequestBody(opts: ModelEndpointOptions, req: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: opts.model,
    messages: toApiMessages(req.messages, opts.sendReasoningBack),
  };
  if (req.tools?.length) body.tools = req.tools;
  if (opts.maxTokens !== undefined) body.max_tokens = opts.maxTokens;
  if (opts.temperature !== undefined) body.temperature = opts.temperature;
  if (opts.reasoningEffort) {
    if (isOpenRouter(opts.baseURL)) {
      body.reasoning =
        opts.reasoningEffort === "none" ? { effort: "none" } : { enabled: true, effort: opts.reasoningEffort };
    } else {
      body.reasoning_effort = opts.reasoningEffort;
    }
  }
  if (opts.providerRouting && Object.keys(opts.providerRouting).length) body.provider = { ...opts.providerRouting };
  if (opts.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  if (req.responseFormat) body.response_format = req.responseFormat;
  if (opts.rlCapture) Object.assign(body, RL_CAPTURE_FIELDS);
  if (opts.extraBody) Object.assign(body, opts.extraBody);
  return body;
}

/**
 * The JSON text of each message and tool list already sent, by object identity: a loop's history is sent again
 * with every turn, so each message is serialised once instead of once per turn. Messages are never changed after
 * they join a conversation (the loop builds a new object for every change), which is what makes this safe.
 * One cache per `sendReasoningBack` value, since that changes an assistant message's JSON.
 */
const messageJsonCache = [new WeakMap<ChatMessage, string>(), new WeakMap<ChatMessage, string>()] as const;
const toolsJsonCache = new WeakMap<readonly unknown[], string>();

function messageJson(m: ChatMessage, sendReasoningBack: boolean): string {
  const cache = messageJsonCache[sendReasoningBack ? 1 : 0];
  let json = cache.get(m);
  if (json === undefined) {
    json = JSON.stringify(toApiMessages([m], sendReasoningBack)[0]);
    cache.set(m, json);
  }
  return json;
}

function toolsJson(tools: readonly unknown[]): string {
  let json = toolsJsonCache.get(tools);
  if (json === undefined) {
    json = JSON.stringify(tools);
    toolsJsonCache.set(tools, json);
  }
  return json;
}

/**
 * `JSON.stringify(buildRequestBody(opts, req))` with the same keys in the same order, built from cached message
 * and tool JSON. An `extraBody` that sets `messages` or `tools` itself takes the plain path.
 */
export function serializeRequestBody(opts: ModelEndpointOptions, req: ChatRequest): string {
  if (opts.extraBody && ("messages" in opts.extraBody || "tools" in opts.extraBody))
    return JSON.stringify(buildRequestBody(opts, req));
  const {
    model,
    messages: _none,
    ...rest
  } = buildRequestBody(opts, { messages: [], responseFormat: req.responseFormat });
  const reasoningBack = !!opts.sendReasoningBack;
  let json = `{"model":${JSON.stringify(model)},"messages":[`;
  for (let i = 0; i < req.messages.length; i++) json += (i ? "," : "") + messageJson(req.messages[i]!, reasoningBack);
  json += "]";
  if (req.tools?.length) json += `,"tools":${toolsJson(req.tools)}`;
  const tail = JSON.stringify(rest);
  return tail === "{}" ? `${json}}` : `${json},${tail.slice(1)}`;
}

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/** The usage as reported; cached and reasoning tokens kept when given (also under their older names). */
export function normalizeUsage(u: unknown): Usage {
  const r = (u && typeof u === "object" ? u : {}) as Record<string, any>;
  const num = (v: unknown) => (finite(v) ? v : 0);
  const prompt = num(r.prompt_tokens);
  const completion = num(r.completion_tokens);
  const total = finite(r.total_tokens) ? r.total_tokens : prompt + completion;
  const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
  const cached = r.prompt_tokens_details?.cached_tokens ?? r.cached_tokens ?? r.prompt_cache_hit_tokens;
  if (finite(cached)) usage.prompt_tokens_details = { cached_tokens: cached };
  const reasoning = r.completion_tokens_details?.reasoning_tokens ?? r.reasoning_tokens;
  if (finite(reasoning)) usage.completion_tokens_details = { reasoning_tokens: reasoning };
  return usage;
}

/** True when a body's `usage` holds no token count at all (absent, null, or empty). */
export function usageMissing(u: unknown): boolean {
  if (!u || typeof u !== "object") return true;
  const r = u as Record<string, unknown>;
  return !finite(r.prompt_tokens) && !finite(r.completion_tokens) && !finite(r.total_tokens);
}

/** Usage fields present but not token counts (`prompt_tokens: -5`, `"12"`): they count as 0, and are named. */
export function invalidUsageFields(u: unknown): string[] {
  if (!u || typeof u !== "object") return [];
  const r = u as Record<string, any>;
  const fields: Array<[string, unknown]> = [
    ["prompt_tokens", r.prompt_tokens],
    ["completion_tokens", r.completion_tokens],
    ["total_tokens", r.total_tokens],
    ["prompt_tokens_details.cached_tokens", r.prompt_tokens_details?.cached_tokens],
    ["completion_tokens_details.reasoning_tokens", r.completion_tokens_details?.reasoning_tokens],
  ];
  return fields
    .filter(([, v]) => v !== undefined && v !== null && !finite(v))
    .map(([name, v]) => `${name}=${JSON.stringify(v)}`);
}

/** What a 2xx body that is not a chat completion is, in words a user recognises, with its first bytes. */
export function describeNonCompletion(body: unknown): string {
  if (typeof body === "string") {
    const text = body.trim();
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
    const start = JSON.stringify(text.replace(/\s+/g, " ").slice(0, 120));
    if (/^<(!doctype|html|head|body)/i.test(text))
      return `the endpoint answered with an HTML page${title ? ` ("${title}")` : ""}, not a chat completion: ${start}`;
    if (!text) return "the endpoint answered with an empty body, not a chat completion";
    return `the endpoint answered with text that is not JSON, not a chat completion: ${start}`;
  }
  if (body && typeof body === "object") {
    const keys = Object.keys(body as object).slice(0, 8);
    if (!("choices" in (body as object)))
      return `the endpoint answered with JSON that is not a chat completion (no "choices"; keys: ${keys.join(", ") || "none"})`;
  }
  return "model returned empty choices";
}

function toolCallsOf(raw: unknown): ToolCall[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  return raw.map((tc: any) => ({
    // A missing id stays empty: the agent loop derives the original's id from the call (name + arguments).
    id: typeof tc?.id === "string" ? tc.id : "",
    type: "function" as const,
    function: {
      name: typeof tc?.function?.name === "string" ? tc.function.name : "",
      // Kept raw: the loop validates the JSON and tells the model when it is bad.
      arguments:
        typeof tc?.function?.arguments === "string"
          ? tc.function.arguments
          : tc?.function?.arguments == null
            ? ""
            : JSON.stringify(tc.function.arguments),
    },
  }));
}

function assistantFrom(raw: Record<string, unknown>): AssistantMessage {
  const { content, reasoning, withoutDetails } = extractReasoning(raw);
  const message: AssistantMessage = { role: "assistant", content };
  const calls = toolCallsOf(raw.tool_calls);
  if (calls) message.tool_calls = calls;
  if (reasoning) message.reasoning = reasoning;
  if (withoutDetails !== undefined) message.reasoning_without_details = withoutDetails;
  return message;
}

function finishOf(raw: unknown, message: AssistantMessage): string {
  if (typeof raw === "string" && raw) return raw;
  return message.tool_calls?.length ? "tool_calls" : "stop";
}

/** A ChatResponse from a non-streaming completion body; with `capture`, the engine's tokens too. */
export function parseCompletion(body: unknown, capture?: SamplingSent): ChatResponse {
  const b = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
  const choices = b.choices;
  if (!Array.isArray(choices) || choices.length === 0 || !choices[0] || typeof choices[0] !== "object") {
    throw new ModelError(describeNonCompletion(body), undefined, true);
  }
  const choice = choices[0] as Record<string, unknown>;
  const rawMsg = (choice.message && typeof choice.message === "object" ? choice.message : {}) as Record<
    string,
    unknown
  >;
  const message = assistantFrom(rawMsg);
  const response: ChatResponse = {
    message,
    finishReason: finishOf(choice.finish_reason, message),
    usage: normalizeUsage(b.usage),
  };
  if (usageMissing(b.usage)) response.usageMissing = true;
  const invalid = invalidUsageFields(b.usage);
  if (invalid.length) response.usageInvalid = invalid;
  if (typeof rawMsg.refusal === "string" && rawMsg.refusal) response.refusal = rawMsg.refusal;
  if (typeof b.model === "string" && b.model) response.model = b.model;
  if (capture) response.tokens = tokensOfCompletion(b, choice, capture);
  return response;
}

/** Accumulates stream chunks into the same ChatResponse a non-streaming call gives. */
export class StreamAssembler {
  private content = "";
  private reasoningContent = "";
  private reasoning = "";
  private readonly details: unknown[] = [];
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();
  private finish: string | undefined;
  private usage: unknown;
  private model: string | undefined;
  private sawChoice = false;
  private readonly tokens: StreamTokens | undefined;

  /** With `capture` (the sampling parameters sent), the engine's token ids and logprobs are collected too. */
  constructor(private readonly capture?: SamplingSent) {
    if (capture) this.tokens = new StreamTokens();
  }

  push(chunk: unknown): void {
    const c = (chunk && typeof chunk === "object" ? chunk : {}) as Record<string, any>;
    if (c.usage) this.usage = c.usage;
    if (typeof c.model === "string" && c.model) this.model = c.model;
    const choice = Array.isArray(c.choices) ? c.choices[0] : undefined;
    this.tokens?.push(c, choice && typeof choice === "object" ? choice : undefined);
    if (!choice || typeof choice !== "object") return;
    this.sawChoice = true;
    if (typeof choice.finish_reason === "string" && choice.finish_reason) this.finish = choice.finish_reason;
    const d = choice.delta;
    if (!d || typeof d !== "object") return;
    if (typeof d.content === "string") this.content += d.content;
    if (typeof d.reasoning_content === "string") this.reasoningContent += d.reasoning_content;
    if (typeof d.reasoning === "string") this.reasoning += d.reasoning;
    if (Array.isArray(d.reasoning_details)) this.details.push(...d.reasoning_details);
    if (Array.isArray(d.tool_calls)) {
      for (const [pos, tc] of d.tool_calls.entries()) {
        const index = typeof tc?.index === "number" ? tc.index : pos;
        let acc = this.calls.get(index);
        if (!acc) {
          acc = { id: "", name: "", arguments: "" };
          this.calls.set(index, acc);
        }
        if (typeof tc?.id === "string" && tc.id) acc.id = tc.id;
        if (typeof tc?.function?.name === "string") acc.name += tc.function.name;
        if (typeof tc?.function?.arguments === "string") acc.arguments += tc.function.arguments;
      }
    }
  }

  result(): ChatResponse {
    if (!this.sawChoice) throw new ModelError("model returned empty choices (stream)", undefined, true);
    if (this.finish === undefined)
      throw new ModelError("stream ended without a finish_reason (truncated)", undefined, true);
    const raw: Record<string, unknown> = {
      content: this.content,
      reasoning_content: this.reasoningContent || undefined,
      reasoning: this.reasoning || undefined,
      reasoning_details: mergeDetailDeltas(this.details),
    };
    const ordered = [...this.calls.entries()].sort((a, b) => a[0] - b[0]);
    raw.tool_calls = ordered.map(([, t]) => ({ id: t.id, function: { name: t.name, arguments: t.arguments } }));
    const message = assistantFrom(raw);
    const invalid = invalidUsageFields(this.usage);
    return {
      message,
      finishReason: finishOf(this.finish, message),
      usage: normalizeUsage(this.usage),
      ...(usageMissing(this.usage) ? { usageMissing: true } : {}),
      ...(invalid.length ? { usageInvalid: invalid } : {}),
      ...(this.model ? { model: this.model } : {}),
      ...(this.tokens ? { tokens: this.tokens.result(this.capture!) } : {}),
    };
  }
}

/** Streamed `reasoning_details` arrive as fragments; fragments of one entry share an `index`. */
function mergeDetailDeltas(details: unknown[]): unknown[] {
  const byIndex = new Map<number, Record<string, unknown>>();
  const loose: unknown[] = [];
  for (const d of details) {
    if (!d || typeof d !== "object" || typeof (d as any).index !== "number") {
      loose.push(d);
      continue;
    }
    const idx = (d as any).index as number;
    const acc = byIndex.get(idx) ?? {};
    for (const key of ["text", "summary", "content"]) {
      const v = (d as any)[key];
      if (typeof v === "string") acc[key] = ((acc[key] as string | undefined) ?? "") + v;
    }
    byIndex.set(idx, acc);
  }
  return [...[...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v), ...loose];
}

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

function isNetworkError(err: unknown): boolean {
  for (let e: any = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (typeof e.code === "string" && NETWORK_CODES.has(e.code)) return true;
    if (e instanceof TypeError && /terminated|fetch failed|other side closed/i.test(e.message)) return true;
  }
  return false;
}

function serverMessage(err: APIError): string {
  const m = (err.error as any)?.message;
  if (typeof m === "string" && m) return m;
  return err.message;
}

/** A failure answered with an HTTP status; the message carries the body's own words, whatever its shape. */
function statusFailure(status: number, detail: string, headers: Headers | undefined): ProviderError {
  const retryAfterMs = parseRetryAfter(headers);
  if (status === 429)
    return new ProviderError(`429 rate limited: ${detail}`, {
      status,
      retryable: true,
      rateLimited: true,
      retryAfterMs,
    });
  if (status >= 500 || status === 408)
    return new ProviderError(`${status}: ${detail}`, { status, retryable: true, retryAfterMs });
  return new ProviderError(`model endpoint returned ${status}: ${detail}`, { status, retryable: false });
}

const RATE_LIMIT_WORDS = /rate.?limit|too many requests|resource.?exhausted|quota/i;

/**
 * An error chunk in the middle of a stream (`data: {"error": {...}}`): the HTTP status was 200, so the
 * status is the error's own `code`/`status`. A rate limit counts as a 429 for the limiter; any other
 * mid-stream error is retried as a broken stream.
 */
function streamFailure(err: APIError): ProviderError {
  const e = (err.error && typeof err.error === "object" ? err.error : {}) as Record<string, unknown>;
  const codeOf = (v: unknown) =>
    typeof v === "number" ? v : typeof v === "string" && /^\d{3}$/.test(v.trim()) ? Number(v) : undefined;
  const code = codeOf(e.code) ?? codeOf(e.status) ?? codeOf(e.status_code);
  const detail = messageOfJson(err.error) ?? err.message;
  const words = [detail, e.type, e.code, e.status].filter((v) => typeof v === "string").join(" ");
  if (code === 429 || RATE_LIMIT_WORDS.test(words)) {
    return new ProviderError(`429 rate limited (in stream): ${detail}`, {
      status: 429,
      retryable: true,
      rateLimited: true,
    });
  }
  return new ProviderError(`stream error${code ? ` ${code}` : ""}: ${detail}`, { status: code, retryable: true });
}

/** The SDK's error classes, once the SDK is loaded (no SDK error can exist before). */
let sdkErrors: { APIConnectionError: typeof APIConnectionError; APIError: typeof APIError } | undefined;

/** The SDK, loaded by the first request that needs it (most runs never do: workers start faster without it). */
async function loadSdk(): Promise<typeof OpenAI> {
  const sdk = await import("openai");
  sdkErrors ??= { APIConnectionError: sdk.APIConnectionError, APIError: sdk.APIError };
  return sdk.default;
}

/** One failed attempt as the retry layer sees it. */
export function classifyFailure(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof ModelError)
    return new ProviderError(err.message, { status: err.status, retryable: err.retryable });
  const http = findHttpStatusError(err);
  if (http) return statusFailure(http.status, http.detail, http.headers);
  const { APIConnectionError, APIError } = sdkErrors ?? {};
  if (APIConnectionError && err instanceof APIConnectionError) {
    if (/timed? ?out/i.test(err.message)) return new ProviderError("request timed out", { retryable: true });
    const cause = (err as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : "";
    return new ProviderError(`connection error (${err.message}${detail})`, { retryable: true });
  }
  if (APIError && err instanceof APIError) {
    const status = err.status;
    const msg = serverMessage(err);
    if (status === undefined) return streamFailure(err);
    return statusFailure(status, msg, err.headers as Headers | undefined);
  }
  if (isNetworkError(err)) return new ProviderError(`connection error: ${(err as Error).message}`, { retryable: true });
  if (err instanceof SyntaxError) return new ProviderError(`unparsable response: ${err.message}`, { retryable: true });
  return new ProviderError(`model request failed: ${err instanceof Error ? err.message : String(err)}`, {
    retryable: false,
  });
}

const JSON_CONTENT = { "content-type": "application/json" } as const;

function createOpenAIChatModel(opts: ModelEndpointOptions): ChatModel {
  // One keep-alive pool per model; the run's connection limit bounds how many requests want a socket at once.
  const pool = opts.fetch ? undefined : createNodeHttpFetch({ maxSockets: opts.maxSockets });
  // Credentials in the URL are HTTP Basic auth (instead of the key's Bearer), unless a header sets Authorization.
  const credentials = splitUrlCredentials(opts.baseURL);
  const basic = basicAuthorization(credentials);
  const ownAuthorization = Object.keys(opts.headers ?? {}).some((n) => n.toLowerCase() === "authorization");
  const defaultHeaders: Record<string, string> = {
    ...(basic && !ownAuthorization ? { Authorization: basic } : {}),
    ...opts.headers,
  };
  // Never fall back to OPENAI_API_KEY from the environment: the endpoint may be another host.
  const apiKey = opts.apiKey || "no-key";
  const url = pool && !opts.stream ? completionsUrl(credentials.url) : undefined;
  const direct = pool && url ? { pool, url, headers: sdkRequestHeaders(apiKey, defaultHeaders) } : undefined;
  // The sampling parameters every request of this model sends (the same for each: they come from the options).
  const capture = opts.rlCapture ? samplingSent(buildRequestBody(opts, { messages: [] })) : undefined;

  let client: Promise<OpenAI> | undefined;
  const sdkClient = () =>
    (client ??= loadSdk().then(
      (SDK) =>
        new SDK({
          baseURL: credentials.url,
          defaultHeaders,
          apiKey,
          maxRetries: 0,
          // The scheduler owns the deadline of an attempt (through the signal).
          timeout: MAX_TIMER_MS,
          fetch: withErrorBodies(opts.fetch ?? pool!.fetch),
        }),
    ));

  async function viaSdk(req: ChatRequest): Promise<ChatResponse> {
    // Pre-serialised (the SDK sends a string body with a content-type as is): see serializeRequestBody.
    // `client.post` is what `chat.completions.create` calls; it is used directly so that `stream` can be set
    // without the SDK reading it from an object body.
    const signal = req.signal;
    const sdk = await sdkClient();
    const request = () =>
      sdk.post("/chat/completions", {
        body: serializeRequestBody(opts, req),
        headers: JSON_CONTENT,
        stream: !!opts.stream,
        signal,
        __security: { bearerAuth: true },
      } as never);
    if (opts.stream) {
      const stream = (await request()) as unknown as AsyncIterable<unknown>;
      const acc = new StreamAssembler(capture);
      for await (const chunk of stream) acc.push(chunk);
      // The SDK ends an aborted stream quietly instead of throwing: never take the partial answer.
      signal?.throwIfAborted();
      return acc.result();
    }
    return parseCompletion(await request(), capture);
  }

  async function viaDirect(d: NonNullable<typeof direct>, req: ChatRequest): Promise<ChatResponse> {
    let body: unknown;
    try {
      body = await postCompletion(d.pool, d.url, d.headers, serializeRequestBody(opts, req), req.signal);
    } catch (err) {
      if (err instanceof HttpStatusError || err instanceof SyntaxError || req.signal?.aborted) throw err;
      throw transportFailure(err);
    }
    return parseCompletion(body, capture);
  }

  return {
    name: opts.model,
    async complete(req) {
      try {
        return await (direct ? viaDirect(direct, req) : viaSdk(req));
      } catch (err) {
        if (req.signal?.aborted) throw err;
        throw classifyFailure(err);
      }
    },
  };
}

export const openaiProvider: ModelProvider = { name: "openai", create: createOpenAIChatModel };
