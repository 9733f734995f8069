/**
 * The terminal keeps its shell's cwd and exports between calls, as the original's (hermes-agent at cb51baec,
 * tools/environments/base.py): end to end in the Docker backend (its persistent shell), through the tool pipeline.
 * Same scenarios as the local sandbox file (helpers/hermes_cwd.ts).
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import {
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  removeContainersByLabel,
} from "../tools/environments/docker/docker.js";
import type { ToolContext } from "../tools/registry.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import {
  backgroundStartsThere,
  cdCarries,
  exitAndTimeoutCarryNothing,
  exportCarries,
  gateFollowsCwd,
  removedCwd,
  type CwdScenario,
} from "./helpers/hermes_cwd.js";
import { silentLogger } from "./helpers/local_ctx.js";

const RUN = uniqueRunName("cwdtest");
let image = "";
let busybox = "";
let count = 0;

beforeAll(async () => {
  ({ image, busyboxImage: busybox } = await ensureDockerTestImages());
}, 600_000);

afterAll(async () => {
  await cleanupAllDockerEnvironments();
  await removeContainersByLabel({ run: RUN });
});

function scenario(which: "bash" | "busybox" | "plain"): CwdScenario {
  const id = `cwd-${which}-${count++}`;
  let pending: Promise<Environment> | undefined;
  const env = () =>
    (pending ??= createDockerEnvironment(
      {
        runName: RUN,
        taskId: id,
        hostTaskDir: `/tmp/${RUN}/${id}`,
        taskTimeoutSec: 600,
        ...(which === "busybox" ? { image: busybox } : {}),
      },
      { image, persistentShell: which !== "plain" },
    ));
  const ctx: ToolContext = { taskId: id, envKind: "docker", getEnv: env, logger: silentLogger };
  return { ctx, env };
}

describe.each(["bash", "busybox", "plain"] as const)(
  "the terminal's shell state carries between calls (docker, %s; plain: one exec per command)",
  (which) => {
    it("a cd carries to the next call and to the file tools' relative paths", () => cdCarries(scenario(which)), 60_000);
    it("exported variables carry, plain ones do not", () => exportCarries(scenario(which)), 60_000);
    it("a command's own exit or a timeout carries nothing", () => exitAndTimeoutCarryNothing(scenario(which)), 60_000);
    it("a removed cwd fails each command with 126 until a workdir moves it", () => removedCwd(scenario(which)), 60_000);
    it("the approval gate judges rm -rf x after cd / as rm -rf /x", () => gateFollowsCwd(scenario(which)), 60_000);
    it("a background process starts in the carried cwd", () => backgroundStartsThere(scenario(which)), 60_000);
  },
);
