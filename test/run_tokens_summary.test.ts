/**
 * Issue 22 part 5, through a real run: tokens are counted as agent / approver / judge with one total
 * (agent + approver + judge) that is the same on the end-of-run line, in statistics.json and in the HTML
 * report; summary.csv tells epochs apart and says what each row scored. The agent, the smart approver and
 * the rubric judge are one local OpenAI-compatible server, each with its own token counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildReportModel } from "../src/report/html/report_data.js";
import {
  completion,
  startFakeOpenAI,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

describe("tokens by who spent them, and summary.csv per epoch", () => {
  let server: FakeOpenAI;
  const handler = (req: RecordedRequest): Reply => {
    const model: string = req.body.model;
    if (model === "approver-model")
      return completion({
        content: JSON.stringify({ decision: "deny", reason: "not in a test" }),
        usage: { prompt_tokens: 7, completion_tokens: 1 },
      });
    if (model === "grader")
      return completion({
        content: JSON.stringify({ score: 0.9, passed: true, reason: "fine" }),
        usage: { prompt_tokens: 20, completion_tokens: 3 },
      });
    const prompt: string = req.body.messages.find((m: any) => m.role === "user").content;
    const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
    // A dangerous command the approver is asked about (and denies), then the answer.
    if (turn === 0)
      return completion({
        toolCalls: [{ name: "terminal", arguments: { command: `rm -rf /nonexistent-hb-test/${prompt.length}` } }],
        usage: { prompt_tokens: 100, completion_tokens: 10 },
      });
    return completion({
      content: prompt.includes("two") ? "4" : "6",
      usage: { prompt_tokens: 100, completion_tokens: 10 },
    });
  };

  beforeAll(async () => {
    server = await startFakeOpenAI(handler);
  });
  afterAll(async () => {
    await server.close();
  });

  it("one total (agent + approver + judge) on the console, in statistics.json and in the report; summary.csv rows per epoch", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      [
        {
          id: "two",
          prompt: "What is two plus two?",
          toolsets: ["terminal"],
          expected: "4",
          rubric: "The answer is 4.",
        },
        { id: "five", prompt: "What is five?", toolsets: ["terminal"], expected: "5" },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n") + "\n",
    );
    const out = join(dir, "runs");
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "agent-model",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--approval-model",
      "approver-model",
      "--judge-model",
      "grader",
      "--epochs",
      "2",
      "--env",
      "host",
      "--output-dir",
      out,
      "--run-name",
      "t",
      "--progress",
      "none",
      "--max-retries",
      "0",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);

    // What each line says it spent, by who.
    const lines = readJsonl(join(out, "t", "trajectories.jsonl"));
    expect(lines).toHaveLength(4);
    const sum = (f: (l: any) => number) => lines.reduce((n, l) => n + f(l), 0);
    const agent = sum((l) => l.usage.total_tokens);
    const approver = sum((l) => l.approval_usage?.total_tokens ?? 0);
    const judge = sum((l) => l.judge_usage?.total_tokens ?? 0);
    expect(agent).toBe(4 * 2 * 110); // 4 task-epochs × 2 calls
    expect(approver).toBeGreaterThan(0);
    expect(judge).toBe(2 * 23); // the rubric row, 2 epochs
    const total = agent + approver + judge;

    // statistics.json: the breakdown at `tokens`, the Usage details at `token_usage`.
    const stats = JSON.parse(readFileSync(join(out, "t", "statistics.json"), "utf8"));
    expect(stats.tokens).toEqual({ agent, approver, judge, total });
    for (const v of Object.values(stats.tokens)) expect(Number.isInteger(v)).toBe(true);
    expect(stats.token_usage.judge).toEqual({ prompt_tokens: 2 * 20, completion_tokens: 2 * 3, total_tokens: judge });
    expect(stats.token_usage.agent.total_tokens).toBe(agent);
    expect(stats.token_usage.approver.total_tokens).toBe(approver);

    // The end-of-run line: the same total, broken down the same way.
    const fmt = (n: number) => n.toLocaleString("en-US");
    expect(r.stdout).toContain(
      `${fmt(total)} tokens (agent ${fmt(agent)}, approver ${fmt(approver)}, judge ${fmt(judge)}), `,
    );

    // The HTML report's totals and rows.
    const model = await buildReportModel(join(out, "t"));
    expect(model.run.totals.tokens).toBe(total);
    expect(model.run.totals.token_breakdown).toEqual({ agent, approver, judge });
    expect(model.rows.reduce((n, row) => n + row.tok, 0)).toBe(total);
    const report = await runCliInProcess(["report", join(out, "t")]);
    expect(report.exitCode, report.stderr).toBe(0);
    expect(readFileSync(join(out, "t", "report.html"), "utf8")).toContain("function tokensText(t)");

    // summary.csv: one row per task and epoch, which epoch, whether it passed, its score and each scorer.
    // (no cell of this run needs quoting: a plain split reads it)
    const [header, ...body] = readFileSync(join(out, "t", "summary.csv"), "utf8")
      .trimEnd()
      .split("\n");
    const rows = body.map((l) => Object.fromEntries(l.split(",").map((v, i) => [header!.split(",")[i]!, v])));
    expect(header).toBe(
      "task_id,prompt_index,outcome,completed,partial,api_calls,tool_calls,tool_failures,prompt_tokens,completion_tokens,duration_ms,verify_passed,toolsets,error,epoch,passed,score,scorers",
    );
    const seen = rows
      .map((row) => [row.task_id, row.epoch, row.passed, row.score, row.scorers])
      .sort((a, b) => `${a[0]}${a[1]}`.localeCompare(`${b[0]}${b[1]}`));
    expect(seen).toEqual([
      ["five", "0", "false", "0", "expected:fail"],
      ["five", "1", "false", "0", "expected:fail"],
      ["two", "0", "true", "0.95", "expected:pass;rubric:pass"],
      ["two", "1", "true", "0.95", "expected:pass;rubric:pass"],
    ]);
  }, 180_000);
});
