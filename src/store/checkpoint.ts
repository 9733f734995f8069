/**
 * What a run folder already holds, rebuilt from the output files themselves (the files are the truth;
 * checkpoint.json only caches counts for people and tools).
 */
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlAppender, readJsonl, readLines, repairTornTail } from "./jsonl_file.js";
import type { Outcome, StoredFailureRecord, TrajectoryEntry } from "../core/records.js";

export const RUN_FILES = {
  trajectories: "trajectories.jsonl",
  failed: "failed.jsonl",
  dropped: "dropped.jsonl",
  checkpoint: "checkpoint.json",
  statistics: "statistics.json",
  summary: "summary.csv",
  config: "run.yaml",
  events: "events.log",
} as const;

/** A result's key: the task id, with `#epoch` for epochs after the first (--epochs). */
export function recordKey(taskId: string, epoch: number | undefined): string {
  return epoch === undefined || epoch === 0 ? taskId : `${taskId}#${epoch}`;
}

export interface RunState {
  /** Results (task, epoch) that are final: a trajectory line or a deliberate drop (filters). Keys: recordKey. */
  done: Set<string>;
  /** Tasks whose latest attempt failed for infrastructure reasons, and are not done. */
  failed: Map<string, { outcome: Outcome; error: string; attempts: number; retryable: boolean }>;
  /** Lines that could not be parsed (a torn tail is repaired before reading). */
  badLines: { file: string; line: number; error: string }[];
  /** Torn last lines found and moved to `<file>.torn` by this load (a crash mid-write). */
  tornTails: { file: string; bytes: number }[];
}

/**
 * The writer puts `prompt_index`, `task_id` and `epoch` first in every trajectory and dropped line: a resume
 * over 100,000 long lines reads them without parsing whole conversations. Any other line is parsed in full.
 */
const RECORD_HEAD = /^\{"prompt_index":-?\d+,"task_id":("(?:[^"\\\n]|\\.)*")(?:,"epoch":(\d+))?[,}]/;

function recordHead(text: string): { task_id: string; epoch?: number } | undefined {
  const m = RECORD_HEAD.exec(text);
  if (!m || !text.endsWith("}")) return undefined;
  try {
    return { task_id: JSON.parse(m[1]!) as string, ...(m[2] !== undefined ? { epoch: Number(m[2]) } : {}) };
  } catch {
    return undefined;
  }
}

export async function loadRunState(runDir: string): Promise<RunState> {
  const state: RunState = { done: new Set(), failed: new Map(), badLines: [], tornTails: [] };
  const repair = (path: string) => {
    const r = repairTornTail(path);
    if (r.repaired) state.tornTails.push({ file: path, bytes: r.bytes });
  };
  for (const name of [RUN_FILES.trajectories, RUN_FILES.dropped]) {
    const path = join(runDir, name);
    repair(path);
    for await (const { line, text } of readLines(path)) {
      const head = recordHead(text);
      if (head) {
        state.done.add(recordKey(head.task_id, head.epoch));
        continue;
      }
      let value: { task_id?: unknown; epoch?: number } | undefined;
      let error: string | undefined;
      try {
        value = JSON.parse(text) as typeof value;
      } catch (err) {
        error = (err as Error).message;
      }
      if (error || typeof value?.task_id !== "string") {
        state.badLines.push({ file: path, line, error: error ?? "no task_id" });
        continue;
      }
      state.done.add(recordKey(value.task_id, value.epoch));
    }
  }
  const failedPath = join(runDir, RUN_FILES.failed);
  repair(failedPath);
  for await (const l of readJsonl<Partial<StoredFailureRecord>>(failedPath)) {
    const v = l.value;
    if (l.error || typeof v?.task_id !== "string") {
      state.badLines.push({ file: failedPath, line: l.line, error: l.error ?? "no task_id" });
      continue;
    }
    const key = recordKey(v.task_id, (v as { epoch?: number }).epoch);
    if (state.done.has(key)) continue;
    const prev = state.failed.get(key);
    state.failed.set(key, { outcome: v.outcome ?? "model_error", error: v.error ?? "", attempts: (prev?.attempts ?? 0) + 1, retryable: v.retryable !== false });
  }
  for (const id of state.done) state.failed.delete(id);
  return state;
}

export function runHasResults(runDir: string): boolean {
  return [RUN_FILES.trajectories, RUN_FILES.failed, RUN_FILES.dropped].some((f) => existsSync(join(runDir, f)));
}

/**
 * For `--only`: moves the existing lines of the chosen tasks out of trajectories.jsonl and dropped.jsonl
 * into `superseded.jsonl` (atomic rename of a rewritten file), so a rerun never duplicates a task.
 */
export async function supersedeTasks(runDir: string, ids: Set<string>): Promise<number> {
  let moved = 0;
  const superseded = new JsonlAppender(join(runDir, "superseded.jsonl"), 0);
  try {
    for (const name of [RUN_FILES.trajectories, RUN_FILES.dropped]) {
      const path = join(runDir, name);
      if (!existsSync(path)) continue;
      const tmp = `${path}.rewrite`;
      rmSync(tmp, { force: true }); // a leftover of a crashed rewrite must not be appended to
      const keep = new JsonlAppender(tmp, 0);
      // Lines are copied as written: an unreadable line stays where it was instead of being lost.
      for await (const { text } of readLines(path)) {
        let taskId: unknown;
        try {
          taskId = (JSON.parse(text) as { task_id?: unknown }).task_id;
        } catch {
          taskId = undefined;
        }
        if (typeof taskId === "string" && ids.has(taskId)) {
          superseded.appendLine(text);
          moved++;
        } else {
          keep.appendLine(text);
        }
      }
      keep.close();
      superseded.sync();
      renameSync(tmp, path);
    }
  } finally {
    superseded.close();
  }
  return moved;
}

export function writeCheckpoint(runDir: string, info: Record<string, unknown>): void {
  const path = join(runDir, RUN_FILES.checkpoint);
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify({ ...info, last_updated: new Date().toISOString() }, null, 2) + "\n");
  renameSync(tmp, path);
}
