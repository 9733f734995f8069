/**
 * The record step of a run, on the main thread (the single writer): each task's outcome message becomes its line
 * in trajectories/failed/dropped.jsonl (and rl.jsonl), its events go to events.log, and the counts move on.
 */
import { UserError } from "../core/errors.js";
import { statSync } from "node:fs";
import { join } from "node:path";
import type { RunConfig } from "../config/run_config.js";
import { JsonlAppender } from "../store/jsonl_file.js";
import { HermesCheckpoint, RUN_FILES } from "../store/checkpoint.js";
import { describeModelEvent } from "../scheduler/scheduler.js";
import { FailureReasons } from "./failure_reasons.js";
import type { Progress, ProgressCounts } from "./progress.js";
import { failureEvent, type TaskOutcomeMessage } from "./task_spec.js";

export interface RecorderContext {
  progress: Progress;
  logEvent: (msg: string, at?: Date) => void;
  redact: (text: string) => string;
  /** The model connection counts shown beside the task counts. */
  modelCounts: () => Pick<ProgressCounts, "model">;
  /** Sees every outcome before it is written (the dead-endpoint watch). */
  observe: (msg: TaskOutcomeMessage) => void;
}

export type ResultRecorder = ReturnType<typeof createResultRecorder>;

/**
 * Drops a written message's lines (11.7 KB each at 3 calls per task). The message is still referenced by the
 * task's promise in piscina, which has lived as long as the task and sits in old space: a young object an old one
 * points to survives every scavenge until the next full collection, dead or not. Kept, every line of a run was
 * promoted (the main thread's old space grew 11 → 49 MB over 2,048 tasks, about 0.1 MB of RSS per loop).
 */
function releaseLines(msg: TaskOutcomeMessage): void {
  msg.line = "";
  if (msg.rlLine !== undefined) msg.rlLine = "";
}

export function createResultRecorder(
  config: RunConfig,
  runDir: string,
  doneIndices: Set<number>,
  context: RecorderContext,
) {
  const { progress, logEvent, redact, modelCounts } = context;
  const files = {
    trajectory: new JsonlAppender(join(runDir, RUN_FILES.trajectories)),
    failed: new JsonlAppender(join(runDir, RUN_FILES.failed)),
    dropped: new JsonlAppender(join(runDir, RUN_FILES.dropped)),
    rl: config.rl_capture ? new JsonlAppender(join(runDir, RUN_FILES.rl)) : undefined,
  };
  // Where this invocation's lines of trajectories.jsonl start (bytes, after the appender's torn-tail repair):
  // the lines after it were built by this run, not read from a file someone may have edited.
  const ownTrajectoriesFrom = statSync(files.trajectory.path).size;
  const counts: ProgressCounts = { done: 0, failed: 0, dropped: 0, tokens: 0 };
  // This invocation's tokens by who spent them; counts.tokens is their total (agent + approver + judge).
  const tokensBy = { agent: 0, approver: 0, judge: 0 };
  const outcomesThisTime = new Map<string, number>();
  const failureReasons = new FailureReasons();
  const noUsageWarned = new Set<string>();
  const approverFailures = { count: 0, first: undefined as string | undefined };
  const hermesCheckpoint = new HermesCheckpoint(config.batch_size, doneIndices);
  const write = (msg: TaskOutcomeMessage, promptIndex: number) => {
    context.observe(msg);
    hermesCheckpoint.record(promptIndex, msg.kind, msg.error);
    outcomesThisTime.set(msg.outcome, (outcomesThisTime.get(msg.outcome) ?? 0) + (msg.kind === "dropped" ? 0 : 1));
    for (const e of msg.modelEvents ?? []) {
      if (e.kind === "no_usage" || e.kind === "bad_usage") {
        // Once per endpoint for the whole run, on the console too.
        if (noUsageWarned.has(`${e.kind} ${e.endpoint}`)) continue;
        noUsageWarned.add(`${e.kind} ${e.endpoint}`);
        progress.log(redact(describeModelEvent(e)));
      }
      logEvent(`task ${msg.taskId}: ${describeModelEvent(e)}`, new Date(e.at));
    }
    for (const e of msg.environmentEvents ?? []) logEvent(`task ${msg.taskId}: ${e.message}`, new Date(e.at));
    if (msg.consoleNotes?.length) logEvent(`task ${msg.taskId}: printed by a library: ${msg.consoleNotes.join(" | ")}`);
    if (msg.approverErrors) {
      approverFailures.count += msg.approverErrors.count;
      approverFailures.first ??= `task ${msg.taskId}: ${msg.approverErrors.first}`;
    }
    // The rl line first: a crash between the two leaves a line a rerun supersedes (readers keep the last per
    // task and epoch), never a result without its tokens.
    if (msg.rlLine !== undefined) files.rl?.appendLine(redact(msg.rlLine));
    if (msg.rlProblems)
      logEvent(`task ${msg.taskId}: rl.jsonl line excluded, bad token data: ${msg.rlProblems.join("; ")}`);
    try {
      files[msg.kind].appendLine(redact(msg.line));
    } catch (err) {
      throw storageError(runDir, err);
    }
    releaseLines(msg);
    tokensBy.agent += msg.tokens.agent;
    tokensBy.approver += msg.tokens.approver;
    tokensBy.judge += msg.tokens.judge;
    counts.tokens += msg.tokens.agent + msg.tokens.approver + msg.tokens.judge;
    if (msg.kind === "trajectory") counts.done++;
    else if (msg.kind === "dropped") counts.dropped++;
    else {
      counts.failed++;
      failureReasons.add(msg.taskId, msg.outcome, msg.error);
      logEvent(failureEvent(msg));
    }
    progress.update({ ...counts, ...modelCounts() });
  };
  const close = () => {
    files.trajectory.close();
    files.failed.close();
    files.dropped.close();
    files.rl?.close();
  };
  return {
    write,
    close,
    ownTrajectoriesFrom,
    counts,
    tokensBy,
    outcomesThisTime,
    failureReasons,
    approverFailures,
    hermesCheckpoint,
  };
}

/** Write errors of the run folder itself: not a bug of hermes-batch, and a resume continues once they are fixed. */
const STORAGE_CODES: Record<string, string> = {
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EIO: "input/output error",
  EFBIG: "file too large",
};

/**
 * A result that cannot be written stops the run with what happened and what to do, instead of an "internal error":
 * the results written before are kept (a torn last line is moved aside by the next --resume).
 */
export function storageError(runDir: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === undefined || !(code in STORAGE_CODES)) return err as Error;
  return new UserError(
    `cannot write to run folder ${runDir} (${code}: ${STORAGE_CODES[code]}); the results written before are kept: fix the cause (free space, make the folder writable), then run the same command with --resume`,
    1,
  );
}
