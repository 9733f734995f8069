/** Chat types shared by the agent loop, the LLM client, the scripted model and the formats. */
import type { CallTokens } from "./rl_tokens.js";

/** JSON Schema object as used in OpenAI function definitions. */
export type JsonSchema = Record<string, unknown>;

export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** The OpenAI `tools` array element. */
export interface OpenAITool {
  type: "function";
  function: ToolSchema;
}

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface SystemMessage {
  role: "system";
  content: string;
}
export interface UserMessage {
  role: "user";
  content: string;
}
export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: ToolCall[];
  /** Reasoning text, from `reasoning`/`reasoning_content`/`reasoning_details` fields or `<think>` blocks. */
  reasoning?: string;
  /**
   * Only when `reasoning_details` added reasoning the other fields lack: the reasoning without it ("" when
   * none), as the original's default streaming path records it; the Hermes conversation shows this one.
   */
  reasoning_without_details?: string;
}
export interface ToolMessage {
  role: "tool";
  tool_call_id: string;
  name?: string;
  content: string;
  /** Images, audio or binary resources the content shows as placeholders (MCP), as sent; never sent to the model. */
  raw_content?: Record<string, unknown>[];
}
export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** Token counts in OpenAI's shape. The details are present only when the endpoint reported them. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens served from the provider's cache (part of prompt_tokens). */
  prompt_tokens_details?: { cached_tokens: number };
  /** Reasoning tokens (part of completion_tokens). */
  completion_tokens_details?: { reasoning_tokens: number };
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: readonly OpenAITool[];
  signal?: AbortSignal;
  /** Ask for a structured answer (OpenAI `response_format`); providers that cannot, ignore it. */
  responseFormat?: {
    type: "json_schema";
    json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean };
  };
}

export interface ChatResponse {
  message: AssistantMessage;
  finishReason: string;
  usage: Usage;
  /** The endpoint sent no usage at all (the counts are zeros, not measurements). */
  usageMissing?: boolean;
  /** Usage fields that were present but not token counts (negative, not numbers): ignored, named here. */
  usageInvalid?: string[];
  /** The model declined to answer (OpenAI's `refusal`); not part of the conversation. */
  refusal?: string;
  /** The model the endpoint says answered (its `model` field), when it said. */
  model?: string;
  /** Only when the request asked for them (`--rl-capture`): the engine's token ids and logprobs. */
  tokens?: CallTokens;
}

/** Anything that answers chat requests: the OpenAI-compatible client or the built-in scripted model. */
export interface ChatModel {
  readonly name: string;
  complete(req: ChatRequest): Promise<ChatResponse>;
}

/**
 * Answers that will be the same however often the request is repeated (bad request, bad key, no access,
 * unknown model, invalid parameters): not retried, and not rerun by `--resume` unless `--retry-failed`.
 */
export const DETERMINISTIC_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 422]);

/** A model call that failed for good (after retries, or a non-retryable 4xx). */
export class ModelError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly retryable = false,
  ) {
    super(message);
    this.name = "ModelError";
  }

  /** The endpoint's answer will not change by asking again (see DETERMINISTIC_STATUSES). */
  get deterministic(): boolean {
    return !this.retryable && this.status !== undefined && DETERMINISTIC_STATUSES.has(this.status);
  }
}

export function emptyUsage(): Usage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
}

/** Adds `u` into `into`; a detail is added (and created) only when `u` has it. */
/** A token count, or undefined when the value is not one (negative, fractional garbage, a string, NaN). */
export function tokenCount(n: unknown): number | undefined {
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** Adds `u` into `into`; values that are not token counts add nothing. */
export function addUsage(into: Usage, u: Partial<Usage> | undefined): void {
  if (!u) return;
  const p = tokenCount(u.prompt_tokens) ?? 0;
  const c = tokenCount(u.completion_tokens) ?? 0;
  into.prompt_tokens += p;
  into.completion_tokens += c;
  into.total_tokens += u.total_tokens === undefined ? p + c : (tokenCount(u.total_tokens) ?? p + c);
  const cached = tokenCount(u.prompt_tokens_details?.cached_tokens);
  if (cached !== undefined)
    into.prompt_tokens_details = { cached_tokens: (into.prompt_tokens_details?.cached_tokens ?? 0) + cached };
  const reasoning = tokenCount(u.completion_tokens_details?.reasoning_tokens);
  if (reasoning !== undefined) {
    into.completion_tokens_details = {
      reasoning_tokens: (into.completion_tokens_details?.reasoning_tokens ?? 0) + reasoning,
    };
  }
}

/**
 * Tokens by who spent them: the agent, the approver (smart approval) and the rubric judge. `total` is
 * always agent + approver + judge: the one total the console, statistics.json and the report show.
 */
export interface TokenTotals {
  agent: number;
  approver: number;
  judge: number;
  total: number;
}

export function tokenTotals(agent: number, approver: number, judge: number): TokenTotals {
  return { agent, approver, judge, total: agent + approver + judge };
}

/** 1234567 → "1,234,567", as `toLocaleString("en-US")` prints an integer, without loading ICU's locale data. */
export function groupThousands(x: number): string {
  if (!Number.isSafeInteger(x)) return x.toLocaleString("en-US");
  const digits = String(Math.abs(x));
  const head = digits.length % 3 || 3;
  let out = digits.slice(0, head);
  for (let i = head; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return x < 0 ? `-${out}` : out;
}

/** "1,234 tokens (agent 1,000, approver 200, judge 34)". */
export function tokenTotalsText(t: TokenTotals): string {
  const n = groupThousands;
  return `${n(t.total)} tokens (agent ${n(t.agent)}, approver ${n(t.approver)}, judge ${n(t.judge)})`;
}
