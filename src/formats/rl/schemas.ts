/**
 * What each trainer reads, as zod schemas written from its own type definitions (the fields our adapters
 * fill, with the types the trainer declares; optional fields we never fill are left out):
 * - verifiers `GenerateOutputs {outputs: RolloutOutput[], metadata}`, `TrajectoryStep`, `TrajectoryStepTokens`,
 *   `Response`: PrimeIntellect-ai/verifiers `verifiers/legacy/types.py` (2026);
 * - SkyRL `GeneratorOutput` and `TrajectoryID`: NovaSky-AI/SkyRL `skyrl-train/skyrl_train/generators/base.py`;
 * - prime-rl `TrainingSample` (one branch as one flat sequence): PrimeIntellect-ai/prime-rl
 *   `src/prime_rl/transports/rollouts/types.py` (559b447, 2026-08; its msgpack form is array-like; this JSON form
 *   names the fields, and only its fields: a msgspec Struct's constructor refuses any other key).
 */
import * as z from "zod";

const ints = z.array(z.number().int().min(0));
const floats = z.array(z.number());
const bits = z.array(z.union([z.literal(0), z.literal(1)]));

// ---------- verifiers ----------

const VfToolCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() });
const VfMessage = z.looseObject({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string().nullable(),
});

export const VfTrajectoryStepTokensSchema = z
  .object({
    prompt_ids: ints,
    prompt_mask: bits,
    completion_ids: ints,
    completion_mask: bits,
    completion_logprobs: floats,
    overlong_prompt: z.boolean(),
    is_truncated: z.boolean(),
    routed_experts: z.null(),
  })
  .refine(
    (t) =>
      t.prompt_mask.length === t.prompt_ids.length &&
      t.completion_mask.length === t.completion_ids.length &&
      t.completion_logprobs.length === t.completion_ids.length,
    "masks and logprobs must align with their ids",
  );

export const VfResponseSchema = z.object({
  id: z.string(),
  created: z.number().int(),
  model: z.string(),
  usage: z
    .object({
      prompt_tokens: z.number().int(),
      reasoning_tokens: z.number().int(),
      completion_tokens: z.number().int(),
      total_tokens: z.number().int(),
    })
    .nullable(),
  message: z.object({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    reasoning_content: z.string().nullable(),
    tool_calls: z.array(VfToolCall).nullable(),
    finish_reason: z.enum(["stop", "length", "tool_calls"]).nullable(),
    is_truncated: z.boolean().nullable(),
    tokens: z.null(),
  }),
});

export const VfTrajectoryStepSchema = z.object({
  prompt: z.array(VfMessage),
  completion: z.array(VfMessage),
  response: VfResponseSchema,
  tokens: VfTrajectoryStepTokensSchema.nullable(),
  reward: z.number().nullable(),
  advantage: z.number().nullable(),
  is_truncated: z.boolean(),
  trajectory_id: z.string(),
  extras: z.record(z.string(), z.unknown()),
});

export const VfRolloutOutputSchema = z.looseObject({
  example_id: z.number().int(),
  prompt: z.array(VfMessage).nullable(),
  completion: z.array(VfMessage).nullable(),
  reward: z.number(),
  timing: z.object({ start_time: z.number() }).loose(),
  is_completed: z.boolean(),
  is_truncated: z.boolean(),
  metrics: z.record(z.string(), z.number()),
  info: z.record(z.string(), z.unknown()),
  error: z.null(),
  stop_condition: z.string().nullable(),
  trajectory: z.array(VfTrajectoryStepSchema),
  token_usage: z.object({ input_tokens: z.number(), output_tokens: z.number() }),
});

export const VfGenerateOutputsSchema = z.object({
  outputs: z.array(VfRolloutOutputSchema),
  metadata: z.object({
    env_id: z.string(),
    env_args: z.record(z.string(), z.unknown()),
    model: z.string(),
    base_url: z.string(),
    num_examples: z.number().int(),
    rollouts_per_example: z.number().int(),
    sampling_args: z.record(z.string(), z.unknown()),
    date: z.string(),
    time: z.number(),
    avg_reward: z.number(),
    avg_metrics: z.record(z.string(), z.number()),
    avg_error: z.number(),
    pass_at_k: z.record(z.string(), z.number()),
    pass_all_k: z.record(z.string(), z.number()),
    pass_threshold: z.number(),
    usage: z.object({ input_tokens: z.number(), output_tokens: z.number() }).nullable(),
    version_info: z.object({
      vf_version: z.string(),
      vf_commit: z.string().nullable(),
      env_version: z.string().nullable(),
      env_commit: z.string().nullable(),
    }),
    state_columns: z.array(z.string()),
    path_to_save: z.string(),
    tools: z.null(),
  }),
});

// ---------- SkyRL ----------

export const SkyTrajectoryIdSchema = z.object({ instance_id: z.string(), repetition_id: z.number().int() });

export const SkyGeneratorOutputSchema = z
  .object({
    prompt_token_ids: z.array(ints),
    response_ids: z.array(ints),
    rewards: z.union([floats, z.array(floats)]),
    loss_masks: z.array(bits),
    stop_reasons: z.array(z.string()).nullable(),
    rollout_metrics: z.record(z.string(), z.unknown()).nullable(),
    rollout_logprobs: z.array(floats).nullable(),
    trajectory_ids: z.array(SkyTrajectoryIdSchema).nullable(),
    is_last_step: z.array(z.boolean()).nullable(),
  })
  .refine((o) => {
    const n = o.prompt_token_ids.length;
    const sameCount = [
      o.response_ids,
      o.rewards,
      o.loss_masks,
      o.stop_reasons ?? o.response_ids,
      o.rollout_logprobs ?? o.response_ids,
      o.trajectory_ids ?? o.response_ids,
      o.is_last_step ?? o.response_ids,
    ].every((a) => a.length === n);
    const aligned = o.response_ids.every(
      (r, i) =>
        o.loss_masks[i]!.length === r.length && (!o.rollout_logprobs || o.rollout_logprobs[i]!.length === r.length),
    );
    return sameCount && aligned;
  }, "one entry per row in every list; loss masks and logprobs as long as their response");

// ---------- prime-rl ----------

export const PrimeTrainingSampleSchema = z
  .strictObject({
    token_ids: ints,
    mask: z.array(z.boolean()),
    logprobs: floats,
    temperatures: floats,
    env_name: z.string(),
    advantages: floats.nullable(),
  })
  .refine(
    (s) =>
      [s.mask, s.logprobs, s.temperatures, s.advantages ?? s.token_ids].every((a) => a.length === s.token_ids.length),
    "all per-token arrays share the length of token_ids",
  );
