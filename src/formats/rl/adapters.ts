/**
 * rl.jsonl lines (with group advantages filled) → what each trainer reads. Thin mappings; the README's
 * "RL rollouts" section lists them field by field. A `masked` line (time limit) keeps its tokens with a
 * loss mask of zeros, as SkyRL does for agent time-outs.
 */
import type { ChatMessage } from "../../core/chat.js";
import type { RlBranch, RlLine, RlTurn } from "../../core/rl_record.js";
import type * as z from "zod";
import type {
  PrimeTrainingSampleSchema,
  SkyGeneratorOutputSchema,
  VfRolloutOutputSchema,
  VfTrajectoryStepSchema,
} from "./schemas.js";

type PrimeSample = z.infer<typeof PrimeTrainingSampleSchema>;
type SkyOutput = z.infer<typeof SkyGeneratorOutputSchema>;
type VfRollout = z.infer<typeof VfRolloutOutputSchema>;
type VfStep = z.infer<typeof VfTrajectoryStepSchema>;

const trainable = (l: RlLine) => l.train !== "masked";

/** The default temperature of OpenAI-compatible servers, when the request sent none. */
const DEFAULT_TEMPERATURE = 1;

// ---------- prime-rl: one TrainingSample per branch ----------

export function toPrimeSamples(l: RlLine): PrimeSample[] {
  return l.branches.map((b) => {
    const temperatures: number[] = new Array(b.token_ids.length);
    // Each token gets the temperature of the turn that added it (a turn's prompt extends all before it, so the
    // turn ends at its prompt's length plus its completion's).
    let pos = 0;
    for (const ti of b.turns) {
      const t = l.turns[ti]!;
      const end = t.prompt_token_ids!.length + t.completion_token_ids!.length;
      temperatures.fill(t.temperature ?? DEFAULT_TEMPERATURE, pos, end);
      pos = end;
    }
    const mask = b.loss_mask.map((m) => m === 1 && trainable(l));
    const adv = l.advantage ?? 0;
    return {
      token_ids: b.token_ids,
      mask,
      logprobs: b.logprobs,
      temperatures,
      env_name: l.env_name,
      advantages: mask.map((m) => (m ? adv : 0)),
    };
  });
}

// ---------- SkyRL: GeneratorOutput, per trajectory or step-wise ----------

export function emptySkyOutput(stepWise: boolean): SkyOutput {
  return {
    prompt_token_ids: [],
    response_ids: [],
    rewards: [],
    loss_masks: [],
    stop_reasons: [],
    rollout_metrics: null,
    rollout_logprobs: [],
    trajectory_ids: [],
    is_last_step: stepWise ? [] : null,
  };
}

function pushRow(
  out: SkyOutput,
  l: RlLine,
  prompt: number[],
  response: number[],
  mask: (0 | 1)[],
  logprobs: number[],
  reward: number,
  last: boolean | undefined,
): void {
  out.prompt_token_ids.push(prompt);
  out.response_ids.push(response);
  (out.rewards as number[]).push(reward);
  out.loss_masks.push(trainable(l) ? mask : mask.map(() => 0 as const));
  out.stop_reasons!.push(l.stop_reason);
  out.rollout_logprobs!.push(logprobs);
  out.trajectory_ids!.push({ instance_id: l.task_id, repetition_id: l.epoch });
  if (last !== undefined) out.is_last_step!.push(last);
}

/** Per trajectory: one row per line; only a line with a single branch can be one sequence (else false). */
export function addSkyTrajectory(out: SkyOutput, l: RlLine): boolean {
  if (l.branches.length !== 1) return false;
  const b = l.branches[0]!;
  const p = b.prompt_length;
  pushRow(
    out,
    l,
    b.token_ids.slice(0, p),
    b.token_ids.slice(p),
    b.loss_mask.slice(p),
    b.logprobs.slice(p),
    l.reward ?? 0,
    undefined,
  );
  return true;
}

/** Step-wise: one row per kept turn; the reward on the last step, 0 on the others (SkyRL's step-wise rule). */
export function addSkySteps(out: SkyOutput, l: RlLine): void {
  for (const [i, t] of l.turns.entries()) {
    const last = i === l.turns.length - 1;
    const completion = t.completion_token_ids!;
    pushRow(
      out,
      l,
      t.prompt_token_ids!,
      completion,
      completion.map(() => 1 as const),
      t.logprobs!,
      last ? (l.reward ?? 0) : 0,
      last,
    );
  }
}

