/**
 * How a task ended. completed, max_turns, partial, time_limit (a scored row's or a Harbor task's agent stopped
 * at its time limit, graded like Harbor grades it) and resource_limit (a scored row's or a Harbor task's agent hit
 * a limit of its sandbox: memory, process count or disk quota, named by the line's `reason`; graded likewise) are
 * final (a trajectory). The rest are failures
 * (failed.jsonl): model_error, environment_error, timeout and cancelled are infrastructure and rerun by
 * `--resume`; internal_error is a bug of hermes-batch itself, rerun only with `--retry-internal`.
 * Apart from records.ts (whose schemas are built from these) so that a worker thread need not build every
 * record schema at start-up to know which outcomes are final.
 */
export const OUTCOMES = [
  "completed",
  "max_turns",
  "partial",
  "time_limit",
  "resource_limit",
  "model_error",
  "environment_error",
  "timeout",
  "cancelled",
  "internal_error",
] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const DONE_OUTCOMES: ReadonlySet<Outcome> = new Set([
  "completed",
  "max_turns",
  "partial",
  "time_limit",
  "resource_limit",
]);

export const FAILURE_OUTCOMES = OUTCOMES.filter((o) => !DONE_OUTCOMES.has(o)) as Exclude<
  Outcome,
  "completed" | "max_turns" | "partial" | "time_limit" | "resource_limit"
>[];

/** The sandbox limits a task can hit (a line's `reason`): its memory, its process count, its disk quota. */
export const LIMIT_REASONS = ["memory_limit", "pids_limit", "disk_limit"] as const;
export type LimitReason = (typeof LIMIT_REASONS)[number];

/** Why a filter removed a finished trajectory (dropped.jsonl's `dropped`). */
export const DROP_REASONS = ["unknown_tools", "no_reasoning", "empty_response"] as const;
