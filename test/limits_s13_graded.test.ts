/**
 * A task whose agent hits a limit of its sandbox is graded (`resource_limit`), in the cases the first round left
 * unscored (environment_error, out of the pass rate, which an agent could choose for its own failing task):
 * - a Harbor task (its agent phase has its own time limit): its verifier runs on what the agent left;
 * - Docker, the container's own init and keep-alive killed for the memory limit (a root agent can make them the
 *   OOM killer's first choice, then fill the memory): the container stops, and the verify runs all the same.
 * Through the CLI with a scripted model (the fake OpenAI server: its tool call is the attack), in real containers;
 * root only (loop file systems for the disk quota).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const FILL = "echo work > out.txt; dd if=/dev/zero of=big bs=1M count=200 status=none; echo rc=$?";

const CALLS: Record<string, string[]> = {
  fill: [FILL],
};

let server: FakeOpenAI;

beforeAll(async () => {
  await ensureDockerTestImages();
  server = await startFakeOpenAI(
    scriptedPerTask((id) =>
      CALLS[id.replace(/^.*\//, "").replace(/-.*/, "")]!.map((command) => ({
        name: "terminal",
        arguments: { command, timeout: 30 },
      })),
    ),
  );
}, 600_000);

afterAll(async () => {
  await server?.close();
});

const root = process.getuid?.() === 0;

/** A Harbor task folder: the local test image, no network, the agent as root, a 64 MiB workdir, `test` its test. */
function writeHarborTask(dir: string, name: string, test: string): void {
  const task = join(dir, name);
  mkdirSync(join(task, "tests"), { recursive: true });
  mkdirSync(join(task, "solution"), { recursive: true });
  writeFileSync(
    join(task, "task.toml"),
    `schema_version = "1.4"\n\n[agent]\ntimeout_sec = 120.0\n\n[verifier]\ntimeout_sec = 30.0\n\n[environment]\ndocker_image = "hermes-batch-test:bookworm"\nnetwork_mode = "no-network"\nstorage_mb = 64\n`,
  );
  writeFileSync(join(task, "instruction.md"), `task:${name}\n`);
  writeFileSync(
    join(task, "tests", "test.sh"),
    `#!/bin/bash\necho 'the test ran'\nif ${test}; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n`,
    { mode: 0o755 },
  );
  writeFileSync(join(task, "solution", "solve.sh"), "#!/bin/bash\ntrue\n", { mode: 0o755 });
}

describe("a Harbor task whose agent hits a sandbox limit (--env docker)", () => {
  it.runIf(root)(
    "disk: the task ends resource_limit and its verifier grades what the agent left",
    { timeout: 300_000 },
    async () => {
      const dir = tempDir("hb-s13-harbor-");
      const tasks = join(dir, "tasks");
      writeHarborTask(tasks, "fill-pass", "grep -q work out.txt");
      writeHarborTask(tasks, "fill-fail", "test -f answer.txt");
      const out = join(dir, "runs");
      const run = uniqueRunName("s13-harbor");
      const r = await runCliInProcess(
        [
          "run",
          "--harbor",
          tasks,
          "--env",
          "docker",
          "--model",
          "m",
          "--base-url",
          server.baseURL,
          "--api-key",
          "k",
          "--toolsets",
          "terminal",
          "--approval",
          "allow",
          "--output-dir",
          out,
          "--run-name",
          run,
          "--progress",
          "none",
        ],
        { timeoutMs: 280_000 },
      );
      const lines = new Map<string, any>();
      for (const f of ["trajectories.jsonl", "failed.jsonl"])
        for (const l of readJsonl(join(out, run, f))) lines.set(l.task_id, l);
      for (const [id, passed] of [
        ["fill-pass", true],
        ["fill-fail", false],
      ] as const) {
        const line = lines.get(id);
        expect(line, `${id}: ${JSON.stringify(line?.error)}\n${r.stderr}`).toMatchObject({
          outcome: "resource_limit",
          reason: "disk_limit",
          completed: false,
        });
        expect(line.error).toMatch(/^disk_limit: /);
        expect(line.score, JSON.stringify(line.score)).toMatchObject({ passed, value: passed ? 1 : 0 });
        expect(line.score.scorers[0].details?.output_tail).toMatch(/the test ran/);
      }
    },
  );
});
