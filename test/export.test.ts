import { spawn, spawnSync } from "node:child_process";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenAITool } from "../tools/registry.js";
import type { ChatMessage } from "../src/core/chat.js";
import type { TrajectoryEntry } from "../src/core/records.js";
import { toHermesConversations } from "../src/formats/hermes.js";

const ROOT = resolve(import.meta.dirname, "..");
const CLI = join(ROOT, "src/cli.ts");

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ["--import", "tsx", CLI, ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const TOOLS: OpenAITool[] = [
  { type: "function", function: { name: "terminal", description: "Run a command", parameters: { type: "object", properties: { command: { type: "string" } } } } },
];

function messages(reasoning: string | undefined, answer: string): ChatMessage[] {
  return [
    { role: "user", content: `prompt for ${answer}` },
    {
      role: "assistant",
      content: null,
      reasoning,
      tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: '{"command": "echo hi"}' } }],
    },
    { role: "tool", tool_call_id: "c1", name: "terminal", content: '{"output": "hi\\n", "exit_code": 0, "error": null}' },
    { role: "assistant", content: answer },
  ];
}

function entry(i: number, over: Partial<TrajectoryEntry>, reasoning?: string): TrajectoryEntry {
  const msgs = messages(reasoning, `answer ${i}`);
  return {
    prompt_index: i,
    task_id: `task-${i}`,
    conversations: toHermesConversations(msgs, TOOLS),
    messages: msgs,
    tools: TOOLS,
    metadata: { model: "scripted", seed: 7 },
    completed: true,
    partial: false,
    outcome: "completed",
    api_calls: 2,
    toolsets_used: ["terminal"],
    tool_stats: { terminal: { count: 1, success: 1, failure: 0 } },
    tool_error_counts: { terminal: 0 },
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    approvals: [],
    final_response: `answer ${i}`,
    duration_ms: 100,
    ...over,
  };
}

