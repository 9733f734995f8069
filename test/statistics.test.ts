import { mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "csv-stringify/sync";
import type { ApprovalRecord } from "../tools/registry.js";
import type { ChatMessage } from "../src/core/chat.js";
import { NumberBuffer, RunStatistics, isApprovalError, percent } from "../src/report/statistics.js";
import {
  SUMMARY_COLUMNS,
  type SummaryRow,
  SummaryCsvWriter,
  formatSummaryCsv,
  summaryRowFromEntry,
  summaryRowFromFailure,
} from "../src/report/summary_csv.js";
import { extractToolStats, isToolResultFailure, reasoningStats, unknownToolsCalled } from "../src/report/tool_stats.js";
import type { TrajectoryEntry } from "../src/core/records.js";
import { pythonLocalIsoformat } from "../src/core/python_time.js";
import { HERMES_TOOL_NAMES } from "../src/core/hermes_tool_names.js";

describe("isToolResultFailure (Hermes rule)", () => {
  const table: [string, boolean][] = [
    ['{"output": "ok", "exit_code": 0, "error": null}', false],
    ['{"output": "", "exit_code": 2, "error": null}', false], // non-zero exit is not a failure
    ['{"error": "boom"}', true],
    ['{"error": ""}', true], // non-null, even empty
    ['{"error": null, "success": true}', false],
    ['{"success": false}', true],
    ['{"success": "false"}', false],
    ['{"content": {"error": "nested"}}', true],
    ['{"content": {"error": null}}', false],
    ['{"content": "error: text inside"}', false],
    ["[1, 2]", false],
    ['"a json string"', false],
    ["null", false],
    ["", true],
    ["   ", true],
    ["Error: something broke", true],
    ["  ERROR: shouting", true],
    ["error without colon", false],
    ["plain output", false],
    ["{not json", false],
    // Keys spelled with \u escapes, and whitespace JSON does not skip but JS trims.
    ['{"\\u0065rror": "escaped key"}', true],
    ['{"\\u0073uccess": false}', true],
    ['{"content": {"\\u0065rror": 1}}', true],
    ['{"ok": "\\u00e9"}', false],
    ["\u00a0\u2003", true],
    ["\u00a0ERROR: after a no-break space", true],
  ];
  it.each(table)("%s → failure %s", (content, failure) => {
    expect(isToolResultFailure(content)).toBe(failure);
  });
});

const call = (id: string, name: string) => ({ id, type: "function" as const, function: { name, arguments: "{}" } });

const MESSAGES: ChatMessage[] = [
  { role: "user", content: "q" },
  {
    role: "assistant",
    content: null,
    reasoning: "think",
    tool_calls: [call("a", "terminal"), call("b", "read_file"), call("c", "terminal")],
  },
  { role: "tool", tool_call_id: "c", content: '{"error": "denied"}' },
  { role: "tool", tool_call_id: "a", content: '{"output": "x", "exit_code": 1, "error": null}' },
  { role: "tool", tool_call_id: "b", content: "" },
  { role: "assistant", content: "more", tool_calls: [call("d", "mystery_tool")] },
  { role: "tool", tool_call_id: "d", content: "Error: unknown tool" },
  { role: "assistant", content: "<think>x</think> done" },
  { role: "assistant", content: "plain" },
];

describe("extractToolStats / reasoningStats", () => {
  it("counts calls, matches results by id, lists every known tool and unknown ones, sorted", () => {
    const { tool_stats, tool_error_counts } = extractToolStats(MESSAGES, ["write_file", "terminal", "read_file"]);
    expect(tool_stats).toEqual({
      mystery_tool: { count: 1, success: 0, failure: 1 },
      read_file: { count: 1, success: 0, failure: 1 },
      terminal: { count: 2, success: 1, failure: 1 },
      write_file: { count: 0, success: 0, failure: 0 },
    });
    expect(Object.keys(tool_stats)).toEqual(["mystery_tool", "read_file", "terminal", "write_file"]);
    expect(tool_error_counts).toEqual({ mystery_tool: 1, read_file: 1, terminal: 1, write_file: 0 });
    expect(unknownToolsCalled(MESSAGES, new Set(["terminal", "read_file"]))).toEqual(["mystery_tool"]);
  });

  it("counts reasoning per assistant turn", () => {
    expect(reasoningStats(MESSAGES)).toEqual({
      total_assistant_turns: 4,
      turns_with_reasoning: 2,
      turns_without_reasoning: 2,
      has_any_reasoning: true,
      turns_with_reasoning_only_in_details: 0,
    });
    expect(reasoningStats([{ role: "assistant", content: "x", reasoning: " " }]).has_any_reasoning).toBe(false);
  });
});

describe("NumberBuffer", () => {
  it("gives linear-interpolated percentiles, mean and max, growing past its first block", () => {
    const b = new NumberBuffer();
    for (let v = 2000; v >= 1; v--) b.push(v); // 1..2000 pushed in reverse, forces a sort and growth
    expect(b.length).toBe(2000);
    expect(b.percentile(50)).toBe(1000.5);
    expect(b.percentile(95)).toBeCloseTo(1900.05, 6);
    expect(b.percentile(0)).toBe(1);
    expect(b.percentile(100)).toBe(2000);
    expect(b.mean()).toBe(1000.5);
    expect(b.max()).toBe(2000);
    const small = new NumberBuffer();
    for (const v of [10, 40, 20, 30]) small.push(v);
    expect(small.percentile(50)).toBe(25);
    expect(small.percentile(95)).toBe(38.5);
    expect(new NumberBuffer().percentile(50)).toBe(0);
  });

  it("percent rounds to 2 decimals and is 0 without a base", () => {
    expect(percent(2, 3)).toBe(66.67);
    expect(percent(1, 3)).toBe(33.33);
    expect(percent(0, 0)).toBe(0);
  });
});

function entry(over: Partial<TrajectoryEntry>): TrajectoryEntry {
  return {
    prompt_index: 0,
    task_id: "t",
    conversations: [],
    messages: [],
    tools: [],
    metadata: {},
    completed: true,
    partial: false,
    outcome: "completed",
    api_calls: 1,
    toolsets_used: ["terminal", "file"],
    tool_stats: {},
    tool_error_counts: {},
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    approvals: [],
    final_response: null,
    duration_ms: 0,
    ...over,
  };
}

const approval = (pattern: string, decision: "approve" | "deny", by = "smart", reason = "ok"): ApprovalRecord => ({
  command: "rm -rf x",
  pattern,
  decision,
  by,
  reason,
  latency_ms: 3,
});

describe("RunStatistics", () => {
  it("aggregates entries, failures and drops into statistics.json", () => {
    const stats = new RunStatistics({
      run_name: "r1",
      distribution: "default",
      model: "m",
      total_prompts: 5,
      started_at: new Date("2026-01-01T00:00:00.000Z"),
    });
    stats.addEntry(
      entry({
        task_id: "a",
        messages: MESSAGES,
        tool_stats: extractToolStats(MESSAGES, ["terminal"]).tool_stats,
        usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
        approval_usage: { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 },
        api_calls: 3,
        duration_ms: 1000,
        approvals: [
          approval("recursive delete", "approve"),
          approval("recursive delete", "deny", "smart", "timeout after 10s"),
        ],
        verify: { command: "true", exit_code: 0, passed: true, output: "", timed_out: false },
      }),
    );
    stats.addEntry(
      entry({
        task_id: "b",
        completed: false,
        partial: true,
        outcome: "partial",
        // Reasoning sent only in reasoning_details: not in the conversation, so not counted as reasoning.
        messages: [
          { role: "assistant", content: "no reasoning", reasoning: "from details", reasoning_without_details: "" },
        ],
        tool_stats: { terminal: { count: 3, success: 3, failure: 0 } },
        usage: {
          prompt_tokens: 50,
          completion_tokens: 5,
          total_tokens: 55,
          prompt_tokens_details: { cached_tokens: 32 },
          completion_tokens_details: { reasoning_tokens: 4 },
        },
        judge_usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 },
        api_calls: 5,
        model_retries: 2,
        duration_ms: 3000,
        approvals: [approval("stop service", "deny", "policy:deny", "denied by policy")],
        verify: { command: "false", exit_code: 1, passed: false, output: "", timed_out: false },
      }),
    );
    stats.addFailure({
      task_id: "c",
      outcome: "model_error",
      error: "400 bad",
      duration_ms: 2000,
      usage: { prompt_tokens: 5, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 1 } },
      model_retries: 3,
    });
    stats.addDropped("no_reasoning");
    stats.addDropped("unknown_tools");
    stats.addApprovalSummary({ "fork bomb": { denied: 2, errors: 1 } });

    const json = stats.toJSON(new Date("2026-01-01T00:01:30.250Z"));
    expect(json).toEqual({
      run_name: "r1",
      distribution: "default",
      model: "m",
      started_at: "2026-01-01T00:00:00.000Z",
      completed_at: pythonLocalIsoformat(new Date("2026-01-01T00:01:30.250Z")),
      completed_at_utc: "2026-01-01T00:01:30.250Z",
      duration_seconds: 90.25,
      total_prompts: 5,
      total_batches: 1,
      batch_size: 10,
      tasks: { total: 5, trajectories: 2, failed: 1, dropped: 2 },
      outcomes: {
        completed: 1,
        max_turns: 0,
        partial: 1,
        time_limit: 0,
        resource_limit: 0,
        model_error: 1,
        environment_error: 0,
        timeout: 0,
        cancelled: 0,
        internal_error: 0,
      },
      completed: 1,
      partial: 1,
      completion_rate: 33.33,
      partial_rate: 33.33,
      tool_statistics: {
        mystery_tool: { count: 1, success: 0, failure: 1, success_rate: 0, failure_rate: 100 },
        read_file: { count: 1, success: 0, failure: 1, success_rate: 0, failure_rate: 100 },
        terminal: { count: 5, success: 4, failure: 1, success_rate: 80, failure_rate: 20 },
      },
      reasoning_statistics: {
        total_assistant_turns: 5,
        turns_with_reasoning: 2,
        turns_without_reasoning: 3,
        coverage_rate: 40,
        trajectories_with_reasoning: 1,
        trajectories_without_reasoning: 1,
        turns_with_reasoning_only_in_details: 1,
      },
      // By who spent them; total = agent + approver + judge (the console line and the report show the same).
      tokens: { agent: 170, approver: 8, judge: 23, total: 201 },
      token_usage: {
        agent: {
          prompt_tokens: 155,
          completion_tokens: 15,
          total_tokens: 170,
          prompt_tokens_details: { cached_tokens: 33 },
          completion_tokens_details: { reasoning_tokens: 4 },
        },
        approver: { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 },
        judge: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 },
      },
      durations_ms: { count: 3, mean: 2000, p50: 2000, p95: 2900, max: 3000 },
      api_calls: { total: 8, mean: 4, max: 5 },
      approvals: {
        total: 5,
        approved: 1,
        denied: 4,
        errors: 2,
        cached: 0,
        by_decider: { "policy:deny": 1, smart: 2 },
        by_pattern: {
          "fork bomb": { approved: 0, denied: 2, errors: 1 },
          "recursive delete": { approved: 1, denied: 1, errors: 1 },
          "stop service": { approved: 0, denied: 1, errors: 0 },
        },
      },
      verify: { run: 2, passed: 1, failed: 1, timed_out: 0, pass_rate: 50 },
      filtered: { dropped_unknown_tools: 1, dropped_no_reasoning: 1, dropped_empty_response: 0 },
      model_retries: { total: 5, tasks: 2 },
    });
    // statistics.json must survive a JSON round trip unchanged (no Maps, no typed arrays leak out).
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
    // The original's keys in its order (batch_runner.py final_stats), then ours.
    expect(Object.keys(json)).toEqual([
      "run_name",
      "distribution",
      "total_prompts",
      "total_batches",
      "batch_size",
      "model",
      "completed_at",
      "duration_seconds",
      "tool_statistics",
      "reasoning_statistics",
      "started_at",
      "completed_at_utc",
      "tasks",
      "outcomes",
      "completed",
      "partial",
      "completion_rate",
      "partial_rate",
      "tokens",
      "token_usage",
      "durations_ms",
      "api_calls",
      "approvals",
      "verify",
      "filtered",
      "model_retries",
    ]);
    expect(Object.keys(json.reasoning_statistics).slice(0, 3)).toEqual([
      "total_assistant_turns",
      "turns_with_reasoning",
      "turns_without_reasoning",
    ]);
    // First use: entry a's calls in message order (terminal, read_file, mystery_tool); b's terminal was already seen.
    expect(Object.keys(json.tool_statistics)).toEqual(["terminal", "read_file", "mystery_tool"]);
  });

  it("is all zeros for an empty run", () => {
    const json = new RunStatistics({ run_name: "empty" }).toJSON();
    expect(json.completion_rate).toBe(0);
    expect(json.durations_ms).toEqual({ count: 0, mean: 0, p50: 0, p95: 0, max: 0 });
    expect(json.distribution).toBeNull();
    expect(json.tool_statistics).toEqual({});
  });

  it("lists only the tools used in tool_statistics, as the original does", () => {
    const stats = new RunStatistics({ run_name: "r" });
    // Entries carry every known tool with zeros (the original's normalised tool_stats).
    const normalised = extractToolStats(MESSAGES, HERMES_TOOL_NAMES).tool_stats;
    expect(Object.keys(normalised).length).toBeGreaterThan(60);
    stats.addEntry(entry({ task_id: "a", messages: MESSAGES, tool_stats: normalised }));
    stats.addEntry(entry({ task_id: "b", tool_stats: extractToolStats([], HERMES_TOOL_NAMES).tool_stats }));
    expect(Object.keys(stats.toJSON().tool_statistics)).toEqual(["terminal", "read_file", "mystery_tool"]);
  });

  it("orders tool_statistics by first use: entries in the order fed, calls in message order", () => {
    const stats = new RunStatistics({ run_name: "r" });
    const feed = (task_id: string, messages: ChatMessage[]) =>
      stats.addEntry(
        entry({ task_id, messages, tool_stats: extractToolStats(messages, HERMES_TOOL_NAMES).tool_stats }),
      );
    feed("1", [
      { role: "assistant", content: null, tool_calls: [call("a", "write_file"), call("b", "read_file")] },
      { role: "tool", tool_call_id: "b", content: "{}" },
      { role: "tool", tool_call_id: "a", content: "{}" },
      { role: "assistant", content: null, tool_calls: [call("c", "read_file"), call("d", "patch")] },
    ]);
    feed("2", []); // no tools
    feed("3", [
      {
        role: "assistant",
        content: null,
        tool_calls: [call("e", "todo"), call("f", "terminal"), call("g", "write_file")],
      },
      // A result matched to no call counts under its own name, where it stands.
      { role: "tool", tool_call_id: "zz", name: "search_files", content: "{}" },
      { role: "assistant", content: null, tool_calls: [call("h", "patch"), call("i", "memory")] },
    ]);
    // An entry without messages: its used tools follow in its tool_stats key order.
    stats.addEntry(
      entry({
        task_id: "4",
        tool_stats: {
          zeta_tool: { count: 1, success: 1, failure: 0 },
          alpha_tool: { count: 1, success: 0, failure: 1 },
          idle: { count: 0, success: 0, failure: 0 },
        },
      }),
    );
    const tools = stats.toJSON().tool_statistics;
    expect(Object.keys(tools)).toEqual([
      "write_file",
      "read_file",
      "patch",
      "todo",
      "terminal",
      "search_files",
      "memory",
      "zeta_tool",
      "alpha_tool",
    ]);
    expect(tools.read_file).toEqual({ count: 2, success: 1, failure: 0, success_rate: 100, failure_rate: 0 });
    expect(tools.search_files).toEqual({ count: 0, success: 1, failure: 0, success_rate: 100, failure_rate: 0 });
  });

  it("writes completed_at as Python's naive local isoformat (6 digits from milliseconds) and completed_at_utc as ISO UTC", () => {
    const end = new Date("2026-03-04T05:06:07.089Z");
    const json = new RunStatistics({ run_name: "r", started_at: new Date("2026-03-04T05:00:00.000Z") }).toJSON(end);
    expect(json.completed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    expect(json.completed_at.endsWith(".089000")).toBe(true);
    expect(new Date(json.completed_at).getTime()).toBe(end.getTime()); // no zone: read back as local time
    expect(json.completed_at_utc).toBe("2026-03-04T05:06:07.089Z");
    expect(json.started_at).toBe("2026-03-04T05:00:00.000Z");
    expect(json.duration_seconds).toBe(367.09);
    // Whole seconds: no fraction, as Python's isoformat() leaves it out at 0 microseconds.
    expect(new RunStatistics({ run_name: "r" }).toJSON(new Date("2026-03-04T05:06:07.000Z")).completed_at).toMatch(
      /T\d\d:\d\d:07$/,
    );
  });

  it("classifies approval errors", () => {
    expect(isApprovalError(approval("p", "deny", "smart", "unparsable answer from the approval model"))).toBe(true);
    expect(isApprovalError(approval("p", "deny", "smart-error", "x"))).toBe(true);
    expect(isApprovalError(approval("p", "deny", "smart", "deletes the home directory"))).toBe(false);
  });
});

