/**
 * A chat completion as the API returns it (one JSON body, or stream chunks) turned into our ChatResponse:
 * message, reasoning, tool calls, finish reason, usage, and with `--rl-capture` the engine's tokens.
 */
import { ModelError, type AssistantMessage, type ChatResponse, type ToolCall, type Usage } from "../core/chat.js";
import type { SamplingSent } from "../core/rl_tokens.js";
import { extractReasoning } from "./reasoning.js";
import { StreamTokens, tokensOfCompletion } from "./token_capture.js";

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;
const countOrAbsent = (v: unknown): boolean => v === undefined || v === null || finite(v);

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
  const cached = r.prompt_tokens_details?.cached_tokens;
  const reasoning = r.completion_tokens_details?.reasoning_tokens;
  // The usual usage: every field a count or absent, nothing to name (and nothing to allocate).
  if (
    countOrAbsent(r.prompt_tokens) &&
    countOrAbsent(r.completion_tokens) &&
    countOrAbsent(r.total_tokens) &&
    countOrAbsent(cached) &&
    countOrAbsent(reasoning)
  )
    return [];
  const fields: Array<[string, unknown]> = [
    ["prompt_tokens", r.prompt_tokens],
    ["completion_tokens", r.completion_tokens],
    ["total_tokens", r.total_tokens],
    ["prompt_tokens_details.cached_tokens", cached],
    ["completion_tokens_details.reasoning_tokens", reasoning],
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
