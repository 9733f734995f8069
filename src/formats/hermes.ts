/**
 * Hermes / ShareGPT `conversations` (hermes-facts §2.4), byte-compatible with what Hermes' batch runner
 * writes, so datasets built from either tool can be mixed.
 *
 * Byte compatibility needs Python's `json.dumps(..., ensure_ascii=False)` formatting (", " and ": "
 * separators, Python float repr) applied to values parsed the way Python's `json.loads` parses them
 * (dict key order kept, ints vs floats kept: `1.0` stays `1.0`): see py_json.ts.
 *
 * Deliberate improvements over Hermes (§7 item 12): a tool response's `name` is the call's at its position, as
 * in Hermes, only when that call has the response's `tool_call_id`, else the call of that id; tool messages
 * without a preceding call are kept rather than silently dropped.
 */
import type { AssistantMessage, ChatMessage, OpenAITool, ToolCall, ToolMessage } from "../core/chat.js";
import type { ConversationTurn } from "../core/records.js";
import { parsePyJson, pyJsonDumps, pyJsonText } from "./py_json.js";

export { parsePyJson, pyFloatRepr, pyJsonDumps } from "./py_json.js";

// ---------------------------------------------------------------------------------------------
// Python string helpers (str.strip uses Python's whitespace set, which differs slightly from JS's)

const PY_WS = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_LEADING_WS = new RegExp(`^[${PY_WS}]+`);
const PY_LEADING_WS_AT = new RegExp(`[${PY_WS}]+`, "y");

/** One character of PY_WS: tested on the trailing characters only (a `[…]+$` regex scans the whole string). */
const PY_WS_CHAR = new RegExp(`[${PY_WS}]`);

export function pyRstrip(s: string): string {
  let end = s.length;
  while (end > 0 && PY_WS_CHAR.test(s[end - 1]!)) end--;
  return end === s.length ? s : s.slice(0, end);
}
export function pyStrip(s: string): string {
  return pyRstrip(s).replace(PY_LEADING_WS, "");
}

// ---------------------------------------------------------------------------------------------
// The conversion

/** The `<tools>` JSON: `[{"name", "description", "parameters", "required": null}]` (Hermes' shape). */
export function formatToolsForSystemPrompt(tools: readonly OpenAITool[]): string {
  return pyJsonDumps(
    tools.map((t) => ({
      name: t.function.name,
      description: t.function.description ?? "",
      parameters: t.function.parameters ?? {},
      required: null,
    })),
  );
}

/** The fixed function-calling system turn of Hermes trajectories (not the prompt the agent ran with). */
export function hermesSystemPrompt(tools: readonly OpenAITool[]): string {
  return (
    "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML tags. " +
    "You may call one or more functions to assist with the user query. If available tools are not relevant in assisting " +
    "with user query, just respond in natural conversational language. Don't make assumptions about what values to plug " +
    "into functions. After calling & executing the functions, you will be provided with function results within " +
    "<tool_response> </tool_response> XML tags. Here are the available tools:\n" +
    `<tools>\n${formatToolsForSystemPrompt(tools)}\n</tools>\n` +
    "For each function call return a JSON object, with the following pydantic model json schema for each:\n" +
    "{'title': 'FunctionCall', 'type': 'object', 'properties': {'name': {'title': 'Name', 'type': 'string'}, " +
    "'arguments': {'title': 'Arguments', 'type': 'object'}}, 'required': ['name', 'arguments']}\n" +
    "Each function call should be enclosed within <tool_call> </tool_call> XML tags.\n" +
    "Example:\n<tool_call>\n{'name': <function-name>,'arguments': <args-dict>}\n</tool_call>"
  );
}

// Tool lists are built once per toolset combination, so the same array object recurs across tasks.
const systemPromptCache = new WeakMap<readonly OpenAITool[], string>();
function cachedSystemPrompt(tools: readonly OpenAITool[]): string {
  let text = systemPromptCache.get(tools);
  if (text === undefined) systemPromptCache.set(tools, (text = hermesSystemPrompt(tools)));
  return text;
}

export interface HermesConversionOptions {
  /** Value of the first `human` turn (the dataset prompt). Default: the task's user message content. */
  prompt?: string;
  /**
   * Index in `messages` of the task's user message. Default: the first user message. Everything
   * before it (system prompt, prefill) is left out, as in Hermes.
   */
  promptIndex?: number;
  /** A precomputed `hermesSystemPrompt(tools)` (it is the same for every task with the same tools). */
  systemPrompt?: string;
  /**
   * Show reasoning that came only in `reasoning_details` as the turn's `<think>` too. Default false: the
   * turn shows what the original's default (streaming) path records, which never reads that field.
   */
  detailsReasoning?: boolean;
}

/**
 * The reasoning an assistant turn shows in the Hermes conversation: without what only `reasoning_details`
 * carried (the original's default streaming path), unless `detailsReasoning`.
 */
export function conversationReasoning(msg: AssistantMessage, detailsReasoning = false): string | undefined {
  if (detailsReasoning || msg.reasoning_without_details === undefined) return msg.reasoning;
  return msg.reasoning_without_details || undefined;
}

function scratchpadToThink(content: string): string {
  if (!content.includes("<REASONING_SCRATCHPAD>")) return content;
  return content.replaceAll("<REASONING_SCRATCHPAD>", "<think>").replaceAll("</REASONING_SCRATCHPAD>", "</think>");
}

function thinkBlock(reasoning: string | undefined): string {
  return reasoning && pyStrip(reasoning) ? `<think>\n${reasoning}\n</think>\n` : "";
}

/** Tool-call arguments parsed back to a value; `{}` when they are not JSON (as Hermes does). */
function parseArguments(args: unknown): unknown {
  if (typeof args !== "string") return args ?? {};
  try {
    return parsePyJson(args);
  } catch {
    return {};
  }
}

