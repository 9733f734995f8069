/**
 * Curation of training data from scored trajectories: filters on one line (passed, score, turns, tool
 * errors), choices across lines (best epoch per task, duplicates), a train/validation split by task,
 * and the reward of a line for group-based trainers.
 */
import { createHash } from "node:crypto";
import type { TrajectoryEntry } from "../core/records.js";

export interface CurateOptions {
  onlyPassed?: boolean;
  minScore?: number;
  minTurns?: number;
  maxTurns?: number;
  dropToolErrors?: boolean;
  bestOfEpochs?: boolean;
  dedup?: boolean;
}

type Scored = TrajectoryEntry & { epoch?: number; score?: { passed: boolean | null; value: number | null } };

export function epochOf(entry: TrajectoryEntry): number {
  return (entry as Scored).epoch ?? 0;
}

/** The line's reward: the score value, else 1/0 for passed/failed; null when unscored. */
export function rewardOf(entry: TrajectoryEntry): number | null {
  const score = (entry as Scored).score;
  // A score of other types (a hand-edited line) is no score: never a string averaged into a group's mean.
  if (!score || typeof score.passed !== "boolean") return null;
  return typeof score.value === "number" && Number.isFinite(score.value) ? score.value : score.passed ? 1 : 0;
}

/** Assistant turns of the conversation (a "turn" as --min-turns/--max-turns count it). */
export function turnsOf(entry: TrajectoryEntry): number {
  if (Array.isArray(entry.messages)) return entry.messages.filter((m) => m.role === "assistant").length;
  return (entry.conversations ?? []).filter((t) => t.from === "gpt").length;
}

function toolErrors(entry: TrajectoryEntry): number {
  return Object.values(entry.tool_error_counts ?? {}).reduce((a, b) => a + b, 0);
}

/** Why a line is left out by the one-line filters, or undefined to keep it. */
export function lineFilterReason(entry: TrajectoryEntry, o: CurateOptions): string | undefined {
  const score = (entry as Scored).score;
  if (o.onlyPassed && score?.passed !== true) return "not passed";
  if (o.minScore !== undefined && !((rewardOf(entry) ?? -Infinity) >= o.minScore)) return "below --min-score";
  const turns = turnsOf(entry);
  if (o.minTurns !== undefined && turns < o.minTurns) return "too few turns";
  if (o.maxTurns !== undefined && turns > o.maxTurns) return "too many turns";
  if (o.dropToolErrors && toolErrors(entry) > 0) return "tool errors";
  return undefined;
}

function promptOf(entry: TrajectoryEntry): string {
  const user = entry.messages?.find((m) => m.role === "user");
  if (user && typeof user.content === "string") return user.content;
  return entry.conversations?.find((t) => t.from === "human")?.value ?? "";
}

/**
 * The task a line belongs to: its task_id, or for a line of the original's own files (no task_id) its
 * prompt_index, so each prompt is a task of its own (for --split, --best-of-epochs, repeats) instead of every
 * such line being taken for one task.
 */
export function taskKeyOf(entry: TrajectoryEntry): string {
  if (typeof entry.task_id === "string") return entry.task_id;
  return `\u0000prompt_index ${typeof entry.prompt_index === "number" ? entry.prompt_index : "?"}`;
}

const norm = (s: string) => s.replace(/\s+/g, " ").trim();

/**
 * What --dedup compares after the prompt: the final answer; for a line without one (our max_turns or partial
 * lines: null), the whole trajectory after the prompt, so epochs that went different ways are not duplicates;
 * for the original's lines (conversations only) the last gpt turn without its think block.
 */
function answerOf(entry: TrajectoryEntry): string {
  if (typeof entry.final_response === "string") return `answer\u0000${norm(entry.final_response)}`;
  if (Array.isArray(entry.messages)) {
    const start = entry.messages.findIndex((m) => m.role === "user");
    // Roles, texts and calls only: call ids differ from run to run (and from epoch to epoch) for the same calls.
    const steps = entry.messages
      .slice(start + 1)
      .map((m) => [
        m.role,
        m.content ?? "",
        m.role === "assistant" ? (m.tool_calls ?? []).map((c) => [c.function.name, c.function.arguments]) : [],
      ]);
    return `trajectory\u0000${JSON.stringify(steps)}`;
  }
  const last = (entry.conversations ?? []).findLast((t) => t.from === "gpt")?.value ?? "";
  return `answer\u0000${norm(last.replace(/^\s*<think>[\s\S]*?<\/think>/, ""))}`;
}

