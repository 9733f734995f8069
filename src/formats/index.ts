/**
 * Export formats: a registry of named converters from a trajectory entry to one output record, each
 * loading its module on first use. `hermes-batch export --format NAME` picks one.
 */
import type { CallTokens } from "../core/rl_record.js";
import type { OpenAITool } from "../core/chat.js";
import type { TrajectoryEntry } from "../core/records.js";
import { UserError } from "../core/errors.js";

export interface ExportOptions {
  /** Add a `metadata` object (task id, prompt index, outcome and the entry's metadata). */
  withMetadata?: boolean;
  /** Reasoning in formats that have no think block of their own (openai): drop (default) or `<think>` in content. */
  reasoning?: "drop" | "think";
  /**
   * sharegpt/hermes: rebuild the conversations from the raw messages with reasoning that came only in
   * `reasoning_details` shown as `<think>` (the stored conversations leave it out, as the original does).
   */
  reasoningDetails?: boolean;
  /** The run the trajectories come from (atif: the documents' session_id). */
  runName?: string;
  /** atif: the engine's token data of a trajectory's calls (the run's rl.jsonl), by message index. */
  tokensFor?: (taskId: string, epoch: number | undefined) => Map<number, CallTokens> | undefined;
}

/** Converts one trajectory entry to the record written as one line of the export. */
export type ExportConverter = (entry: TrajectoryEntry, opts: ExportOptions) => Record<string, unknown>;

/** Converts the kept epochs of one task to the one line written for it, or undefined to write nothing for the task. */
export type TaskExportConverter = (taskId: string, entries: TrajectoryEntry[]) => Record<string, unknown> | undefined;

/** A loaded format: one line per trajectory, or one line per task (every kept epoch of the task together). */
export type LoadedExportFormat =
  | { perTask: false; convert: ExportConverter }
  | { perTask: true; convert: TaskExportConverter };

type FormatInfo =
  | { description: string; perTask: false; load: () => Promise<ExportConverter> }
  | { description: string; perTask: true; load: () => Promise<TaskExportConverter> };

/** Every export format by name, in the order --help lists them: the one list that help and errors are made from. */
const FORMATS = new Map<string, FormatInfo>();

export function registerExportFormat(name: string, description: string, load: () => Promise<ExportConverter>): void {
  FORMATS.set(name, { description, perTask: false, load });
}

/** A format written one line per task: `convert` gets all kept epochs of a task at the end of the input. */
export function registerTaskExportFormat(
  name: string,
  description: string,
  load: () => Promise<TaskExportConverter>,
): void {
  FORMATS.set(name, { description, perTask: true, load });
}

export function exportFormats(): { name: string; description: string; perTask: boolean }[] {
  return [...FORMATS].map(([name, f]) => ({ name, description: f.description, perTask: f.perTask }));
}

/** The format names as errors and help list them ("sharegpt, hermes, openai, groups"). */
export function exportFormatNames(): string {
  return [...FORMATS.keys()].join(", ");
}

function formatInfo(name: string): FormatInfo {
  const f = FORMATS.get(name);
  if (!f) throw new UserError(`unknown export format '${name}'. Formats: ${exportFormatNames()}`);
  return f;
}

/** Any format, per line or per task; an unknown name is a UserError listing every format. */
export async function loadAnyExportFormat(name: string): Promise<LoadedExportFormat> {
  const f = formatInfo(name);
  return f.perTask ? { perTask: true, convert: await f.load() } : { perTask: false, convert: await f.load() };
}

/** A format written one line per trajectory. */
export async function loadExportFormat(name: string): Promise<ExportConverter> {
  const f = formatInfo(name);
  if (f.perTask) throw new UserError(`export format '${name}' writes one line per task, not per trajectory`);
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

async function conversationsOf(): Promise<
  (entry: TrajectoryEntry, opts: ExportOptions) => TrajectoryEntry["conversations"]
> {
  const { toHermesConversations } = await import("./hermes.js");
  return (entry, opts) => {
    const detailsReasoning = opts.reasoningDetails === true;
    const hasMessages = Array.isArray(entry.messages) && entry.messages.length > 0;
    if (Array.isArray(entry.conversations) && entry.conversations.length > 0 && !(detailsReasoning && hasMessages))
      return entry.conversations;
    return toHermesConversations(entry.messages ?? [], (entry.tools ?? []) as OpenAITool[], { detailsReasoning });
  };
}

registerExportFormat(
  "sharegpt",
  "{conversations}: ShareGPT turns (system, human, gpt, tool) in Hermes' exact shape",
  async () => {
    const conversations = await conversationsOf();
    return (entry, opts) => {
      const rec: Record<string, unknown> = { conversations: conversations(entry, opts) };
      if (opts.withMetadata) rec.metadata = exportMetadata(entry);
      return rec;
    };
  },
);

registerExportFormat(
  "hermes",
  "the original batch_runner's entries, exactly its keys: prompt_index, conversations, metadata {batch_num, timestamp, model}, completed, partial, api_calls, toolsets_used, tool_stats, tool_error_counts (every tool of the original listed)",
  async () => {
    const conversations = await conversationsOf();
    const { toHermesEntry } = await import("./hermes_entry.js");
    return (entry, opts) => toHermesEntry(entry, conversations(entry, opts));
  },
);

registerExportFormat(
  "openai",
  "{messages, tools}: OpenAI chat fine-tuning JSONL (reasoning dropped unless --reasoning think)",
  async () => {
    const { toOpenAIMessagesRecord } = await import("./openai.js");
    return (entry, opts) => {
      const rec: Record<string, unknown> = { ...toOpenAIMessagesRecord(entry, { reasoning: opts.reasoning }) };
      if (opts.withMetadata) rec.metadata = exportMetadata(entry);
      return rec;
    };
  },
);

registerExportFormat(
  "atif",
  "one ATIF-v1.7 trajectory document (Harbor's Agent Trajectory Interchange Format) per trajectory, validated before it is written",
  async () => {
    const [{ atifDocument }, { packageVersion }] = await Promise.all([
      import("./atif.js"),
      import("../core/package_version.js"),
    ]);
    return (entry, opts) =>
      atifDocument(
        entry,
        { runName: opts.runName, agentVersion: packageVersion() },
        opts.tokensFor?.(entry.task_id, entry.epoch),
      );
  },
);

registerTaskExportFormat(
  "groups",
  "one line per task with every scored epoch's messages, reward and advantage (reward minus the task's mean), for group-based RL trainers",
  async () => {
    const { groupRecord } = await import("./curate.js");
    return groupRecord;
  },
);
