/**
 * Export formats: a registry of named converters from a trajectory entry to one output record, each
 * loading its module on first use. `hermes-batch export --format NAME` picks one.
 */
import type { OpenAITool } from "../core/chat.js";
import type { TrajectoryEntry } from "../core/records.js";
import { UserError } from "../core/errors.js";

export interface ExportOptions {
  /** Add a `metadata` object (task id, prompt index, outcome and the entry's metadata). */
  withMetadata?: boolean;
  /** Reasoning in formats that have no think block of their own (openai): drop (default) or `<think>` in content. */
  reasoning?: "drop" | "think";
}

/** Converts one trajectory entry to the record written as one line of the export. */
export type ExportConverter = (entry: TrajectoryEntry, opts: ExportOptions) => Record<string, unknown>;

interface FormatInfo {
  description: string;
  load: () => Promise<ExportConverter>;
}

const FORMATS = new Map<string, FormatInfo>();

export function registerExportFormat(name: string, description: string, load: () => Promise<ExportConverter>): void {
  FORMATS.set(name, { description, load });
}

export function exportFormats(): { name: string; description: string }[] {
  return [...FORMATS].map(([name, f]) => ({ name, description: f.description }));
}

export async function loadExportFormat(name: string): Promise<ExportConverter> {
  const f = FORMATS.get(name);
  if (!f) throw new UserError(`unknown export format '${name}'. Formats: ${[...FORMATS.keys()].join(", ")}`);
  return f.load();
}

function exportMetadata(entry: TrajectoryEntry): Record<string, unknown> {
  return {
    task_id: entry.task_id,
    prompt_index: entry.prompt_index,
    outcome: entry.outcome,
    completed: entry.completed,
    ...(entry.metadata ?? {}),
  };
}

async function conversationsOf(): Promise<(entry: TrajectoryEntry) => TrajectoryEntry["conversations"]> {
  const { toHermesConversations } = await import("./hermes.js");
  return (entry) =>
    Array.isArray(entry.conversations) && entry.conversations.length > 0
      ? entry.conversations
      : toHermesConversations(entry.messages ?? [], (entry.tools ?? []) as OpenAITool[]);
}

registerExportFormat("sharegpt", "{conversations}: ShareGPT turns (system, human, gpt, tool) in Hermes' exact shape", async () => {
  const conversations = await conversationsOf();
  return (entry, opts) => {
    const rec: Record<string, unknown> = { conversations: conversations(entry) };
    if (opts.withMetadata) rec.metadata = exportMetadata(entry);
    return rec;
  };
});

registerExportFormat("hermes", "the original batch_runner's entries, exactly its keys: prompt_index, conversations, metadata {batch_num, timestamp, model}, completed, partial, api_calls, toolsets_used, tool_stats, tool_error_counts (every tool of the original listed)", async () => {
  const conversations = await conversationsOf();
  const { toHermesEntry } = await import("./hermes_entry.js");
  return (entry) => toHermesEntry(entry, conversations(entry));
});

registerExportFormat("openai", "{messages, tools}: OpenAI chat fine-tuning JSONL (reasoning dropped unless --reasoning think)", async () => {
  const { toOpenAIMessagesRecord } = await import("./openai.js");
  return (entry, opts) => {
    const rec: Record<string, unknown> = { ...toOpenAIMessagesRecord(entry, { reasoning: opts.reasoning }) };
    if (opts.withMetadata) rec.metadata = exportMetadata(entry);
    return rec;
  };
});
