/**
 * What a run folder already holds, rebuilt from the output files themselves (the files are the truth;
 * checkpoint.json only caches counts for people and tools).
 */
import { existsSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlAppender, readJsonl, readLines, repairTornTail } from "./jsonl_file.js";
import type { Outcome, StoredFailureRecord, TrajectoryEntry } from "../core/records.js";
import { pythonLocalIsoformat } from "../core/python_time.js";
import { buildIdentity } from "./build_identity.js";

export const RUN_FILES = {
  trajectories: "trajectories.jsonl",
  failed: "failed.jsonl",
  dropped: "dropped.jsonl",
  checkpoint: "checkpoint.json",
  statistics: "statistics.json",
  summary: "summary.csv",
  atif: "atif.jsonl",
  config: "run.yaml",
  events: "events.log",
  /** `--rl-capture`: one line per result with the engine's tokens (src/core/rl_record.ts). */
  rl: "rl.jsonl",
} as const;

/**
 * A result's key: the task id, with `#epoch` for epochs after the first (--epochs). A `#` or `\` in the id is
 * escaped with `\`, so every (id, epoch) has its own key: task `a` epoch 1 is `a#1`, task `a#1` epoch 0 is `a\#1`
 * (unescaped, both were `a#1`, and the second result counted as done when the first was). Ids without either
 * character keep their plain key.
 */
export function recordKey(taskId: string, epoch: number | undefined): string {
  const id = /[#\\]/.test(taskId) ? taskId.replace(/[#\\]/g, "\\$&") : taskId;
  return epoch === undefined || epoch === 0 ? id : `${id}#${epoch}`;
}

export interface RunState {
  /** Results (task, epoch) that are final: a trajectory line or a deliberate drop (filters). Keys: recordKey. */
  done: Set<string>;
  /** prompt_index of every done result (the original's `completed_prompts`). */
  doneIndices: Set<number>;
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
const RECORD_HEAD = /^\{"prompt_index":(-?\d+),"task_id":("(?:[^"\\\n]|\\.)*")(?:,"epoch":(\d+))?[,}]/;

function recordHead(text: string): { prompt_index: number; task_id: string; epoch?: number } | undefined {
  const m = RECORD_HEAD.exec(text);
  if (!m || !text.endsWith("}")) return undefined;
  try {
    return {
      prompt_index: Number(m[1]),
      task_id: JSON.parse(m[2]!) as string,
      ...(m[3] !== undefined ? { epoch: Number(m[3]) } : {}),
    };
  } catch {
    return undefined;
  }
}

/**
 * Reads (and repairs: a torn tail moved aside) a run folder's results. The caller holds the folder's lock
 * (src/run/runner.ts): another live invocation's folder is neither changed nor read as if its results were final.
 */
export async function loadRunState(runDir: string): Promise<RunState> {
  const state: RunState = { done: new Set(), doneIndices: new Set(), failed: new Map(), badLines: [], tornTails: [] };
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
        state.doneIndices.add(head.prompt_index);
        continue;
      }
      let value: { task_id?: unknown; epoch?: number; prompt_index?: number } | undefined;
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
      if (Number.isInteger(value.prompt_index)) state.doneIndices.add(value.prompt_index!);
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
    state.failed.set(key, {
      outcome: v.outcome ?? "model_error",
      error: v.error ?? "",
      attempts: (prev?.attempts ?? 0) + 1,
      retryable: v.retryable !== false,
    });
  }
  for (const id of state.done) state.failed.delete(id);
  return state;
}

/**
 * For `--retry-unscored`: the result keys of trajectory lines whose score is null (a row names a scorer, and
 * one could not decide: the judge failed or answered garbage, verify could not run). Only lines that say
 * `"passed":null` somewhere are parsed.
 */
export async function unscoredKeys(runDir: string): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const { text } of readLines(join(runDir, RUN_FILES.trajectories))) {
    if (!text.includes('"passed":null')) continue;
    let v: Partial<TrajectoryEntry> | undefined;
    try {
      v = JSON.parse(text) as Partial<TrajectoryEntry>;
    } catch {
      continue; // unreadable: loadRunState reports it
    }
    if (typeof v?.task_id === "string" && v.score && v.score.passed === null) keys.add(recordKey(v.task_id, v.epoch));
  }
  return keys;
}

