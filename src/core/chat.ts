/** Chat types shared by the agent loop, the LLM client, the scripted model and the formats. */

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
  /** Reasoning text, from `reasoning_content`/`reasoning` fields or `<think>` blocks. */
  reasoning?: string;
}
export interface ToolMessage {
  role: "tool";
  tool_call_id: string;
  name?: string;
  content: string;
}
export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: readonly OpenAITool[];
  signal?: AbortSignal;
  /** Ask for a structured answer (OpenAI `response_format`); providers that cannot, ignore it. */
  responseFormat?: { type: "json_schema"; json_schema: { name: string; schema: Record<string, unknown>; strict?: boolean } };
}

export interface ChatResponse {
  message: AssistantMessage;
  finishReason: string;
  usage: Usage;
  /** The model declined to answer (OpenAI's `refusal`); not part of the conversation. */
  refusal?: string;
}

/** Anything that answers chat requests: the OpenAI-compatible client or the built-in scripted model. */
export interface ChatModel {
  readonly name: string;
  complete(req: ChatRequest): Promise<ChatResponse>;
}

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
}

export function emptyUsage(): Usage {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
}

export function addUsage(into: Usage, u: Partial<Usage> | undefined): void {
  if (!u) return;
  into.prompt_tokens += u.prompt_tokens ?? 0;
  into.completion_tokens += u.completion_tokens ?? 0;
  into.total_tokens += u.total_tokens ?? (u.prompt_tokens ?? 0) + (u.completion_tokens ?? 0);
}
