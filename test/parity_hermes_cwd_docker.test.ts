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
import { freshShellState } from "./helpers/shared_shell.js";

const RUN = uniqueRunName("cwdtest");
let image = "";
let busybox = "";

beforeAll(async () => {
  ({ image, busyboxImage: busybox } = await ensureDockerTestImages());
}, 600_000);

afterAll(async () => {
  await cleanupAllDockerEnvironments();
  await removeContainersByLabel({ run: RUN });
});

describe.each(["bash", "busybox", "plain"] as const)(
  "the terminal's shell state carries between calls (docker, %s; plain: one exec per command)",
  (which) => {
    // One container for the variant's scenarios: each starts from a fresh one's shell state (helpers/shared_shell.ts)
    // and leaves no process running.
    let pending: Promise<Environment> | undefined;
    const env = () =>
      (pending ??= createDockerEnvironment(
        {
          runName: RUN,
          taskId: `cwd-${which}`,
          hostTaskDir: `/tmp/${RUN}/cwd-${which}`,
          taskTimeoutSec: 600,
          ...(which === "busybox" ? { image: busybox } : {}),
        },
        { image, persistentShell: which !== "plain" },
      ));
    afterAll(async () => (await pending)?.cleanup());
    let count = 0;

    async function scenario(): Promise<CwdScenario> {
      const ctx: ToolContext = {
        taskId: `cwd-${which}-${count++}`,
        envKind: "docker",
        getEnv: env,
        logger: silentLogger,
      };
      await freshShellState(ctx);
      return { ctx, env };
    }

    it("a cd carries to the next call and to the file tools' relative paths", async () => cdCarries(await scenario()));
    it("exported variables carry, plain ones do not", async () => exportCarries(await scenario()));
    it("a command's own exit or a timeout carries nothing", async () => exitAndTimeoutCarryNothing(await scenario()));
    it("a removed cwd fails each command with 126 until a workdir moves it", async () => removedCwd(await scenario()));
    it("the approval gate judges rm -rf x after cd / as rm -rf /x", async () => gateFollowsCwd(await scenario()));
    it("a background process starts in the carried cwd", async () => backgroundStartsThere(await scenario()));
  },
);
