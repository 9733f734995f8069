/**
 * The output records of a run folder, as zod schemas: the one definition of what trajectories.jsonl,
 * failed.jsonl and dropped.jsonl hold, used by the writer (src/run), `export`, `merge` and the reports.
 * docs/schemas/*.schema.json are generated from these (`npm run schemas`). Field names are Hermes'
 * and must not change: datasets written by either tool are mixed.
 */
import * as z from "zod";
import type { Usage } from "./chat.js";
import {
  ApprovalRecordSchema,
  ChatMessageSchema,
  ModelCallRecordSchema,
  OpenAIToolSchema,
  UsageSchema,
  type ApprovalRecord,
  type ModelCallRecord,
} from "./record_parts.js";
import { DONE_OUTCOMES, DROP_REASONS, FAILURE_OUTCOMES, LIMIT_REASONS, OUTCOMES, type Outcome } from "./outcomes.js";

export { DONE_OUTCOMES, DROP_REASONS, FAILURE_OUTCOMES, OUTCOMES, type Outcome };
export {
  ApprovalRecordSchema,
  ChatMessageSchema,
  ModelCallRecordSchema,
  OpenAIToolSchema,
  UsageSchema,
  type ApprovalRecord,
  type ModelCallRecord,
};

export const OutcomeSchema = z.enum(OUTCOMES).describe("How the task ended");

export const FailureOutcomeSchema = z.enum(FAILURE_OUTCOMES);

export const ConversationTurnSchema = z.object({ from: z.enum(["system", "human", "gpt", "tool"]), value: z.string() });
export type ConversationTurn = z.infer<typeof ConversationTurnSchema>;

export const ToolStatSchema = z.object({
  count: z.number().int(),
  success: z.number().int(),
  failure: z.number().int(),
});
export type ToolStat = z.infer<typeof ToolStatSchema>;

export const VerifyResultSchema = z.object({
  command: z.string(),
  exit_code: z.number().int(),
  passed: z.boolean(),
  output: z.string(),
  timed_out: z.boolean(),
});
export type VerifyResult = z.infer<typeof VerifyResultSchema>;

