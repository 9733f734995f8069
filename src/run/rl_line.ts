/**
 * A task's line of rl.jsonl (`--rl-capture`): its kept model calls with the engine's tokens, the branches
 * made of them, and whether a trainer may use it (`train`, by cause). Built in the worker beside the
 * trajectory line; the main thread appends both in one step.
 */
import { basename, extname } from "node:path";
import type { AgentLoopResult, LoopEnd } from "../agent/loop.js";
import type { KeptCall, TokenLedger } from "../agent/token_ledger.js";
import type { RunConfig } from "../config/run_config.js";
import { DONE_OUTCOMES, type Outcome } from "../core/outcomes.js";
import type { RlLine, RlStopReason, RlTurn } from "../core/rl_record.js";
import { RL_SCHEMA_ID } from "../core/rl_schema_id.js";
import { buildBranches, tokenProblems } from "../formats/rl/branches.js";
import type { Score } from "../score/summary.js";

/** A 400 whose words say the prompt no longer fits the model's context window. */
const CONTEXT_OVERFLOW =
  /context (length|window)|maximum context|too many tokens|prompt is too long|exceeds? the (model'?s? )?(max|context)/i;

export interface RlLineInput {
  taskId: string;
  epoch: number | undefined;
  config: Pick<RunConfig, "model" | "rl_tokenizer" | "dataset">;
  loop: AgentLoopResult | undefined;
  ledger: TokenLedger;
  outcome: Outcome;
  error: string | undefined;
  score: Score | undefined;
  /** The filter that dropped the trajectory, if one did. */
  dropped?: string;
}

function stopReason(outcome: Outcome, end: LoopEnd | undefined, contextOverflow: boolean): RlStopReason {
  if (contextOverflow) return "context_length";
  if (outcome === "timeout" || outcome === "time_limit") return "time_limit";
  // Cut by a limit of its sandbox (the harness ended the agent's processes): no stop of the model's own.
  if (!DONE_OUTCOMES.has(outcome) || outcome === "resource_limit") return "error";
  switch (end) {
    case "final_answer":
      return "stop";
    case "max_turns":
      return "max_turns";
    case "length":
    case "truncated_tool_call":
      return "length";
    default:
      return "partial";
  }
}

function turnOf(k: KeptCall): RlTurn {
  const t = k.tokens;
  return {
    call: k.call,
    message_index: k.message_index,
    prompt_token_ids: t?.prompt_token_ids ?? null,
    completion_token_ids: t?.completion_token_ids ?? null,
    logprobs: t?.logprobs ?? null,
    finish_reason: k.finish_reason,
    temperature: t?.sampling.temperature ?? null,
    top_p: t?.sampling.top_p ?? null,
    sampling: { ...(t?.sampling ?? {}) },
  };
}

/** `train` and its cause, from the first reason that applies (SkyRL's rules by cause; see README). */
function verdict(
  i: RlLineInput,
  stop: RlStopReason,
  reward: number | null,
  hasIds: boolean,
  problems: string[],
): Pick<RlLine, "train" | "train_cause"> {
  // A context overflow or a time-out keeps its tokens for training (SkyRL's rules), when there are tokens it can
  // trust: bad token data (`problems`, no branches) is never trained on, whatever the cause.
  const keepsTokens = stop === "context_length" || stop === "time_limit";
  if (keepsTokens && !hasIds) return { train: "excluded", train_cause: "no_token_ids" };
  if (keepsTokens && problems.length) return { train: "excluded", train_cause: "invalid_tokens" };
  if (stop === "context_length") return { train: "full", train_cause: "context_length" };
  if (stop === "time_limit") return { train: "masked", train_cause: "time_limit" };
  if (!DONE_OUTCOMES.has(i.outcome) || i.outcome === "resource_limit")
    return { train: "excluded", train_cause: i.outcome };
  if (i.dropped) return { train: "excluded", train_cause: `dropped: ${i.dropped}` };
  if (!hasIds) return { train: "excluded", train_cause: "no_token_ids" };
  if (problems.length) return { train: "excluded", train_cause: "invalid_tokens" };
  if (reward === null) return { train: "excluded", train_cause: "unscored" };
  return { train: "full", train_cause: stop };
}

export function buildRlLine(i: RlLineInput): RlLine {
  const kept = i.ledger.collect(i.loop?.messages ?? []);
  const turns = kept.turns.map(turnOf);
  const hasIds =
    turns.length > 0 &&
    turns.every((t) => t.prompt_token_ids !== null && t.completion_token_ids !== null && t.logprobs !== null);
  const problems = tokenProblems(
    turns,
    kept.turns.map((k) => k.usage),
  );
  const contextOverflow = i.outcome === "model_error" && CONTEXT_OVERFLOW.test(i.error ?? "");
  const stop = stopReason(i.outcome, i.loop?.end, contextOverflow);
  const reward = contextOverflow ? 0 : (i.score?.value ?? null);
  const rewards: Record<string, number | null> = { reward };
  for (const s of i.score?.scorers ?? []) rewards[s.name] = s.value ?? (s.passed === null ? null : s.passed ? 1 : 0);
  const dataset = i.config.dataset;
  return {
    schema: RL_SCHEMA_ID,
    task_id: i.taskId,
    epoch: i.epoch ?? 0,
    group_id: i.taskId,
    sample_index: i.epoch ?? 0,
    env_name: dataset && dataset !== "-" ? basename(dataset, extname(dataset)) : "stdin",
    model: i.config.model ?? "",
    tokenizer: i.config.rl_tokenizer ?? null,
    reward,
    rewards,
    passed: contextOverflow ? false : (i.score?.passed ?? null),
    outcome: contextOverflow ? "context_length" : i.outcome,
    stop_reason: stop,
    ...verdict(i, stop, reward, hasIds, problems),
    tokens: hasIds ? "engine" : null,
    problems,
    turns,
    discarded_calls: kept.discarded,
    branches: problems.length ? [] : buildBranches(turns),
    advantage: null,
    group: null,
  };
}
