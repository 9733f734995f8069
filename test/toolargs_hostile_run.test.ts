/**
 * A hostile model end to end: `hermes-batch run --env local` (the bubblewrap sandbox) with a scripted model server
 * that sends hostile tool calls, one per turn. Every call gets an answer, the loop goes on to the next turn and the
 * task ends with the model's final answer, and the trajectory's tool_stats count each failure as one.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI, type ToolCallSpec } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { isToolResultFailure } from "../src/report/tool_stats.js";

const HOSTILE: ToolCallSpec[] = [
  { name: "terminal", arguments: { command: "mkfifo fifo; echo made" } },
  // An error that echoes a 300,000-character path: longer than the loop's cut of a result.
  { name: "read_file", arguments: { path: "p".repeat(300_000) } },
  // 20,000 bad items: the validation error named each of them.
  { name: "todo", arguments: { todos: Array.from({ length: 20_000 }, (_, i) => i) } },
  { name: "terminal", arguments: "[1, 2]" },
  { name: "memory", arguments: "42" },
  { name: "write_file", arguments: { path: "fifo", content: "x" } },
  { name: "write_file", arguments: { path: "a\u0000b", content: "x" } },
  { name: "process", arguments: { action: "kill", session_id: "proc_of_another_task" } },
  { name: "terminal", arguments: { command: "echo still-here", timeout: -5 } },
];

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI(scriptedPerTask(() => HOSTILE));
});

afterAll(async () => {
  await server?.close();
});

describe("hostile tool calls through hermes-batch run", () => {
  it("each is answered, the task goes on to its answer, tool_stats count the failures", {
    timeout: 200_000,
  }, async () => {
    const dir = tempDir("hb-toolargs-run-");
    mkdirSync(join(dir, "runs"));
    writeFileSync(
      join(dir, "d.jsonl"),
      `${JSON.stringify({ id: "hostile", prompt: "task:hostile", toolsets: ["terminal", "file", "todo", "memory"] })}\n`,
    );
    const r = await runCli(
      [
        "run",
        join(dir, "d.jsonl"),
        "--model",
        "agent",
        "--base-url",
        server.baseURL,
        "--api-key",
        "k",
        "--approval",
        "allow",
        "--env",
        "local",
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        "h",
        "--progress",
        "none",
        "--max-turns",
        "20",
      ],
      { timeoutMs: 180_000 },
    );
    expect(r.stderr).not.toMatch(/internal error/);
    const [line] = readJsonl(join(dir, "runs", "h", "trajectories.jsonl"));
    expect(line).toBeDefined();
    expect(line.completed).toBe(true);
    const tools = line.messages.filter((m: any) => m.role === "tool");
    expect(tools).toHaveLength(HOSTILE.length);
    const failed = tools.map((m: any) => isToolResultFailure(m.content));
    // Only the first (mkfifo) and the last (echo) succeed; every other result is a failure that still parses.
    expect(failed).toEqual([false, true, true, true, true, true, true, true, false]);
    for (const m of tools) expect(m.content.length).toBeLessThan(100_000);
    expect(JSON.parse(tools[8].content).output).toBe("still-here");
    expect(line.tool_stats.read_file).toEqual({ count: 1, success: 0, failure: 1 });
    expect(line.tool_stats.todo).toEqual({ count: 1, success: 0, failure: 1 });
    expect(line.tool_stats.write_file).toEqual({ count: 2, success: 0, failure: 2 });
    expect(line.tool_stats.terminal).toEqual({ count: 3, success: 2, failure: 1 });
    expect(line.tool_error_counts.read_file).toBe(1);
  });
});