export function runHasResults(runDir: string): boolean {
  return [RUN_FILES.trajectories, RUN_FILES.failed, RUN_FILES.dropped].some((f) => existsSync(join(runDir, f)));
}

/**
 * For `--only`: moves the existing lines of the chosen tasks out of trajectories.jsonl and dropped.jsonl
 * into `superseded.jsonl` (atomic rename of a rewritten file), so a rerun never duplicates a task. With
 * `byKey` the ids are result keys (`recordKey`: one epoch of a task), as `--retry-unscored` chooses them.
 */
export async function supersedeTasks(
  runDir: string,
  ids: Set<string>,
  opts: { byKey?: boolean } = {},
): Promise<number> {
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
        let epoch: number | undefined;
        try {
          ({ task_id: taskId, epoch } = JSON.parse(text) as { task_id?: unknown; epoch?: number });
        } catch {
          taskId = undefined;
        }
        if (typeof taskId === "string" && ids.has(opts.byKey ? recordKey(taskId, epoch) : taskId)) {
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

/** One batch's counts as the original's checkpoint has them. */
export interface HermesBatchStat {
  processed: number;
  skipped: number;
  discarded_no_reasoning: number;
}

/**
 * The original's checkpoint keys (batch_runner.py `_save_checkpoint`), kept next to ours: `completed_prompts`
 * (sorted prompt indices of results saved or discarded, earlier invocations included) and `batch_stats` per
 * batch of `batchSize` prompts: processed in this invocation, skipped as done before, discarded for having
 * no reasoning. Tasks run in any order here, so a batch is a range of prompt indices, not a unit of work.
 */
export class HermesCheckpoint {
  private readonly completed: Set<number>;
  private readonly batches = new Map<number, HermesBatchStat>();

  constructor(
    private readonly batchSize: number,
    previouslyDone: Iterable<number> = [],
  ) {
    this.completed = new Set(previouslyDone);
    for (const index of this.completed) this.batch(index).skipped++;
  }

  private batch(index: number): HermesBatchStat {
    const n = Math.floor(index / this.batchSize);
    let b = this.batches.get(n);
    if (!b) this.batches.set(n, (b = { processed: 0, skipped: 0, discarded_no_reasoning: 0 }));
    return b;
  }

  /** A task of this invocation ended: saved (`trajectory`), dropped by a filter, or failed (retried later). */
  record(index: number, kind: "trajectory" | "dropped" | "failed", dropReason?: string): void {
    if (!Number.isInteger(index) || index < 0) return;
    this.batch(index).processed++;
    if (kind === "failed") return;
    this.completed.add(index);
    if (kind === "dropped" && dropReason === "no_reasoning") this.batch(index).discarded_no_reasoning++;
  }

  toJSON(): { completed_prompts: number[]; batch_stats: Record<string, HermesBatchStat> } {
    const batch_stats: Record<string, HermesBatchStat> = {};
    for (const n of [...this.batches.keys()].sort((a, b) => a - b))
      batch_stats[String(n)] = { ...this.batches.get(n)! };
    return { completed_prompts: [...this.completed].sort((a, b) => a - b), batch_stats };
  }
}

/**
 * checkpoint.json: our counts plus the original's keys (`run_name`, `completed_prompts`, `batch_stats`,
 * `last_updated` as Python's naive local isoformat), rewritten atomically. It names the hermes-batch that wrote it
 * (`hermes_batch_version`, `hermes_batch_build`: src/store/build_identity.ts) unless `info` says which (a merge gives
 * its shards').
 */
export function writeCheckpoint(runDir: string, info: Record<string, unknown>, hermes?: HermesCheckpoint): void {
  const path = join(runDir, RUN_FILES.checkpoint);
  const tmp = `${path}.tmp`;
  const identity = "hermes_batch_version" in info ? {} : buildIdentity();
  const record = { ...info, ...identity, ...(hermes ? hermes.toJSON() : {}), last_updated: pythonLocalIsoformat() };
  writeFileSync(tmp, JSON.stringify(record, null, 2) + "\n");
  renameSync(tmp, path);
}
