/**
 * OpenAI chat fine-tuning records (`{"messages": [...], "tools": [...]}` per JSONL line) from the raw
 * messages of a trajectory. Only the keys the fine-tuning format accepts are written: tool messages
 * lose `name`, assistant messages lose `reasoning` (or carry it as a `<think>` block on request).
 */
import type { ChatMessage, OpenAITool } from "../core/chat.js";
import type { TrajectoryEntry } from "../core/records.js";

export type OpenAIFineTuneMessage =
  | { role: "system" | "user"; content: string }
  | {
      role: "assistant";
      content?: string;
      tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
    }
  | { role: "tool"; tool_call_id: string; content: string };

export interface OpenAIFineTuneRecord {
  messages: OpenAIFineTuneMessage[];
  tools: OpenAITool[];
}

export interface OpenAIExportOptions {
  /** `drop` (default) leaves reasoning out; `think` prepends it to the content as `<think>\n…\n</think>\n`. */
  reasoning?: "drop" | "think";
  /** Keep system messages found in `messages` (default true). */
  includeSystem?: boolean;
}

function isOpenAITool(t: unknown): t is OpenAITool {
  const f = (t as { function?: { name?: unknown } } | null)?.function;
  return (
    typeof t === "object" && t !== null && (t as { type?: unknown }).type === "function" && typeof f?.name === "string"
  );
}

export function toOpenAIMessages(
  messages: readonly ChatMessage[],
  opts: OpenAIExportOptions = {},
): OpenAIFineTuneMessage[] {
  const out: OpenAIFineTuneMessage[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "system":
        if (opts.includeSystem !== false) out.push({ role: "system", content: m.content });
        break;
      case "user":
        out.push({ role: "user", content: m.content });
        break;
      case "tool":
        out.push({ role: "tool", tool_call_id: m.tool_call_id, content: m.content ?? "" });
        break;
      case "assistant": {
        let content = m.content ?? "";
        if (opts.reasoning === "think" && m.reasoning && m.reasoning.trim())
          content = `<think>\n${m.reasoning}\n</think>\n${content}`;
        const calls = m.tool_calls ?? [];
        if (calls.length === 0) {
          out.push({ role: "assistant", content });
          break;
        }
        const tool_calls = calls.map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: c.function.name, arguments: c.function.arguments },
        }));
        out.push(content ? { role: "assistant", content, tool_calls } : { role: "assistant", tool_calls });
        break;
      }
    }
  }
  return out;
}

/** The fine-tuning record of one trajectory: its messages and the tool definitions it ran with. */
export function toOpenAIMessagesRecord(
  entry: Pick<TrajectoryEntry, "messages" | "tools">,
  opts: OpenAIExportOptions = {},
): OpenAIFineTuneRecord {
  return {
    messages: toOpenAIMessages(entry.messages ?? [], opts),
    tools: (entry.tools ?? []).filter(isOpenAITool).map((t) => ({ type: "function", function: t.function })),
  };
}
