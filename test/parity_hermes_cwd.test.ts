/**
 * The terminal keeps its shell's cwd and exports between calls, as the original's (hermes-agent at cb51baec,
 * tools/environments/base.py): end to end in the local bubblewrap sandbox and the host local environment, through
 * the tool pipeline.
 * Scenarios in helpers/hermes_cwd.ts (the Docker file runs the same ones).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import type { ToolContext } from "../tools/registry.js";
import {
  backgroundStartsThere,
  cdCarries,
  exitAndTimeoutCarryNothing,
  exportCarries,
  gateFollowsCwd,
  removedCwd,
  type CwdScenario,
} from "./helpers/hermes_cwd.js";
import { type LocalTaskFixture, localTask, silentLogger } from "./helpers/local_ctx.js";

const root = mkdtempSync(join(tmpdir(), "hermes-cwd-"));
const envs: Environment[] = [];
afterAll(async () => {
  for (const env of envs) await env.cleanup();
  rmSync(root, { recursive: true, force: true });
});

function scenario(): CwdScenario {
  const id = `t${envs.length}`;
  let pending: Promise<Environment> | undefined;
  const env = () =>
    (pending ??= SandboxEnvironment.create({ runName: "cwd", taskId: id, hostTaskDir: join(root, id) }, {}).then(
      (e) => {
        envs.push(e);
        return e;
      },
    ));
  envs.push({ cleanup: async () => void (pending && (await pending)) } as Environment);
  const ctx: ToolContext = { taskId: id, envKind: "local", getEnv: env, logger: silentLogger };
  return { ctx, env };
}

describe("the terminal's shell state carries between calls (local sandbox)", () => {
  it("a cd carries to the next call and to the file tools' relative paths", () => cdCarries(scenario()));
  it("exported variables carry, plain ones do not", () => exportCarries(scenario()));
  it("a command's own exit or a timeout carries nothing", () => exitAndTimeoutCarryNothing(scenario()), 20_000);
  it("a removed cwd fails each command with 126 until a workdir moves it", () => removedCwd(scenario()));
  it("the approval gate judges rm -rf x after cd / as rm -rf /x", () => gateFollowsCwd(scenario()));
  it("a background process starts in the carried cwd with the exports", () => backgroundStartsThere(scenario()));
});

describe("the terminal's shell state carries between calls (host local environment)", () => {
  const tasks: LocalTaskFixture[] = [];
  afterAll(async () => {
    for (const t of tasks) await t.dispose();
  });
  const host = (): CwdScenario => {
    const t = localTask();
    tasks.push(t);
    return { ctx: t.ctx, env: t.env };
  };
  it("a cd carries to the next call and to the file tools' relative paths", () => cdCarries(host()));
  it("exported variables carry, plain ones do not", () => exportCarries(host()));
  it("a command's own exit or a timeout carries nothing", () => exitAndTimeoutCarryNothing(host()), 20_000);
  it("the approval gate judges rm -rf x after cd / as rm -rf /x", () => gateFollowsCwd(host()));
  it("a carried command outside the persistent shell (stdin given) carries too", async () => {
    const env = await host().env();
    const w = env.workdir;
    await env.exec("mkdir -p sub", { carry: true });
    const r = await env.exec("cd sub && export HB_P=5 && cat", { carry: true, stdin: "in" });
    expect(r.stdout).toBe("in");
    expect(env.cwd).toBe(`${w}/sub`);
    expect((await env.exec('pwd; echo "[$HB_P]"', { carry: true })).stdout).toBe(`${w}/sub\n[5]\n`);
    expect((await env.exec("cd /; exit 4", { carry: true, stdin: "" })).exitCode).toBe(4);
    expect(env.cwd).toBe(`${w}/sub`);
  });
});
