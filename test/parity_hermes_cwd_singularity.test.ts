/**
 * The terminal keeps its shell's cwd and exports between calls under `--env singularity` too, as the original's
 * (hermes-agent at cb51baec, tools/environments/base.py): each command is its own `exec` into the instance, so the
 * state lives in the instance's /tmp and the cwd a command ended in comes back at the end of its stderr.
 * Against test/fixtures/fake-apptainer with APPTAINER_FAKE_CONTAIN=1 (no real Apptainer here): its commands run in a
 * bubblewrap sandbox that sees the bind at the workdir and the instance's own /tmp, kept between execs.
 * Scenarios in helpers/hermes_cwd.ts (the local and Docker files run the same ones).
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Environment, shellQuote } from "../tools/environments/base.js";
import {
  cleanupAllSingularityEnvironments,
  createSingularityEnvironment,
  takeCwdReport,
} from "../tools/environments/singularity/singularity.js";
import type { ToolContext } from "../tools/registry.js";
import {
  backgroundStartsThere,
  cdCarries,
  exitAndTimeoutCarryNothing,
  exportCarries,
  removedCwd,
  type CwdScenario,
} from "./helpers/hermes_cwd.js";
import { silentLogger } from "./helpers/local_ctx.js";
import { freshShellState } from "./helpers/shared_shell.js";

const FAKE = fileURLToPath(new URL("fixtures/fake-apptainer", import.meta.url));
const ORIGINAL_ENV = { ...process.env };
let base: string;
let sif: string;
let made = 0;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hb-sing-cwd-"));
  const binDir = join(base, "bin");
  await mkdir(binDir);
  await symlink(FAKE, join(binDir, "apptainer"));
  sif = join(base, "image.sif");
  await writeFile(sif, "fake sif");
  process.env.PATH = `${binDir}:${ORIGINAL_ENV.PATH ?? "/usr/bin:/bin"}`;
  process.env.APPTAINER_FAKE_STATE = join(base, "state");
  process.env.APPTAINER_FAKE_CONTAIN = "1";
  process.env.APPTAINER_CACHEDIR = join(base, "cache");
});

afterAll(async () => {
  await cleanupAllSingularityEnvironments();
  // The whole environment as it was: the cli project's files share their process.
  for (const k of Object.keys(process.env)) if (!(k in ORIGINAL_ENV)) delete process.env[k];
  Object.assign(process.env, ORIGINAL_ENV);
  await rm(base, { recursive: true, force: true });
});

// One instance for every test: a scenario starts from a fresh one's shell state (helpers/shared_shell.ts); the
// scenarios' files and exports have names of their own and they leave no process running.
let pending: Promise<Environment> | undefined;
const sharedEnv = () =>
  (pending ??= createSingularityEnvironment(
    { runName: "cwd", taskId: "s", hostTaskDir: join(base, "tasks", "s"), image: sif, taskTimeoutSec: 600 },
    {},
  ));

async function scenario(): Promise<CwdScenario> {
  const ctx: ToolContext = { taskId: `s${made++}`, envKind: "singularity", getEnv: sharedEnv, logger: silentLogger };
  await freshShellState(ctx);
  return { ctx, env: sharedEnv };
}

describe("the terminal's shell state carries between calls (singularity)", () => {
  it("a cd carries to the next call and to the file tools' relative paths", async () => cdCarries(await scenario()));
  it("exported variables carry, plain ones do not", async () => exportCarries(await scenario()));
  it(
    "a command's own exit or a timeout carries nothing",
    async () => exitAndTimeoutCarryNothing(await scenario()),
    30_000,
  );
  it("a removed cwd fails each command with 126 until a workdir moves it", async () => removedCwd(await scenario()));
  it("a background process starts in the carried cwd with the exports", async () =>
    backgroundStartsThere(await scenario()));
  it("a command's stderr reaches the model as it wrote it, the cwd report taken off", async () => {
    const env = await (await scenario()).env();
    const r = await env.exec("printf 'no newline' >&2; cd /tmp", { carry: true });
    expect(r.stderr).toBe("no newline");
    expect(env.cwd).toBe("/tmp");
    const plain = await env.exec("echo out; echo err >&2");
    expect(plain).toMatchObject({ stdout: "out\n", stderr: "err\n", exitCode: 0 });
  });
});

describe("a carried command's messages (singularity)", () => {
  it("name bash and the line of the original's script, as the original's `bash -c` does", async () => {
    const env = await (await scenario()).env();
    const command = "true\nhb_no_such_command_x";
    // The original's script (base.py `_wrap_command`: snapshot, cd, eval on line 3), run by this machine's bash.
    const original = spawnSync(
      "bash",
      ["-c", `source /nonexistent 2>/dev/null || true\nbuiltin cd / || exit 126\neval ${shellQuote(command)}`],
      { encoding: "utf8" },
    );
    expect(original.stderr).toMatch(/^bash: line \d+: hb_no_such_command_x: command not found\n$/);
    const r = await env.exec(command, { carry: true });
    expect(r.exitCode).toBe(127);
    expect(r.stderr).toBe(original.stderr);
  });
});

describe("takeCwdReport", () => {
  it("takes only the last line after the marker, and only a path", () => {
    expect(takeCwdReport("a\n\n__M__ /work/x\n", "__M__")).toEqual({ stderr: "a\n", cwd: "/work/x" });
    expect(takeCwdReport("\n__M__ \n", "__M__")).toEqual({ stderr: "", cwd: undefined });
    expect(takeCwdReport("killed before the report\n", "__M__")).toEqual({
      stderr: "killed before the report\n",
      cwd: undefined,
    });
    expect(takeCwdReport("\n__M__ /a\nlater\n", "__M__")).toEqual({ stderr: "\n__M__ /a\nlater\n", cwd: undefined });
  });
});