// ---------- verifiers: GenerateOutputs of RolloutOutput ----------

/** The trajectory's side of a line: its saved conversation and where it sits in the dataset. */
export interface TrajectoryView {
  prompt_index: number;
  messages: ChatMessage[];
}

function vfMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === "assistant") {
    return {
      role: "assistant",
      content: m.content,
      ...(m.reasoning ? { reasoning_content: m.reasoning } : {}),
      ...(m.tool_calls?.length
        ? {
            tool_calls: m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
          }
        : {}),
    };
  }
  if (m.role === "tool") return { role: "tool", tool_call_id: m.tool_call_id, content: m.content };
  return { role: m.role, content: m.content };
}

const VF_FINISH = new Set(["stop", "length", "tool_calls"]);

function vfStep(l: RlLine, t: RlTurn, messages: ChatMessage[], branchOf: Map<number, RlBranch>, index: number): VfStep {
  const msg = messages[t.message_index];
  const assistant = msg?.role === "assistant" ? msg : undefined;
  const prompt = t.prompt_token_ids!;
  const completion = t.completion_token_ids!;
  const truncated = t.finish_reason === "length";
  return {
    prompt: messages.slice(0, t.message_index).map(vfMessage) as VfStep["prompt"],
    completion: msg ? ([vfMessage(msg)] as VfStep["completion"]) : [],
    response: {
      id: `${l.task_id}#${l.epoch}.${t.call}`,
      created: 0,
      model: l.model,
      usage: {
        prompt_tokens: prompt.length,
        reasoning_tokens: 0,
        completion_tokens: completion.length,
        total_tokens: prompt.length + completion.length,
      },
      message: {
        role: "assistant",
        content: assistant?.content ?? null,
        reasoning_content: assistant?.reasoning ?? null,
        tool_calls: assistant?.tool_calls?.length
          ? assistant.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }))
          : null,
        finish_reason: VF_FINISH.has(t.finish_reason) ? (t.finish_reason as "stop") : null,
        is_truncated: truncated,
        tokens: null,
      },
    },
    tokens: {
      prompt_ids: prompt,
      prompt_mask: prompt.map(() => 0 as const),
      completion_ids: completion,
      completion_mask: completion.map(() => (trainable(l) ? 1 : 0) as 0 | 1),
      completion_logprobs: t.logprobs!,
      overlong_prompt: false,
      is_truncated: truncated,
      routed_experts: null,
    },
    reward: index === l.turns.length - 1 ? l.reward : null,
    advantage: l.advantage,
    is_truncated: truncated,
    trajectory_id: `${l.task_id}#${l.epoch}`,
    // Which of the line's branches this step belongs to (verifiers v1 builds its graph from these).
    extras: { branch: branchOf.has(index) ? l.branches.indexOf(branchOf.get(index)!) : null, call: t.call },
  };
}

export function toVerifiersRollout(l: RlLine, view: TrajectoryView): VfRollout {
  const branchOf = new Map<number, RlBranch>();
  for (const b of l.branches) for (const ti of b.turns) branchOf.set(ti, b);
  const firstAnswer = l.turns[0]?.message_index ?? view.messages.length;
  const completionTokens = l.turns.reduce((a, t) => a + (t.completion_token_ids?.length ?? 0), 0);
  const promptTokens = l.turns.reduce((a, t) => a + (t.prompt_token_ids?.length ?? 0), 0);
  return {
    example_id: view.prompt_index,
    prompt: view.messages.slice(0, firstAnswer).map(vfMessage) as VfRollout["prompt"],
    completion: view.messages.slice(firstAnswer).map(vfMessage) as VfRollout["completion"],
    reward: l.reward ?? 0,
    timing: { start_time: 0 },
    is_completed: l.stop_reason === "stop",
    is_truncated: l.stop_reason === "length" || l.stop_reason === "time_limit" || l.stop_reason === "context_length",
    metrics: Object.fromEntries(
      Object.entries(l.rewards).filter((e): e is [string, number] => e[1] !== null && e[0] !== "reward"),
    ),
    info: {
      task_id: l.task_id,
      epoch: l.epoch,
      train: l.train,
      advantage: l.advantage,
      branches: l.branches.map((b) => b.turns),
    },
    error: null,
    stop_condition: l.stop_reason,
    trajectory: l.turns.map((t, i) => vfStep(l, t, view.messages, branchOf, i)),
    token_usage: { input_tokens: promptTokens, output_tokens: completionTokens },
  };
}
