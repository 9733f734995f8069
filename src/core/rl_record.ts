/**
 * `runs/<run>/rl.jsonl`, format `hermes-batch.rl/1`: one line per task × epoch with the engine's token ids of
 * every kept model call, chained into branches for trainers (see README "RL rollouts"). Group statistics and
 * advantages need every epoch of a task, so the run writes them as null and `export --format rl` fills them.
 */
import * as z from "zod";
import { lazy } from "./lazy.js";
import { RL_SCHEMA_ID } from "./rl_schema_id.js";

export { RL_SCHEMA_ID };

export const RL_STOP_REASONS = [
  "stop",
  "length",
  "max_turns",
  "partial",
  "time_limit",
  "context_length",
  "error",
] as const;
export const RL_TRAIN_VERDICTS = ["full", "masked", "excluded"] as const;

const ids = () => z.array(z.number().int().min(0));

export const RlTurnSchema = lazy(() =>
  z.object({
    call: z.number().int().min(0),
    message_index: z.number().int().min(0),
    prompt_token_ids: ids().nullable(),
    completion_token_ids: ids().nullable(),
    logprobs: z.array(z.number()).nullable(),
    finish_reason: z.string(),
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    sampling: z.record(z.string(), z.number()),
  }),
);

export const RlBranchSchema = lazy(() =>
  z.object({
    /** Indices into `turns`. */
    turns: z.array(z.number().int().min(0)).min(1),
    token_ids: ids(),
    loss_mask: z.array(z.union([z.literal(0), z.literal(1)])),
    logprobs: z.array(z.number()),
    /** Tokens of the first turn's prompt: everything before is context, never trained on. */
    prompt_length: z.number().int().min(0),
  }),
);

export const RlGroupSchema = lazy(() =>
  z.object({
    size: z.number().int().min(1),
    scored: z.number().int().min(0),
    mean: z.number().nullable(),
    std: z.number().nullable(),
    zero_variance: z.boolean(),
  }),
);

export const RlLineSchema = lazy(() =>
  z.object({
    schema: z.literal(RL_SCHEMA_ID),
    task_id: z.string().min(1),
    epoch: z.number().int().min(0),
    group_id: z.string().min(1),
    sample_index: z.number().int().min(0),
    env_name: z.string(),
    model: z.string(),
    tokenizer: z.string().nullable(),
    reward: z.number().nullable(),
    rewards: z.record(z.string(), z.number().nullable()),
    passed: z.boolean().nullable(),
    outcome: z.string(),
    stop_reason: z.enum(RL_STOP_REASONS),
    train: z.enum(RL_TRAIN_VERDICTS),
    train_cause: z.string(),
    /** "engine": every kept turn has the engine's ids and logprobs; null: some do not (best-effort). */
    tokens: z.literal("engine").nullable(),
    /** What made the token data untrustworthy (ids vs usage, logprob counts, prefixes): the line is excluded. */
    problems: z.array(z.string()),
    turns: z.array(RlTurnSchema()),
    discarded_calls: z.number().int().min(0),
    branches: z.array(RlBranchSchema()),
    advantage: z.number().nullable(),
    group: RlGroupSchema().nullable(),
  }),
);

export type RlTurn = z.infer<ReturnType<typeof RlTurnSchema>>;
export type RlBranch = z.infer<ReturnType<typeof RlBranchSchema>>;
export type RlLine = z.infer<ReturnType<typeof RlLineSchema>>;
export type RlStopReason = (typeof RL_STOP_REASONS)[number];

/** One kept model call's token data (of an rl.jsonl turn), by the index of the message it produced. */
export interface CallTokens {
  prompt_token_ids: number[];
  completion_token_ids: number[];
  logprobs: number[] | null;
}
