/**
 * The CI gate's numbers against inputs nobody tuned to: a p-value just under alpha, a --max-unscored percentage
 * whose share of the tasks is a whole number, rows without a scorer in the JUnit file. Runs are written as the run
 * writes them and checked through `compare` as CI calls it; statistics by an independent computation (python3).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

interface Result {
  id: string;
  /** true/false scored, null undecided, "none" a row without a scorer. */
  passed: boolean | null | "none";
  epoch?: number;
}

/** A run folder as `run` writes it: one trajectory line per result, failures in failed.jsonl. */
function writeRun(dir: string, results: Result[], failed: { id: string; error: string }[] = []): string {
  mkdirSync(dir, { recursive: true });
  const lines = results.map((r, i) =>
    JSON.stringify({
      task_id: r.id,
      ...(r.epoch !== undefined ? { epoch: r.epoch } : {}),
      outcome: "completed",
      messages: [{ role: "user", content: `prompt of ${r.id}` }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 10 },
      duration_ms: 100,
      final_response: "answer",
      // Each run its own timestamps: a line with the baseline's own is taken for a copy of it.
      metadata: { timestamp: `${dir}#${i}` },
      ...(r.passed === "none"
        ? {}
        : {
            score: {
              passed: r.passed,
              value: r.passed === null ? null : r.passed ? 1 : 0,
              scorers: [
                {
                  name: "expected",
                  passed: r.passed,
                  ...(r.passed === null ? {} : { reason: r.passed ? "ok" : "wrong" }),
                },
              ],
            },
          }),
    }),
  );
  writeFileSync(join(dir, "trajectories.jsonl"), lines.join("\n") + "\n");
  writeFileSync(
    join(dir, "failed.jsonl"),
    failed.map((f) => JSON.stringify({ task_id: f.id, outcome: "model_error", error: f.error })).join("\n") +
      (failed.length ? "\n" : ""),
  );
  return dir;
}

