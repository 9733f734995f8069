/**
 * Re-scoring a finished run (`hermes-batch score`) and rerunning its unscored tasks (`run --resume
 * --retry-unscored`), through the built CLI: the built-in scripted model answers, the rubric judge is a local
 * OpenAI-compatible server. Scores in trajectories.jsonl and statistics.json must agree after each step, and
 * an interrupted re-score must leave the original file or the complete new one, never a mix.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { execa } from "execa";
import {
  httpError,
  startFakeOpenAI,
  text,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { CLI, cleanEnv, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

const byId = (lines: any[]) => Object.fromEntries(lines.map((l) => [l.task_id, l]));

/** statistics.json's scores recomputed by hand from trajectories.jsonl (one epoch, nothing failed or dropped). */
function expectStatisticsAgree(runDir: string): void {
  const lines = readJsonl(join(runDir, "trajectories.jsonl"));
  const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
  const scored = lines.filter((l) => l.score && l.score.passed !== null);
  const passed = scored.filter((l) => l.score.passed).length;
  expect(stats.scores).toMatchObject({ scored: scored.length, passed, unscored: lines.length - scored.length });
  expect(stats.scores.pass_rate).toBeCloseTo(scored.length ? passed / scored.length : Number.NaN, 12);
  const judgeTokens = lines.reduce((n, l) => n + (l.judge_usage?.total_tokens ?? 0), 0);
  expect(stats.scores.judge_usage.total_tokens).toBe(judgeTokens);
  // summary.csv has one row per task, rebuilt from the same lines.
  expect(readFileSync(join(runDir, "summary.csv"), "utf8").trim().split("\n").length).toBe(lines.length + 1);
}

const ROWS = [
  {
    id: "mul",
    prompt: "Use the shell to compute 1234 * 5678 and tell me the result.",
    toolsets: ["terminal"],
    expected: { value: 7006652, match: "number" },
  },
  {
    id: "add",
    prompt: "Use the shell to compute 987 + 13 and tell me the result.",
    toolsets: ["terminal"],
    expected: { value: 1000, match: "number" },
  },
  {
    id: "capital",
    prompt: "What is the capital of France? Answer with the city name.",
    toolsets: ["terminal"],
    expected: { value: "Paris", match: "exact" },
  },
  {
    id: "file",
    prompt: "Create a file named greeting.txt containing 'hello eval' and read it back.",
    toolsets: ["file"],
    expected: "hello eval",
    verify: "grep -qx 'hello eval' greeting.txt",
  },
  {
    id: "judge-a",
    prompt: "Use the shell to compute 2 + 2 (judge-a).",
    toolsets: ["terminal"],
    rubric: "The answer must be 4.",
  },
  {
    id: "judge-b",
    prompt: "Use the shell to compute 3 + 3 (judge-b).",
    toolsets: ["terminal"],
    rubric: "The answer must be 6.",
  },
  { id: "plain", prompt: "Use the shell to compute 6 + 6.", toolsets: ["terminal"] },
];

