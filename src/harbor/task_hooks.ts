/**
 * What src/run/task.ts needs to run a row that carries a Harbor task (`harbor` field): the validated task,
 * the run's Harbor settings, the sandbox options it asks for, and its time limits.
 */
import type { RunConfig } from "../config/run_config.js";
import type { EnvironmentOptions } from "../../tools/environments/base.js";
import { namedNetwork } from "../../tools/environments/docker/docker_network.js";
import { resolveEnvTable } from "./env_template.js";
import { HarborTaskSchema, needsNetwork, type HarborTask } from "./task_config.js";
import type { HarborRunSettings } from "./trial.js";

export interface HarborPlan {
  task: HarborTask;
  settings: HarborRunSettings;
  /** `--model oracle`: solution/solve.sh instead of a model. */
  oracle: boolean;
  /** [agent].timeout_sec × --timeout-multiplier; undefined = no limit. */
  agentTimeoutMs?: number;
  /** The sandbox's network: "none", or when a phase is public the engine's bridge or the user-defined network --network names. */
  network: string;
  /** The task's wall clock: the run's --task-timeout, raised to fit the agent and verifier limits plus setup. */
  taskTimeoutSec: number;
}

/** The row's Harbor task, or undefined for an ordinary row; a malformed one (a hand-edited rows file) throws. */
export function harborPlan(extra: Record<string, unknown> | undefined, config: RunConfig): HarborPlan | undefined {
  if (extra?.harbor === undefined) return undefined;
  const parsed = HarborTaskSchema.safeParse(extra.harbor);
  if (!parsed.success)
    throw new Error(`the row's 'harbor' field is not a Harbor task: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  const task = parsed.data;
  const multiplier = config.timeout_multiplier;
  const agentSec = task.agent.timeout_sec !== undefined ? task.agent.timeout_sec * multiplier : undefined;
  // The sandbox is made with the network when any phase needs it (Docker cannot connect a container made with
  // none later); the phases that must not have it are disconnected (trial.ts).
  const network = needsNetwork(task) ? (namedNetwork(config.network) ?? "bridge") : "none";
  const needed = (agentSec ?? 0) + task.verifier.timeout_sec * multiplier + task.build_timeout_sec + 120;
  return {
    task,
    settings: {
      passEnv: config.pass_env,
      timeoutMultiplier: multiplier,
      network: config.harbor_network,
      taskNetwork: network,
      passThreshold: config.harbor_pass_threshold,
    },
    oracle: config.model === "oracle",
    ...(agentSec !== undefined ? { agentTimeoutMs: agentSec * 1000 } : {}),
    network,
    taskTimeoutSec: agentSec === undefined ? config.task_timeout : Math.max(config.task_timeout, needed),
  };
}

/** The task's resources, users and [environment].env over the run's: Harbor runs agent commands as [agent].user, else root. */
export function harborEnvOptions(plan: HarborPlan): Partial<EnvironmentOptions> {
  const t = plan.task;
  return {
    ...(t.memory_mb !== undefined ? { memoryMb: Math.ceil(t.memory_mb) } : {}),
    ...(t.cpus !== undefined ? { cpus: t.cpus } : {}),
    // The workdir's own file system (a root harness; see tools/environments/disk_quota.ts).
    ...(t.storage_mb !== undefined ? { disk: `${Math.ceil(t.storage_mb)}m` } : {}),
    ...(t.gpus > 0 ? { gpus: t.gpus } : {}),
    user: t.agent.user ?? "root",
    ...(Object.keys(t.env).length ? { containerEnv: resolveEnvTable(t.env, plan.settings.passEnv) } : {}),
  };
}