/** One scorer's verdict on a task: null when it could not decide (judge failed, verify could not run). */
export const ScorerResultSchema = z.object({
  name: z.string(),
  passed: z.boolean().nullable(),
  value: z.number().nullable(),
  reason: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** A task's score: all scorers its row names must pass; null = unscored (never counted as a failure). */
export const ScoreSchema = z.object({
  passed: z.boolean().nullable(),
  value: z.number().nullable(),
  scorers: z.array(ScorerResultSchema),
  /** What the row is graded against, as a digest (src/score/criteria.ts); absent in older runs. */
  criteria: z.string().optional(),
});
export type ScoreRecord = z.infer<typeof ScoreSchema>;

/** The rubric judge's call as recorded in the trajectory (its tokens are counted apart from the agent's). */
export const JudgeRecordSchema = z.object({
  model: z.string(),
  messages: z.array(z.object({ role: z.enum(["system", "user"]), content: z.string() })),
  answer: z.string().nullable(),
  usage: UsageSchema,
  error: z.string().optional(),
});

/** One line of trajectories.jsonl (Hermes-compatible `conversations` plus raw `messages`). */
export const TrajectoryEntrySchema = z.object({
  prompt_index: z.number().int(),
  task_id: z.string(),
  /** 0..K-1 with --epochs K > 1 (absent in a run of one epoch). */
  epoch: z.number().int().nonnegative().optional(),
  conversations: z.array(ConversationTurnSchema),
  messages: z.array(ChatMessageSchema),
  tools: z.array(OpenAIToolSchema),
  metadata: z.record(z.string(), z.unknown()),
  completed: z.boolean(),
  partial: z.boolean(),
  outcome: OutcomeSchema,
  api_calls: z.number().int(),
  /** The toolsets drawn for the task, in the distribution's order, provided here or not (the original's meaning). */
  toolsets_used: z.array(z.string()),
  /** Of those, the ones that gave the model at least one tool in this build (absent in older runs). */
  toolsets_offered: z.array(z.string()).optional(),
  tool_stats: z.record(z.string(), ToolStatSchema),
  tool_error_counts: z.record(z.string(), z.number().int()),
  usage: UsageSchema,
  approval_usage: UsageSchema.optional(),
  approvals: z.array(ApprovalRecordSchema),
  /** Every model call of the agent loop in order, kept or thrown away (absent in older runs). */
  model_calls: z.array(ModelCallRecordSchema).optional(),
  /**
   * Indexes in `messages` of the turns the harness wrote rather than the dataset or the model: the continuation
   * and closing user turns, the "(empty)" stand-in answer (absent in older runs; [] when none).
   */
  injected_messages: z.array(z.number().int().nonnegative()).optional(),
  verify: VerifyResultSchema.optional(),
  final_response: z.string().nullable(),
  error: z.string().optional(),
  /** resource_limit (and a failed line's environment_error): the sandbox limit the task hit. */
  reason: z.enum(LIMIT_REASONS).optional(),
  duration_ms: z.number(),
  /** Model requests of this task that were retried (429, 5xx, timeouts, broken streams), every purpose; absent when none. */
  model_retries: z.number().int().nonnegative().optional(),
  /** Present when the row names a scorer (expected, verify, rubric). */
  score: ScoreSchema.optional(),
  judge: JudgeRecordSchema.optional(),
  judge_usage: UsageSchema.optional(),
  /** USD for every token of the task (agent, approver, judge), when the run has --price-input/--price-output. */
  cost_usd: z.number().nonnegative().optional(),
});
export type TrajectoryEntry = z.infer<typeof TrajectoryEntrySchema>;

/**
 * One line of failed.jsonl: the trajectory as far as it got, with a failure outcome and its error; a task
 * whose worker thread died has only the fields that do not need the worker.
 */
export const FailureRecordSchema = TrajectoryEntrySchema.partial().extend({
  prompt_index: z.number().int(),
  task_id: z.string(),
  outcome: FailureOutcomeSchema,
  completed: z.literal(false),
  partial: z.literal(false),
  error: z.string(),
  /**
   * false: the endpoint gave an answer that repeating the request will not change (400, 401, 403, 404, 422):
   * `--resume` leaves the task, `--retry-failed` reruns it. Absent: rerun by `--resume`.
   */
  retryable: z.literal(false).optional(),
  /** environment_error only: the sandbox limit the task hit (its memory, its process count, its disk quota). */
  reason: z.enum(LIMIT_REASONS).optional(),
  toolsets_used: z.array(z.string()),
  metadata: z.record(z.string(), z.unknown()),
});
export type FailureRecord = z.infer<typeof FailureRecordSchema>;

/** A failed.jsonl line as read back: written by this or an earlier version, so only the id and outcome are sure. */
export type StoredFailureRecord = Pick<FailureRecord, "task_id" | "outcome"> &
  Partial<Omit<FailureRecord, "task_id" | "outcome" | "usage" | "approval_usage">> & {
    usage?: Partial<Usage>;
    approval_usage?: Partial<Usage>;
  };

export const DropReasonSchema = z.enum(DROP_REASONS);
export type DropReason = z.infer<typeof DropReasonSchema>;

/** One line of dropped.jsonl: a finished trajectory a filter removed, and why. */
export const DroppedRecordSchema = TrajectoryEntrySchema.extend({ dropped: DropReasonSchema });
export type DroppedRecord = z.infer<typeof DroppedRecordSchema>;

/**
 * A trajectory line as `export` reads it: ours (any version) or Hermes' own (`conversations` only). Every
 * field is optional and unknown keys are kept; what the converters need is checked.
 */
export const ReadableTrajectorySchema = z
  .looseObject({
    task_id: z.string().optional(),
    prompt_index: z.number().optional(),
    conversations: z.array(ConversationTurnSchema.loose()).optional(),
    messages: z
      .array(
        z.discriminatedUnion("role", [
          z.looseObject({ role: z.literal("system"), content: z.string() }),
          z.looseObject({ role: z.literal("user"), content: z.string() }),
          z.looseObject({
            role: z.literal("assistant"),
            content: z.string().nullable().optional(),
            tool_calls: z
              .array(
                z.looseObject({ id: z.string(), function: z.looseObject({ name: z.string(), arguments: z.string() }) }),
              )
              .optional(),
            reasoning: z.string().optional(),
          }),
          z.looseObject({
            role: z.literal("tool"),
            tool_call_id: z.string(),
            name: z.string().optional(),
            content: z.string(),
          }),
        ]),
      )
      .optional(),
    tools: z.array(z.unknown()).optional(),
    completed: z.boolean().optional(),
    verify: z.looseObject({ passed: z.boolean() }).optional(),
  })
  .refine(
    (e) => e.conversations !== undefined || e.messages !== undefined,
    "has neither `conversations` nor `messages`",
  );