function writeDataset(dir: string, name: string, rows: object[]): string {
  const path = join(dir, name);
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

describe("hermes-batch score", () => {
  let judge: FakeOpenAI;
  /** What the judge does now: "pass", "fail", "down" (503), or a delay before passing. */
  let mode: "pass" | "fail" | "down" = "pass";
  let delayMs = 0;
  const judged: RecordedRequest[] = [];
  const grade = async (req: RecordedRequest): Promise<Reply> => {
    judged.push(req);
    if (delayMs) await sleep(delayMs);
    const asked: string = req.body.messages.at(-1).content;
    if (mode === "down" || (mode === "pass" && asked.includes("judge-down"))) return httpError(503, "judge down");
    const passed = mode === "pass";
    return text(
      JSON.stringify({ score: passed ? 0.9 : 0.1, passed, reason: passed ? "meets the rubric" : "misses the rubric" }),
    );
  };
  const judgeFlags = () => ["--judge-model", "grader", "--judge-base-url", judge.baseURL, "--max-retries", "0"];

  beforeAll(async () => {
    judge = await startFakeOpenAI(grade);
  });
  afterAll(async () => {
    await judge.close();
  });

  /** A finished run of ROWS, judged in the given mode. */
  async function baseRun(
    dir: string,
    judgeMode: typeof mode,
    extra: string[] = [],
  ): Promise<{ runDir: string; dataset: string; out: string; runArgs: string[] }> {
    mode = judgeMode;
    const dataset = writeDataset(dir, "eval.jsonl", ROWS);
    const out = join(dir, "runs");
    // --env host: the scripted model's file tasks write straight into the task folder.
    // Relative paths, as typed in a project folder: run.yaml records them so.
    const runArgs = [
      "run",
      "eval.jsonl",
      "--model",
      "scripted",
      ...judgeFlags(),
      "--env",
      "host",
      "--output-dir",
      "runs",
      "--run-name",
      "base",
      "--progress",
      "none",
      "--workers",
      "1",
      ...extra,
    ];
    const r = await runCliInProcess(runArgs, { cwd: dir });
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.exitCode).toBe(0);
    return { runDir: join(out, "base"), dataset, out, runArgs };
  }

  let passed: ReturnType<typeof baseRun> | undefined;
  /** One run judged "pass", made once: re-scored by the first test, refused input leaves it as it is. */
  const passedRun = () => (passed ??= baseRun(tempDir(), "pass"));

  it("re-scores against a corrected dataset: results flip, statistics.json and summary.csv agree", async () => {
    const { runDir, dataset } = await passedRun();
    const dir = join(runDir, "..", "..");
    const before = byId(readJsonl(join(runDir, "trajectories.jsonl")));
    expect(before.mul.score.passed).toBe(true);
    expect(before.capital.score.passed).toBe(false);
    const capitalAnswer: string = before.capital.final_response;
    expectStatisticsAgree(runDir);

    // Corrected answers: mul's expected value was wrong (now fails), capital's now accepts what was answered.
    const corrected = ROWS.map((r) =>
      r.id === "mul"
        ? { ...r, expected: { value: 1, match: "number" } }
        : r.id === "capital"
          ? { ...r, expected: { value: capitalAnswer, match: "exact" } }
          : r,
    );
    const fixed = writeDataset(dir, "fixed.jsonl", corrected);
    judged.length = 0;
    const r = await runCliInProcess(["score", runDir, "--dataset", fixed, ...judgeFlags()]);
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("re-scored 7 of 7 task line(s)");
    expect(r.stdout).toContain("pass → fail: 1 (mul)");
    expect(r.stdout).toContain("fail → pass: 1 (capital)");
    expect(r.stdout).toContain("unscored: 0");
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.scores).toMatchObject({ scored: 6, passed: 5 }); // mul now fails, capital now passes
    expect(r.stdout).toContain(
      `scores: ${(stats.scores.pass_rate * 100).toFixed(1)} % passed (${stats.scores.passed}/${stats.scores.scored} scored`,
    );
    // Both rubric rows were graded again, through the JSON-schema response.
    expect(judged).toHaveLength(2);
    expect(judged[0]!.body.response_format.type).toBe("json_schema");

    const after = byId(readJsonl(join(runDir, "trajectories.jsonl")));
    expect(after.mul.score.passed).toBe(false);
    expect(after.mul.score.scorers[0].reason).toMatch(/^expected the number "1", got/);
    expect(after.capital.score.passed).toBe(true);
    // Everything but the score fields is as the run wrote it; the line still starts with its index and id.
    const { score: _a, judge: _b, judge_usage: _c, ...restBefore } = before.mul;
    const { score: _d, judge: _e, judge_usage: _f, ...restAfter } = after.mul;
    expect(restAfter).toEqual(restBefore);
    expect(readFileSync(join(runDir, "trajectories.jsonl"), "utf8").split("\n")[0]).toMatch(
      /^\{"prompt_index":\d+,"task_id":/,
    );
    // The verify result of the run is used again (the task folder was not kept, the command is the same).
    expect(after.file.score.scorers.map((s: any) => [s.name, s.passed])).toEqual([
      ["expected", true],
      ["verify", true],
    ]);
    expect(r.stdout).toMatch(/verify not run again .*: 1/);
    expect(after.plain.score).toBeUndefined();
    expectStatisticsAgree(runDir);
    expect(readFileSync(join(runDir, "events.log"), "utf8")).toMatch(
      /score: re-scored 7 line\(s\) against .*fixed\.jsonl: 1 pass→fail, 1 fail→pass/,
    );

    // Without --dataset, run.yaml's dataset: the original answers come back.
    // (From another folder: run.yaml's relative path is found from where the run started.)
    const back = await runCliInProcess(["score", runDir, ...judgeFlags()], { cwd: join(dir, "runs") });
    expect(back.exitCode).toBe(0);
    expect(back.stdout).toContain("(run.yaml's dataset)");
    expect(back.stdout).toContain("pass → fail: 1 (capital)");
    expect(back.stdout).toContain("fail → pass: 1 (mul)");
    expectStatisticsAgree(runDir);
    expect(dataset).toContain("eval.jsonl");

    // --scorers expected: only the answers are matched again; no judge call, rubric results and judge records kept.
    const kept = byId(readJsonl(join(runDir, "trajectories.jsonl")));
    judged.length = 0;
    const cheap = await runCliInProcess(["score", runDir, "--dataset", fixed, "--scorers", "expected"]);
    expect(cheap.exitCode).toBe(0);
    expect(judged).toHaveLength(0);
    expect(cheap.stdout).toContain("pass → fail: 1 (mul)");
    expect(cheap.stdout).toContain("judge tokens: 0");
    const now = byId(readJsonl(join(runDir, "trajectories.jsonl")));
    for (const id of ["judge-a", "judge-b", "file"]) expect(now[id]).toEqual(kept[id]);
    expectStatisticsAgree(runDir);
    const bogus = await runCliInProcess(["score", runDir, "--scorers", "expected,bogus"]);
    expect(bogus.exitCode).toBe(2);
    expect(bogus.stderr).toContain("--scorers expected,bogus: name one or more of expected, rubric, verify");
  });

  it("grades rubric rows again with a local judge: unscored ones get scored, judge tokens recorded", async () => {
    const dir = tempDir();
    const { runDir } = await baseRun(dir, "down");
    const before = byId(readJsonl(join(runDir, "trajectories.jsonl")));
    expect(before["judge-a"].score.passed).toBeNull();
    expect(before["judge-a"].score.scorers[0].reason).toMatch(/^judge failed/);

    // The judge still fails: files are written, exit 1 names the unscored tasks and why. (No flags: the judge
    // model, endpoint and retries recorded in run.yaml are used again.)
    judged.length = 0;
    const still = await runCliInProcess(["score", runDir], { cwd: join(runDir, "..", "..") });
    expect(judged.map((q) => q.body.model)).toEqual(["grader", "grader"]);
    expect(still.exitCode).toBe(1);
    expect(still.stdout).toContain("unscored: 2 (judge-a, judge-b)");
    expect(still.stdout).toMatch(/judge-a: rubric: judge failed/);
    expect(still.stdout).toContain("--retry-unscored");

    mode = "fail";
    judged.length = 0;
    const r = await runCliInProcess(["score", runDir, ...judgeFlags(), "--concurrency", "1"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("unscored: 0");
    expect(r.stdout).toContain("judge tokens: 30");
    const after = byId(readJsonl(join(runDir, "trajectories.jsonl")));
    expect(after["judge-a"].score).toMatchObject({ passed: false, value: 0.1 });
    expect(after["judge-a"].judge).toMatchObject({ model: "grader", usage: { total_tokens: 15 } });
    expect(after["judge-a"].judge_usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    // The judge saw the prompt the agent was given and the saved final answer.
    const askedA: string = judged
      .map((q) => q.body.messages.at(-1).content)
      .find((c: string) => c.includes("(judge-a)"));
    expect(askedA).toContain(`Task given to the agent:\n${ROWS.find((x) => x.id === "judge-a")!.prompt}`);
    expect(askedA).toContain(`The agent's final answer:\n${before["judge-a"].final_response}`);
    expectStatisticsAgree(runDir);
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.scores.judge_usage.total_tokens).toBe(30);
    // A report.html of the run is rebuilt with the new scores.
    expect((await runCliInProcess(["report", runDir])).exitCode).toBe(0);
    const html = readFileSync(join(runDir, "report.html"), "utf8");
    mode = "pass";
    const again = await runCliInProcess(["score", runDir, ...judgeFlags()]);
    expect(again.stdout).toContain("fail → pass: 2 (judge-a, judge-b)");
    expect(again.stderr).toBe("");
    expect(readFileSync(join(runDir, "report.html"), "utf8")).not.toBe(html);
  });

  it("refuses bad input with exit 2 and writes nothing", async () => {
    const { runDir } = await passedRun();
    const dir = join(runDir, "..", "..");
    const original = readFileSync(join(runDir, "trajectories.jsonl"));
    const partial = writeDataset(
      dir,
      "partial.jsonl",
      ROWS.filter((r) => r.id !== "add" && r.id !== "plain"),
    );
    const missing = await runCliInProcess(["score", runDir, "--dataset", partial, ...judgeFlags()]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(
      /2 task id\(s\) of the run have no row in .*partial\.jsonl \(nothing was re-scored\): add, plain/,
    );
    const notRun = await runCliInProcess(["score", dir]);
    expect(notRun.exitCode).toBe(2);
    expect(notRun.stderr).toContain("not a run folder (no trajectories.jsonl)");
    const noFile = await runCliInProcess(["score", runDir, "--dataset", join(dir, "nope.jsonl")]);
    expect(noFile.exitCode).toBe(2);
    expect(readFileSync(join(runDir, "trajectories.jsonl")).equals(original)).toBe(true);
    const help = await runCliInProcess(["score", "--help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("Exit codes: 0 re-scored");
  });

  it("runs verify again in a kept task folder (--keep-workspaces)", async () => {
    const dir = tempDir();
    const { runDir } = await baseRun(dir, "pass", ["--keep-workspaces"]);
    const stricter = ROWS.map((r) => (r.id === "file" ? { ...r, verify: "grep -qx 'bye eval' greeting.txt" } : r));
    const r = await runCliInProcess([
      "score",
      runDir,
      "--dataset",
      writeDataset(dir, "strict.jsonl", stricter),
      ...judgeFlags(),
    ]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("verify run again in the kept task folder: 1");
    expect(r.stdout).toContain("pass → fail: 1 (file)");
    const file = byId(readJsonl(join(runDir, "trajectories.jsonl"))).file;
    expect(file.verify).toMatchObject({ command: "grep -qx 'bye eval' greeting.txt", exit_code: 1, passed: false });
    expect(file.score.scorers.map((s: any) => [s.name, s.passed])).toEqual([
      ["expected", true],
      ["verify", false],
    ]);
    expectStatisticsAgree(runDir);
  });

  it("an interrupted re-score leaves the original file or the complete new one, never a mix", async () => {
    const dir = tempDir();
    // Many rubric rows, so the rewrite takes a while at one judge call at a time.
    const rows = Array.from({ length: 24 }, (_, i) => ({
      id: `r${i}`,
      prompt: `Use the shell to compute ${i} + 1 (judge).`,
      toolsets: ["terminal"],
      rubric: `The answer must be ${i + 1}.`,
    }));
    mode = "pass";
    const dataset = writeDataset(dir, "many.jsonl", rows);
    const out = join(dir, "runs");
    const run = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      ...judgeFlags(),
      "--env",
      "host",
      "--output-dir",
      out,
      "--run-name",
      "orig",
      "--progress",
      "none",
      "--workers",
      "1",
    ]);
    expect(run.exitCode).toBe(0);
    const origDir = join(out, "orig");
    const original = readFileSync(join(origDir, "trajectories.jsonl"), "utf8");
    // The complete new file: the same re-score, judged "fail", run to the end on a copy.
    mode = "fail";
    cpSync(origDir, join(out, "full"), { recursive: true });
    const full = await runCliInProcess(["score", join(out, "full"), ...judgeFlags()]);
    expect(full.exitCode).toBe(0);
    const complete = readFileSync(join(out, "full", "trajectories.jsonl"), "utf8");
    expect(complete).not.toBe(original);

    delayMs = 40;
    try {
      // Each signal once, each later in the rewrite (the rename is atomic wherever the kill lands).
      for (const [i, signal] of (["SIGINT", "SIGKILL", "SIGTERM"] as const).entries()) {
        const copy = join(out, `copy${i}`);
        cpSync(origDir, copy, { recursive: true });
        const child = execa("node", [CLI, "score", copy, ...judgeFlags(), "--concurrency", "2"], {
          env: cleanEnv(),
          extendEnv: false,
          reject: false,
          forceKillAfterDelay: false, // the exit after SIGTERM is checked: no SIGKILL 5 s later
        });
        // Wait until the temporary file holds some lines: the kill lands in the middle of the rewrite.
        const tmp = join(copy, "trajectories.jsonl.rescore.tmp");
        const deadline = Date.now() + 30_000;
        while (Date.now() < deadline && !(existsSync(tmp) && readFileSync(tmp, "utf8").split("\n").length > 3 + i))
          await sleep(5);
        expect(existsSync(tmp)).toBe(true);
        child.kill(signal);
        const res = await child;
        const now = readFileSync(join(copy, "trajectories.jsonl"), "utf8");
        expect([original, complete]).toContain(now);
        expect(now).toBe(original); // killed before the rename
        if (signal !== "SIGKILL") {
          expect(res.exitCode).toBe(130);
          expect(res.stdout).toContain("trajectories.jsonl unchanged");
          expect(existsSync(tmp)).toBe(false);
        }
        // A leftover of a killed re-score is no obstacle: the next one completes.
        const again = await runCliInProcess(["score", copy, ...judgeFlags(), "--concurrency", "8"]);
        expect(again.exitCode).toBe(0);
        expect(readFileSync(join(copy, "trajectories.jsonl"), "utf8")).toBe(complete);
        expect(readdirSync(copy).filter((f) => f.includes(".tmp"))).toEqual([]);
        expectStatisticsAgree(copy);
      }
    } finally {
      delayMs = 0;
    }
  }, 240_000);
});

describe("run --resume --retry-unscored", () => {
  let judge: FakeOpenAI;
  let down = true;
  const judged: string[] = [];
  beforeAll(async () => {
    judge = await startFakeOpenAI((req) => {
      const asked: string = req.body.messages.at(-1).content;
      judged.push(asked);
      if (down && asked.includes("flaky")) return httpError(503, "judge down");
      return text(JSON.stringify({ score: 1, passed: true, reason: "fine" }));
    });
  });
  afterAll(async () => {
    await judge.close();
  });

  it("reruns exactly the unscored tasks; their new lines replace the old ones everywhere", async () => {
    const dir = tempDir();
    const rows = [
      { id: "steady", prompt: "Use the shell to compute 2 + 2.", toolsets: ["terminal"], rubric: "4" },
      { id: "flaky-1", prompt: "Use the shell to compute 3 + 3 (flaky).", toolsets: ["terminal"], rubric: "6" },
      {
        id: "exp",
        prompt: "Use the shell to compute 4 + 4.",
        toolsets: ["terminal"],
        expected: { value: 8, match: "number" },
      },
      { id: "flaky-2", prompt: "Use the shell to compute 5 + 5 (flaky).", toolsets: ["terminal"], rubric: "10" },
      { id: "none", prompt: "Use the shell to compute 6 + 6.", toolsets: ["terminal"] },
    ];
    const dataset = writeDataset(dir, "d.jsonl", rows);
    const out = join(dir, "runs");
    const args = [
      "run",
      dataset,
      "--model",
      "scripted",
      "--judge-model",
      "grader",
      "--judge-base-url",
      judge.baseURL,
      "--max-retries",
      "0",
      "--env",
      "host",
      "--output-dir",
      out,
      "--run-name",
      "u",
      "--progress",
      "none",
      "--workers",
      "1",
    ];
    const first = await runCliInProcess(args);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toContain("3 unscored"); // the two the judge failed, and the row without a scorer
    const runDir = join(out, "u");
    const before = readJsonl(join(runDir, "trajectories.jsonl"));
    expect(
      before
        .filter((l) => l.score?.passed === null)
        .map((l) => l.task_id)
        .sort(),
    ).toEqual(["flaky-1", "flaky-2"]);

    // A plain --resume has nothing to do: unscored tasks are done.
    judged.length = 0;
    const resume = await runCliInProcess([...args, "--resume"]);
    expect(resume.exitCode).toBe(0);
    expect(resume.stdout).toContain("0 completed");
    expect(judged).toHaveLength(0);

    down = false;
    const retry = await runCliInProcess([...args, "--resume", "--retry-unscored"]);
    expect(retry.stderr).toContain("moved 2 unscored result(s) to superseded.jsonl");
    expect(retry.exitCode).toBe(0);
    expect(retry.stdout).toContain("2 completed");
    expect(retry.stdout).toContain("(5 done in total)");
    expect(retry.stdout).toContain("1 unscored"); // the row without a scorer
    // Only the two unscored tasks ran (each asked the judge once).
    expect(judged).toHaveLength(2);
    expect(judged.every((a) => a.includes("flaky"))).toBe(true);

    const after = readJsonl(join(runDir, "trajectories.jsonl"));
    // One line per task; the others are byte for byte what the first run wrote.
    expect(after.map((l) => l.task_id).sort()).toEqual(rows.map((r) => r.id).sort());
    const old = byId(before);
    for (const l of after) {
      if (l.task_id.startsWith("flaky")) {
        expect(l.score.passed).toBe(true);
        expect(l.metadata.timestamp).not.toBe(old[l.task_id].metadata.timestamp);
      } else expect(l).toEqual(old[l.task_id]);
    }
    const superseded = readJsonl(join(runDir, "superseded.jsonl"));
    expect(superseded.map((l) => l.task_id).sort()).toEqual(["flaky-1", "flaky-2"]);
    expect(superseded.every((l) => l.score.passed === null)).toBe(true);
    expectStatisticsAgree(runDir);
    expect(readFileSync(join(runDir, "events.log"), "utf8")).toMatch(/start: 2 task\(s\) to run/);

    // Nothing unscored any more: --retry-unscored alone runs nothing.
    const none = await runCliInProcess([...args, "--retry-unscored"]);
    expect(none.exitCode).toBe(0);
    expect(none.stdout).toContain("0 completed");
    // It does not combine with --only.
    const both = await runCliInProcess([...args, "--retry-unscored", "--only", "steady"]);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain("--retry-unscored reruns the unscored tasks: it does not combine with --only");
  });
  it("with --epochs, reruns only the unscored epoch of a task", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, "e.jsonl", [
      { id: "flaky-e", prompt: "Use the shell to compute 7 + 7 (flaky).", toolsets: ["terminal"], rubric: "14" },
    ]);
    const out = join(dir, "runs");
    const args = [
      "run",
      dataset,
      "--model",
      "scripted",
      "--judge-model",
      "grader",
      "--judge-base-url",
      judge.baseURL,
      "--max-retries",
      "0",
      "--env",
      "host",
      "--output-dir",
      out,
      "--run-name",
      "e",
      "--progress",
      "none",
      "--workers",
      "1",
      "--epochs",
      "2",
    ];
    // The judge fails its first call only: one epoch is unscored, the other scored.
    let calls = 0;
    down = false;
    judge.setHandler(() =>
      ++calls === 1 ? httpError(503, "judge down") : text(JSON.stringify({ score: 1, passed: true, reason: "fine" })),
    );
    try {
      expect((await runCliInProcess(args)).exitCode).toBe(0);
      const runDir = join(out, "e");
      const before = readJsonl(join(runDir, "trajectories.jsonl"));
      const unscored = before.filter((l) => l.score.passed === null);
      expect(unscored).toHaveLength(1);
      const retry = await runCliInProcess([...args, "--retry-unscored"]);
      expect(retry.exitCode).toBe(0);
      expect(retry.stdout).toContain("1 completed");
      expect(calls).toBe(3);
      const after = readJsonl(join(runDir, "trajectories.jsonl"));
      expect(after.map((l) => l.epoch).sort()).toEqual([0, 1]);
      expect(after.every((l) => l.score.passed === true)).toBe(true);
      // The scored epoch is untouched; the unscored one moved to superseded.jsonl.
      expect(after.find((l) => l.epoch !== unscored[0].epoch)).toEqual(
        before.find((l) => l.epoch !== unscored[0].epoch),
      );
      expect(readJsonl(join(runDir, "superseded.jsonl")).map((l) => [l.task_id, l.epoch])).toEqual([
        ["flaky-e", unscored[0].epoch],
      ]);
      expectStatisticsAgree(runDir);
    } finally {
      judge.setHandler((req) => {
        const asked: string = req.body.messages.at(-1).content;
        judged.push(asked);
        if (down && asked.includes("flaky")) return httpError(503, "judge down");
        return text(JSON.stringify({ score: 1, passed: true, reason: "fine" }));
      });
    }
  });
});
