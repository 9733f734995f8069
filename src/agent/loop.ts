/**
 * The agent loop: model call → tool calls (concurrent, results in call order) → … until a final
 * answer, the turn limit, too many malformed calls in a row, or an abort.
 */
import pLimit from "p-limit";
import type { OpenAITool, ToolContext } from "../../tools/registry.js";
import { parseToolArguments } from "../../tools/pipeline.js";
import { addUsage, emptyUsage, type AssistantMessage, type ChatMessage, type ChatModel, type ToolCall, type ToolMessage, type Usage } from "../core/chat.js";
import { raceAbort } from "../core/abort.js";

/** Runs one tool call that passed name and JSON validation. Returns the JSON string result. */
export type ToolExecutor = (name: string, args: Record<string, unknown>, ctx: ToolContext) => Promise<string>;

export interface AgentLoopOptions {
  model: ChatModel;
  prompt: string;
  tools: readonly OpenAITool[];
  systemPrompt?: string;
  /** Sent with every request, never saved in the messages. */
  ephemeralSystemPrompt?: string;
  /** Inserted after the system message on every request, never saved. */
  prefill?: ChatMessage[];
  maxTurns: number;
  /** Turns in a row whose every call was malformed (unknown tool, bad JSON) before the run stops as partial. */
  maxConsecutiveToolErrors: number;
  toolConcurrency: number;
  executeTool: ToolExecutor;
  ctx: ToolContext;
  signal?: AbortSignal;
  /** Tool results longer than this are cut with a notice. */
  maxToolResultChars?: number;
}

export type LoopEnd = "final_answer" | "max_turns" | "malformed_calls" | "length";

export interface AgentLoopResult {
  /** The saved conversation: system (without the ephemeral part), user prompt, then the exchange. */
  messages: ChatMessage[];
  apiCalls: number;
  completed: boolean;
  partial: boolean;
  end: LoopEnd;
  finalResponse: string | null;
  usage: Usage;
}

/** Thrown when the loop stops early for a reason other than its own logic; carries what was done so far. */
export class AgentLoopAborted extends Error {
  constructor(
    override readonly cause: unknown,
    readonly partialResult: AgentLoopResult,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = "AgentLoopAborted";
  }
}

const DEFAULT_MAX_TOOL_RESULT = 100_000;

function capToolResult(text: string, cap: number): string {
  if (text.length <= cap) return text;
  return `${text.slice(0, cap)}\n[Truncated: tool response was ${text.length} chars, exceeding the ${cap} char limit]`;
}

interface PreparedCall {
  call: ToolCall;
  args?: Record<string, unknown>;
  error?: string;
}

function prepareCall(call: ToolCall, known: Set<string>): PreparedCall {
  const name = call.function?.name;
  if (!name || !known.has(name)) {
    const list = [...known].sort().join(", ") || "(none)";
    return { call, error: `Unknown tool '${name ?? ""}'. Available tools: ${list}` };
  }
  const parsed = parseToolArguments(name, call.function.arguments ?? "");
  return parsed.ok ? { call, args: parsed.value } : { call, error: parsed.error };
}

export async function runAgentLoop(opts: AgentLoopOptions): Promise<AgentLoopResult> {
  const known = new Set(opts.tools.map((t) => t.function.name));
  const messages: ChatMessage[] = [];
  if (opts.systemPrompt) messages.push({ role: "system", content: opts.systemPrompt });
  messages.push({ role: "user", content: opts.prompt });

  const result: AgentLoopResult = {
    messages,
    apiCalls: 0,
    completed: false,
    partial: false,
    end: "max_turns",
    finalResponse: null,
    usage: emptyUsage(),
  };
  const limit = pLimit(Math.max(1, opts.toolConcurrency));
  const cap = opts.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT;
  let malformedTurns = 0;

  const requestMessages = (): ChatMessage[] => {
    const head: ChatMessage[] = [];
    const rest = opts.systemPrompt ? messages.slice(1) : messages;
    const system = [opts.systemPrompt, opts.ephemeralSystemPrompt].filter(Boolean).join("\n\n");
    if (system) head.push({ role: "system", content: system });
    return [...head, ...(opts.prefill ?? []), ...rest];
  };

  try {
    while (result.apiCalls < opts.maxTurns) {
      opts.signal?.throwIfAborted();
      const response = await opts.model.complete({
        messages: requestMessages(),
        tools: opts.tools.length ? opts.tools : undefined,
        signal: opts.signal,
      });
      result.apiCalls++;
      addUsage(result.usage, response.usage);
      const assistant: AssistantMessage = { ...response.message, role: "assistant" };
      if (!assistant.tool_calls?.length) delete assistant.tool_calls;
      if (!assistant.reasoning) delete assistant.reasoning;
      messages.push(assistant);

      const calls = assistant.tool_calls ?? [];
      if (calls.length === 0) {
        result.finalResponse = assistant.content ?? "";
        if (response.finishReason === "length") {
          result.partial = true;
          result.end = "length";
        } else {
          result.completed = true;
          result.end = "final_answer";
        }
        return result;
      }

      const prepared = calls.map((c) => prepareCall(c, known));
      // A tool that ignores the signal must not hold the task past its timeout or a cancel.
      const outputs = await raceAbort(Promise.all(
        prepared.map((p) =>
          p.error !== undefined
            ? Promise.resolve(JSON.stringify({ error: p.error }))
            : limit(() => opts.executeTool(p.call.function.name, p.args!, opts.ctx)),
        ),
      ), opts.signal);
      prepared.forEach((p, i) => {
        const msg: ToolMessage = { role: "tool", tool_call_id: p.call.id, name: p.call.function?.name, content: capToolResult(outputs[i]!, cap) };
        messages.push(msg);
      });

      malformedTurns = prepared.every((p) => p.error !== undefined) ? malformedTurns + 1 : 0;
      if (malformedTurns >= opts.maxConsecutiveToolErrors) {
        result.partial = true;
        result.end = "malformed_calls";
        return result;
      }
    }
    result.end = "max_turns";
    return result;
  } catch (err) {
    throw new AgentLoopAborted(err, result);
  }
}
