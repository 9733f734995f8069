/**
 * What a shard owns and what its folder holds, read without changing anything: the ownership of every task
 * is recomputed from the dataset (a pure function of the task id, `shardOfTask`), the results come from the
 * shard's own trajectories.jsonl, dropped.jsonl and failed.jsonl.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { readLines } from "../store/jsonl_file.js";
import { RUN_FILES, recordKey } from "../store/checkpoint.js";
import { shardOfTask, sliceCounter } from "./assign.js";

/** A result's keys for a task: the id, then `id#1`, `id#2`… with --epochs. */
export function resultKeys(id: string, epochs: number): string[] {
  return epochs > 1 ? Array.from({ length: epochs }, (_, e) => recordKey(id, e)) : [recordKey(id, 0)];
}

/** A dataset line as `readDataset` yields it; only the id of a valid row matters here. */
export type DatasetItem = { ok: true; value: { id: string } } | { ok: false };

/**
 * Task ids of the dataset slice (`--offset`, `--max-samples`, counted over valid rows as `run` does), by shard,
 * in dataset order.
 */
export async function ownershipByShard(
  rows: AsyncIterable<DatasetItem>,
  count: number,
  slice: { offset?: number; max_samples?: number },
): Promise<string[][]> {
  const out: string[][] = Array.from({ length: count }, () => []);
  const inSlice = sliceCounter(slice);
  for await (const item of rows) {
    if (!item.ok || !inSlice()) continue;
    out[shardOfTask(item.value.id, count)]!.push(item.value.id);
  }
  return out;
}

export interface FolderResults {
  trajectories: Set<string>;
  dropped: Set<string>;
  /** Keys whose latest failed attempt is not followed by a result, with that attempt's outcome and error. */
  failed: Map<string, { outcome: string; error: string }>;
  /** Latest change to any of the shard's files (ms since epoch), or undefined when it has none. */
  lastActivity?: number;
}

function keyOf(text: string): { key: string; outcome?: string; error?: string } | undefined {
  try {
    const v = JSON.parse(text) as { task_id?: unknown; epoch?: unknown; outcome?: unknown; error?: unknown } | null;
    if (typeof v?.task_id !== "string" || !v.task_id) return undefined;
    return {
      key: recordKey(v.task_id, typeof v.epoch === "number" ? v.epoch : undefined),
      outcome: typeof v.outcome === "string" ? v.outcome : undefined,
      error: typeof v.error === "string" ? v.error : undefined,
    };
  } catch {
    return undefined;
  }
}

/** The results of one run folder, read only (a torn last line is skipped, not repaired). */
export async function folderResults(dir: string): Promise<FolderResults> {
  const res: FolderResults = { trajectories: new Set(), dropped: new Set(), failed: new Map() };
  for (const [name, set] of [
    [RUN_FILES.trajectories, res.trajectories],
    [RUN_FILES.dropped, res.dropped],
  ] as const) {
    for await (const { text } of readLines(join(dir, name))) {
      const k = keyOf(text);
      if (k) set.add(k.key);
    }
  }
  for await (const { text } of readLines(join(dir, RUN_FILES.failed))) {
    const k = keyOf(text);
    if (k && !res.trajectories.has(k.key) && !res.dropped.has(k.key))
      res.failed.set(k.key, { outcome: k.outcome ?? "model_error", error: k.error ?? "" });
  }
  for (const name of [
    RUN_FILES.trajectories,
    RUN_FILES.dropped,
    RUN_FILES.failed,
    RUN_FILES.checkpoint,
    RUN_FILES.events,
  ]) {
    const path = join(dir, name);
    if (existsSync(path)) res.lastActivity = Math.max(res.lastActivity ?? 0, statSync(path).mtimeMs);
  }
  return res;
}
