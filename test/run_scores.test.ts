/**
 * Scoring inside a real batch run: the built-in scripted model answers, rows name `expected`, `verify`
 * and `rubric`; the rubric judge is a local OpenAI-compatible server (approves, denies, talks garbage,
 * or is down). Scores land in each trajectory line and in statistics.json; `compare` gates on them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  httpError,
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { ROOT, runCli, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

describe("scores in a batch run", () => {
  let judge: FakeOpenAI;
  const judged: RecordedRequest[] = [];
  const grade = (req: RecordedRequest): Reply => {
    judged.push(req);
    const asked: string = req.body.messages.at(-1).content;
    if (asked.includes("judge-down")) return httpError(503, "judge down");
    if (asked.includes("judge-garbage")) return text("Looks fine to me!");
    const passed = asked.includes("judge-yes");
    return text(
      JSON.stringify({ score: passed ? 0.9 : 0.2, passed, reason: passed ? "meets the rubric" : "misses the rubric" }),
      {},
    );
  };

  beforeAll(async () => {
    judge = await startFakeOpenAI(grade);
  });
  afterAll(async () => {
    await judge.close();
  });

  it("writes a score per line, counts unscored apart, records the judge; compare sees a regression", async () => {
    const dir = tempDir();
    const rows = [
      {
        id: "mul",
        prompt: "Use the shell to compute 1234 * 5678 and tell me the result.",
        toolsets: ["terminal"],
        expected: { value: 7006652, match: "number" },
        metadata: { level: "easy" },
      },
      {
        id: "capital",
        prompt: "What is the capital of France?",
        toolsets: ["terminal"],
        expected: { value: "Paris", match: "exact" },
        metadata: { level: "hard" },
      },
      {
        id: "file",
        prompt: "Create a file named greeting.txt containing 'hello eval' and read it back.",
        toolsets: ["file"],
        expected: "hello eval",
        verify: "grep -qx 'hello eval' greeting.txt",
        metadata: { level: "easy" },
      },
      {
        id: "judge-yes",
        prompt: "Use the shell to compute 2 + 2 (judge-yes).",
        toolsets: ["terminal"],
        rubric: "The answer must be 4.",
      },
      {
        id: "judge-no",
        prompt: "Use the shell to compute 3 + 3 (judge-no).",
        toolsets: ["terminal"],
        rubric: "The answer must be 7.",
      },
      {
        id: "judge-garbage",
        prompt: "Use the shell to compute 4 + 4 (judge-garbage).",
        toolsets: ["terminal"],
        rubric: "Any answer.",
      },
      {
        id: "judge-down",
        prompt: "Use the shell to compute 5 + 5 (judge-down).",
        toolsets: ["terminal"],
        rubric: "Any answer.",
      },
      { id: "plain", prompt: "Use the shell to compute 6 + 6.", toolsets: ["terminal"] },
    ];
    const dataset = join(dir, "eval.jsonl");
    writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const out = join(dir, "runs");
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      "--judge-model",
      "grader",
      "--judge-base-url",
      judge.baseURL,
      "--judge-api-key",
      "judge-secret-key-123",
      "--output-dir",
      out,
      "--run-name",
      "base",
      "--progress",
      "none",
      "--group-by",
      "metadata.level",
      "--max-retries",
      "0",
    ]);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("scores: 60.0 % passed (3/5 scored, 95 % CI");
    expect(r.stdout).toContain(", 3 unscored");
    const lines = readJsonl(join(out, "base", "trajectories.jsonl"));
    const byId = Object.fromEntries(lines.map((l) => [l.task_id, l]));
    expect(byId.mul.score).toMatchObject({ passed: true, value: 1 });
    expect(byId.capital.score.passed).toBe(false);
    expect(byId.capital.score.scorers[0].reason).toMatch(/^expected exactly "Paris", got/);
    expect(byId.file.score.scorers.map((s: any) => [s.name, s.passed])).toEqual([
      ["expected", true],
      ["verify", true],
    ]);
    expect(byId["judge-yes"].score).toMatchObject({ passed: true, value: 0.9 });
    expect(byId["judge-yes"].judge).toMatchObject({ model: "grader", usage: { total_tokens: 15 } });
    expect(byId["judge-yes"].judge_usage.total_tokens).toBe(15);
    expect(byId["judge-no"].score.passed).toBe(false);
    expect(byId["judge-garbage"].score.passed).toBeNull();
    expect(byId["judge-down"].score.passed).toBeNull();
    expect(byId["judge-down"].score.scorers[0].reason).toMatch(/^judge failed/);
    expect(byId.plain.score).toBeUndefined();
    // The judge was asked through a JSON-schema response and its key was sent to it.
    expect(judged[0]!.body.response_format.type).toBe("json_schema");
    expect(judged[0]!.headers.authorization).toBe("Bearer judge-secret-key-123");

    const stats = JSON.parse(readFileSync(join(out, "base", "statistics.json"), "utf8"));
    // 8 tasks: scored mul, capital, file, judge-yes, judge-no; unscored garbage, down, plain (no scorer).
    expect(stats.scores).toMatchObject({ scored: 5, unscored: 3, passed: 3, pass_rate: 0.6 });
    expect(stats.scores.ci95[0]).toBeLessThan(0.6);
    expect(stats.scores.pass_at_k["1"]).toBeCloseTo(0.6, 9);
    expect(stats.scores.groups["metadata.level"].easy).toMatchObject({ scored: 2, passed: 2 });
    expect(stats.scores.groups["metadata.level"].hard).toMatchObject({ scored: 1, passed: 0 });
    expect(stats.scores.groups.toolsets.terminal.scored).toBe(4);
    // Three judge answers (yes, no, garbage) cost tokens; the outage none.
    expect(stats.scores.judge_usage.total_tokens).toBe(15 * 3);
    // No output file holds the judge's key.
    for (const f of ["trajectories.jsonl", "statistics.json", "run.yaml", "events.log"]) {
      if (existsSync(join(out, "base", f)))
        expect(readFileSync(join(out, "base", f), "utf8")).not.toContain("judge-secret-key-123");
    }

    // The same dataset where the arithmetic row now expects another number: a newly failing task. Another answer
    // key makes the runs not comparable unless the comparison is told to go on (--allow-different-dataset).
    const changed = rows.map((row) => (row.id === "mul" ? { ...row, expected: { value: 1, match: "number" } } : row));
    writeFileSync(dataset, changed.map((row) => JSON.stringify(row)).join("\n") + "\n");
    const r2 = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      "--judge-model",
      "grader",
      "--judge-base-url",
      judge.baseURL,
      "--output-dir",
      out,
      "--run-name",
      "cur",
      "--progress",
      "none",
      "--max-retries",
      "0",
    ]);
    expect(r2.exitCode).toBe(0);
    // 2 of 7 tasks are unscored by design (judge garbage, judge down; the row without a scorer is left out):
    // over the default 10 %.
    const regraded = await runCliInProcess(["compare", join(out, "base"), join(out, "cur")]);
    expect(regraded.exitCode).toBe(3);
    expect(regraded.stdout).toContain("the scoring differs: 1 task(s) are graded against other criteria");
    const notComparable = await runCliInProcess([
      "compare",
      join(out, "base"),
      join(out, "cur"),
      "--max-drop",
      "5",
      "--allow-different-dataset",
    ]);
    expect(notComparable.exitCode).toBe(3);
    expect(notComparable.stdout).toContain("2 of 7 task(s) are unscored");
    const cmp = await runCliInProcess([
      "compare",
      join(out, "base"),
      join(out, "cur"),
      "--max-drop",
      "5",
      "--max-unscored",
      "3",
      "--allow-different-dataset",
    ]);
    expect(cmp.exitCode).toBe(1);
    expect(cmp.stdout).toMatch(/^newly failing \(1\):\n  mul /);

    // The same gate in one step, with prices: run, compare with the baseline, exit 1 on the drop.
    const r3 = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      "--judge-model",
      "grader",
      "--judge-base-url",
      judge.baseURL,
      "--output-dir",
      out,
      "--run-name",
      "gated",
      "--progress",
      "none",
      "--max-retries",
      "0",
      "--baseline",
      join(out, "base"),
      "--max-drop",
      "5",
      "--max-unscored",
      "50%",
      "--allow-different-dataset",
      "--price-input",
      "3",
      "--price-output",
      "15",
    ]);
    expect(r3.exitCode).toBe(1);
    expect(r3.stdout).toContain(`compared with the baseline ${join(out, "base")}:`);
    expect(r3.stdout).toContain("REGRESSION: pass rate dropped by");
    const gated = readJsonl(join(out, "gated", "trajectories.jsonl"));
    const mul = gated.find((l) => l.task_id === "mul");
    expect(mul.cost_usd).toBeCloseTo((mul.usage.prompt_tokens * 3 + mul.usage.completion_tokens * 15) / 1e6, 8);
    const gatedStats = JSON.parse(readFileSync(join(out, "gated", "statistics.json"), "utf8"));
    expect(gatedStats.cost.usd).toBeGreaterThan(0);
    expect(gatedStats.cost.per_passed_task_usd).toBeCloseTo(gatedStats.cost.usd / gatedStats.scores.passed, 5);
    const missing = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      "--output-dir",
      out,
      "--run-name",
      "x",
      "--baseline",
      join(dir, "nope"),
    ]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("--baseline");
    for (const [flags, message] of [
      [["--max-drop", "5"], "--max-drop needs --baseline RUN_DIR"],
      [["--max-unscored", "2"], "--max-unscored needs --baseline RUN_DIR or --fail-under PCT"],
      [["--significant-only", "--baseline", join(out, "base")], "--significant-only needs --max-drop P"],
    ] as const) {
      const r = await runCliInProcess(["run", dataset, "--model", "scripted", "--output-dir", out, ...flags]);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr.trim()).toBe(`hermes-batch run: ${message} (see run --help)`);
    }
  });

  it("--epochs K runs every task K times; pass@k for k <= K; resume works per (task, epoch)", async () => {
    const dir = tempDir();
    const dataset = join(dir, "e.jsonl");
    const rows = [
      {
        id: "right",
        prompt: "Use the shell to compute 20 + 22 and tell me the result.",
        toolsets: ["terminal"],
        expected: { value: 42, match: "number" },
      },
      { id: "wrong", prompt: "What is the capital of France?", toolsets: ["terminal"], expected: "Paris" },
      { id: "drawn", prompt: "Use the shell to compute 2 * 21.", expected: { value: 42, match: "number" } },
    ];
    writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const out = join(dir, "runs");
    const args = [
      "run",
      dataset,
      "--model",
      "scripted",
      "--epochs",
      "3",
      "--output-dir",
      out,
      "--run-name",
      "ep",
      "--progress",
      "none",
    ];
    const r = await runCliInProcess(args);
    expect(r.exitCode).toBe(0);
    const trajPath = join(out, "ep", "trajectories.jsonl");
    const lines = readJsonl(trajPath);
    expect(lines).toHaveLength(9);
    for (const id of ["right", "wrong", "drawn"]) {
      expect(
        lines
          .filter((l) => l.task_id === id)
          .map((l) => l.epoch)
          .sort(),
      ).toEqual([0, 1, 2]);
    }
    const stats = JSON.parse(readFileSync(join(out, "ep", "statistics.json"), "utf8"));
    expect(stats.scores.epochs).toBe(3);
    expect(Object.keys(stats.scores.pass_at_k)).toEqual(["1", "2", "3"]);
    expect(stats.scores.pass_at_k["3"]).toBeGreaterThanOrEqual(1 / 3);
    expect(stats.scores.pass_at_k["1"]).toBeLessThanOrEqual(stats.scores.pass_at_k["3"]);
    expect(r.stdout).toMatch(/pass@3 /);

    // Lose one epoch's line (as a crash would): --resume reruns exactly that (task, epoch).
    const kept = lines.filter((l) => !(l.task_id === "wrong" && l.epoch === 1));
    writeFileSync(trajPath, kept.map((l) => JSON.stringify(l)).join("\n") + "\n");
    // The pass rate gates when asked ("wrong" fails in every epoch, "right" passes in every one): 30 % lets it pass.
    const again = await runCliInProcess([...args, "--resume", "--fail-under", "30"]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain("1 completed, 0 failed, 0 dropped this time (9 done in total)");
    const gate = await runCliInProcess([...args, "--resume", "--fail-under", "99"]);
    expect(gate.exitCode).toBe(1);
    expect(gate.stdout).toMatch(/pass rate \d+\.\d % is under --fail-under 99 %/);
    const after = readJsonl(trajPath);
    expect(after).toHaveLength(9);
    expect(after.at(-1)).toMatchObject({ task_id: "wrong", epoch: 1 });
  });

  it("verify is out of the agent's reach: files arrive after it, its processes are stopped, a forged test does not pass", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "checks"));
    writeFileSync(join(dir, "checks", "check.sh"), "grep -qx 42 answer.txt\n");
    const rows = [
      {
        id: "honest",
        prompt: "honest: write 42 to answer.txt",
        verify: "sh check.sh",
        verify_files: "checks",
        toolsets: ["terminal"],
      },
      {
        id: "forger",
        prompt: "forger: make the check pass without doing the work",
        verify: "sh check.sh",
        verify_files: "checks",
        toolsets: ["terminal"],
      },
    ];
    const dataset = join(dir, "v.jsonl");
    writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const seen: string[] = [];
    const agent = await startFakeOpenAI((req) => {
      const prompt: string = req.body.messages.find((m: any) => m.role === "user").content;
      const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
      if (turn > 0) seen.push(String(JSON.parse(req.body.messages.at(-1).content).output ?? ""));
      if (prompt.startsWith("honest")) {
        if (turn === 0) return toolCalls([{ name: "terminal", arguments: { command: "ls -a; echo 42 > answer.txt" } }]);
        return text("done");
      }
      // The forger writes a check that always passes, and a background process that would keep rewriting it.
      if (turn === 0)
        return toolCalls([{ name: "terminal", arguments: { command: "ls -a; printf 'exit 0\\n' > check.sh" } }]);
      if (turn === 1)
        return toolCalls([
          {
            name: "terminal",
            arguments: { command: "while true; do printf 'exit 0\\n' > check.sh; sleep 0.05; done", background: true },
          },
        ]);
      return text("all checks pass");
    });
    try {
      const out = join(dir, "runs");
      // A process of its own: the test stops the agent's processes (in process it failed twice in CI).
      const r = await runCli([
        "run",
        dataset,
        "--model",
        "agent",
        "--base-url",
        agent.baseURL,
        "--api-key",
        "k",
        "--approval",
        "allow",
        "--output-dir",
        out,
        "--run-name",
        "v",
        "--progress",
        "none",
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
      const byId = Object.fromEntries(readJsonl(join(out, "v", "trajectories.jsonl")).map((l) => [l.task_id, l]));
      // On a failure, the honest task's conversation says why (its tool call's output, the verify's own output).
      const honestTurns = JSON.stringify({ verify: byId.honest.verify, conversations: byId.honest.conversations });
      expect(byId.honest.verify, honestTurns).toMatchObject({ exit_code: 0, passed: true });
      expect(byId.honest.score.passed).toBe(true);
      expect(byId.forger.verify.passed).toBe(false);
      expect(byId.forger.score).toMatchObject({ passed: false });
      // The agent's `ls -a` ran and never saw the verify files.
      const listings = seen.filter((t) => t.split("\n").includes(".."));
      expect(listings).toHaveLength(2);
      for (const l of listings) expect(l.split("\n")).not.toContain("check.sh");
    } finally {
      await agent.close();
    }
  });

  it("a verify_files folder that does not exist is a bad row naming file:line", async () => {
    const dir = tempDir();
    const dataset = join(dir, "v.jsonl");
    writeFileSync(dataset, `${JSON.stringify({ prompt: "p", verify: "true", verify_files: "nope" })}\n`);
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${dataset}:1: 'verify_files' nope: no such folder`);
  });

  it("a bad `expected` in a row is one clear line naming file:line, exit 2, before any model call", async () => {
    const dir = tempDir();
    const dataset = join(dir, "bad.jsonl");
    writeFileSync(
      dataset,
      `${JSON.stringify({ prompt: "ok" })}\n${JSON.stringify({ prompt: "x", expected: { value: "(", match: "regex" } })}\n`,
    );
    const r = await runCliInProcess(
      ["run", dataset, "--model", "scripted", "--output-dir", join(dir, "runs"), "--progress", "none"],
      { cwd: ROOT },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${dataset}:2:`);
    expect(r.stderr).toContain("expected");
  });

  it("a run graded against another answer key is not comparable until it is scored again against the same one", async () => {
    const dir = tempDir();
    const out = join(dir, "runs");
    const row = (expected: string) =>
      `${JSON.stringify({ id: "sum", prompt: "What is 2+2? Answer with the number.", expected })}\n${JSON.stringify({ id: "hi", prompt: "say hi", expected: "hi" })}\n`;
    writeFileSync(join(dir, "key.jsonl"), row("4"));
    writeFileSync(join(dir, "edited.jsonl"), row("5"));
    const run = (dataset: string, name: string) =>
      runCliInProcess(["run", join(dir, dataset), "--model", "scripted", "--output-dir", out, "--run-name", name]);
    expect((await run("key.jsonl", "base")).exitCode).toBe(0);
    await run("edited.jsonl", "cur");
    const cmp = await runCliInProcess(["compare", join(out, "base"), join(out, "cur")]);
    expect(cmp.exitCode).toBe(3);
    expect(cmp.stdout).toContain("the scoring differs: 1 task(s) are graded against other criteria");
    const rescored = await runCliInProcess(["score", join(out, "cur"), "--dataset", join(dir, "key.jsonl")]);
    expect(rescored.exitCode, rescored.stderr).toBe(0);
    const again = await runCliInProcess(["compare", join(out, "base"), join(out, "cur")]);
    expect(again.stdout).not.toContain("the scoring differs");
    expect(again.exitCode).toBe(0);
  });
});
