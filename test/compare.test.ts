import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { compareRuns } from "../src/report/compare.js";
import { loadRunSamples } from "../src/report/run_samples.js";
import { runCli, tempDir } from "./helpers/cli.js";

type Line = { id: string; passed: boolean | null; epoch?: number; prompt?: string; tokens?: number; reason?: string };

function writeRun(dir: string, lines: Line[], failed: { id: string; epoch?: number; error: string }[] = []): string {
  mkdirSync(dir, { recursive: true });
  const traj = lines.map((l) =>
    JSON.stringify({
      task_id: l.id,
      ...(l.epoch !== undefined ? { epoch: l.epoch } : {}),
      outcome: "completed",
      messages: [{ role: "user", content: l.prompt ?? `prompt of ${l.id}` }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: l.tokens ?? 100 },
      duration_ms: 1000,
      final_response: "answer",
      score: {
        passed: l.passed,
        value: l.passed === null ? null : l.passed ? 1 : 0,
        scorers: [{ name: "expected", passed: l.passed, reason: l.reason ?? (l.passed ? "ok" : `expected "4", got "5"`) }],
      },
    }),
  );
  writeFileSync(join(dir, "trajectories.jsonl"), traj.join("\n") + "\n");
  writeFileSync(join(dir, "failed.jsonl"), failed.map((f) => JSON.stringify({ task_id: f.id, epoch: f.epoch, outcome: "model_error", error: f.error })).join("\n") + (failed.length ? "\n" : ""));
  return dir;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `t${String(i).padStart(2, "0")}`);

describe("compareRuns", () => {
  it("pairs by task id, lists newly failing/passing, uses exact McNemar for one epoch", async () => {
    const root = tempDir();
    const base = writeRun(join(root, "base"), ids(20).map((id, i) => ({ id, passed: i < 15 })));
    // 10 newly failing (t00..t09), 1 newly passing (t15).
    const cur = writeRun(join(root, "cur"), ids(20).map((id, i) => ({ id, passed: (i >= 10 && i < 15) || i === 15 })));
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
    const base = writeRun(join(root, "base"), [{ id: "a", passed: true }, { id: "b", passed: true }, { id: "c", passed: true }]);
    const cur = writeRun(join(root, "cur"), [{ id: "a", passed: true }, { id: "b", passed: null, reason: "judge failed" }], [{ id: "c", error: "HTTP 500" }]);
    const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { maxDropPp: 0 });
    expect(c.current).toMatchObject({ scored: 1, unscored: 2, passed: 1 });
    expect(c.paired).toBe(1);
    expect(c.unscored_pairs).toBe(2);
    expect(c.newly_failing).toEqual([]);
    expect(c.verdict).toBe("ok");
    expect(compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { maxUnscored: 1 }).verdict).toBe("not_comparable");
  });

  it("a failure of a task that later finished does not count; only the latest attempt of an unfinished task", async () => {
    const root = tempDir();
    const run = writeRun(join(root, "r"), [{ id: "a", passed: true }], [{ id: "a", error: "first try failed" }, { id: "b", error: "one" }, { id: "b", error: "two" }]);
    const samples = await loadRunSamples(run);
    expect(samples.samples.get("a#0")!.passed).toBe(true);
    expect(samples.samples.get("b#0")!.reason).toBe("model_error: two");
  });

  it("several epochs use a paired bootstrap; --significant-only ignores a drop that is not significant", async () => {
    const root = tempDir();
    const lines = (flip: (id: number, epoch: number) => boolean) => ids(6).flatMap((id, i) => [0, 1, 2].map((epoch) => ({ id, epoch, passed: flip(i, epoch) })));
    const base = writeRun(join(root, "base"), lines(() => true));
    const cur = writeRun(join(root, "cur"), lines((i, e) => !(i === 0 && e === 0)));
    const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { maxDropPp: 1, significantOnly: true });
    expect(c.epochs).toBe(3);
    expect(c.test).toBe("paired_bootstrap");
    expect(c.delta_pp).toBeCloseTo(-100 / 18, 9);
    expect(c.significant).toBe(false);
    expect(c.verdict).toBe("ok");
    expect(compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { maxDropPp: 1 }).verdict).toBe("regression");
  });

  it("another prompt for a paired task makes the runs not comparable unless allowed", async () => {
    const root = tempDir();
    const base = writeRun(join(root, "base"), [{ id: "a", passed: true, prompt: "2+2?" }]);
    const cur = writeRun(join(root, "cur"), [{ id: "a", passed: true, prompt: "3+3?" }]);
    const c = compareRuns(await loadRunSamples(base), await loadRunSamples(cur));
    expect(c.verdict).toBe("not_comparable");
    expect(c.not_comparable[0]).toMatch(/dataset differs.*first: a/);
    expect(compareRuns(await loadRunSamples(base), await loadRunSamples(cur), { allowDifferentDataset: true }).verdict).toBe("ok");
  });
});

