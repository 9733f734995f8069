/**
 * Run files edited by hand (a script that rewrote verdicts, a merge by jq): a verdict that is not true, false or
 * null is no pass in statistics.json, and compare names the line it could not read instead of calling its task
 * absent. Runs are made by the real `run` on the built-in scripted model, then edited, then read back by `run
 * --resume` (which rebuilds statistics.json), `compare` and `report`.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildReportModel } from "../src/report/html/report_data.js";
import { runCli, runCliInProcess, tempDir } from "./helpers/cli.js";

/** Ten arithmetic rows the scripted model answers right; t8 and t9 have a wrong answer key, so they fail. */
function dataset(dir: string): string {
  const path = join(dir, "ds.jsonl");
  const rows = Array.from({ length: 10 }, (_, i) => ({
    id: `t${i}`,
    prompt: `Use the shell to compute ${i} + 100 and tell me the result.`,
    toolsets: ["terminal"],
    expected: { value: i < 8 ? i + 100 : 0, match: "number" },
  }));
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

async function run(ds: string, out: string, name: string, extra: string[] = []): Promise<string> {
  const r = await runCliInProcess(
    ["run", ds, "--model", "scripted", "--env", "local", "--run-name", name, "--output-dir", out, ...extra],
    { timeoutMs: 120_000 },
  );
  expect(r.exitCode, r.stdout + r.stderr).toBe(0);
  return join(out, name);
}

/** Rewrites the `score.passed` of the named tasks' lines, as a hand edit would. */
function editVerdicts(runDir: string, verdicts: Record<string, unknown>): void {
  const path = join(runDir, "trajectories.jsonl");
  const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
  const edited = lines.map((text) => {
    const line = JSON.parse(text) as { task_id: string; score: { passed: unknown } };
    if (line.task_id in verdicts) line.score.passed = verdicts[line.task_id];
    return JSON.stringify(line);
  });
  writeFileSync(path, edited.join("\n") + "\n");
}

let shared: Promise<{ out: string; ds: string; base: string }> | undefined;
/** The baseline run every test compares with (made once: no test changes it) and its dataset. */
function baseline(): Promise<{ out: string; ds: string; base: string }> {
  return (shared ??= (async () => {
    const out = tempDir();
    const ds = dataset(out);
    return { out, ds, base: await run(ds, out, "base") };
  })());
}

interface Scores {
  scored: number;
  unscored: number;
  passed: number;
  pass_rate: number;
}

describe("verdicts that are not true, false or null", () => {
  let out: string;
  let ds: string;
  let base: string;
  beforeAll(async () => {
    ({ out, ds, base } = await baseline());
  }, 120_000);

  it('"false" (a string) or 1 is no pass in statistics.json, and every reader counts the task alike', async () => {
    // statistics.json took any truthy `passed` for a pass: "false" (a string) counted as passed, 0 as failed, while
    // compare could not read those lines at all and the HTML report showed them unscored.
    const cur = await run(ds, out, "cur");
    editVerdicts(cur, { t1: "false", t2: 1, t8: "true" });
    await run(ds, out, "cur", ["--resume"]);
    const stats = JSON.parse(readFileSync(join(cur, "statistics.json"), "utf8")) as { scores: Scores };
    // t0 and t3..t7 pass, t9 fails; t1, t2 and t8 are unscored: what their lines say is no verdict.
    expect(stats.scores).toMatchObject({ scored: 7, unscored: 3, passed: 6 });
    expect(stats.scores.pass_rate).toBeCloseTo(6 / 7, 12);

    const page = await buildReportModel(cur);
    expect(page.scores).toMatchObject({ scored: 7, unscored: 3, passed: 6 });

    const r = await runCliInProcess(["compare", base, cur, "--max-unscored", "3", "--json", join(out, "c.json")]);
    const c = JSON.parse(readFileSync(join(out, "c.json"), "utf8")) as {
      current: Scores & { tasks: number };
      unscored_reasons: Record<string, number>;
      only_in_baseline: string[];
      mean_tokens_delta: number;
    };
    expect(c.current).toMatchObject({ tasks: 10, scored: 7, unscored: 3, passed: 6 });
    // The tasks are there, their lines unreadable: said so, not "absent from the current run".
    expect(c.only_in_baseline).toEqual([]);
    // Their tokens and time are still read: the same model on the same prompts spent the same per task.
    expect(c.mean_tokens_delta).toBe(0);
    expect(Object.keys(c.unscored_reasons)).toEqual(["unreadable line"]);
    expect(c.unscored_reasons["unreadable line"]).toBe(3);
    expect(r.stderr).toContain("3 unreadable line(s) skipped");
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.stdout).toContain("3 of 10 baseline task(s) not compared (3 unreadable line), within --max-unscored 3");
  }, 120_000);
});

