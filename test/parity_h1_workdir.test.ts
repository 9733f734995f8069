/**
 * A relative `workdir` on the terminal, as the original's (NousResearch/hermes-agent at cb51baec): its
 * tools/terminal_tool.py passes the workdir as given to `env.execute(cwd=workdir)`; tools/environments/base.py
 * `_wrap_command` turns it into `builtin cd <workdir>`, run by a bash that tools/environments/local.py `_run_bash`
 * starts in `self.cwd`, the tracked cwd. So on the local backend a relative workdir is taken from where the last
 * command ended, and the command's end moves the tracked cwd as usual. A background start (terminal_tool.py:
 * `spawn_local(cwd=workdir or cwd)`, a Popen cwd) is not affected: there it stays relative to the start folder.
 * End to end through the tool pipeline, in the local bubblewrap sandbox and the host local environment.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import { createToolPipeline } from "../tools/pipeline.js";
import type { ToolContext } from "../tools/registry.js";
import "../tools/terminal_tool.js";
import type { CwdScenario } from "./helpers/hermes_cwd.js";
import { type LocalTaskFixture, localTask, silentLogger } from "./helpers/local_ctx.js";

const root = mkdtempSync(join(tmpdir(), "h1-workdir-"));
const envs: (() => Promise<void>)[] = [];
const tasks: LocalTaskFixture[] = [];
afterAll(async () => {
  for (const close of envs) await close();
  for (const t of tasks) await t.dispose();
  rmSync(root, { recursive: true, force: true });
});

function sandbox(): CwdScenario {
  const id = `s${envs.length}`;
  let pending: Promise<Environment> | undefined;
  const env = () =>
    (pending ??= SandboxEnvironment.create({ runName: "h1", taskId: id, hostTaskDir: join(root, id) }, {}));
  envs.push(async () => void (pending && (await (await pending).cleanup())));
  return { ctx: { taskId: id, envKind: "local", getEnv: env, logger: silentLogger }, env };
}

function host(): CwdScenario {
  const t = localTask();
  tasks.push(t);
  return { ctx: t.ctx, env: t.env };
}

/** A pipeline whose approval gate records where it was asked to judge each command. */
function gated(s: CwdScenario) {
  const asked: (string | undefined)[] = [];
  const pipeline = createToolPipeline({
    approval: {
      gate: async (_command, opts) => {
        asked.push(opts?.cwd);
        return { allowed: true };
      },
      records: [],
    },
  });
  const term = async (args: Record<string, unknown>) =>
    JSON.parse(await pipeline.call("terminal", args, s.ctx as ToolContext)) as Record<string, unknown>;
  return { asked, term, pipeline };
}

async function relativeToTrackedCwd(s: CwdScenario): Promise<void> {
  const { asked, term } = gated(s);
  const w = (await s.env()).workdir;
  expect((await term({ command: "mkdir -p a/b b && cd a" })).exit_code).toBe(0);
  asked.length = 0;
  // `b` is taken from the tracked cwd (`a`), not from the task's folder (which has a `b` too)
  const r = await term({ command: "pwd", workdir: "b" });
  expect(r).toMatchObject({ output: `${w}/a/b`, exit_code: 0 });
  expect(asked).toEqual([`${w}/a/b`]);
  // the command ended there: the tracked cwd follows, and `..` is taken from it
  expect((await term({ command: "pwd" })).output).toBe(`${w}/a/b`);
  expect((await term({ command: "pwd", workdir: ".." })).output).toBe(`${w}/a`);
  expect((await term({ command: "pwd", workdir: "./b/../../b" })).output).toBe(`${w}/b`);
  // an absolute workdir is unchanged
  expect((await term({ command: "pwd", workdir: `${w}/a` })).output).toBe(`${w}/a`);
}

async function backgroundStaysRelativeToStart(s: CwdScenario): Promise<void> {
  const { term, pipeline } = gated(s);
  const w = (await s.env()).workdir;
  expect((await term({ command: "mkdir -p a/b b && cd a" })).exit_code).toBe(0);
  const started = (await term({ command: "pwd", workdir: "b", background: true })) as { session_id: string };
  const waited = JSON.parse(
    await pipeline.call("process", { action: "wait", session_id: started.session_id, timeout: 30 }, s.ctx),
  ) as { output: string };
  expect(waited.output).toBe(`${w}/b\n`);
}

describe("a relative workdir is taken from the tracked cwd (local sandbox)", () => {
  it("foreground: resolved against where the last command ended", () => relativeToTrackedCwd(sandbox()));
  it("background: still against the start folder, as the original's Popen cwd", () =>
    backgroundStaysRelativeToStart(sandbox()));
});

describe("a relative workdir is taken from the tracked cwd (host local environment)", () => {
  it("foreground: resolved against where the last command ended", () => relativeToTrackedCwd(host()));
  it("background: still against the start folder, as the original's Popen cwd", () =>
    backgroundStaysRelativeToStart(host()));
});
