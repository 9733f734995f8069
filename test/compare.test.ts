import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { compareRuns } from "../src/report/compare.js";
import { comparisonMarkdown, comparisonText } from "../src/report/compare_text.js";
import { runToJUnit } from "../src/report/junit.js";
import { loadRunSamples } from "../src/report/run_samples.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

type Line = {
  id: string;
  passed: boolean | null;
  epoch?: number;
  prompt?: string;
  tokens?: number;
  reason?: string;
  approverTokens?: number;
  judgeTokens?: number;
  criteria?: string;
};

function writeRun(
  dir: string,
  lines: Line[],
  failed: { id: string; epoch?: number; error: string; outcome?: string }[] = [],
): string {
  mkdirSync(dir, { recursive: true });
  const traj = lines.map((l) =>
    JSON.stringify({
      task_id: l.id,
      ...(l.epoch !== undefined ? { epoch: l.epoch } : {}),
      outcome: "completed",
      messages: [{ role: "user", content: l.prompt ?? `prompt of ${l.id}` }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: l.tokens ?? 100 },
      ...(l.approverTokens
        ? { approval_usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: l.approverTokens } }
        : {}),
      ...(l.judgeTokens
        ? { judge_usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: l.judgeTokens } }
        : {}),
      duration_ms: 1000,
      final_response: "answer",
      score: {
        passed: l.passed,
        value: l.passed === null ? null : l.passed ? 1 : 0,
        scorers: [
          { name: "expected", passed: l.passed, reason: l.reason ?? (l.passed ? "ok" : `expected "4", got "5"`) },
        ],
        ...(l.criteria ? { criteria: l.criteria } : {}),
      },
    }),
  );
  writeFileSync(join(dir, "trajectories.jsonl"), traj.join("\n") + "\n");
  writeFileSync(
    join(dir, "failed.jsonl"),
    failed
      .map((f) =>
        JSON.stringify({ task_id: f.id, epoch: f.epoch, outcome: f.outcome ?? "model_error", error: f.error }),
      )
      .join("\n") + (failed.length ? "\n" : ""),
  );
  return dir;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `t${String(i).padStart(2, "0")}`);

