/**
 * A hostile tester's third round, Harbor tasks in Docker with a non-root agent (`[agent] user`), through the CLI
 * with `--model oracle` (solution/solve.sh plays the agent): /logs/verifier is mode 777 for the verifier's sake, and
 * the root verifier wrote through what the agent left there, turning a failing task into an unscored one:
 * - `stdout-link`: test-stdout.txt a link to reward.json: the test's output landed in reward.json ("not JSON");
 * - `reward-dir`: a folder at reward.txt: the test could not write its reward ("no reward");
 * - `test-link`: test-stdout.txt a link to /tests/test.sh: root truncated the test before it ran (no reward).
 * The folder is now made anew, as root, before the verifier: each test runs and its reward of 0 is graded.
 * `ro-tree` (a read-only tree there, which root in this sandbox cannot remove) and `agent-link` (links in
 * /logs/agent, copied to the run folder) keep it so.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { readJsonl } from "./helpers/jsonl.js";

/** A task folder: the local test image, no network, the agent as `agent` (uid 1000), a test that gives reward 0. */
function writeTask(root: string, name: string, solve: string): void {
  const dir = join(root, name);
  mkdirSync(join(dir, "tests"), { recursive: true });
  mkdirSync(join(dir, "solution"), { recursive: true });
  writeFileSync(
    join(dir, "task.toml"),
    `schema_version = "1.4"\n\n[agent]\ntimeout_sec = 60.0\nuser = "agent"\n\n[verifier]\ntimeout_sec = 30.0\n\n[environment]\ndocker_image = "hermes-batch-test:bookworm"\nnetwork_mode = "no-network"\n`,
  );
  writeFileSync(join(dir, "instruction.md"), `Task ${name}: nothing to do.\n`);
  writeFileSync(
    join(dir, "tests", "test.sh"),
    "#!/bin/bash\necho 'the real test ran'\necho 0 > /logs/verifier/reward.txt\n",
    {
      mode: 0o755,
    },
  );
  writeFileSync(join(dir, "solution", "solve.sh"), `#!/bin/bash\n${solve}\n`, { mode: 0o755 });
}

const TASKS: Record<string, string> = {
  "stdout-link": "ln -s /logs/verifier/reward.json /logs/verifier/test-stdout.txt",
  "reward-dir": "mkdir /logs/verifier/reward.txt && touch /logs/verifier/reward.txt/x",
  "test-link": "ln -s /tests/test.sh /logs/verifier/test-stdout.txt",
  // Not followed into the run folder either.
  "agent-link": "ln -s /etc/shadow /logs/agent/shadow.txt; ln -s /etc /logs/agent/etc",
  // A tree that root, without CAP_DAC_OVERRIDE or CAP_FOWNER in this sandbox, cannot remove: moved aside instead.
  "ro-tree":
    "mkdir -p /logs/verifier/ro/d && touch /logs/verifier/ro/d/x && chmod -R 555 /logs/verifier/ro && chmod 000 /logs/verifier/ro/d",
};

describe("what a non-root agent leaves in /logs (Harbor, Docker)", () => {
  beforeAll(async () => {
    await ensureDockerTestImages();
  }, 600_000);

  it("does not keep the verifier from grading the task", async () => {
    const root = tempDir("hb-hostile3-harbor-");
    for (const [name, solve] of Object.entries(TASKS)) writeTask(root, name, solve);
    const out = join(root, "runs");
    const run = uniqueRunName("hostile3-harbor");
    const r = await runCliInProcess(
      [
        "run",
        "--harbor",
        root,
        "--env",
        "docker",
        "--model",
        "oracle",
        "--output-dir",
        out,
        "--run-name",
        run,
        "--progress",
        "none",
      ],
      { timeoutMs: 280_000 },
    );
    expect(r.stderr).not.toMatch(/internal error/);
    const entries = Object.fromEntries(readJsonl(join(out, run, "trajectories.jsonl")).map((e) => [e.task_id, e]));
    expect(Object.keys(entries).sort(), r.stderr + r.stdout).toEqual(Object.keys(TASKS).sort());
    for (const id of Object.keys(TASKS)) {
      const e = entries[id];
      expect.soft(e.final_response, id).toBe("oracle: solution/solve.sh exited 0");
      expect.soft(e.score, `${id}: ${JSON.stringify(e.score)}`).toMatchObject({ passed: false, value: 0 });
      expect.soft(e.score.scorers[0].details?.output_tail ?? JSON.stringify(e.score), id).toMatch(/the real test ran/);
    }
    // The agent's links in /logs/agent are not followed into the run folder.
    expect(existsSync(join(out, run, "harbor", "agent-link", "agent", "shadow.txt"))).toBe(false);
    expect(existsSync(join(out, run, "harbor", "agent-link", "agent", "etc"))).toBe(false);
  }, 300_000);
});
