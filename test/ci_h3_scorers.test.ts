/**
 * A row graded by several scorers passes when all of them pass: one that failed decides the task whatever another
 * could not decide. Checked through a real `run` on the built-in scripted model, which has no judge, so every
 * `rubric` is undecided ("no judge model configured") while `expected` decides.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

describe("several scorers, one undecided", () => {
  it("a failed `expected` beside an undecided rubric is a failure, not an unscored task left out of the rate", async () => {
    // A task that all scorers must pass and that failed one of them has failed. It was unscored instead: left out
    // of the pass rate, and of the gate's paired sample, so a judge that errs on the wrong answers (long, garbled,
    // over its context) raised the pass rate of the run that gave them.
    const dir = tempDir();
    const ds = join(dir, "ds.jsonl");
    const row = (id: string, n: number, right: boolean, rubric: boolean) => ({
      id,
      prompt: `Use the shell to compute ${n} + 1 and tell me the result.`,
      toolsets: ["terminal"],
      expected: { value: right ? n + 1 : -1, match: "number" },
      ...(rubric ? { rubric: "The answer gives the sum." } : {}),
    });
    const rows = [
      row("a", 1, true, true),
      row("b", 2, false, true),
      row("c", 3, true, false),
      row("d", 4, false, false),
    ];
    writeFileSync(ds, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const r = await runCliInProcess(
      ["run", ds, "--model", "scripted", "--env", "local", "--run-name", "r", "--output-dir", dir],
      { timeoutMs: 120_000 },
    );
    expect(r.stderr).not.toMatch(/error/i);
    const lines = readFileSync(join(dir, "r", "trajectories.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map(
        (l) =>
          JSON.parse(l) as {
            task_id: string;
            score: { passed: boolean | null; scorers: { name: string; passed: boolean | null }[] };
          },
      );
    const verdict = Object.fromEntries(lines.map((l) => [l.task_id, l.score.passed]));
    // a: expected passed, the rubric could not be graded: unknown. b: expected failed: failed, whatever the rubric.
    expect(verdict).toEqual({ a: null, b: false, c: true, d: false });
    const b = lines.find((l) => l.task_id === "b")!;
    expect(b.score.scorers.map((s) => [s.name, s.passed])).toEqual([
      ["expected", false],
      ["rubric", null],
    ]);
    const stats = JSON.parse(readFileSync(join(dir, "r", "statistics.json"), "utf8")) as {
      scores: { scored: number; passed: number; unscored: number };
    };
    expect(stats.scores).toMatchObject({ scored: 3, passed: 1, unscored: 1 });
  }, 120_000);
});