/** Same prompt and same final answer (whitespace-insensitive) = duplicate. */
export function dedupKey(entry: TrajectoryEntry): string {
  return createHash("sha256")
    .update(norm(promptOf(entry)))
    .update("\u0000")
    .update(answerOf(entry))
    .digest("hex");
}

/**
 * Per task, the epoch to keep with --best-of-epochs: the highest reward (unscored lowest), then fewer
 * turns, then the lower epoch, so the choice is stable.
 */
export class BestEpochPicker {
  private readonly best = new Map<string, { epoch: number; reward: number; turns: number }>();

  offer(entry: TrajectoryEntry): void {
    const cand = { epoch: epochOf(entry), reward: rewardOf(entry) ?? -Infinity, turns: turnsOf(entry) };
    const cur = this.best.get(taskKeyOf(entry));
    const better =
      !cur ||
      cand.reward > cur.reward ||
      (cand.reward === cur.reward && (cand.turns < cur.turns || (cand.turns === cur.turns && cand.epoch < cur.epoch)));
    if (better) this.best.set(taskKeyOf(entry), cand);
  }

  isBest(entry: TrajectoryEntry): boolean {
    return this.best.get(taskKeyOf(entry))?.epoch === epochOf(entry);
  }
}

/**
 * The tasks of a train/validation split: exactly round(ratio × n) of the n task ids (half rounds up) in
 * validation, the first ones in an order hashed from the seed and each id (ties by id), so the same seed
 * and ids always give the same split, whatever order the lines came in. Every epoch of a task goes with its id.
 */
export function validationTasks(taskIds: Iterable<string>, ratio: number, seed: number): Set<string> {
  const ids = [...new Set(taskIds)];
  const key = (id: string) => createHash("sha256").update(`${seed}\u0000${id}`).digest("hex");
  const keyed = ids
    .map((id) => ({ id, key: key(id) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return new Set(keyed.slice(0, validationCount(ids.length, ratio)).map((x) => x.id));
}

/** round(ratio × n), half up; the tiny margin keeps 0.29 × 50 (14.4999… in floating point) at 15. */
export function validationCount(n: number, ratio: number): number {
  return Math.min(n, Math.max(0, Math.floor(ratio * n + 0.5 + 1e-9)));
}

/** Why a split of n tasks at this ratio leaves a side empty (with the ratios that would not), or undefined. */
export function splitProblem(n: number, ratio: number): string | undefined {
  const k = validationCount(n, ratio);
  if (k > 0 && k < n) return undefined;
  const what = `--split ${ratio} puts round(${ratio} × ${n}) = ${k} of the ${n} exported task${n === 1 ? "" : "s"} in validation${k === 0 ? "" : " and none in training"}`;
  if (n < 2) return `${what}: a split needs at least 2 tasks, one on each side`;
  // The smallest ratio with one task in validation and the largest with one left in training, to 4 decimals.
  const lo = Math.ceil((0.5 / n) * 1e4 - 1e-6) / 1e4;
  const hi = Math.floor(((n - 0.5) / n) * 1e4 - 1e-6) / 1e4;
  return `${what}: with ${n} tasks, a --split from ${lo} to ${hi} leaves at least one task on each side`;
}

export interface GroupMember {
  epoch: number;
  messages: unknown;
  reward: number;
  advantage: number;
}

/** One task's scored epochs with their advantages (reward minus the task's mean reward: they sum to 0). */
export function groupRecord(
  taskId: string,
  entries: TrajectoryEntry[],
): { task_id: string; prompt: string; mean_reward: number; samples: GroupMember[] } | undefined {
  const scored = entries
    .map((e) => ({ e, reward: rewardOf(e) }))
    .filter((x): x is { e: TrajectoryEntry; reward: number } => x.reward !== null);
  if (scored.length === 0) return undefined;
  const mean = scored.reduce((a, x) => a + x.reward, 0) / scored.length;
  return {
    task_id: taskId,
    prompt: promptOf(scored[0]!.e),
    mean_reward: mean,
    samples: scored
      .sort((a, b) => epochOf(a.e) - epochOf(b.e))
      .map(({ e, reward }) => ({ epoch: epochOf(e), messages: e.messages, reward, advantage: reward - mean })),
  };
}
