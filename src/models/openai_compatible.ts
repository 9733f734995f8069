/**
 * ChatModel over any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, vLLM, …), with the
 * `openai` SDK for transport only: the SDK's own retries are off (`maxRetries: 0`) so that exactly one retry
 * layer exists — this one, which also feeds the adaptive connection limiter.
 */
import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from "openai";
import type { AdaptiveLimiter } from "../scheduler/concurrency.js";
import { createNodeHttpFetch } from "./http_fetch.js";
import { extractReasoning } from "./reasoning.js";
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

export interface BackoffOptions {
  /** First retry waits up to this long (full jitter), doubling each attempt. Default 1000. */
  baseMs: number;
  /** Cap of the exponential part. Default 60_000. */
  maxMs: number;
}

export interface RetryInfo {
  /** 1 for the first retry. */
  attempt: number;
  maxRetries: number;
  delayMs: number;
  status?: number;
  /** Short human reason: "429 rate limited", "500 …", "request timed out", "connection error: …". */
  reason: string;
}

export interface LLMClientOptions {
  model: string;
  baseURL: string;
  /** Omitted: a placeholder is sent, for key-less local servers (the CLI resolves env keys itself). */
  apiKey?: string;
  maxTokens?: number;
  temperature?: number;
  reasoningEffort?: string;
  /** Merged into every request body last (provider routing, vendor options, …). */
  extraBody?: Record<string, unknown>;
  stream?: boolean;
  /** Send assistant `reasoning` back to the endpoint as `reasoning_content` (off by default). */
  sendReasoningBack?: boolean;
  /** Deadline of one attempt, from sending to the last byte of the answer (streams too). Default 600_000. */
  requestTimeoutMs?: number;
  /** Retries after the first attempt. Default 6. */
  maxRetries?: number;
  backoff?: Partial<BackoffOptions>;
  /** Longest `retry-after` that is honoured as given (default 300_000); longer values are capped. */
  maxRetryAfterMs?: number;
  limiter?: AdaptiveLimiter;
  onRetry?: (info: RetryInfo) => void;
  /**
   * The SDK's transport. Default: a `node:http`/`node:https` keep-alive fetch owned by this client (see
   * http_fetch.ts), with as many sockets as the limiter's max; pass `globalThis.fetch` for undici.
   */
  fetch?: typeof fetch;
  /** Jitter source, for tests. */
  random?: () => number;
}

/** The error the client throws when the caller's signal aborted it (also while waiting or backing off). */
export class ModelAbortError extends Error {
  override readonly name = "AbortError";
  constructor(reason?: unknown) {
    super("model request aborted", { cause: reason });
  }
}

/** True for aborts from this client, the limiter, the SDK, fetch or `AbortSignal.timeout`-style reasons. */
export function isAbortError(err: unknown): boolean {
  if (err instanceof APIUserAbortError) return true;
  return err instanceof Error && err.name === "AbortError";
}

const DEFAULT_TIMEOUT_MS = 600_000;
const DEFAULT_MAX_RETRIES = 6;
const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 60_000 };

export function isOpenRouter(baseURL: string): boolean {
  return /openrouter|nousresearch/i.test(baseURL);
}

/** Full jitter: uniform in [0, min(maxMs, baseMs·2^(attempt-1))]. `attempt` starts at 1. */
export function backoffDelay(attempt: number, backoff: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(random() * ceiling);
}

/** Milliseconds asked by `retry-after-ms` or `retry-after` (seconds or an HTTP date); undefined if absent/bad. */
export function parseRetryAfter(headers: Headers | Record<string, string> | undefined, now = Date.now()): number | undefined {
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
        if (hasCalls) out.tool_calls = m.tool_calls!.map((tc) => ({ id: tc.id, type: "function", function: { ...tc.function } }));
        if (sendReasoningBack && m.reasoning) out.reasoning_content = m.reasoning;
        return out;
      }
    }
  });
}

/** The JSON body of one chat-completions request. */
export function buildRequestBody(opts: LLMClientOptions, req: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: opts.model,
    messages: toApiMessages(req.messages, opts.sendReasoningBack),
  };
  if (req.tools?.length) body.tools = req.tools;
  if (opts.maxTokens !== undefined) body.max_tokens = opts.maxTokens;
  if (opts.temperature !== undefined) body.temperature = opts.temperature;
  if (opts.reasoningEffort) {
    if (isOpenRouter(opts.baseURL)) {
      body.reasoning = opts.reasoningEffort === "none" ? { effort: "none" } : { enabled: true, effort: opts.reasoningEffort };
    } else {
      body.reasoning_effort = opts.reasoningEffort;
    }
  }
  if (opts.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  if (opts.extraBody) Object.assign(body, opts.extraBody);
  return body;
}

