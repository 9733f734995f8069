/** The small messages between the main thread and the workers. */
import type { Outcome } from "../core/records.js";
import type { Expected } from "../score/matchers.js";
import type { TaskLimits } from "./dataset.js";
import type { ModelEvent } from "../scheduler/scheduler.js";

/** One task as planned by the main thread: everything a worker needs besides the run config. */
export interface TaskSpec {
  index: number;
  id: string;
  /** 1-based line in the dataset file. */
  line: number;
  prompt: string;
  toolsets: string[];
  image?: string;
  cwd?: string;
  network?: string;
  /** The row's own limits (memory_mb, cpus, pids_limit, disk), over the run's. */
  limits?: TaskLimits;
  verify?: string;
  /** Host folder copied into the environment only after the agent ended, just before `verify` runs. */
  verifyFiles?: string;
  /** Scoring fields of the row (see src/score). */
  expected?: Expected;
  rubric?: string;
  metadata?: Record<string, unknown>;
  /** Extra dataset fields, copied to the output metadata. */
  extra?: Record<string, unknown>;
  attempt: number;
  /** 0..K-1 with --epochs K; undefined for a run of one epoch (lines then carry no epoch, as Hermes'). */
  epoch?: number;
}

/** Where one (task, epoch) runs: its sandbox labels and workspace folder. */
export function specKey(spec: Pick<TaskSpec, "id" | "epoch">): string {
  return spec.epoch ? `${spec.id}.e${spec.epoch}` : spec.id;
}

/** The environment's `disk` option: a size, or undefined for no quota (`none`). */
export function diskOption(disk: string | undefined): string | undefined {
  return disk === undefined || disk === "none" ? undefined : disk;
}

export type ResultKind = "trajectory" | "failed" | "dropped";

/** A worker's answer: the output line, already serialised, and what the progress display needs. */
export interface TaskOutcomeMessage {
  taskId: string;
  kind: ResultKind;
  outcome: Outcome;
  /** The JSONL line for trajectories.jsonl / failed.jsonl / dropped.jsonl (without newline). */
  line: string;
  /** The task's tokens (total_tokens of each usage) by who spent them: agent, approver, judge. */
  tokens: { agent: number; approver: number; judge: number };
  error?: string;
  /** The stack of an internal_error, for events.log (never in the output records). */
  stack?: string;
  /** Model retries and connection-limit changes during this task, for events.log. */
  modelEvents?: ModelEvent[];
  /** What the environment backend reported during this task (retried sandbox starts), for events.log. */
  environmentEvents?: { at: number; message: string }[];
  /** What libraries printed to the console while this task ran (kept off the terminal), for events.log. */
  consoleNotes?: string[];
  /** Approver failures of this task (each a fail-closed deny): how many, and the first one's reason. */
  approverErrors?: { count: number; first: string };
  /** `--rl-capture`: the task's rl.jsonl line (without newline), appended with `line`. */
  rlLine?: string;
  /** What made that line's token data untrustworthy (the line is excluded), for events.log. */
  rlProblems?: string[];
}

/** The events.log entry of a failed task: one line, then the stack of an internal_error indented under it. */
export function failureEvent(msg: TaskOutcomeMessage): string {
  const head = `task ${msg.taskId}: ${msg.outcome}: ${msg.error ?? ""}`;
  return msg.stack ? `${head}\n    ${msg.stack.split("\n").join("\n    ")}` : head;
}
