/**
 * Hermes / ShareGPT `conversations` (hermes-facts §2.4), byte-compatible with what Hermes' batch runner
 * writes, so datasets built from either tool can be mixed.
 *
 * Byte compatibility needs Python's `json.dumps(..., ensure_ascii=False)` formatting (", " and ": "
 * separators, Python float repr) applied to values parsed the way Python's `json.loads` parses them
 * (dict key order kept, ints vs floats kept: `1.0` stays `1.0`). `parsePyJson` + `pyJsonDumps` do that.
 *
 * Deliberate improvements over Hermes (§7 item 12): a tool response's `name` is matched by
 * `tool_call_id` (Hermes matches by position), tool messages without a preceding call are kept rather
 * than silently dropped.
 */
import type { AssistantMessage, ChatMessage, OpenAITool, ToolCall, ToolMessage } from "../core/chat.js";
import type { ConversationTurn } from "../core/records.js";

// ---------------------------------------------------------------------------------------------
// Python-compatible JSON

/** A number as Python's json module would print it after `json.loads` (int stays int, float stays float). */
class PyNumber {
  constructor(readonly text: string) {}
}

const NUMBER_RE = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
// eslint-disable-next-line no-control-regex
const PLAIN_RUN_RE = /[^"\\\x00-\x1f]*/y;

/**
 * Parses JSON the way Python's `json.loads` does, into a tree `pyJsonDumps` prints exactly as Python
 * would: objects become Maps (insertion order kept, also for integer-like keys), numbers keep their
 * int/float nature, and NaN / Infinity / -Infinity are accepted. Throws SyntaxError on bad input.
 */
export function parsePyJson(text: string): unknown {
  let i = 0;
  const n = text.length;
  const fail = (what: string): never => {
    throw new SyntaxError(`${what} at position ${i}`);
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  const literal = (word: string, value: unknown): unknown => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    return fail("Expecting value");
  };
  const str = (): string => {
    i++; // opening quote
    let out = "";
    let start = i;
    for (;;) {
      if (i >= n) fail("Unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 0x20) fail("Invalid control character");
      if (c !== 0x5c) {
        PLAIN_RUN_RE.lastIndex = i;
        PLAIN_RUN_RE.test(text);
        i = Math.max(i + 1, PLAIN_RUN_RE.lastIndex);
        continue;
      }
      out += text.slice(start, i);
      const e = text[i + 1];
      i += 2;
      switch (e) {
        case '"':
          out += '"';
          break;
        case "\\":
          out += "\\";
          break;
        case "/":
          out += "/";
          break;
        case "b":
          out += "\b";
          break;
        case "f":
          out += "\f";
          break;
        case "n":
          out += "\n";
          break;
        case "r":
          out += "\r";
          break;
        case "t":
          out += "\t";
          break;
        case "u": {
          const hex = text.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("Invalid \\uXXXX escape");
          out += String.fromCharCode(Number.parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          i -= 2;
          fail("Invalid \\escape");
      }
      start = i;
    }
  };
  const num = (): PyNumber => {
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (!m) return fail("Expecting value");
    i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) return new PyNumber(BigInt(m[0]).toString());
    return new PyNumber(pyFloatRepr(Number(m[0])));
  };
  const value = (): unknown => {
    ws();
    const c = text[i];
    switch (c) {
      case "{": {
        i++;
        const map = new Map<string, unknown>();
        ws();
        if (text[i] === "}") {
          i++;
          return map;
        }
        for (;;) {
          ws();
          if (text[i] !== '"') fail("Expecting property name enclosed in double quotes");
          const key = str();
          ws();
          if (text[i] !== ":") fail("Expecting ':' delimiter");
          i++;
          map.set(key, value());
          ws();
          if (text[i] === ",") {
            i++;
            continue;
          }
          if (text[i] === "}") {
            i++;
            return map;
          }
          fail("Expecting ',' delimiter");
        }
      }
      case "[": {
        i++;
        const arr: unknown[] = [];
        ws();
        if (text[i] === "]") {
          i++;
          return arr;
        }
        for (;;) {
          arr.push(value());
          ws();
          if (text[i] === ",") {
            i++;
            continue;
          }
          if (text[i] === "]") {
            i++;
            return arr;
          }
          fail("Expecting ',' delimiter");
        }
      }
      case '"':
        return str();
      case "t":
        return literal("true", true);
      case "f":
        return literal("false", false);
      case "n":
        return literal("null", null);
      case "N":
        return literal("NaN", new PyNumber("NaN"));
      case "I":
        return literal("Infinity", new PyNumber("Infinity"));
      case "-":
        if (text.startsWith("-Infinity", i)) return literal("-Infinity", new PyNumber("-Infinity"));
        return num();
      default:
        return num();
    }
  };
  const result = value();
  ws();
  if (i !== n) fail("Extra data");
  return result;
}

/** Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16 on. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mant, expText] = Math.abs(x).toExponential().split("e") as [string, string];
  const digits = mant.replace(".", "");
  const e = Number(expText);
  if (e >= -4 && e < 16) {
    if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${digits}`;
    const intPart = digits.slice(0, e + 1).padEnd(e + 1, "0");
    return `${sign}${intPart}.${digits.slice(e + 1) || "0"}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}

function pyNumber(x: number): string {
  if (Number.isInteger(x)) return Number.isSafeInteger(x) ? String(x === 0 ? 0 : x) : BigInt(x).toString();
  return pyFloatRepr(x);
}

/**
 * `json.dumps(value, ensure_ascii=False)` of Python: `{"a": [1, 2], "b": "é"}`. Accepts plain JS
 * values (integral numbers print as ints) and the trees of `parsePyJson`.
 */
export function pyJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "string":
      // JSON.stringify escapes exactly what Python does with ensure_ascii=False (", \, \b \f \n \r \t,
      // other controls as lowercase \u00xx); only lone surrogates differ (escaped here, raw in Python).
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return pyNumber(value);
    case "bigint":
      return value.toString();
    case "function":
    case "symbol":
      return "null";
  }
  if (value instanceof PyNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(", ")}]`;
  if (value instanceof Map) {
    const parts: string[] = [];
    for (const [k, v] of value) parts.push(`${JSON.stringify(String(k))}: ${pyJsonDumps(v)}`);
    return `{${parts.join(", ")}}`;
  }
  const obj = value as { toJSON?: () => unknown };
  if (typeof obj.toJSON === "function") return pyJsonDumps(obj.toJSON());
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    parts.push(`${JSON.stringify(k)}: ${pyJsonDumps(v)}`);
  }
  return `{${parts.join(", ")}}`;
}

// ---------------------------------------------------------------------------------------------
// Python string helpers (str.strip uses Python's whitespace set, which differs slightly from JS's)

const PY_WS = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_LEADING_WS = new RegExp(`^[${PY_WS}]+`);
const PY_TRAILING_WS = new RegExp(`[${PY_WS}]+$`);
const PY_LEADING_WS_AT = new RegExp(`[${PY_WS}]+`, "y");

export function pyRstrip(s: string): string {
  return s.replace(PY_TRAILING_WS, "");
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

function gptTurnWithCalls(msg: AssistantMessage, calls: ToolCall[], reasoning: string | undefined): string {
  let value = thinkBlock(reasoning);
  if (msg.content && pyStrip(msg.content)) value += scratchpadToThink(msg.content) + "\n";
  for (const call of calls) {
    const body = pyJsonDumps({ name: call.function.name, arguments: parseArguments(call.function.arguments) });
    value += `<tool_call>\n${body}\n</tool_call>\n`;
  }
  if (!value.includes("<think>")) value = "<think>\n</think>\n" + value;
  return pyRstrip(value);
}

function gptTurnFinal(msg: AssistantMessage, reasoning: string | undefined): string {
  let value = thinkBlock(reasoning) + scratchpadToThink(msg.content ?? "");
  if (!value.includes("<think>")) value = "<think>\n</think>\n" + value;
  return pyStrip(value);
}

/** Tool content as Hermes embeds it: parsed JSON when it starts with `{` or `[`, otherwise the string. */
function toolContentValue(content: string): unknown {
  // The first character after Python's leading whitespace (no copy of the content for it).
  PY_LEADING_WS_AT.lastIndex = 0;
  const head = content[PY_LEADING_WS_AT.test(content) ? PY_LEADING_WS_AT.lastIndex : 0];
  if (head !== "{" && head !== "[") return content;
  try {
    return parsePyJson(content);
  } catch {
    return content;
  }
}

function toolTurn(results: ToolMessage[], calls: ToolCall[]): string {
  const byId = new Map(calls.map((c) => [c.id, c.function.name] as const));
  return results
    .map((tm, k) => {
      const name = byId.get(tm.tool_call_id) ?? tm.name ?? calls[k]?.function.name ?? "unknown";
      const body = pyJsonDumps({
        tool_call_id: tm.tool_call_id ?? "",
        name,
        content: toolContentValue(tm.content ?? ""),
      });
      return `<tool_response>\n${body}\n</tool_response>`;
    })
    .join("\n");
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
