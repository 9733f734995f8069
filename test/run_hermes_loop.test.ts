/**
 * The agent loop's Hermes rules end to end: the built CLI against the local OpenAI-compatible server, with
 * real tools in a local task folder.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  completion,
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { expectExactRecord } from "./helpers/records.js";
import { readJsonl } from "./helpers/jsonl.js";
import { DroppedRecordSchema, TrajectoryEntrySchema } from "../src/core/records.js";
import { LENGTH_CONTINUATION_MESSAGE, MAX_TURNS_MESSAGE } from "../src/agent/loop.js";

type Script = Record<string, (turn: number, req: RecordedRequest) => Reply>;

describe("the Hermes agent loop through the CLI", () => {
  let server: FakeOpenAI;
  const script: Script = {
    "write then read": (turn) =>
      turn === 0
        ? toolCalls([
            { name: "terminal", arguments: { command: "sleep 0.3; echo late > r.txt" } },
            { name: "read_file", arguments: { path: "r.txt" } },
          ])
        : text("read it"),
    "never answers": () => completion({ content: "   " }),
    "keeps working": (turn) =>
      turn < 2
        ? toolCalls([{ name: "terminal", arguments: { command: `echo step${turn}` } }])
        : completion({ content: null }),
    "think aloud": (turn) =>
      turn === 0
        ? completion({
            content: null,
            reasoning: "\nPlan: list.\n",
            reasoningField: "reasoning",
            toolCalls: [{ name: "terminal", arguments: { command: "echo hi" } }],
          })
        : turn === 1
          ? completion({ content: "Half", finishReason: "length" })
          : text("way."),
    "thoughts only": (turn) =>
      turn === 0
        ? completion({ content: null, reasoning: "Thinking it over.", reasoningField: "reasoning" })
        : text("Answer."),
  };

  beforeAll(async () => {
    server = await startFakeOpenAI((req) => {
      const messages: { role: string; content: string }[] = req.body?.messages ?? [];
      const prompt = messages.find((m) => m.role === "user")?.content ?? "";
      const summary = messages.at(-1)?.content === MAX_TURNS_MESSAGE;
      if (summary) return req.body.tools ? text("tools were sent") : text("Summary: two steps done.");
      const key = Object.keys(script).find((k) => prompt.includes(k))!;
      return script[key]!(messages.filter((m) => m.role === "assistant").length, req);
    });
  });
  afterAll(() => server.close());

  async function run(rows: unknown[], extra: string[] = []) {
    const dir = tempDir();
    const dataset = join(dir, "data.jsonl");
    writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    // In process: these tests are about the loop and its records, not the process.
    const result = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "test-model",
      "--base-url",
      server.baseURL,
      "--api-key",
      "sk-test",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "t",
      "--toolsets",
      "terminal,file",
      "--approval",
      "deny",
      "--progress",
      "none",
      ...extra,
    ]);
    return { result, runDir: join(dir, "runs", "t") };
  }

  it("a write then a read in one turn run in order: the read sees the file", async () => {
    const { result, runDir } = await run([{ id: "wr", prompt: "write then read" }]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [entry] = readJsonl(join(runDir, "trajectories.jsonl"));
    expectExactRecord(TrajectoryEntrySchema, entry, "trajectory");
    const tools = entry.messages.filter((m: any) => m.role === "tool");
    expect(tools.map((m: any) => m.name)).toEqual(["terminal", "read_file"]);
    expect(tools[1].content).toContain("late");
    expect(tools[1].content).not.toMatch(/not found/i);
  });

  it("an answer that stays empty is dropped with its reason and counted, never saved as completed", async () => {
    const { result, runDir } = await run([{ id: "e", prompt: "never answers" }]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readJsonl(join(runDir, "trajectories.jsonl"))).toHaveLength(0);
    const [dropped] = readJsonl(join(runDir, "dropped.jsonl"));
    expectExactRecord(DroppedRecordSchema, dropped, "dropped record");
    expect(dropped).toMatchObject({ dropped: "empty_response", completed: false, api_calls: 4 });
    expect(server.requests.filter((r) => JSON.stringify(r.body.messages).includes("never answers"))).toHaveLength(4);
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.filtered.dropped_empty_response).toBe(1);
    expect(stats.tasks.dropped).toBe(1);
  });

  it("at max turns: the closing human turn, one call without tools, completed false", async () => {
    const { result, runDir } = await run([{ id: "m", prompt: "keeps working" }], ["--max-turns", "2"]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [entry] = readJsonl(join(runDir, "trajectories.jsonl"));
    expect(entry).toMatchObject({
      completed: false,
      partial: false,
      outcome: "max_turns",
      api_calls: 2,
      final_response: "Summary: two steps done.",
    });
    expect(entry.conversations.slice(-2)).toEqual([
      { from: "human", value: MAX_TURNS_MESSAGE },
      { from: "gpt", value: "<think>\n</think>\nSummary: two steps done." },
    ]);
  });

  it("reasoning kept as received, a cut answer continued, and --preserve-reasoning sends reasoning back", async () => {
    const { result, runDir } = await run([{ id: "r", prompt: "think aloud" }], ["--preserve-reasoning"]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [entry] = readJsonl(join(runDir, "trajectories.jsonl"));
    expect(entry.completed).toBe(true);
    expect(entry.final_response).toBe("Halfway.");
    expect(entry.conversations[2].value).toMatch(/^<think>\n\nPlan: list.\n\n<\/think>\n<tool_call>/);
    expect(entry.conversations.filter((c: any) => c.from === "human").map((c: any) => c.value)).toEqual([
      "think aloud",
      LENGTH_CONTINUATION_MESSAGE,
    ]);
    const later = server.requests.filter((r) => JSON.stringify(r.body.messages).includes("think aloud")).slice(1);
    expect(later.length).toBeGreaterThan(0);
    for (const r of later)
      expect(r.body.messages.find((m: any) => m.role === "assistant").reasoning_content).toBe("\nPlan: list.\n");

    const plain = await run([{ id: "r2", prompt: "think aloud again" }]);
    expect(plain.result.exitCode).toBe(0);
    const plainLater = server.requests
      .filter((r) => JSON.stringify(r.body.messages).includes("think aloud again"))
      .slice(1);
    for (const r of plainLater) expect(JSON.stringify(r.body.messages)).not.toContain("reasoning_content");
  });

  it("with --preserve-reasoning an answer of reasoning alone is sent back and continued; the saved conversation has only the real answer", async () => {
    const { result, runDir } = await run([{ id: "t", prompt: "thoughts only" }], ["--preserve-reasoning"]);
    expect(result.exitCode, result.stderr).toBe(0);
    const [entry] = readJsonl(join(runDir, "trajectories.jsonl"));
    expectExactRecord(TrajectoryEntrySchema, entry, "trajectory");
    expect(entry).toMatchObject({ completed: true, partial: false, api_calls: 2, final_response: "Answer." });
    expect(entry.conversations.map((c: any) => c.from)).toEqual(["system", "human", "gpt"]);
    expect(entry.conversations[2].value).toBe("<think>\n</think>\nAnswer.");
    const reqs = server.requests.filter((r) => r.body.messages.some((m: any) => m.content === "thoughts only"));
    expect(reqs).toHaveLength(2);
    expect(reqs[1]!.body.messages.at(-1)).toEqual({
      role: "assistant",
      content: "",
      reasoning_content: "Thinking it over.",
    });

    // Without reasoning sent back there is nothing to continue: the same request again, then dropped as empty.
    const plain = await run([{ id: "t2", prompt: "thoughts only, plain" }]);
    expect(plain.result.exitCode, plain.result.stderr).toBe(0);
    const [dropped] = readJsonl(join(plain.runDir, "dropped.jsonl"));
    expect(dropped).toMatchObject({ dropped: "empty_response", api_calls: 4 });
    const plainReqs = server.requests.filter((r) =>
      r.body.messages.some((m: any) => m.content === "thoughts only, plain"),
    );
    expect(plainReqs).toHaveLength(4);
    for (const r of plainReqs) expect(r.body.messages.map((m: any) => m.role)).toEqual(["system", "user"]);
  });
});