const ids = (n: number, prefix = "t") => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, "0")}`);

/** The one-sided p of a drop of McNemar's exact test, computed by python3 (exact integer arithmetic). */
function pythonMcnemarDrop(lost: number, gained: number): number {
  const out = execFileSync(
    "python3",
    ["-c", `from math import comb\nn=${lost + gained}\nprint(sum(comb(n,i) for i in range(${gained}+1))/2**n)`],
    { encoding: "utf8" },
  );
  return Number(out.trim());
}

describe("compare's p-values as written", () => {
  it("a p just under alpha never reads 'p = 0.050 < 0.05': it is shown with the digits that keep it under", async () => {
    // 179 discordant tasks, 101 lost and 78 gained, among 300: the exact one-sided p is 0.04992 (python3 below),
    // significant at 0.05. Rounded to 3 places it read "p = 0.050 < 0.05" on the verdict line, which no reader
    // can take as true, and "p of a drop = 0.050" beside a verdict of a significant drop.
    const root = tempDir();
    const all = ids(300);
    const lost = new Set(all.slice(0, 101));
    const gained = new Set(all.slice(101, 179));
    const base = writeRun(
      join(root, "base"),
      all.map((id) => ({ id, passed: !gained.has(id) })),
    );
    const cur = writeRun(
      join(root, "cur"),
      all.map((id) => ({ id, passed: !lost.has(id) })),
    );
    const p = pythonMcnemarDrop(101, 78);
    expect(p).toBeLessThan(0.05);
    expect(p).toBeGreaterThan(0.0495);
    const r = await runCliInProcess(["compare", base, cur, "--json", join(root, "c.json")]);
    expect(r.exitCode, r.stdout).toBe(1);
    const json = JSON.parse(readFileSync(join(root, "c.json"), "utf8")) as { p_value_drop: number };
    expect(json.p_value_drop).toBeCloseTo(p, 12);
    // Every p the text shows is on the side of 0.05 the verdict took.
    const shown = [...r.stdout.matchAll(/p (?:of a drop )?= (0\.\d+)/g)].map((m) => m[1]!);
    expect(shown.length).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/one-sided p of a drop = 0\.0499/);
    expect(r.stdout).toMatch(/REGRESSION: significant drop of .*one-sided p = 0\.0499\d* < 0\.05/);
    expect(r.stdout).not.toMatch(/p = 0\.050\b/);
  });
});

describe("--max-unscored P% at a whole share of the tasks", () => {
  it("29 of 100 tasks unscored is within --max-unscored 29% (not 'more than'), 30 is not", async () => {
    // (29 / 100) * 100 is 28.999999999999996 in floating point: 29 unscored tasks were "more than 29 %" (exit 3).
    const root = tempDir();
    const all = ids(100);
    const base = writeRun(
      join(root, "base"),
      all.map((id) => ({ id, passed: true })),
    );
    const failedRun = (n: number) =>
      writeRun(
        join(root, `cur${n}`),
        all.slice(n).map((id) => ({ id, passed: true })),
        all.slice(0, n).map((id) => ({ id, error: "HTTP 503" })),
      );
    const within = await runCliInProcess(["compare", base, failedRun(29), "--max-unscored", "29%"]);
    expect(within.exitCode, within.stdout).toBe(0);
    expect(within.stdout).toContain(
      "29 of 100 baseline task(s) not compared (29 model_error), within --max-unscored 29 %",
    );
    const over = await runCliInProcess(["compare", base, failedRun(30), "--max-unscored", "29%"]);
    expect(over.exitCode, over.stdout).toBe(3);
    expect(over.stdout).toContain("30 of 100 task(s) are unscored");
    // 58 % of 50 tasks is 29 tasks as well (0.58 * 50 = 28.999999999999996).
    const half = all.slice(0, 50);
    const base50 = writeRun(
      join(root, "base50"),
      half.map((id) => ({ id, passed: true })),
    );
    const cur50 = writeRun(
      join(root, "cur50"),
      half.slice(29).map((id) => ({ id, passed: true })),
      half.slice(0, 29).map((id) => ({ id, error: "HTTP 503" })),
    );
    const r50 = await runCliInProcess(["compare", base50, cur50, "--max-unscored", "58%"]);
    expect(r50.exitCode, r50.stdout).toBe(0);
  });
});

describe("compare --junit on rows without a scorer", () => {
  it("a row that names no scorer is no <error>: the gate passes it and the JUnit file says the same", async () => {
    // A dataset with data-only rows beside scored ones: compare leaves them out of the gate (exit 0), but the JUnit
    // file called each an <error> "unscored: no scorer for this task", and a CI test-report step that fails on
    // errors turned the check red for a passing gate.
    const root = tempDir();
    const rows: Result[] = [
      { id: "a", passed: true },
      { id: "b", passed: true },
      { id: "c", passed: false },
      { id: "data1", passed: "none" },
      { id: "data2", passed: "none" },
    ];
    const base = writeRun(join(root, "base"), rows);
    const cur = writeRun(join(root, "cur"), rows);
    const xmlPath = join(root, "j.xml");
    const r = await runCliInProcess(["compare", base, cur, "--junit", xmlPath]);
    expect(r.exitCode, r.stdout).toBe(0);
    const parsed = execFileSync(
      "python3",
      [
        "-c",
        "import sys,json,xml.etree.ElementTree as ET; s=ET.parse(sys.argv[1]).getroot().find('testsuite'); print(json.dumps({'totals':[s.get(k) for k in ('tests','failures','errors','skipped')],'cases':{c.get('name'):[(e.tag,e.get('message')) for e in c] for c in s.findall('testcase')}}))",
        xmlPath,
      ],
      { encoding: "utf8" },
    );
    const x = JSON.parse(parsed) as { totals: string[]; cases: Record<string, [string, string][]> };
    expect(x.totals).toEqual(["5", "1", "0", "2"]);
    expect(x.cases.data1).toEqual([["skipped", "not graded: no scorer for this task"]]);
    expect(x.cases.c).toEqual([["failure", "expected: wrong"]]);
    // An undecided scorer stays an <error>: it is a result that could not be graded.
    const undecided = writeRun(join(root, "undecided"), [
      ...rows.slice(0, 2),
      { id: "c", passed: null },
      ...rows.slice(3),
    ]);
    const u = await runCliInProcess(["compare", base, undecided, "--junit", "-", "--max-unscored", "1"]);
    expect(u.stdout).toMatch(/<testcase [^>]*name="c"[^>]*>\s*<error message="unscored: expected: undecided"/);
  });
});

describe("compare --markdown with unequal scored epochs", () => {
  it("the pass rate of a run whose tasks have unequal scored epochs says it is a mean of task rates", async () => {
    // The rate is the mean of the tasks' rates; the comment printed it beside passed/scored epochs as if it were
    // their ratio: "75.0 % (2/3)" where 2/3 is 66.7 %.
    const root = tempDir();
    const base = writeRun(join(root, "base"), [
      { id: "a", passed: true, epoch: 0 },
      { id: "a", passed: true, epoch: 1 },
      { id: "b", passed: false, epoch: 0 },
      { id: "b", passed: true, epoch: 1 },
    ]);
    const cur = writeRun(join(root, "cur"), [
      { id: "a", passed: true, epoch: 0 },
      { id: "a", passed: null, epoch: 1 },
      { id: "b", passed: false, epoch: 0 },
      { id: "b", passed: true, epoch: 1 },
    ]);
    const r = await runCliInProcess(["compare", base, cur, "--markdown", "-", "--max-unscored", "1"]);
    expect(r.stdout).toContain(
      "| pass rate (scored) | 75.0 % (3/4) | 75.0 % (mean of task rates; 2/3 scored epochs) |",
    );
    // Task a is in the paired sample on its one scored epoch: "paired over 2 tasks" beside "1 of 2 not compared"
    // read as a contradiction; the note says it is compared in part.
    const text = await runCliInProcess(["compare", base, cur, "--max-unscored", "1"]);
    expect(text.stdout).toContain("paired over 2 tasks scored in both");
    expect(text.stdout).toContain(
      "1 of 2 baseline task(s) not compared (1 expected: undecided), 1 of them compared on its scored epochs alone, within --max-unscored 1",
    );
  });
});
