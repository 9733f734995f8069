/**
 * Whether a Harbor row may run under this run's flags, checked on the main thread before anything runs:
 * the environment, the network the task asks for, building its Dockerfile, the host variables it reads.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RunConfig } from "../config/run_config.js";
import { namedNetwork, networkRefusal } from "../../tools/environments/docker/docker_network.js";
import { unpassedVariables } from "./env_template.js";
import { HarborTaskSchema, needsNetwork, type HarborTask } from "./task_config.js";
import { shownPath } from "./task_dir.js";

type HarborFlags = Pick<RunConfig, "env" | "allow_network" | "allow_build" | "pass_env" | "model" | "network">;

function problem(task: HarborTask, config: HarborFlags): string | undefined {
  if (config.env !== "docker") return `Harbor tasks run only with --env docker (this run: --env ${config.env})`;
  if (!existsSync(task.task_dir)) return "the task folder is gone";
  if (
    needsNetwork(task) &&
    namedNetwork(config.network) === undefined &&
    networkRefusal("bridge", config.allow_network)
  ) {
    return `${task.network === "public" ? "network_mode" : "a phase's network_mode"} is public (Harbor's default: its tests usually download their tools), so the sandbox needs a network: pass --allow-network bridge (or --network NAME, a network of your own)`;
  }
  if (!task.docker_image && !config.allow_build)
    return "its image is built from environment/Dockerfile, which runs the task author's code on this host: pass --allow-build (or set [environment].docker_image)";
  const vars = unpassedVariables({ ...task.env, ...task.verifier.env, ...task.solution_env }, config.pass_env);
  if (vars.length)
    return `its env reads \${${vars[0]}} from the host: pass --pass-env ${vars.join(" --pass-env ")} (or give it a default, \${NAME:-value})`;
  if (config.model === "oracle" && !existsSync(join(task.task_dir, "solution", "solve.sh")))
    return "--model oracle needs solution/solve.sh, which this task has not";
  return undefined;
}

/** `path/task.toml: reason` when the row's Harbor task cannot run here; undefined for an ordinary row or a runnable task. */
export function harborRowProblem(row: Record<string, unknown>, config: HarborFlags, where: string): string | undefined {
  if (row.harbor === undefined)
    return config.model === "oracle"
      ? `${where}: --model oracle runs only Harbor tasks (run --harbor PATH)`
      : undefined;
  const parsed = HarborTaskSchema.safeParse(row.harbor);
  if (!parsed.success)
    return `${where}: 'harbor': ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`;
  const why = problem(parsed.data, config);
  return why ? `${shownPath(join(parsed.data.task_dir, "task.toml"))}: ${why}` : undefined;
}