let dir = "";
let trajectories = "";
const E0 = entry(0, { verify: { command: "true", exit_code: 0, passed: true, output: "", timed_out: false } }, "I will echo.");
const E1 = entry(1, { completed: false, outcome: "max_turns" }, "thinking");
const E2 = entry(2, { conversations: [] }); // no reasoning, conversations rebuilt from messages

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "export-test-"));
  trajectories = join(dir, "trajectories.jsonl");
  const lines = [
    JSON.stringify(E0),
    JSON.stringify(E1),
    "{this is not json",
    "",
    JSON.stringify({ task_id: "bad-role", messages: [{ role: "robot", content: "x" }] }),
    JSON.stringify(E2),
    '{"task_id": "torn", "conv', // a torn last line, no newline
  ];
  writeFileSync(trajectories, lines.join("\n"));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function readJsonl(path: string): any[] {
  return readFileSync(path, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
}

describe("hermes-batch export", () => {
  it("exports sharegpt beside the input by default, reporting bad lines with file:line", () => {
    const r = cli(["export", dir, "--format", "sharegpt"]);
    expect(r.stderr).toContain(`${trajectories}:3: skipped bad line`);
    expect(r.stderr).toMatch(new RegExp(`${trajectories.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:5: skipped bad line: .*messages\\.0\\.role`));
    expect(r.stderr).toContain(`${trajectories}:7: skipped bad line`);
    expect(r.stderr).toContain("exported 3 of 3 trajectories");
    expect(r.stderr).toContain("3 bad lines skipped");
    expect(r.code).toBe(0);
    const out = join(dir, "export.sharegpt.jsonl");
    const rows = readJsonl(out);
    expect(rows).toEqual([
      { conversations: E0.conversations },
      { conversations: E1.conversations },
      { conversations: toHermesConversations(E2.messages, TOOLS) },
    ]);
    expect(rows[0].conversations[2].value).toBe(
      '<think>\nI will echo.\n</think>\n<tool_call>\n{"name": "terminal", "arguments": {"command": "echo hi"}}\n</tool_call>',
    );
    expect(rows[2].conversations[2].value.startsWith("<think>\n</think>\n<tool_call>")).toBe(true);
    // no temp files left behind
    expect(readdirSync(dir).filter((f) => f.includes(".tmp"))).toEqual([]);
  });

  it("exports openai fine-tuning records with filters", () => {
    const out = join(dir, "ft.jsonl");
    const r = cli(["export", trajectories, "--format", "openai", "--only-completed", "--require-reasoning", "--out", out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("exported 1 of 3 trajectories");
    expect(r.stderr).toContain("filtered: 1 not completed, 1 without reasoning");
    const rows = readJsonl(out);
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0])).toEqual(["messages", "tools"]);
    expect(rows[0].tools).toEqual(TOOLS);
    expect(rows[0].messages).toEqual([
      { role: "user", content: "prompt for answer 0" },
      { role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: '{"command": "echo hi"}' } }] },
      { role: "tool", tool_call_id: "c1", content: '{"output": "hi\\n", "exit_code": 0, "error": null}' },
      { role: "assistant", content: "answer 0" },
    ]);
  });

  it("exports Hermes batch entries to stdout, keeping only passing verifies", () => {
    const r = cli(["export", trajectories, "--format", "hermes", "--min-verify-pass", "--out", "-"]);
    expect(r.code).toBe(0);
    const rows = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(rows).toHaveLength(1);
    const { tool_stats, tool_error_counts, ...rest } = rows[0];
    expect(rest).toEqual({
      prompt_index: 0,
      conversations: E0.conversations,
      metadata: { batch_num: 0, timestamp: "", model: "scripted" },
      completed: true,
      partial: false,
      api_calls: 2,
      toolsets_used: ["terminal"],
    });
    expect(Object.keys(rows[0])).toEqual(["prompt_index", "conversations", "metadata", "completed", "partial", "api_calls", "toolsets_used", "tool_stats", "tool_error_counts"]);
    expect(tool_stats.terminal).toEqual({ count: 1, success: 1, failure: 0 });
    expect(tool_stats.browser_cdp).toEqual({ count: 0, success: 0, failure: 0 });
    expect(Object.keys(tool_error_counts)).toEqual(Object.keys(tool_stats));
    expect(r.stderr).toContain("filtered: 2 without a passing verify");
    const withMeta = cli(["export", trajectories, "--format", "hermes", "--metadata", "--out", "-"]);
    expect(withMeta.code).toBe(2);
    expect(withMeta.stderr).toMatch(/--metadata: the hermes format has the original's metadata \{batch_num, timestamp, model\}/);
  });

  it("rejects bad input with exit code 2", () => {
    const missing = cli(["export", join(dir, "nope"), "--format", "openai"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no such file or folder");
    const badFormat = cli(["export", dir, "--format", "csv"]);
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain("unknown export format 'csv'. Formats: sharegpt, hermes, openai");
    const emptyDir = mkdtempSync(join(dir, "empty-"));
    const noFile = cli(["export", emptyDir]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain("no trajectories.jsonl");
    expect(existsSync(join(emptyDir, "export.sharegpt.jsonl"))).toBe(false);
    const allBad = join(dir, "all-bad.jsonl");
    writeFileSync(allBad, "nope\n[1]\n");
    const r = cli(["export", allBad, "--out", join(dir, "all-bad.out.jsonl")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${allBad}:2: skipped bad line`);
    expect(r.stderr).toContain("exported 0 of 0 trajectories");
  });

  it("streams: output appears before the input has ended (reads a FIFO)", async () => {
    const fifo = join(dir, "live.jsonl");
    execFileSync("mkfifo", [fifo]);
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "export", fifo, "--format", "sharegpt", "--out", "-"], { cwd: ROOT });
    let stdout = "";
    const firstLine = new Promise<void>((res) =>
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes("\n")) res();
      }),
    );
    const done = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
    const writer = createWriteStream(fifo);
    writer.write(JSON.stringify(E0) + "\n");
    await firstLine; // the export emitted a record while the writer still holds the FIFO open
    expect(JSON.parse(stdout.split("\n")[0]!)).toEqual({ conversations: E0.conversations });
    writer.end(JSON.stringify(E1) + "\n");
    expect(await done).toBe(0);
    expect(stdout.trimEnd().split("\n")).toHaveLength(2);
  }, 60_000);
});