/** `pyJsonDumps({ name, arguments: parseArguments(args) })`, in one pass over the arguments' text when it can. */
function toolCallJson(name: unknown, args: unknown): string {
  const argsJson = typeof name === "string" && typeof args === "string" ? pyJsonText(args) : undefined;
  if (argsJson === undefined) return pyJsonDumps({ name, arguments: parseArguments(args) });
  return `{"name": ${JSON.stringify(name)}, "arguments": ${argsJson}}`;
}

function gptTurnWithCalls(msg: AssistantMessage, calls: ToolCall[], reasoning: string | undefined): string {
  let value = thinkBlock(reasoning);
  if (msg.content && pyStrip(msg.content)) value += scratchpadToThink(msg.content) + "\n";
  for (let k = 0; k < calls.length; k++) {
    const call = calls[k]!;
    value += `${k ? "\n" : ""}<tool_call>\n${toolCallJson(call.function.name, call.function.arguments)}\n</tool_call>`;
  }
  if (!value.includes("<think>")) value = "<think>\n</think>\n" + value;
  // After a call the text ends with "</tool_call>": nothing for Python's rstrip to take.
  return calls.length ? value : pyRstrip(value);
}

function gptTurnFinal(msg: AssistantMessage, reasoning: string | undefined): string {
  let value = thinkBlock(reasoning) + scratchpadToThink(msg.content ?? "");
  if (!value.includes("<think>")) value = "<think>\n</think>\n" + value;
  return pyStrip(value);
}

/** Whether Hermes embeds tool content as parsed JSON: it starts with `{` or `[` (after Python's whitespace). */
function looksLikeJson(content: string): boolean {
  // The first character after Python's leading whitespace (no copy of the content for it).
  PY_LEADING_WS_AT.lastIndex = 0;
  const head = content[PY_LEADING_WS_AT.test(content) ? PY_LEADING_WS_AT.lastIndex : 0];
  return head === "{" || head === "[";
}

/** Tool content as Hermes embeds it: parsed JSON when it starts with `{` or `[`, otherwise the string. */
function toolContentValue(content: string): unknown {
  if (!looksLikeJson(content)) return content;
  try {
    return parsePyJson(content);
  } catch {
    return content;
  }
}

/** `pyJsonDumps({ tool_call_id, name, content: toolContentValue(content) })`, in one pass when it can. */
function toolResultJson(toolCallId: unknown, name: unknown, content: string): string {
  const contentJson =
    typeof toolCallId !== "string" || typeof name !== "string"
      ? undefined
      : looksLikeJson(content)
        ? pyJsonText(content)
        : JSON.stringify(content);
  if (contentJson === undefined) {
    return pyJsonDumps({ tool_call_id: toolCallId, name, content: toolContentValue(content) });
  }
  const head = `{"tool_call_id": ${JSON.stringify(toolCallId)}, "name": ${JSON.stringify(name)}`;
  return `${head}, "content": ${contentJson}}`;
}

function toolTurn(results: ToolMessage[], calls: ToolCall[]): string {
  let out = "";
  for (let k = 0; k < results.length; k++) {
    const tm = results[k]!;
    // The call at the result's position, as the original names it, when it has the result's id (results follow
    // their calls in order); else the call of that id (a result out of place).
    const callName = (calls[k]?.id === tm.tool_call_id ? calls[k] : calls.findLast((c) => c.id === tm.tool_call_id))
      ?.function.name;
    const name = callName ?? tm.name ?? calls[k]?.function.name ?? "unknown";
    const body = toolResultJson(tm.tool_call_id ?? "", name, tm.content ?? "");
    out += `${k ? "\n" : ""}<tool_response>\n${body}\n</tool_response>`;
  }
  return out;
}

/**
 * The Hermes `conversations` of one task: the fixed system turn with the tool list, the prompt as
 * `human`, then `gpt` turns (every one with a `<think>` block, empty when there was no reasoning, and
 * one `<tool_call>` per call), one `tool` turn per run of tool results, later user messages as `human`.
 * System messages inside the history are dropped.
 */
export function toHermesConversations(
  messages: readonly ChatMessage[],
  tools: readonly OpenAITool[],
  opts: HermesConversionOptions = {},
): ConversationTurn[] {
  const start = opts.promptIndex ?? messages.findIndex((m) => m.role === "user");
  const turns: ConversationTurn[] = [
    { from: "system", value: opts.systemPrompt ?? cachedSystemPrompt(tools) },
    { from: "human", value: opts.prompt ?? (start >= 0 ? (messages[start]?.content ?? "") : "") },
  ];
  let i = start >= 0 ? start + 1 : 0;
  let lastCalls: ToolCall[] = [];
  while (i < messages.length) {
    const msg = messages[i]!;
    if (msg.role === "assistant") {
      const calls = msg.tool_calls ?? [];
      const reasoning = conversationReasoning(msg, opts.detailsReasoning);
      if (calls.length > 0) {
        turns.push({ from: "gpt", value: gptTurnWithCalls(msg, calls, reasoning) });
        lastCalls = calls;
      } else {
        turns.push({ from: "gpt", value: gptTurnFinal(msg, reasoning) });
        lastCalls = [];
      }
      i++;
    } else if (msg.role === "tool") {
      const results: ToolMessage[] = [];
      while (i < messages.length && messages[i]!.role === "tool") results.push(messages[i++] as ToolMessage);
      turns.push({ from: "tool", value: toolTurn(results, lastCalls) });
      lastCalls = [];
    } else {
      if (msg.role === "user") {
        turns.push({ from: "human", value: msg.content });
        lastCalls = [];
      }
      i++;
    }
  }
  return turns;
}
