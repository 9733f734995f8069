/**
 * One line exactly as the original's batch_runner writes it (batch_runner.py `_process_batch_worker`):
 * the nine entry keys in its order, `metadata` with only `{batch_num, timestamp, model}`, the timestamp
 * in Python's `datetime.now().isoformat()` form, and `tool_stats` / `tool_error_counts` normalised over
 * every tool the original registers plus ours. A file of these and a file the original wrote load as one
 * table (the same keys in every entry and in every metadata object).
 */
import type { ToolStat, TrajectoryEntry } from "../core/records.js";
import { HERMES_TOOL_NAMES } from "../core/hermes_tool_names.js";
import { pythonLocalIsoformat } from "../core/python_time.js";

export { pythonLocalIsoformat };

/** The original's entry keys, in the order it writes them. */
export const HERMES_ENTRY_KEYS = [
  "prompt_index",
  "conversations",
  "metadata",
  "completed",
  "partial",
  "api_calls",
  "toolsets_used",
  "tool_stats",
  "tool_error_counts",
] as const;

/** The original's metadata keys. */
export const HERMES_METADATA_KEYS = ["batch_num", "timestamp", "model"] as const;

const PYTHON_NAIVE_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/;

/** A recorded timestamp in the original's form: kept when already naive ISO, else converted to local time. */
export function hermesTimestamp(value: unknown): string {
  if (typeof value === "string" && PYTHON_NAIVE_ISO.test(value)) return value;
  if (typeof value === "string" || typeof value === "number") {
    const d = new Date(value);
    if (!Number.isNaN(d.getTime())) return pythonLocalIsoformat(d);
  }
  return "";
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0;

/** tool_stats and tool_error_counts with every known tool present (zeros), plus any other tool the entry names. */
export function normalizedToolStats(
  stats: Record<string, Partial<ToolStat>> | undefined,
  errors: Record<string, number> | undefined,
  knownTools: readonly string[] = HERMES_TOOL_NAMES,
): { tool_stats: Record<string, ToolStat>; tool_error_counts: Record<string, number> } {
  const names = new Set<string>(knownTools);
  for (const n of Object.keys(stats ?? {})) names.add(n);
  for (const n of Object.keys(errors ?? {})) names.add(n);
  const tool_stats: Record<string, ToolStat> = {};
  const tool_error_counts: Record<string, number> = {};
  for (const name of [...names].sort()) {
    const s = stats?.[name] ?? {};
    const stat = {
      count: isCount(s.count) ? s.count : 0,
      success: isCount(s.success) ? s.success : 0,
      failure: isCount(s.failure) ? s.failure : 0,
    };
    tool_stats[name] = stat;
    const e = errors?.[name];
    tool_error_counts[name] = isCount(e) ? e : stat.failure;
  }
  return { tool_stats, tool_error_counts };
}

/** The original's entry for one of our trajectory lines (or one of its own, passed through unchanged in shape). */
export function toHermesEntry(
  entry: TrajectoryEntry,
  conversations: TrajectoryEntry["conversations"],
): Record<string, unknown> {
  const meta = (entry.metadata ?? {}) as Record<string, unknown>;
  const { tool_stats, tool_error_counts } = normalizedToolStats(entry.tool_stats, entry.tool_error_counts);
  return {
    prompt_index: Number.isInteger(entry.prompt_index) ? entry.prompt_index : 0,
    conversations,
    metadata: {
      batch_num: Number.isInteger(meta.batch_num) ? meta.batch_num : 0,
      timestamp: hermesTimestamp(meta.timestamp),
      model: typeof meta.model === "string" ? meta.model : "",
    },
    completed: entry.completed === true,
    partial: entry.partial === true,
    api_calls: Number.isInteger(entry.api_calls) ? entry.api_calls : 0,
    toolsets_used: Array.isArray(entry.toolsets_used) ? entry.toolsets_used.filter((t) => typeof t === "string") : [],
    tool_stats,
    tool_error_counts,
  };
}