describe("compareRuns", () => {
  it("pairs by task id, lists newly failing/passing, uses exact McNemar for one epoch", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids(20).map((id, i) => ({ id, passed: i < 15 })),
    );
    // 10 newly failing (t00..t09), 1 newly passing (t15).
    const cur = writeRun(
      join(root, "cur"),
      ids(20).map((id, i) => ({ id, passed: (i >= 10 && i < 15) || i === 15 })),
    );
    const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { maxDropPp: 5 });
    expect(c.newly_failing.map((t) => t.task_id)).toEqual(ids(10));
    expect(c.newly_passing.map((t) => t.task_id)).toEqual(["t15"]);
    expect(c.newly_failing[0]!.reason).toBe('expected: expected "4", got "5"');
    expect(c.test).toBe("mcnemar_exact");
    // b=10 discordant one way, c=1 the other: p = 2 * (1 + 11) / 2^11.
    expect(c.p_value).toBeCloseTo((2 * 12) / 2048, 12);
    expect(c.delta_pp).toBeCloseTo(-45, 9);
    expect(c.verdict).toBe("regression");
    expect(c.delta_ci95_pp![1]).toBeLessThan(0);
  });

  it("failed and unscored tasks are unscored on their side, never a failure", async () => {
    const root = tempDir();
    const base = writeRun(join(root, "base"), [
      { id: "a", passed: true },
      { id: "b", passed: true },
      { id: "c", passed: true },
    ]);
    const cur = writeRun(
      join(root, "cur"),
      [
        { id: "a", passed: true },
        { id: "b", passed: null, reason: "judge failed" },
      ],
      [{ id: "c", error: "HTTP 500" }],
    );
    const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur), {
      maxDropPp: 0,
      maxUnscored: { count: 2 },
    });
    expect(c.current).toMatchObject({ scored: 1, unscored: 2, passed: 1 });
    expect(c.paired).toBe(1);
    expect(c.unscored_tasks).toBe(2);
    expect(c.unscored_reasons).toEqual({ "expected: judge failed": 1, model_error: 1 });
    expect(c.newly_failing).toEqual([]);
    expect(c.verdict).toBe("ok");
    expect(
      compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { maxUnscored: { count: 1 } }).verdict,
    ).toBe("not_comparable");
    // The default allows 10 % of the tasks: 2 of 3 is far over.
    const byDefault = compareRuns(await loadRunSamples(base), await loadRunSamples(cur));
    expect(byDefault.verdict).toBe("not_comparable");
    expect(byDefault.not_comparable.join()).toContain("2 of 3 task(s) are unscored");
  });

  it("a failure of a task that later finished does not count; only the latest attempt of an unfinished task", async () => {
    const root = tempDir();
    const run = writeRun(
      join(root, "r"),
      [{ id: "a", passed: true }],
      [
        { id: "a", error: "first try failed" },
        { id: "b", error: "one" },
        { id: "b", error: "two" },
      ],
    );
    const samples = await loadRunSamples(run);
    expect(samples.samples.get("a#0")!.passed).toBe(true);
    expect(samples.samples.get("b#0")!.reason).toBe("model_error: two");
  });

  it("several epochs use the sign-flip test over tasks; --significant-only ignores a drop that is not significant", async () => {
    const root = tempDir();
    const lines = (flip: (id: number, epoch: number) => boolean) =>
      ids(6).flatMap((id, i) => [0, 1, 2].map((epoch) => ({ id, epoch, passed: flip(i, epoch) })));
    const base = writeRun(
      join(root, "base"),
      lines(() => true),
    );
    const cur = writeRun(
      join(root, "cur"),
      lines((i, e) => !(i === 0 && e === 0)),
    );
    const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur), {
      maxDropPp: 1,
      significantOnly: true,
    });
    expect(c.baseline.epochs).toBe(3);
    expect(c.paired).toBe(6);
    expect(c.test).toBe("sign_flip_exact");
    // Task t00 went from 3/3 to 2/3: −1/3 on one task of six.
    expect(c.delta_pp).toBeCloseTo(-100 / 18, 9);
    expect(c.p_value).toBe(1);
    expect(c.significant).toBe(false);
    expect(c.verdict).toBe("ok");
    expect(c.gate_note).toMatch(/^−5\.6 pp, more than --max-drop 1 but not significant/);
    expect(compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { maxDropPp: 1 }).verdict).toBe(
      "regression",
    );
    const byDefault = compareRuns(await loadRunSamples(base), await loadRunSamples(cur));
    expect(byDefault.verdict).toBe("ok");
    expect(byDefault.gate_note).toMatch(/^−5\.6 pp, within the default gate/);
  });

  it("another prompt for a paired task makes the runs not comparable unless allowed", async () => {
    const root = tempDir();
    const base = writeRun(join(root, "base"), [{ id: "a", passed: true, prompt: "2+2?" }]);
    const cur = writeRun(join(root, "cur"), [{ id: "a", passed: true, prompt: "3+3?" }]);
    const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur));
    expect(c.verdict).toBe("not_comparable");
    expect(c.not_comparable[0]).toMatch(/dataset differs.*first: a/);
    expect(
      compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { allowDifferentDataset: true }).verdict,
    ).toBe("ok");
  });
});

