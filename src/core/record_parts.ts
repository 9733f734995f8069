/**
 * The zod schemas of the parts of a trajectory line that the converters read on their own (messages, tools, usage,
 * approvals, model calls), apart from records.ts, which builds the whole records from them: writing atif.jsonl at
 * the end of a run validates these parts only, and building every record schema as well would cost more than that.
 */
import * as z from "zod";
import type { AssistantMessage, ChatMessage, OpenAITool, ToolCall, Usage } from "./chat.js";

export const UsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  prompt_tokens_details: z
    .object({ cached_tokens: z.number() })
    .optional()
    .describe("prompt tokens served from the provider's cache, when reported"),
  completion_tokens_details: z
    .object({ reasoning_tokens: z.number() })
    .optional()
    .describe("reasoning tokens, when reported"),
});

export const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({
    name: z.string(),
    arguments: z.string().describe("the arguments as the model sent them: a JSON text"),
  }),
});

export const ChatMessageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(ToolCallSchema).optional(),
    reasoning: z
      .string()
      .optional()
      .describe("reasoning text (reasoning / reasoning_content / reasoning_details fields or <think> blocks)"),
    reasoning_without_details: z
      .string()
      .optional()
      .describe(
        'only when reasoning_details added reasoning: the reasoning without it ("" when none), as the original\'s streaming path records it and the conversations show it',
      ),
  }),
  z.object({
    role: z.literal("tool"),
    tool_call_id: z.string(),
    name: z.string().optional(),
    content: z.string(),
    raw_content: z
      .array(z.record(z.string(), z.unknown()))
      .optional()
      .describe(
        "images, audio or binary resources of an MCP result that `content` shows as placeholders, as the server sent them; never sent to the model",
      ),
  }),
]);

export const OpenAIToolSchema = z.object({
  type: z.literal("function"),
  function: z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) }),
});

/** One approval decision, as recorded in the trajectory's `approvals`. */
export const ApprovalRecordSchema = z.object({
  command: z.string(),
  pattern: z.string(),
  description: z.string().optional(),
  decision: z.enum(["approve", "deny"]),
  by: z.string().describe("who decided: allowlist, policy name, smart, …"),
  reason: z.string(),
  latency_ms: z.number(),
  cached: z.boolean().optional(),
  error: z.boolean().optional().describe("the decider failed (error, timeout, unparsable answer): fail-closed deny"),
  tool_call_id: z.string().optional().describe("the tool call whose command was judged (absent in older runs)"),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecordSchema>;

/** One request of the agent loop to the model, as recorded in the trajectory's `model_calls`. */
export const ModelCallRecordSchema = z.object({
  started_at: z.string().describe("ISO 8601 time the request was sent (retries of it included)"),
  ended_at: z.string().describe("ISO 8601 time the answer was complete"),
  model: z.string().describe("the model the endpoint says answered, else the configured one"),
  finish_reason: z.string(),
  usage: UsageSchema,
  message_index: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe(
      "the assistant message of `messages` this call produced; absent when the loop threw the answer away (empty answer asked again, cut tool call repeated, reasoning-only answer replaced)",
    ),
  cost_usd: z
    .number()
    .nonnegative()
    .optional()
    .describe("USD of this call's tokens, when the run has --price-input/--price-output"),
});
export type ModelCallRecord = z.infer<typeof ModelCallRecordSchema>;

// The chat types of chat.ts and the record schemas describe the same messages: a drift fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameShapes: [
  Same<z.infer<typeof ChatMessageSchema>, ChatMessage>,
  Same<z.infer<typeof ToolCallSchema>, ToolCall>,
  Same<z.infer<typeof UsageSchema>, Usage>,
  Same<z.infer<typeof OpenAIToolSchema>, OpenAITool>,
  Same<Extract<z.infer<typeof ChatMessageSchema>, { role: "assistant" }>, AssistantMessage>,
] = [true, true, true, true, true];
void sameShapes;
