/**
 * Bash's own messages in the terminal's results, byte for byte as the original's (NousResearch/hermes-agent at
 * cb51baec): each command is the script of tools/environments/base.py `_wrap_command` (line 3 `eval '<command>'`)
 * run as `bash -c <script>` with stdout and stderr on one pipe (local.py `_run_bash`: `[shutil.which("bash"),
 * "-c", script]`; singularity.py: `apptainer exec instance://… bash -c <script>`). Two consequences checked here:
 *  - a function the command defines is labelled `environment` in its messages (bash -c: functions defined before
 *    the shell is initialized come "from the environment"), not `main` (a bash reading a script from stdin);
 *  - a syntax error echoes the command's own line (`bash: eval: line 3: \`echo ('`): nothing the harness adds to
 *    merge stderr into stdout may show in it.
 * The expected text is that script run here by the same bash the same way. End to end through the tool pipeline,
 * in the local bubblewrap sandbox, the host environment and Singularity (test/fixtures/fake-apptainer, whose
 * commands run on this host in bubblewrap, as `bash`). The Docker file (parity_s13_docker_messages) runs the same
 * commands (helpers/shell_messages.ts).
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import {
  cleanupAllSingularityEnvironments,
  createSingularityEnvironment,
} from "../tools/environments/singularity/singularity.js";
import { createToolPipeline } from "../tools/pipeline.js";
import type { ToolContext } from "../tools/registry.js";
import "../tools/terminal_tool.js";
import type { CwdScenario } from "./helpers/hermes_cwd.js";
import { type LocalTaskFixture, localTask, silentLogger } from "./helpers/local_ctx.js";
import { FUNCTION_COMMANDS, originalScript, SYNTAX_ERROR_COMMANDS } from "./helpers/shell_messages.js";

const FAKE = fileURLToPath(new URL("fixtures/fake-apptainer", import.meta.url));
const ORIGINAL_ENV = { ...process.env };
const root = mkdtempSync(join(tmpdir(), "s13-messages-"));
let sif = "";

beforeAll(async () => {
  const binDir = join(root, "bin");
  await mkdir(binDir);
  await symlink(FAKE, join(binDir, "apptainer"));
  sif = join(root, "image.sif");
  await writeFile(sif, "fake sif");
  process.env.PATH = `${binDir}:${ORIGINAL_ENV.PATH ?? "/usr/bin:/bin"}`;
  process.env.APPTAINER_FAKE_STATE = join(root, "state");
  process.env.APPTAINER_FAKE_CONTAIN = "1";
  process.env.APPTAINER_CACHEDIR = join(root, "cache");
});

const closers: (() => Promise<void>)[] = [];
const tasks: LocalTaskFixture[] = [];
afterAll(async () => {
  for (const close of closers) await close();
  for (const t of tasks) await t.dispose();
  await cleanupAllSingularityEnvironments();
  for (const k of Object.keys(process.env)) if (!(k in ORIGINAL_ENV)) delete process.env[k];
  Object.assign(process.env, ORIGINAL_ENV);
  rmSync(root, { recursive: true, force: true });
});

/** What the original's `shutil.which("bash")` finds: the first executable `bash` on PATH. */
function whichBash(): string {
  for (const dir of (ORIGINAL_ENV.PATH ?? "").split(":")) {
    try {
      accessSync(join(dir || ".", "bash"), constants.X_OK);
      return join(dir || ".", "bash");
    } catch {}
  }
  return "/usr/bin/bash";
}

/** The original's result for `command`: bash named `argv0` runs the script, stdout and stderr on one pipe, stripped. */
function original(command: string, argv0: string): { output: string; exit_code: number } {
  const r = spawnSync("bash", ["-c", 'exec -a "$0" bash -c "$1" 2>&1', argv0, originalScript(command, "/")], {
    encoding: "utf8",
    cwd: "/",
  });
  return { output: r.stdout.trim(), exit_code: r.status ?? -1 };
}

function sandbox(): CwdScenario {
  const id = `s${closers.length}`;
  let pending: Promise<Environment> | undefined;
  const env = () =>
    (pending ??= SandboxEnvironment.create({ runName: "s13", taskId: id, hostTaskDir: join(root, id) }, {}));
  closers.push(async () => void (pending && (await (await pending).cleanup())));
  return { ctx: { taskId: id, envKind: "local", getEnv: env, logger: silentLogger }, env };
}

function host(): CwdScenario {
  const t = localTask();
  tasks.push(t);
  return { ctx: t.ctx, env: t.env };
}

function singularity(): CwdScenario {
  const id = `g${closers.length}`;
  let pending: Promise<Environment> | undefined;
  const env = () =>
    (pending ??= createSingularityEnvironment(
      { runName: "s13", taskId: id, hostTaskDir: join(root, "tasks", id), image: sif, taskTimeoutSec: 600 },
      {},
    ));
  const ctx: ToolContext = { taskId: id, envKind: "singularity", getEnv: env, logger: silentLogger };
  return { ctx, env };
}

async function sameAsOriginal(s: CwdScenario, argv0: string, commands: string[]): Promise<void> {
  const pipeline = createToolPipeline();
  const ours: Record<string, unknown>[] = [];
  const expected: Record<string, unknown>[] = [];
  for (const command of commands) {
    const r = JSON.parse(await pipeline.call("terminal", { command }, s.ctx)) as Record<string, unknown>;
    ours.push({ command, output: r.output, exit_code: r.exit_code });
    expected.push({ command, ...original(command, argv0) });
  }
  expect(ours).toEqual(expected);
}

describe.each([
  ["local sandbox", () => sandbox(), whichBash],
  ["host local environment", () => host(), whichBash],
  ["singularity", () => singularity(), () => "bash"],
] as const)("bash's own messages are the original's (%s)", (_label, scenario, argv0) => {
  it(
    "a function the command defines is labelled `environment`",
    () => sameAsOriginal(scenario(), argv0(), FUNCTION_COMMANDS),
    60_000,
  );
  it(
    "a syntax error echoes the command's line, nothing of the harness's",
    () => sameAsOriginal(scenario(), argv0(), SYNTAX_ERROR_COMMANDS),
    60_000,
  );
});