describe("a gate that fails safe (cases a CI team hit)", () => {
  const load = async (dir: string) => loadRunSamples(dir);

  it("an 83-point drop with no flag is a regression under the default gate, never 'no regression'", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids(6).map((id) => ({ id, passed: true })),
    );
    const cur = writeRun(
      join(root, "cur"),
      ids(6).map((id, i) => ({ id, passed: i === 5 })),
    );
    const c = compareRuns(await load(base), await load(cur));
    expect(c.delta_pp).toBeCloseTo(-83.33, 1);
    expect(c.gate).toBe("default");
    expect(c.verdict).toBe("regression");
    expect(c.lost).toEqual(ids(5));
    // 5 lost, 0 gained: one-sided p = 1/32 < 0.05, two-sided 0.0625.
    expect(c.p_value_drop).toBeCloseTo(1 / 32, 12);
    expect(c.p_value).toBeCloseTo(0.0625, 12);
    expect(c.significant_drop).toBe(true);
    const text = comparisonText(c);
    expect(text).not.toContain("no regression");
    expect(text).toContain("gate: default gate");
    expect(text).toMatch(
      /REGRESSION: significant drop of 83\.3 points \(one-sided p = 0\.031 < 0\.05\); 5 task\(s\) passed every epoch of the baseline/,
    );
  });

  it("a drop within --max-drop says so instead of 'no regression'", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids(20).map((id) => ({ id, passed: true })),
    );
    const cur = writeRun(
      join(root, "cur"),
      ids(20).map((id, i) => ({ id, passed: i !== 0 })),
    );
    const c = compareRuns(await load(base), await load(cur), { maxDropPp: 10 });
    expect(c.verdict).toBe("ok");
    const text = comparisonText(c);
    expect(text).not.toContain("no regression");
    expect(text.trim().split("\n").at(-1)).toBe("−5.0 pp, within --max-drop 10");
  });

  it("5 of 6 tasks unscored is not comparable by default (exit 3), with the count and the reasons", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids(6).map((id) => ({ id, passed: true })),
    );
    const cur = writeRun(
      join(root, "cur"),
      [{ id: "t05", passed: true }],
      ids(5).map((id) => ({ id, error: "docker: image not found", outcome: "environment_error" })),
    );
    const c = compareRuns(await load(base), await load(cur), { maxDropPp: 5 });
    expect(c.paired).toBe(1);
    expect(c.verdict).toBe("not_comparable");
    expect(c.not_comparable.join()).toContain(
      "5 of 6 task(s) are unscored in a run or missing from the current run (5 environment_error), more than --max-unscored 10 %",
    );
  });

  it("a task absent from the current run counts as missing", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids(10).map((id) => ({ id, passed: true })),
    );
    const cur = writeRun(
      join(root, "cur"),
      ids(8).map((id) => ({ id, passed: true })),
    );
    const c = compareRuns(await load(base), await load(cur));
    expect(c.unscored_reasons).toEqual({ "absent from the current run": 2 });
    expect(c.verdict).toBe("not_comparable");
    expect(compareRuns(await load(base), await load(cur), { maxUnscored: { percent: 20 } }).verdict).toBe("ok");
  });

  it("one epoch, one flip: the default gate fails and says how to gate a model that samples", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids(20).map((id) => ({ id, passed: true })),
    );
    const cur = writeRun(
      join(root, "cur"),
      ids(20).map((id, i) => ({ id, passed: i !== 7 })),
    );
    const c = compareRuns(await load(base), await load(cur));
    expect(c.verdict).toBe("regression");
    expect(c.significant_drop).toBe(false);
    expect(c.regressions.join("; ")).toContain(
      "with one epoch per task one flip is a loss: for a model that samples, run --epochs K or gate with --max-drop P --significant-only",
    );
    // With epochs, a task lost in all of them is no accident: no such note.
    const base3 = writeRun(
      join(root, "base3"),
      ids(20).flatMap((id) => [0, 1, 2].map((epoch) => ({ id, epoch, passed: true }))),
    );
    const cur3 = writeRun(
      join(root, "cur3"),
      ids(20).flatMap((id, i) => [0, 1, 2].map((epoch) => ({ id, epoch, passed: i !== 7 }))),
    );
    const c3 = compareRuns(await load(base3), await load(cur3));
    expect(c3.verdict).toBe("regression");
    expect(c3.regressions.join("; ")).not.toContain("one flip");
  });

  it("4 tasks flipped: a wide interval that holds 0 beside p = 0.125, not [−100, −100]", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids(6).map((id) => ({ id, passed: true })),
    );
    const cur = writeRun(
      join(root, "cur"),
      ids(6).map((id, i) => ({ id, passed: i >= 4 })),
    );
    const c = compareRuns(await load(base), await load(cur), { maxDropPp: 90 });
    expect(c.p_value).toBe(0.125);
    expect(c.delta_ci95_pp![0]).toBeLessThan(-66.7);
    expect(c.delta_ci95_pp![1]).toBeGreaterThanOrEqual(0);
  });

  it("the test counts tasks, not task x epoch pairs: 1 vs 3 epochs gives the exact p over 6 tasks", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids(6).map((id) => ({ id, passed: true })),
    );
    const three = (passed: (i: number) => boolean) =>
      ids(6).flatMap((id, i) => [0, 1, 2].map((epoch) => ({ id, epoch, passed: passed(i) })));
    const cur = writeRun(
      join(root, "cur"),
      three((i) => i >= 4),
    );
    const c = compareRuns(await load(base), await load(cur), { maxDropPp: 5, significantOnly: true });
    expect(c.paired).toBe(6);
    expect(c.test).toBe("sign_flip_exact");
    expect(c.p_value).toBe(0.125);
    expect(comparisonText(c)).toContain("paired over 6 tasks scored in both (1 epoch baseline, 3 current)");
    // The same evidence with 3 epochs on both sides gives the same p: epochs are not independent samples.
    const base3 = writeRun(
      join(root, "base3"),
      three(() => true),
    );
    expect(compareRuns(await load(base3), await load(cur)).p_value).toBe(0.125);
    expect(c.verdict).toBe("ok");
    expect(c.gate_note).toContain("more than --max-drop 5 but not significant");
  });

  it("unequal epochs: the test takes each task's first epochs, as many as both runs scored, and says so", async () => {
    const root = tempDir();
    // 20 tasks: the baseline ran 1 epoch (all passed), the current 10 (9 of 10 passed in each task). Over every
    // epoch each task "dropped" by 0.1, and a sign-flip over those differences calls that a significant drop; on
    // the first epoch of each, nothing changed.
    const base = writeRun(
      join(root, "base"),
      ids(20).map((id) => ({ id, passed: true })),
    );
    const cur = writeRun(
      join(root, "cur"),
      ids(20).flatMap((id) => Array.from({ length: 10 }, (_, epoch) => ({ id, epoch, passed: epoch !== 9 }))),
    );
    const c = compareRuns(await load(base), await load(cur));
    expect(c.test_on_common_epochs).toBe(true);
    expect(c.p_value_drop).toBe(1);
    expect(c.delta_pp).toBeCloseTo(-10);
    expect(c.verdict).toBe("ok");
    expect(comparisonText(c)).toContain("on each task's first epochs, as many as both runs scored");
    // As many epochs on both sides: the sign-flip over every epoch, as before.
    const cur1 = writeRun(
      join(root, "cur1"),
      ids(20).map((id) => ({ id, passed: true })),
    );
    expect(compareRuns(await load(base), await load(cur1)).test_on_common_epochs).toBe(false);
  });

  it("the same prompts graded against other criteria are not comparable; a run that records none is", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids(4).map((id) => ({ id, passed: true, criteria: `sha256:${id}-key` })),
    );
    const fixedKey = writeRun(
      join(root, "fixed"),
      ids(4).map((id, i) => ({ id, passed: true, criteria: i === 2 ? "sha256:new-key" : `sha256:${id}-key` })),
    );
    const c = compareRuns(await load(base), await load(fixedKey));
    expect(c.verdict).toBe("not_comparable");
    expect(c.not_comparable.join("; ")).toContain(
      `the scoring differs: 1 task(s) are graded against other criteria (expected, verify, verify_files or rubric; first: ${ids(4)[2]})`,
    );
    expect(compareRuns(await load(base), await load(fixedKey), { allowDifferentDataset: true }).verdict).toBe("ok");
    // A run from before the digest was recorded: nothing to compare it with, so nothing is refused.
    const older = writeRun(
      join(root, "older"),
      ids(4).map((id) => ({ id, passed: true })),
    );
    expect(compareRuns(await load(older), await load(fixedKey)).verdict).toBe("ok");
  });

  it("token totals are agent / approver / judge with one total", async () => {
    const root = tempDir();
    const base = writeRun(join(root, "base"), [
      { id: "a", passed: true, tokens: 100, approverTokens: 10, judgeTokens: 5 },
    ]);
    const cur = writeRun(join(root, "cur"), [{ id: "a", passed: true, tokens: 200, judgeTokens: 7 }]);
    const c = compareRuns(await load(base), await load(cur));
    expect(c.baseline.tokens).toEqual({ agent: 100, approver: 10, judge: 5, total: 115 });
    expect(c.current.tokens).toEqual({ agent: 200, approver: 0, judge: 7, total: 207 });
    expect(c.mean_tokens_delta).toBe(92);
    expect(comparisonText(c)).toContain(
      "tokens: baseline agent 100, approver 10, judge 5, total 115; current agent 200, approver 0, judge 7, total 207",
    );
  });

  it("Markdown escapes HTML and Markdown from model output and ids", async () => {
    const root = tempDir();
    const evil = "t|*x*";
    const base = writeRun(join(root, "base"), [
      { id: evil, passed: true },
      ...ids(20).map((id) => ({ id, passed: true })),
    ]);
    const cur = writeRun(join(root, "cur"), [
      { id: evil, passed: false, reason: 'got <img src=x onerror="alert(1)"> and [link](http://x) @team' },
      ...ids(20).map((id) => ({ id, passed: true })),
    ]);
    const md = comparisonMarkdown(compareRuns(await load(base), await load(cur)));
    expect(md).not.toContain("<img");
    expect(md).not.toContain("[link](");
    expect(md).not.toContain("@team");
    expect(md).toContain("&lt;img");
    expect(md).toContain("| t\\|\\*x\\* |");
  });

  it("JUnit: a failed score is <failure>, an unscored task <error>, only a task absent from the run <skipped>", async () => {
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ["a", "b", "c", "d"].map((id) => ({ id, passed: true })),
    );
    const cur = writeRun(
      join(root, "cur"),
      [
        { id: "a", passed: true },
        { id: "b", passed: false },
      ],
      [{ id: "c", error: "container died", outcome: "environment_error" }],
    );
    const xml = runToJUnit(await load(cur), { baseline: await load(base) });
    const parsed = execFileSync(
      "python3",
      [
        "-c",
        "import sys,json,xml.etree.ElementTree as ET; s=ET.fromstring(sys.stdin.read()).find('testsuite'); print(json.dumps({'totals':[s.get(k) for k in ('tests','failures','errors','skipped')],'cases':{c.get('name'):[(e.tag,e.get('message')) for e in c] for c in s.findall('testcase')}}))",
      ],
      { encoding: "utf8", input: xml },
    );
    const x = JSON.parse(parsed) as { totals: string[]; cases: Record<string, [string, string][]> };
    expect(x.totals).toEqual(["4", "1", "1", "1"]);
    expect(x.cases).toEqual({
      a: [],
      b: [["failure", 'expected: expected "4", got "5"']],
      c: [["error", "unscored: environment_error: container died"]],
      d: [["skipped", "absent from the current run"]],
    });
  });
});