describe("summary.csv", () => {
  let dir = "";
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const rowA = summaryRowFromEntry(
    entry({
      task_id: "a,1",
      prompt_index: 3,
      tool_stats: { terminal: { count: 3, success: 2, failure: 1 }, read_file: { count: 1, success: 1, failure: 0 } },
      usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
      api_calls: 2,
      duration_ms: 1234.6,
      verify: { command: "true", exit_code: 0, passed: true, output: "", timed_out: false },
    }),
  );
  const rowB = summaryRowFromFailure({
    task_id: "b",
    prompt_index: 4,
    outcome: "timeout",
    error: 'took "too" long\nreally',
    duration_ms: 60000,
  });

  it("formats rows with a header, quoting where needed", () => {
    expect(formatSummaryCsv([rowA, rowB])).toBe(
      "task_id,prompt_index,outcome,completed,partial,api_calls,tool_calls,tool_failures,prompt_tokens,completion_tokens,duration_ms,verify_passed,toolsets,error,epoch,passed,score,scorers\n" +
        '"a,1",3,completed,true,false,2,4,1,12,4,1235,true,terminal;file,,0,,,\n' +
        'b,4,timeout,false,false,0,0,0,0,0,60000,,,"took ""too"" long really",0,,,\n',
    );
  });

  it("a text cell a spreadsheet would run as a formula starts with a quote; numbers stay numbers", () => {
    const row = summaryRowFromFailure({
      task_id: '=HYPERLINK("http://127.0.0.1/x","open")',
      prompt_index: 1,
      outcome: "model_error",
      error: "@SUM(1+1)",
      duration_ms: 5,
    });
    const hostile = ["+1", "-2", "\tx"].map((id) =>
      summaryRowFromFailure({ task_id: id, outcome: "timeout" } as never),
    );
    const lines = formatSummaryCsv([row, ...hostile])
      .trimEnd()
      .split("\n");
    expect(lines[1]).toBe(
      `"'=HYPERLINK(""http://127.0.0.1/x"",""open"")",1,model_error,false,false,0,0,0,0,0,5,,,'@SUM(1+1),0,,,`,
    );
    expect(lines.slice(2).map((l) => l.split(",")[0])).toEqual(["'+1", "'-2", "'\tx"]);
    const negative = summaryRowFromEntry(entry({ task_id: "n", score: { passed: false, value: -0.5, scorers: [] } }));
    expect(formatSummaryCsv([negative]).trimEnd().split("\n")[1]!.split(",").at(-2)).toBe("-0.5");
  });

  it("tells epochs apart and says what each row scored: epoch, passed, score, scorers", () => {
    const scored = (
      epoch: number,
      scorers: { name: string; passed: boolean | null; value: number | null }[],
      passed: boolean | null,
      value: number | null,
    ) => summaryRowFromEntry(entry({ task_id: "t", epoch, score: { passed, value, scorers } }));
    const rows = [
      scored(
        0,
        [
          { name: "verify", passed: true, value: 1 },
          { name: "expected", passed: true, value: 1 },
        ],
        true,
        1,
      ),
      scored(
        1,
        [
          { name: "rubric", passed: false, value: 0.25 },
          { name: "expected", passed: true, value: 1 },
        ],
        false,
        0.625,
      ),
      scored(2, [{ name: "rubric", passed: null, value: null }], null, null),
      summaryRowFromFailure({ task_id: "t", epoch: 3, outcome: "model_error", error: "503" } as Parameters<
        typeof summaryRowFromFailure
      >[0]),
    ];
    const lines = formatSummaryCsv(rows)
      .trimEnd()
      .split("\n")
      .map((l) => l.split(",").slice(-4).join(","));
    expect(lines).toEqual([
      "epoch,passed,score,scorers",
      "0,true,1,expected:pass;verify:pass",
      "1,false,0.625,expected:pass;rubric:fail",
      "2,,,rubric:unscored",
      "3,,,",
    ]);
  });

  it("writes every cell as csv-stringify with its defaults and escape_formulas does (the library it replaces)", () => {
    const pieces = ["", "a", ",", '"', "\n", "\r", "\r\n", " ", "é", "💥", ";", "'", "=1", "-2", "0", "null"];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const cell = (): string | number | boolean | null => {
      const kind = Math.floor(random() * 6);
      if (kind === 0) return null;
      if (kind === 1) return random() < 0.5;
      if (kind === 2) return [0, -0, 1.5, -3, 1e21, 1e-7, 123456789, Number.NaN][Math.floor(random() * 8)]!;
      return Array.from({ length: Math.floor(random() * 5) }, () => pieces[Math.floor(random() * pieces.length)]).join(
        "",
      );
    };
    const rows = Array.from(
      { length: 500 },
      () => Object.fromEntries(SUMMARY_COLUMNS.map((c) => [c, cell()])) as SummaryRow,
    );
    const library = stringify(rows, {
      columns: [...SUMMARY_COLUMNS],
      cast: { boolean: (v: boolean) => (v ? "true" : "false") },
      header: true,
      escape_formulas: true,
    });
    expect(formatSummaryCsv(rows)).toBe(library);
  });

  it("appends rows, writing the header once across reopenings and repairing a torn last row", () => {
    dir = mkdtempSync(join(tmpdir(), "summary-csv-"));
    const path = join(dir, "summary.csv");
    const w1 = new SummaryCsvWriter(path);
    w1.write(rowA);
    w1.close();
    appendFileSync(path, "torn,row,without"); // a crash mid-write
    const w2 = new SummaryCsvWriter(path);
    w2.write(rowB);
    w2.close();
    expect(readFileSync(path, "utf8")).toBe(formatSummaryCsv([rowA, rowB]));
  });

  it("writes the header into an empty existing file", () => {
    dir = mkdtempSync(join(tmpdir(), "summary-csv-"));
    const path = join(dir, "summary.csv");
    writeFileSync(path, "");
    new SummaryCsvWriter(path).close();
    expect(readFileSync(path, "utf8")).toBe(formatSummaryCsv([]));
    expect(readFileSync(path, "utf8").startsWith("task_id,")).toBe(true);
  });
});

