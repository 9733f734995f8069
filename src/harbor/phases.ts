/**
 * A Harbor task's phases as src/run/task.ts calls them: image, sandbox setup, the agent (or the oracle) under
 * the task's time limit, then the verifier and the copy of /logs. Reaching the agent's time limit is a graded
 * outcome (`time_limit`), as in Harbor: the verifier still runs. So is a limit of the sandbox that the agent hits
 * (`resource_limit`: its memory, processes or disk): src/run/task.ts aborts the signal the agent phase runs under,
 * and the verifier grades what the agent left.
 */
import { linkedAbort } from "../core/abort.js";
import { emptyUsage } from "../core/chat.js";
import type { AgentLoopResult } from "../agent/loop.js";
import { loopUntilLimit } from "../agent/loop_limit.js";
import type { Environment } from "../../tools/environments/base.js";
import type { TaskEnvironment } from "../../tools/environments/manager.js";
import type { HarborVerdict } from "../score/harbor_reward.js";
import { ensureHarborImage } from "./image.js";
import type { HarborPlan } from "./task_hooks.js";
import { copyHarborLogs, prepareHarborSandbox, runHarborVerifier, runOracle } from "./trial.js";

export const harborImage = (plan: HarborPlan, signal?: AbortSignal): Promise<string> =>
  ensureHarborImage(plan.task, signal);

export const harborPrepare = (plan: HarborPlan, env: Environment, signal?: AbortSignal): Promise<void> =>
  prepareHarborSandbox(env, plan.task, plan.settings, signal);

/** The oracle's run as a trajectory: the instruction, then what solve.sh did. */
async function oracleLoop(
  plan: HarborPlan,
  prompt: string,
  env: Environment,
  signal: AbortSignal,
): Promise<{ loop: AgentLoopResult; timeLimited: boolean }> {
  const r = await runOracle(env, plan.task, plan.settings, plan.agentTimeoutMs, signal);
  const answer = r.timedOut
    ? "oracle: solution/solve.sh reached the agent time limit"
    : `oracle: solution/solve.sh exited ${r.exitCode}`;
  const loop: AgentLoopResult = {
    messages: [
      { role: "user", content: prompt },
      { role: "assistant", content: answer },
    ],
    apiCalls: 0,
    completed: !r.timedOut,
    partial: false,
    end: "final_answer",
    finalResponse: answer,
    usage: emptyUsage(),
    // No model was called: the answer is the harness's account of solve.sh.
    modelCalls: [],
    injectedMessages: [1],
  };
  return { loop, timeLimited: r.timedOut };
}

/**
 * Our agent loop (or the oracle) within [agent].timeout_sec × --timeout-multiplier; `signal` is the agent's (the
 * task's, and a limit of its sandbox): its abort is thrown, the time limit's is a `timeLimited` result.
 */
export async function harborAgentPhase(
  plan: HarborPlan,
  spec: { prompt: string },
  taskEnv: TaskEnvironment,
  agentLoop: (signal: AbortSignal) => Promise<AgentLoopResult>,
  signal: AbortSignal,
): Promise<{ loop: AgentLoopResult; timeLimited: boolean }> {
  if (plan.oracle) return oracleLoop(plan, spec.prompt, await taskEnv.get(), signal);
  const limit = linkedAbort([signal], plan.agentTimeoutMs);
  try {
    return await loopUntilLimit(limit, agentLoop, signal);
  } finally {
    limit.dispose();
  }
}

/** The verifier, then /logs/{verifier,agent} copied to `logsDir`; a verifier that cannot run is an unscored verdict. */
export async function harborVerifierPhase(
  plan: HarborPlan,
  taskEnv: TaskEnvironment,
  logsDir: string,
  signal: AbortSignal,
): Promise<HarborVerdict> {
  const env = await taskEnv.get();
  let verdict: HarborVerdict;
  try {
    verdict = await runHarborVerifier(env, plan.task, plan.settings, signal);
  } catch (err) {
    verdict = {
      reward: null,
      reason: `the verifier could not run: ${err instanceof Error ? err.message : String(err)}`,
      threshold: plan.settings.passThreshold,
    };
  }
  await copyHarborLogs(env, logsDir).catch(() => undefined);
  return verdict;
}
