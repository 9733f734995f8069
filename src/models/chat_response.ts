/**
 * A chat completion as the API returns it (one JSON body, or stream chunks) turned into our ChatResponse:
 * message, reasoning, tool calls, finish reason, usage, and with `--rl-capture` the engine's tokens.
 */
import { ModelError, type AssistantMessage, type ChatResponse, type ToolCall, type Usage } from "../core/chat.js";
import type { SamplingSent } from "../core/rl_tokens.js";
import { extractReasoning } from "./reasoning.js";
import { StreamTokens, tokensOfCompletion } from "./token_capture.js";

/** A token count: a whole number, not negative (a fraction, a string or a negative number is not one). */
const finite = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const countOrAbsent = (v: unknown): boolean => v === undefined || v === null || finite(v);

/**
 * The usage as reported; cached and reasoning tokens kept when given (also under their older names). A value
 * that is not a token count is 0; a total below prompt + completion (which it includes) is their sum.
 */
export function normalizeUsage(u: unknown): Usage {
  const r = (u && typeof u === "object" ? u : {}) as Record<string, any>;
  const num = (v: unknown) => (finite(v) ? v : 0);
  const prompt = num(r.prompt_tokens);
  const completion = num(r.completion_tokens);
  const total = finite(r.total_tokens) && r.total_tokens >= prompt + completion ? r.total_tokens : prompt + completion;
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

/**
 * Usage fields present but not token counts (`prompt_tokens: -5`, `"12"`, `10.5`): they count as 0, and are
 * named; so is a total below prompt + completion (it counts as their sum).
 */
export function invalidUsageFields(u: unknown): string[] {
  if (!u || typeof u !== "object") return [];
  const r = u as Record<string, any>;
  const cached = r.prompt_tokens_details?.cached_tokens;
  const reasoning = r.completion_tokens_details?.reasoning_tokens;
  const short = finite(r.total_tokens) && r.total_tokens < normalizeUsage(r).total_tokens;
  // The usual usage: every field a count or absent, nothing to name (and nothing to allocate).
  if (
    !short &&
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
  const named = fields
    .filter(([, v]) => v !== undefined && v !== null && !finite(v))
    .map(([name, v]) => `${name}=${JSON.stringify(v)}`);
  if (short) named.push(`total_tokens=${r.total_tokens} (less than prompt_tokens + completion_tokens)`);
  return named;
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

/**
 * The text of a content given as an array of parts (`[{type: "text", text}]`, as some servers answer): the text
 * parts joined, refusal parts apart; a string is its own text. Anything else has no text.
 */
function contentParts(content: unknown): { text: unknown; refusal: string } {
  if (!Array.isArray(content)) return { text: content, refusal: "" };
  let text: string | null = null;
  let refusal = "";
  for (const part of content) {
    if (typeof part === "string") text = (text ?? "") + part;
    else if (part && typeof part === "object") {
      const p = part as Record<string, unknown>;
      if (p.type === "refusal" && typeof p.refusal === "string") refusal += p.refusal;
      else if (typeof p.text === "string" && (p.type === undefined || p.type === "text" || p.type === "output_text"))
        text = (text ?? "") + p.text;
    }
  }
  return { text, refusal };
}

/**
 * An assistant message from the API's fields. Beyond `content` and `tool_calls`: content given as parts is their
 * text; a refusal (`refusal`, or refusal parts) with no other text is the answer's text, so a declined task ends
 * with the model's own words rather than as an empty answer; a legacy `function_call` with no `tool_calls` is the
 * one tool call it names (its id derived by the loop, as for any call without one).
 */
function assistantFrom(raw: Record<string, unknown>): AssistantMessage {
  const parts = contentParts(raw.content);
  const { content, reasoning, withoutDetails } = extractReasoning({ ...raw, content: parts.text });
  const message: AssistantMessage = { role: "assistant", content };
  const calls = toolCallsOf(raw.tool_calls) ?? legacyCall(raw.function_call);
  if (calls) message.tool_calls = calls;
  if (message.content === null && !calls) {
    const refusal = (typeof raw.refusal === "string" ? raw.refusal : "") || parts.refusal;
    if (refusal.trim()) message.content = refusal.trim();
  }
  if (reasoning) message.reasoning = reasoning;
  if (withoutDetails !== undefined) message.reasoning_without_details = withoutDetails;
  return message;
}

/** The one tool call a legacy `function_call` names, when it names one. */
function legacyCall(raw: unknown): ToolCall[] | undefined {
  const fc = raw as { name?: unknown; arguments?: unknown } | null | undefined;
  if (!fc || typeof fc !== "object" || typeof fc.name !== "string" || !fc.name) return undefined;
  return toolCallsOf([{ function: fc }]);
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
  private refusal = "";
  private reasoningContent = "";
  private reasoning = "";
  private readonly details: unknown[] = [];
  /** Tool calls in the order they started; `open` holds the one each stream index is filling now. */
  private readonly calls: { index: number; id: string; name: string; arguments: string }[] = [];
  private readonly open = new Map<number, { index: number; id: string; name: string; arguments: string }>();
  private readonly legacy = { name: "", arguments: "" };
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
    else if (Array.isArray(d.content)) {
      const parts = contentParts(d.content);
      if (typeof parts.text === "string") this.content += parts.text;
      this.refusal += parts.refusal;
    }
    if (typeof d.refusal === "string") this.refusal += d.refusal;
    if (typeof d.reasoning_content === "string") this.reasoningContent += d.reasoning_content;
    if (typeof d.reasoning === "string") this.reasoning += d.reasoning;
    if (Array.isArray(d.reasoning_details)) this.details.push(...d.reasoning_details);
    if (d.function_call && typeof d.function_call === "object") {
      if (typeof d.function_call.name === "string") this.legacy.name += d.function_call.name;
      if (typeof d.function_call.arguments === "string") this.legacy.arguments += d.function_call.arguments;
    }
    if (Array.isArray(d.tool_calls)) {
      for (const [pos, tc] of d.tool_calls.entries()) {
        const index = typeof tc?.index === "number" ? tc.index : pos;
        const id = typeof tc?.id === "string" ? tc.id : "";
        const name = typeof tc?.function?.name === "string" ? tc.function.name : "";
        let acc = this.open.get(index);
        // A delta with another id and a name of its own is a new call at the same index (servers that send
        // every call at index 0), not more of the one before.
        if (!acc || (id && acc.id && id !== acc.id && name)) {
          acc = { index, id: "", name: "", arguments: "" };
          this.calls.push(acc);
          this.open.set(index, acc);
        }
        if (id) acc.id = id;
        acc.name += name;
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
      refusal: this.refusal,
      function_call: this.legacy.name ? this.legacy : undefined,
    };
    // By index; calls that shared an index in the order they started (the sort is stable).
    const ordered = [...this.calls].sort((a, b) => a.index - b.index);
    raw.tool_calls = ordered.map((t) => ({ id: t.id, function: { name: t.name, arguments: t.arguments } }));
    const message = assistantFrom(raw);
    const invalid = invalidUsageFields(this.usage);
    return {
      message,
      finishReason: finishOf(this.finish, message),
      usage: normalizeUsage(this.usage),
      ...(usageMissing(this.usage) ? { usageMissing: true } : {}),
      ...(invalid.length ? { usageInvalid: invalid } : {}),
      ...(this.refusal ? { refusal: this.refusal } : {}),
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