describe("token totals", () => {
  it("count the tokens of dropped trajectories, and ignore counts that are negative or not numbers", () => {
    const stats = new RunStatistics({ run_name: "t" });
    stats.addDropped("no_reasoning", {
      usage: { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 },
      approval_usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    });
    stats.addFailure({
      task_id: "x",
      outcome: "model_error",
      error: "e",
      usage: { prompt_tokens: -5, completion_tokens: "7" as unknown as number },
    });
    const json = stats.toJSON();
    expect(json.token_usage.agent).toEqual({ prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 });
    expect(json.tokens).toEqual({ agent: 42, approver: 4, judge: 0, total: 46 });
  });
});

describe("the original's keys in statistics.json and checkpoint.json", () => {
  it("writes rates and durations as Python floats and counts batches of --batch-size", async () => {
    const { statisticsJsonText } = await import("../src/report/statistics.js");
    const stats = new RunStatistics({ run_name: "r", total_prompts: 25, batch_size: 10, started_at: new Date(0) });
    // A call without a result: listed, rates 0.0.
    stats.addEntry(entry({ task_id: "a", tool_stats: { terminal: { count: 1, success: 0, failure: 0 } } }));
    const json = stats.toJSON(new Date(2000));
    expect(json.total_batches).toBe(3);
    expect(json.batch_size).toBe(10);
    const text = statisticsJsonText(json);
    expect(text).toContain('"success_rate": 0.0,');
    expect(text).toContain('"failure_rate": 0.0\n');
    expect(text).toContain('"duration_seconds": 2.0,');
    expect(text).toContain('"total_batches": 3,'); // counts stay ints
    expect(
      statisticsJsonText({
        tool_statistics: { t: { success_rate: 66.67, failure_rate: 33.33 } },
        note: "success_rate",
      }),
    ).toBe(
      '{\n  "tool_statistics": {\n    "t": {\n      "success_rate": 66.67,\n      "failure_rate": 33.33\n    }\n  },\n  "note": "success_rate"\n}\n',
    );
    expect(JSON.parse(text)).toEqual(json); // still plain JSON for every reader
    expect(new RunStatistics({ run_name: "r" }).toJSON().total_batches).toBeNull();
  });

  it("HermesCheckpoint keeps completed_prompts sorted and batch_stats per batch of prompt indices", async () => {
    const { HermesCheckpoint } = await import("../src/store/checkpoint.js");
    const cp = new HermesCheckpoint(2, [3, 0]);
    cp.record(1, "trajectory");
    cp.record(5, "dropped", "no_reasoning");
    cp.record(4, "failed");
    cp.record(2, "dropped", "unknown_tools");
    expect(cp.toJSON()).toEqual({
      completed_prompts: [0, 1, 2, 3, 5],
      batch_stats: {
        "0": { processed: 1, skipped: 1, discarded_no_reasoning: 0 },
        "1": { processed: 1, skipped: 1, discarded_no_reasoning: 0 },
        "2": { processed: 2, skipped: 0, discarded_no_reasoning: 1 },
      },
    });
  });
});
