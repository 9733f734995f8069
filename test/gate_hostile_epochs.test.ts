/**
 * Runs with unequal epochs per task: the test takes each task's first epochs, as many as both runs scored (README,
 * "The statistics"), while the change shown is over every epoch. When the two disagree the verdict says what the
 * test saw, instead of a bare "−80.0 pp … not significant (p = 1.0)".
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compareRuns } from "../src/report/compare.js";
import { comparisonText } from "../src/report/compare_text.js";
import { loadRunSamples } from "../src/report/run_samples.js";
import { tempDir } from "./helpers/cli.js";

function writeRun(dir: string, lines: { id: string; epoch: number; passed: boolean }[]): string {
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

const ids = Array.from({ length: 20 }, (_, i) => `t${i}`);

describe("unequal epochs", () => {
  it("a drop the test cannot see (it is in the later epochs) is named as such, with the change on the test's epochs", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids.map((id) => ({ id, epoch: 0, passed: true })),
    );
    // Every task passed its first epoch and failed the 4 after it: −80 pp over every epoch, none on the first.
    const cur = writeRun(
      join(root, "cur"),
      ids.flatMap((id) => [0, 1, 2, 3, 4].map((epoch) => ({ id, epoch, passed: epoch === 0 }))),
    );
    for (const opts of [{}, { maxDropPp: 5, significantOnly: true }]) {
      const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur), opts);
      expect(c.delta_pp).toBeCloseTo(-80);
      expect(c.test_delta_pp).toBeCloseTo(0);
      expect(c.gate_note).toContain(
        "the test compares each task's first epochs, as many as both runs scored: ±0.0 pp on those, −80.0 pp over every epoch",
      );
      expect(comparisonText(c)).toContain("±0.0 pp on those");
    }
    // As many epochs on both sides: the test is over every epoch, and nothing more is said.
    const cur1 = writeRun(
      join(root, "cur1"),
      ids.map((id, i) => ({ id, epoch: 0, passed: i > 0 })),
    );
    const same = compareRuns(await loadRunSamples(base), await loadRunSamples(cur1), {});
    expect(same.test_delta_pp).toBeCloseTo(-5);
    expect(same.gate_note).not.toContain("on those");
  });
});