describe("an epoch number far beyond the run's", () => {
  it("a line of epoch 2,000,000,000 is read in a moment: compare and statistics.json do not count to it", async () => {
    // pass@k was computed for every k up to the largest epoch number + 1: one hand-edited (or corrupted) epoch of
    // 2e9 held compare (and the rebuild of statistics.json) in a loop of 2e9 × tasks steps, a CI job to its timeout.
    const { ds, base } = await baseline();
    const out = tempDir();
    const cur = await run(ds, out, "cur");
    const path = join(cur, "trajectories.jsonl");
    const first = JSON.parse(readFileSync(path, "utf8").split("\n")[0]!) as { epoch?: number; task_id: string };
    writeFileSync(path, readFileSync(path, "utf8") + JSON.stringify({ ...first, epoch: 2_000_000_000 }) + "\n");
    const r = await runCli(["compare", base, cur], { timeoutMs: 20_000 });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    await run(ds, out, "cur", ["--resume"]);
    const stats = JSON.parse(readFileSync(join(cur, "statistics.json"), "utf8")) as {
      scores: { pass_at_k_tasks: Record<string, number>; scored: number };
    };
    expect(stats.scores.scored).toBe(11);
    // k up to the most results one task has (2: its epoch 0 and the stray one), not to 2e9.
    expect(stats.scores.pass_at_k_tasks).toEqual({ 1: 10, 2: 1 });
  }, 120_000);
});

describe("a run file that is no regular file", () => {
  it("a FIFO, a link to /dev/zero or a folder in a run's place is bad input (exit 2), not a hang or a crash", async () => {
    // compare read trajectories.jsonl whatever it was: a FIFO held the CI job until its timeout, a link to /dev/zero
    // crashed node out of memory (exit 134), a folder was "internal error: EISDIR" with exit 1, which CI reads as
    // a regression. `report` already refused them.
    const { base } = await baseline();
    const out = tempDir();
    const cases: [string, (dir: string) => void][] = [
      ["fifo", (dir) => execFileSync("mkfifo", [join(dir, "trajectories.jsonl")])],
      ["zero", (dir) => symlinkSync("/dev/zero", join(dir, "trajectories.jsonl"))],
      ["folder", (dir) => mkdirSync(join(dir, "trajectories.jsonl"))],
      [
        "yaml-fifo",
        (dir) => {
          cpSync(join(base, "trajectories.jsonl"), join(dir, "trajectories.jsonl"));
          execFileSync("mkfifo", [join(dir, "run.yaml")]);
        },
      ],
    ];
    for (const [name, make] of cases) {
      const dir = join(out, name);
      mkdirSync(dir);
      make(dir);
      for (const args of [
        ["compare", base, dir],
        ["compare", dir, base],
      ]) {
        const r = await runCli(args, { timeoutMs: 20_000 });
        expect(r.timedOut, name).toBe(false);
        expect(r.exitCode, `${name}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(
          /hermes-batch compare: .*(trajectories\.jsonl|run\.yaml): is a (FIFO|device|folder), not a file/,
        );
      }
    }
  }, 120_000);
});