export function normalizeUsage(u: unknown): Usage {
  const r = (u && typeof u === "object" ? u : {}) as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  const prompt = num(r.prompt_tokens);
  const completion = num(r.completion_tokens);
  const total = typeof r.total_tokens === "number" && Number.isFinite(r.total_tokens) ? r.total_tokens : prompt + completion;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
}

let generatedIds = 0;
function fallbackCallId(index: number): string {
  return `call_${Date.now().toString(36)}_${++generatedIds}_${index}`;
}

function toolCallsOf(raw: unknown): ToolCall[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  return raw.map((tc: any, i: number) => ({
    id: typeof tc?.id === "string" && tc.id ? tc.id : fallbackCallId(i),
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
  const { content, reasoning } = extractReasoning(raw);
  const message: AssistantMessage = { role: "assistant", content };
  const calls = toolCallsOf(raw.tool_calls);
  if (calls) message.tool_calls = calls;
  if (reasoning) message.reasoning = reasoning;
  return message;
}

function finishOf(raw: unknown, message: AssistantMessage): string {
  if (typeof raw === "string" && raw) return raw;
  return message.tool_calls?.length ? "tool_calls" : "stop";
}

/** A ChatResponse from a non-streaming completion body. */
export function parseCompletion(body: unknown): ChatResponse {
  const b = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
  const choices = b.choices;
  if (!Array.isArray(choices) || choices.length === 0 || !choices[0] || typeof choices[0] !== "object") {
    throw new ModelError("model returned empty choices", undefined, true);
  }
  const choice = choices[0] as Record<string, unknown>;
  const rawMsg = (choice.message && typeof choice.message === "object" ? choice.message : {}) as Record<string, unknown>;
  const message = assistantFrom(rawMsg);
  return { message, finishReason: finishOf(choice.finish_reason, message), usage: normalizeUsage(b.usage) };
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
  private sawChoice = false;

  push(chunk: unknown): void {
    const c = (chunk && typeof chunk === "object" ? chunk : {}) as Record<string, any>;
    if (c.usage) this.usage = c.usage;
    const choice = Array.isArray(c.choices) ? c.choices[0] : undefined;
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
    if (this.finish === undefined) throw new ModelError("stream ended without a finish_reason (truncated)", undefined, true);
    const raw: Record<string, unknown> = {
      content: this.content,
      reasoning_content: this.reasoningContent || undefined,
      reasoning: this.reasoning || undefined,
      reasoning_details: mergeDetailDeltas(this.details),
    };
    const ordered = [...this.calls.entries()].sort((a, b) => a[0] - b[0]);
    raw.tool_calls = ordered.map(([, t]) => ({ id: t.id, function: { name: t.name, arguments: t.arguments } }));
    const message = assistantFrom(raw);
    return { message, finishReason: finishOf(this.finish, message), usage: normalizeUsage(this.usage) };
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

interface Failure {
  retryable: boolean;
  status?: number;
  reason: string;
  rateLimited: boolean;
  retryAfterMs?: number;
}

function serverMessage(err: APIError): string {
  const m = (err.error as any)?.message;
  if (typeof m === "string" && m) return m;
  return err.message;
}

function classify(err: unknown, timedOut: boolean, timeoutMs: number): Failure {
  if (timedOut) return { retryable: true, reason: `request timed out after ${timeoutMs} ms`, rateLimited: false };
  if (err instanceof ModelError) return { retryable: err.retryable, status: err.status, reason: err.message, rateLimited: false };
  if (err instanceof APIConnectionError) {
    const cause = (err as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : "";
    return { retryable: true, reason: `connection error (${err.message}${detail})`, rateLimited: false };
  }
  if (err instanceof APIError) {
    const status = err.status;
    const msg = serverMessage(err);
    if (status === undefined) return { retryable: true, reason: `stream error: ${msg}`, rateLimited: false };
    if (status === 429) {
      return { retryable: true, status, reason: `429 rate limited: ${msg}`, rateLimited: true, retryAfterMs: parseRetryAfter(err.headers as Headers) };
    }
    if (status >= 500 || status === 408) {
      return { retryable: true, status, reason: `${status}: ${msg}`, rateLimited: false, retryAfterMs: parseRetryAfter(err.headers as Headers) };
    }
    return { retryable: false, status, reason: `model endpoint returned ${status}: ${msg}`, rateLimited: false };
  }
  if (isNetworkError(err)) return { retryable: true, reason: `connection error: ${(err as Error).message}`, rateLimited: false };
  if (err instanceof SyntaxError) return { retryable: true, reason: `unparsable response: ${err.message}`, rateLimited: false };
  return { retryable: false, reason: `model request failed: ${err instanceof Error ? err.message : String(err)}`, rateLimited: false };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ModelAbortError(signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelAbortError(signal!.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export function createOpenAIChatModel(opts: LLMClientOptions): ChatModel {
  const timeoutMs = opts.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
  const backoff: BackoffOptions = { ...DEFAULT_BACKOFF, ...opts.backoff };
  const maxRetryAfterMs = opts.maxRetryAfterMs ?? 300_000;
  const random = opts.random ?? Math.random;
  // One keep-alive pool per client; the run creates one client per worker thread, and the limiter's max
  // bounds how many requests can want a socket at once.
  const transport = opts.fetch ?? createNodeHttpFetch({ maxSockets: opts.limiter?.max }).fetch;
  const client = new OpenAI({
    baseURL: opts.baseURL,
    apiKey: opts.apiKey || "no-key",
    maxRetries: 0,
    timeout: timeoutMs,
    fetch: transport,
  });

  async function attempt(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    const body = buildRequestBody(opts, req);
    // `as never`: the body is a superset of the SDK's typed params (vendor fields, extra body).
    if (opts.stream) {
      const stream = (await client.chat.completions.create(body as never, { signal })) as unknown as AsyncIterable<unknown>;
      const acc = new StreamAssembler();
      for await (const chunk of stream) acc.push(chunk);
      // The SDK ends an aborted stream quietly instead of throwing: never take the partial answer.
      if (signal.aborted) throw new ModelAbortError(signal.reason);
      return acc.result();
    }
    const completion = await client.chat.completions.create(body as never, { signal });
    return parseCompletion(completion);
  }

  async function complete(req: ChatRequest): Promise<ChatResponse> {
    const userSignal = req.signal;
    let last: Failure | undefined;
    for (let tryNo = 0; tryNo <= maxRetries; tryNo++) {
      if (userSignal?.aborted) throw new ModelAbortError(userSignal.reason);
      if (opts.limiter) {
        try {
          await opts.limiter.acquire(userSignal);
        } catch (err) {
          throw isAbortError(err) ? new ModelAbortError(userSignal?.reason) : err;
        }
      }
      // One controller per attempt: the caller's abort and our whole-attempt deadline both end it.
      const ctl = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        ctl.abort();
      }, timeoutMs);
      const onUserAbort = () => ctl.abort();
      userSignal?.addEventListener("abort", onUserAbort, { once: true });
      let failure: Failure;
      try {
        const res = await attempt(req, ctl.signal);
        opts.limiter?.recordSuccess();
        return res;
      } catch (err) {
        if (userSignal?.aborted) throw new ModelAbortError(userSignal.reason);
        failure = classify(err, timedOut, timeoutMs);
        if (err instanceof APIConnectionError && /timed? ?out/i.test(err.message)) failure.reason = `request timed out after ${timeoutMs} ms`;
      } finally {
        clearTimeout(timer);
        userSignal?.removeEventListener("abort", onUserAbort);
        opts.limiter?.release();
      }
      if (failure.rateLimited) opts.limiter?.recordRateLimit();
      if (!failure.retryable) throw new ModelError(failure.reason, failure.status, false);
      last = failure;
      if (tryNo === maxRetries) break;
      const delayMs =
        failure.retryAfterMs !== undefined
          ? Math.min(failure.retryAfterMs, maxRetryAfterMs)
          : backoffDelay(tryNo + 1, backoff, random);
      opts.onRetry?.({ attempt: tryNo + 1, maxRetries, delayMs, status: failure.status, reason: failure.reason });
      await sleep(delayMs, userSignal);
    }
    throw new ModelError(`model request failed after ${maxRetries} retries: ${last?.reason ?? "unknown error"}`, last?.status, true);
  }

  return { name: opts.model, complete };
}
