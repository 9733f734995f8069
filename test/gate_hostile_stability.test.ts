/**
 * The same two runs give the same numbers, whatever order their lines are in (a resumed run, shards merged in
 * another order, a rescored file): the Monte-Carlo test beyond 16 tasks draws its sign patterns task by task.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compareRuns } from "../src/report/compare.js";
import { loadRunSamples } from "../src/report/run_samples.js";
import { tempDir } from "./helpers/cli.js";

type Line = { id: string; epoch: number; passed: boolean };

function writeRun(dir: string, lines: Line[]): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "trajectories.jsonl"),
    lines
      .map((l) =>
        JSON.stringify({
          task_id: l.id,
          ...(l.epoch ? { epoch: l.epoch } : {}),
          outcome: "completed",
          messages: [{ role: "user", content: `prompt of ${l.id}` }],
          score: { passed: l.passed, value: +l.passed, scorers: [{ name: "expected", passed: l.passed }] },
        }),
      )
      .join("\n") + "\n",
  );
  return dir;
}

describe("the order of a run's lines", () => {
  it("changes no p-value, interval or verdict of a Monte-Carlo comparison (40 tasks × 2 epochs)", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `t${String(i).padStart(2, "0")}`);
    const pass = (i: number, e: number) => (i * 7 + e * 13) % 10 < 6;
    const base = ids.flatMap((id, i) => [0, 1].map((epoch) => ({ id, epoch, passed: pass(i, epoch) || i % 3 === 0 })));
    const cur = ids.flatMap((id, i) =>
      [0, 1].map((epoch) => ({ id, epoch, passed: pass(i + 1, epoch) && i % 5 !== 0 })),
    );
    const shuffled = (lines: Line[]) =>
      lines
        .map((l, i) => ({ l, k: (i * 37) % lines.length }))
        .sort((a, b) => a.k - b.k)
        .map((x) => x.l);
    const results = [];
    for (const [b, c] of [
      [base, cur],
      [[...base].reverse(), cur],
      [shuffled(base), [...cur].reverse()],
    ] as const) {
      const dir = tempDir();
      const r = compareRuns(
        await loadRunSamples(writeRun(join(dir, "b"), b)),
        await loadRunSamples(writeRun(join(dir, "c"), c)),
      );
      expect(r.test).toBe("sign_flip_monte_carlo");
      results.push([r.p_value, r.p_value_drop, r.delta_ci95_pp, r.verdict]);
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });
});

describe("a change of exactly zero", () => {
  it("is ±0.0 pp and passes --max-drop 0, not 'dropped by 0.0 points' from a rounding error", async () => {
    // Three tasks whose rates trade places (1/3, 2/3, 1/10 → 2/3, 1/10, 1/3): the same mean, but the floating-point
    // sum of the differences is −9e-18, which --max-drop 0 took for a drop.
    const epochs = (id: string, n: number, passed: number) =>
      Array.from({ length: n }, (_, epoch) => ({ id, epoch, passed: epoch < passed }));
    const dir = tempDir();
    const base = writeRun(join(dir, "b"), [...epochs("a", 3, 1), ...epochs("b", 3, 2), ...epochs("c", 10, 1)]);
    const cur = writeRun(join(dir, "c"), [...epochs("a", 3, 2), ...epochs("b", 10, 1), ...epochs("c", 3, 1)]);
    const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { maxDropPp: 0 });
    expect(c.delta_pp).toBe(0);
    expect(c.verdict).toBe("ok");
    expect(c.gate_note).toContain("no regression: ±0.0 pp");
  });
});
