/**
 * `export --format rl|prime|skyrl|verifiers` after `score --dataset` graded the run again: the rewards are the
 * current grades (trajectories.jsonl), not those rl.jsonl was written with, or a trainer gets advantages of the
 * wrong sign. And the verifiers metadata describes the outputs it holds.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { tokenizingHandler } from "./helpers/token_server.js";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

describe("RL exports after a re-grade", () => {
  let server: FakeOpenAI;
  beforeAll(async () => {
    const { handler } = tokenizingHandler(() => ({ content: "The answer is 42." }));
    server = await startFakeOpenAI(handler);
  });
  afterAll(async () => server.close());

  it("take each task's current grade: reward, passed, the group's advantages and the unscored verdict", async () => {
    const dir = tempDir("hb-rl-regrade-");
    const row = (id: string, value?: string) =>
      JSON.stringify({ id, prompt: `task:${id}`, ...(value ? { expected: { value, match: "includes" } } : {}) });
    const first = join(dir, "first.jsonl");
    writeFileSync(first, `${row("a", "42")}\n${row("b", "42")}\n${row("c")}\n`);
    const runDir = join(dir, "runs", "r");
    const r = await runCliInProcess(
      [
        "run",
        first,
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        "r",
        "--progress",
        "none",
        "--toolsets",
        "todo",
        "--epochs",
        "2",
        "--rl-capture",
      ],
      { env: NO_SCHEDULER },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const before = Object.fromEntries(readJsonl(join(runDir, "rl.jsonl")).map((l) => [`${l.task_id}#${l.epoch}`, l]));
    expect(before["a#0"]).toMatchObject({ reward: 1, passed: true, train: "full" });
    expect(before["c#0"]).toMatchObject({ reward: null, train: "excluded", train_cause: "unscored" });

    // Corrected answers: a's is 41 now (it fails), c gets one (42: it passes).
    const second = join(dir, "second.jsonl");
    writeFileSync(second, `${row("a", "41")}\n${row("b", "42")}\n${row("c", "42")}\n`);
    const s = await runCliInProcess(["score", runDir, "--dataset", second], { env: NO_SCHEDULER });
    expect(s.exitCode, s.stderr).toBe(0);

    const e = await runCliInProcess(["export", runDir, "--format", "rl", "--out", join(dir, "rl.out.jsonl")]);
    expect(e.exitCode, e.stderr).toBe(0);
    expect(e.stderr).toMatch(/4 with the grade `score` gave them since the run/);
    const out = Object.fromEntries(readJsonl(join(dir, "rl.out.jsonl")).map((l) => [`${l.task_id}#${l.epoch}`, l]));
    for (const ep of [0, 1]) {
      expect(out[`a#${ep}`]).toMatchObject({ reward: 0, passed: false, rewards: { reward: 0 }, train: "full" });
      expect(out[`b#${ep}`]).toMatchObject({ reward: 1, passed: true });
      expect(out[`c#${ep}`]).toMatchObject({ reward: 1, passed: true, train: "full", train_cause: "stop" });
    }
    // The verifiers metadata is the outputs' own: 6 rollouts of 3 examples, mean reward 4/6.
    const v = await runCliInProcess(["export", runDir, "--format", "verifiers", "--out", join(dir, "vf.json")]);
    expect(v.exitCode, v.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(join(dir, "vf.json"), "utf8"));
    expect(doc.outputs).toHaveLength(6);
    expect(doc.metadata).toMatchObject({ num_examples: 3, rollouts_per_example: 2 });
    expect(doc.metadata.avg_reward).toBeCloseTo(4 / 6);
    // rl.jsonl itself is left as the run wrote it.
    expect(readFileSync(join(runDir, "rl.jsonl"), "utf8")).toContain('"train_cause":"unscored"');
  });
});
