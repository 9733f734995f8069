/**
 * The CI gate against runs a hostile CI team meets: a current run that is the baseline's folder copied, a run
 * stopped before its epochs were done, two results for one task and epoch. Runs are made by the real `run` on
 * the built-in scripted model where the shape matters, and checked through `compare` as CI calls it.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { compareRuns } from "../src/report/compare.js";
import { loadRunSamples } from "../src/report/run_samples.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

const DATASET = join(import.meta.dirname, "..", "datasets", "eval.jsonl");

async function scriptedRun(out: string, name: string, epochs: number): Promise<string> {
  const r = await runCliInProcess(
    ["run", DATASET, "--model", "scripted", "--run-name", name, "--output-dir", out, "--epochs", String(epochs)],
    { timeoutMs: 120_000 },
  );
  expect(r.exitCode, r.stderr).toBe(0);
  return join(out, name);
}

/** Keeps the lines of a JSONL file that `keep` accepts (as a run killed part-way leaves it). */
function filterLines(path: string, keep: (line: { task_id: string; epoch?: number }) => boolean): void {
  const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
  writeFileSync(path, lines.filter((l) => keep(JSON.parse(l))).join("\n") + "\n");
}

describe("compare refuses what is no measurement of the current run", () => {
  let out: string;
  let base: string;
  let base3: string;
  beforeAll(async () => {
    out = tempDir();
    base = await scriptedRun(out, "base", 1);
    base3 = await scriptedRun(out, "base3", 3);
  }, 180_000);

  it("a copy of the baseline's folder is not a current run: exit 3, not 'no regression'", async () => {
    // A CI job that restored the baseline into the current run's path (a cache key, a wrong `cp`): every result is
    // the baseline's own, and any gate passes them.
    const copy = join(out, "copy");
    cpSync(base, copy, { recursive: true });
    const r = await runCliInProcess(["compare", base, copy]);
    expect(r.exitCode, r.stdout).toBe(3);
    expect(r.stdout).toMatch(/NOT COMPARABLE: .*8 of 8 task\(s\).*the baseline's own result/);
    // A copy graded again against a corrected dataset is compared on purpose: --allow-different-dataset.
    const regraded = await runCliInProcess(["compare", base, copy, "--allow-different-dataset"]);
    expect(regraded.exitCode, regraded.stdout).toBe(0);
    // A real second run of the same model is compared as before.
    const again = await scriptedRun(out, "again", 1);
    const ok = await runCliInProcess(["compare", base, again]);
    expect(ok.exitCode, ok.stdout).toBe(0);
  }, 120_000);

  it("a run stopped before its epochs were done counts its unrun epochs as missing, as it does missing tasks", async () => {
    // `run --epochs 3` killed after the first epoch: every task is there, with 1 of its 3 epochs. Before, compare
    // took it as a finished 1-epoch run; a job killed at its time limit leaves out exactly the slow epochs.
    const cur = await scriptedRun(out, "cut", 3);
    // A second current run, cut another way: a copy of that real run (never compared with "cut" itself).
    const one = join(out, "one");
    cpSync(cur, one, { recursive: true });
    filterLines(join(cur, "trajectories.jsonl"), (l) => (l.epoch ?? 0) === 0);
    const r = await runCliInProcess(["compare", base3, cur]);
    expect(r.exitCode, r.stdout).toBe(3);
    expect(r.stdout).toContain("8 with epochs not run in the current run");
    // One task short of one epoch, within --max-unscored 1: compared, and the verdict names it.
    filterLines(join(one, "trajectories.jsonl"), (l) => !(l.task_id === "eval-add" && l.epoch === 2));
    const within = await runCliInProcess(["compare", base3, one, "--max-unscored", "1"]);
    expect(within.exitCode, within.stdout).toBe(0);
    expect(within.stdout).toContain("1 of 8 baseline task(s) not compared (1 with epochs not run in the current run)");
    // A run made with fewer epochs is no unfinished run: 3 epochs against 1 is compared (README: "1 epoch against
    // 3 is fine").
    const fine = await runCliInProcess(["compare", base3, base]);
    expect(fine.exitCode, fine.stdout).toBe(0);
  }, 120_000);
});

describe("two results for one task and epoch", () => {
  it("the first line of a task and epoch stands, never an appended one, as in statistics.json; compare warns", async () => {
    const root = tempDir();
    const line = (id: string, passed: boolean) =>
      JSON.stringify({
        task_id: id,
        outcome: "completed",
        messages: [{ role: "user", content: `prompt of ${id}` }],
        score: { passed, value: passed ? 1 : 0, scorers: [{ name: "expected", passed, reason: "r" }] },
      });
    const ids = Array.from({ length: 10 }, (_, i) => `t${i}`);
    const base = join(root, "base");
    const cur = join(root, "cur");
    mkdirSync(base);
    mkdirSync(cur);
    writeFileSync(join(base, "trajectories.jsonl"), ids.map((id) => line(id, true)).join("\n") + "\n");
    // t0 failed; a passing line for t0 appended after it (two files concatenated by hand, say): the last line
    // decided before, and the regression (t0 lost) was gone.
    writeFileSync(
      join(cur, "trajectories.jsonl"),
      [...ids.map((id) => line(id, id !== "t0")), line("t0", true), line("t5", true)].join("\n") + "\n",
    );
    const samples = await loadRunSamples(cur);
    expect(samples.samples.get("t0#0")!.passed).toBe(false);
    expect(samples.samples.get("t5#0")!.passed).toBe(true);
    expect(samples.duplicateLines).toBe(2);
    expect(samples.conflicting).toBe(1);
    const c = compareRuns(await loadRunSamples(base), samples);
    expect(c.lost).toEqual(["t0"]);
    expect(c.verdict).toBe("regression");
    const r = await runCliInProcess(["compare", base, cur]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("2 duplicate line(s)");
    expect(r.stderr).toContain("1 task epoch(s) whose repeated lines disagree with the first");
  });
});

describe("rows that name no scorer", () => {
  it("are no unscored task of the gate: a dataset with data-only rows beside scored ones compares (exit 0)", async () => {
    // --fail-under counts undecided results only among rows that name a scorer; compare counted a row without any
    // as "unscored", so one such row among 9 made every comparison exit 3, and CI raised --max-unscored for good.
    const out = tempDir();
    const data = join(out, "data.jsonl");
    writeFileSync(data, `${readFileSync(DATASET, "utf8").trimEnd()}\n{"id": "free-1", "prompt": "Say hi."}\n`);
    const run = async (name: string) => {
      const r = await runCliInProcess(["run", data, "--model", "scripted", "--run-name", name, "--output-dir", out]);
      expect(r.exitCode, r.stderr).toBe(0);
      return join(out, name);
    };
    const [a, b] = [await run("a"), await run("b")];
    const r = await runCliInProcess(["compare", a, b]);
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.stdout).toContain("1 task(s) without a scorer in either run, not compared");
    // A scorer in the baseline and none now is still a task the current run does not measure.
    const c = compareRuns(await loadRunSamples(a), await loadRunSamples(b));
    expect(c.unscored_tasks).toBe(0);
    const lines = readFileSync(join(b, "trajectories.jsonl"), "utf8").split("\n").filter(Boolean);
    writeFileSync(
      join(b, "trajectories.jsonl"),
      lines
        .map((l) => {
          const v = JSON.parse(l);
          if (v.task_id === "eval-add") delete v.score;
          return JSON.stringify(v);
        })
        .join("\n") + "\n",
    );
    const dropped = compareRuns(await loadRunSamples(a), await loadRunSamples(b));
    expect(dropped.unscored_tasks).toBe(1);
    expect(dropped.unscored_reasons).toEqual({ "no scorer for this task": 1 });
  }, 60_000);
});
