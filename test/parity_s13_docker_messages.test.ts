/**
 * Bash's own messages in the terminal's results under Docker, byte for byte as the original's
 * (NousResearch/hermes-agent at cb51baec): tools/environments/docker.py `_run_bash` runs each command as
 * `docker exec <id> bash -c <script>` (the script of base.py `_wrap_command`, line 3 `eval '<command>'`), stdout and
 * stderr on one pipe. So:
 *  - a function the command defines is labelled `environment` in its messages (`environment: line 3: nosuchcmd:
 *    command not found`): under `bash -c` bash records functions defined before it is initialized as coming from
 *    the environment; a bash reading its script from stdin says `main`;
 *  - a syntax error echoes the command's own line (`bash: eval: line 3: \`echo ('`), with nothing the harness adds.
 * The expected text is that script run the same way in the same container. End to end through the tool pipeline,
 * with the persistent shell and with one exec per command.
 */
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import {
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  removeContainersByLabel,
} from "../tools/environments/docker/docker.js";
import { createToolPipeline } from "../tools/pipeline.js";
import type { ToolContext } from "../tools/registry.js";
import "../tools/terminal_tool.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { silentLogger } from "./helpers/local_ctx.js";
import { freshShellState } from "./helpers/shared_shell.js";
import { FUNCTION_COMMANDS, originalScript, SYNTAX_ERROR_COMMANDS } from "./helpers/shell_messages.js";

const RUN = uniqueRunName("s13msg");
let image = "";
let count = 0;

beforeAll(async () => {
  ({ image } = await ensureDockerTestImages());
}, 600_000);

afterAll(async () => {
  await cleanupAllDockerEnvironments();
  await removeContainersByLabel({ run: RUN });
});

/**
 * One container per variant: the commands carry no cwd or export, and each run starts from a fresh one's shell
 * state (helpers/shared_shell.ts).
 */
function sharedEnv(persistentShell: boolean): () => Promise<Environment> {
  const id = `s13-${persistentShell ? "shell" : "plain"}`;
  let pending: Promise<Environment> | undefined;
  afterAll(async () => (await pending)?.cleanup());
  return () =>
    (pending ??= createDockerEnvironment(
      { runName: RUN, taskId: id, hostTaskDir: `/tmp/${RUN}/${id}`, taskTimeoutSec: 600 },
      { image, persistentShell },
    ));
}

/** Each command through the terminal, and as the original's `docker exec <id> bash -c <script>` in the same container. */
async function sameAsOriginal(getEnv: () => Promise<Environment>, commands: string[]): Promise<void> {
  const ctx: ToolContext = { taskId: `s13-${count++}`, envKind: "docker", getEnv, logger: silentLogger };
  await freshShellState(ctx);
  const env = (await getEnv()) as Environment & { containerId: string; user?: string };
  const pipeline = createToolPipeline();
  const ours: Record<string, unknown>[] = [];
  const expected: Record<string, unknown>[] = [];
  for (const command of commands) {
    const args = ["exec", ...(env.user ? ["-u", env.user] : []), env.containerId];
    let output: string;
    let exitCode = 0;
    try {
      output = execFileSync(
        "docker",
        [...args, "sh", "-c", 'exec "$0" -c "$1" 2>&1', "bash", originalScript(command, env.workdir)],
        { encoding: "utf8" },
      );
    } catch (err) {
      const e = err as { stdout: string; status: number };
      output = e.stdout;
      exitCode = e.status;
    }
    expected.push({ command, output: output.trim(), exit_code: exitCode });
    const r = JSON.parse(await pipeline.call("terminal", { command }, ctx)) as Record<string, unknown>;
    ours.push({ command, output: r.output, exit_code: r.exit_code });
  }
  expect(ours).toEqual(expected);
}

describe.each([
  ["persistent shell", true],
  ["one exec per command", false],
] as const)("bash's own messages in Docker are the original's (%s)", (_label, persistentShell) => {
  const getEnv = sharedEnv(persistentShell);
  it(
    "a function the command defines is labelled `environment`",
    () => sameAsOriginal(getEnv, FUNCTION_COMMANDS),
    120_000,
  );
  it(
    "a syntax error echoes the command's line, nothing of the harness's",
    () => sameAsOriginal(getEnv, SYNTAX_ERROR_COMMANDS),
    120_000,
  );
});
