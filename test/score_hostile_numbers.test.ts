/**
 * The run's numbers computed by hand on a crafted run: 4 tasks × 3 epochs, answers chosen per epoch, matched
 * against `expected: "42"`. statistics.json, the end-of-run line and `compare` must agree with the hand values.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

// Per task, the answer of each epoch in the order asked (one worker: epochs run in order).
const PLAN: Record<string, string[]> = {
  A: ["41", "41", "42"], // n = 3, c = 1, first epoch failed
  B: ["42", "42", "42"], // c = 3
  C: ["1", "2", "3"], // c = 0
  D: ["42", "41", "41"], // c = 1, first epoch passed
};

describe("pass rate, interval, pass@k and pass^k by hand", () => {
  let agent: FakeOpenAI;
  const asked: Record<string, number> = {};
  beforeAll(async () => {
    agent = await startFakeOpenAI((req) => {
      const id = /^\[(\w)\]/.exec(req.body.messages.find((m: any) => m.role === "user").content)![1]!;
      asked[id] = (asked[id] ?? -1) + 1;
      return text(PLAN[id]![asked[id]! % 3]!);
    });
  });
  afterAll(async () => {
    await agent.close();
  });

  it("statistics.json and compare give the hand-computed values", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      Object.keys(PLAN)
        .map((id) => JSON.stringify({ id, prompt: `[${id}] q`, expected: "42" }))
        .join("\n") + "\n",
    );
    const out = join(dir, "runs");
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      agent.baseURL,
      "--api-key",
      "k",
      "--epochs",
      "3",
      "--workers",
      "1",
      "--concurrency",
      "1",
      "--output-dir",
      out,
      "--run-name",
      "e3",
      "--progress",
      "none",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = JSON.parse(readFileSync(join(out, "e3", "statistics.json"), "utf8")).scores;
    expect(s).toMatchObject({ scored: 12, passed: 5, unscored: 0 });
    expect(s.pass_rate).toBeCloseTo(5 / 12, 12);
    // pass@k = mean over tasks of 1 − C(n−c, k)/C(n, k): A and D 1/3, 2/3, 1; B 1; C 0.
    expect(s.pass_at_k["1"]).toBeCloseTo((1 / 3 + 1 + 0 + 1 / 3) / 4, 12);
    expect(s.pass_at_k["2"]).toBeCloseTo((2 / 3 + 1 + 0 + 2 / 3) / 4, 12);
    expect(s.pass_at_k["3"]).toBeCloseTo(3 / 4, 12);
    // pass^k = C(c, k)/C(n, k): only B has two passes.
    expect(s.pass_hat_k["2"]).toBeCloseTo(1 / 4, 12);
    expect(s.pass_hat_k["3"]).toBeCloseTo(1 / 4, 12);
    // Interval: Wilson of the mean rate 5/12 over 4 tasks [0.110, 0.805] joined with Wilson of the first epochs,
    // 2 of 4 (B, D) [0.150, 0.850].
    expect(s.ci95[0]).toBeCloseTo(0.11002, 4);
    expect(s.ci95[1]).toBeCloseTo(0.84996, 4);
    expect(r.stdout).toContain("scores: 41.7 % passed (5/12 scored, 95 % CI 11.0 %–85.0 %), pass@3 75.0 %");

    // The same answers run again and compared: the same rates and interval on both sides, no change.
    for (const k of Object.keys(asked)) asked[k] = -1;
    const r2 = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      agent.baseURL,
      "--api-key",
      "k",
      "--epochs",
      "3",
      "--workers",
      "1",
      "--concurrency",
      "1",
      "--output-dir",
      out,
      "--run-name",
      "e3b",
      "--progress",
      "none",
    ]);
    expect(r2.exitCode).toBe(0);
    const cmp = await runCliInProcess(["compare", join(out, "e3"), join(out, "e3b")]);
    expect(cmp.exitCode, cmp.stdout).toBe(0);
    expect(cmp.stdout).toContain("41.7 % passed (95 % CI 11.0 %–85.0 %) (5/12 scored, 0 unscored; 4 tasks × 3 epochs)");
    expect(cmp.stdout).toMatch(/41\.7 % → 41\.7 %, ±0\.0 pp/);
  });
});