describe("the README's worked example", () => {
  it("is what compare prints for 6/6 against 1/6", async () => {
    const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
    const root = tempDir();
    const six = ["t0", "t1", "t2", "t3", "t4", "t5"];
    const base = writeRun(
      join(root, "base"),
      six.map((id) => ({ id, passed: true })),
    );
    const cur = writeRun(
      join(root, "cur"),
      six.map((id) => ({ id, passed: id === "t5" })),
    );
    const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur));
    const lines = comparisonText(c).split("\n");
    for (const prefix of ["paired over 6 tasks", "REGRESSION:"]) {
      const line = lines.find((l) => l.startsWith(prefix))!;
      expect(readme).toContain(line);
    }
    expect(
      comparisonText(compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { maxDropPp: 90 })),
    ).toContain("−83.3 pp, within --max-drop 90");
    expect(lines.find((l) => l.startsWith("current"))).toContain("16.7 % passed (95 % CI 3.0 %–56.4 %)");
  });
});

describe("hermes-batch compare (CLI)", () => {
  let root: string;
  beforeAll(() => {
    root = tempDir();
    writeRun(
      join(root, "base"),
      ids(10).map((id) => ({ id, passed: true })),
    );
    writeRun(
      join(root, "same"),
      ids(10).map((id) => ({ id, passed: true })),
    );
    writeRun(
      join(root, "worse"),
      ids(10).map((id, i) => ({ id, passed: i >= 4, reason: i < 4 ? 'expected "x" & <y>, got "z"' : "ok" })),
    );
    writeRun(join(root, "other"), [{ id: "zzz", passed: true }]);
  });

  it("exit 0 without regression, 1 on a regression, 3 when nothing is in common, 2 on bad input", async () => {
    const ok = await runCliInProcess(["compare", join(root, "base"), join(root, "same"), "--max-drop", "0"]);
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toContain("no regression");
    const bad = await runCliInProcess(["compare", join(root, "base"), join(root, "worse"), "--max-drop", "5"]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout.indexOf("newly failing (4)")).toBe(0);
    expect(bad.stdout).toContain("REGRESSION: pass rate dropped by 40.0 points");
    const none = await runCliInProcess(["compare", join(root, "base"), join(root, "other")]);
    expect(none.exitCode).toBe(3);
    expect(none.stdout).toContain("no task in common");
    const usage = await runCliInProcess(["compare", join(root, "base")]);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr.trim().split("\n")).toHaveLength(1);
    const flag = await runCliInProcess(["compare", join(root, "base"), join(root, "same"), "--max-drop", "-3"]);
    expect(flag.exitCode).toBe(2);
    const missing = await runCliInProcess(["compare", join(root, "base"), join(root, "nope")]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("no such run folder");
    const outDir = await runCliInProcess([
      "compare",
      join(root, "base"),
      join(root, "same"),
      "--junit",
      join(root, "no-such-dir", "j.xml"),
    ]);
    expect(outDir.exitCode).toBe(2);
    for (const bad of ["1.5", "abc", "150%", "-1"]) {
      const r = await runCliInProcess(["compare", join(root, "base"), join(root, "same"), "--max-unscored", bad]);
      expect(r.exitCode, bad).toBe(2);
      expect(r.stderr.trim().split("\n"), bad).toHaveLength(1);
      expect(r.stderr).toContain("--max-unscored");
    }
    expect(
      (await runCliInProcess(["compare", join(root, "base"), join(root, "same"), "--max-unscored", "20%"])).exitCode,
    ).toBe(0);
  });

  it("writes JUnit XML a parser accepts (one testcase per task, failures say why), Markdown and JSON", async () => {
    const junit = join(root, "junit.xml");
    const md = join(root, "pr.md");
    const json = join(root, "cmp.json");
    // No gate flag: the default gate fails on the 4 lost tasks, and every output file is still written.
    const r = await runCliInProcess([
      "compare",
      join(root, "base"),
      join(root, "worse"),
      "--junit",
      junit,
      "--markdown",
      md,
      "--json",
      json,
    ]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain("gate: default gate");
    expect(r.stdout).not.toContain("no regression");
    const parsed = execFileSync(
      "python3",
      [
        "-c",
        "import sys,json,xml.etree.ElementTree as ET; r=ET.parse(sys.argv[1]).getroot(); s=r.find('testsuite'); print(json.dumps({'tests':s.get('tests'),'failures':s.get('failures'),'cases':[[c.get('name'),(c.find('failure').get('message') if c.find('failure') is not None else None)] for c in s.findall('testcase')]}))",
        junit,
      ],
      { encoding: "utf8" },
    );
    const x = JSON.parse(parsed) as { tests: string; failures: string; cases: [string, string | null][] };
    expect(x.tests).toBe("10");
    expect(x.failures).toBe("4");
    expect(x.cases).toHaveLength(10);
    expect(x.cases[0]).toEqual(["t00", 'expected: expected "x" & <y>, got "z"']);
    expect(x.cases[9]).toEqual(["t09", null]);
    expect(
      readFileSync(md, "utf8").startsWith("## ❌ hermes-batch compare: REGRESSION\\: 4 task\\(s\\) passed every epoch"),
    ).toBe(true);
    expect(readFileSync(md, "utf8")).toContain("### Newly failing (4)");
    expect(JSON.parse(readFileSync(json, "utf8")).newly_failing).toHaveLength(4);
  });
});