describe("hermes-batch compare (CLI)", () => {
  let root: string;
  beforeAll(() => {
    root = tempDir();
    writeRun(join(root, "base"), ids(10).map((id) => ({ id, passed: true })));
    writeRun(join(root, "same"), ids(10).map((id) => ({ id, passed: true })));
    writeRun(join(root, "worse"), ids(10).map((id, i) => ({ id, passed: i >= 4, reason: i < 4 ? 'expected "x" & <y>, got "z"' : "ok" })));
    writeRun(join(root, "other"), [{ id: "zzz", passed: true }]);
  });

  it("exit 0 without regression, 1 on a regression, 3 when nothing is in common, 2 on bad input", async () => {
    const ok = await runCli(["compare", join(root, "base"), join(root, "same"), "--max-drop", "0"]);
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toContain("no regression");
    const bad = await runCli(["compare", join(root, "base"), join(root, "worse"), "--max-drop", "5"]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout.indexOf("newly failing (4)")).toBe(0);
    expect(bad.stdout).toContain("REGRESSION: pass rate dropped by 40.0 points");
    const none = await runCli(["compare", join(root, "base"), join(root, "other")]);
    expect(none.exitCode).toBe(3);
    expect(none.stdout).toContain("no task in common");
    const usage = await runCli(["compare", join(root, "base")]);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr.trim().split("\n")).toHaveLength(1);
    const flag = await runCli(["compare", join(root, "base"), join(root, "same"), "--max-drop", "-3"]);
    expect(flag.exitCode).toBe(2);
    const missing = await runCli(["compare", join(root, "base"), join(root, "nope")]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("no such run folder");
    const outDir = await runCli(["compare", join(root, "base"), join(root, "same"), "--junit", join(root, "no-such-dir", "j.xml")]);
    expect(outDir.exitCode).toBe(2);
  });

  it("writes JUnit XML a parser accepts (one testcase per task, failures say why), Markdown and JSON", async () => {
    const junit = join(root, "junit.xml");
    const md = join(root, "pr.md");
    const json = join(root, "cmp.json");
    const r = await runCli(["compare", join(root, "base"), join(root, "worse"), "--junit", junit, "--markdown", md, "--json", json]);
    expect(r.exitCode).toBe(0);
    const parsed = execFileSync(
      "python3",
      ["-c", "import sys,json,xml.etree.ElementTree as ET; r=ET.parse(sys.argv[1]).getroot(); s=r.find('testsuite'); print(json.dumps({'tests':s.get('tests'),'failures':s.get('failures'),'cases':[[c.get('name'),(c.find('failure').get('message') if c.find('failure') is not None else None)] for c in s.findall('testcase')]}))", junit],
      { encoding: "utf8" },
    );
    const x = JSON.parse(parsed) as { tests: string; failures: string; cases: [string, string | null][] };
    expect(x.tests).toBe("10");
    expect(x.failures).toBe("4");
    expect(x.cases).toHaveLength(10);
    expect(x.cases[0]).toEqual(["t00", 'expected: expected "x" & <y>, got "z"']);
    expect(x.cases[9]).toEqual(["t09", null]);
    expect(readFileSync(md, "utf8")).toMatch(/^## ✅ hermes-batch compare: no regression/);
    expect(readFileSync(md, "utf8")).toContain("### Newly failing (4)");
    expect(JSON.parse(readFileSync(json, "utf8")).newly_failing).toHaveLength(4);
  });
});
