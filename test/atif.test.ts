/**
 * The ATIF-v1.7 schema refuses each rule of Harbor's reference validator broken on its own, and the converter
 * writes documents that pass it and give back the saved messages exactly (null contents, argument text that
 * is not canonical JSON, harness turns, lines of older runs without model_calls).
 */
import { describe, expect, it } from "vitest";
import { AtifTrajectorySchema, isIso8601, type AtifTrajectory } from "../src/formats/atif_schema.js";
import { atifDocument, messagesFromAtif, toAtif } from "../src/formats/atif.js";
import type { TrajectoryEntry } from "../src/core/records.js";
import { LENGTH_CONTINUATION_MESSAGE } from "../src/agent/loop.js";

const OPTS = { runName: "run-a", agentVersion: "9.9.9" };
const usage = (p: number, c: number) => ({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c });
const call = (i: number, message_index?: number) => ({
  started_at: `2026-01-01T00:00:0${i}.000Z`,
  ended_at: `2026-01-01T00:00:0${i}.500Z`,
  model: "served",
  finish_reason: message_index === undefined ? "stop" : "tool_calls",
  usage: usage(10 * (i + 1), 2),
  ...(message_index !== undefined ? { message_index } : {}),
});

/** A line of a run: system, user, a turn of two tool calls (one with spaced argument text), a cut answer, the continuation turn, the answer. */
function entry(over: Partial<TrajectoryEntry> = {}): TrajectoryEntry {
  return {
    prompt_index: 3,
    task_id: "t-1",
    conversations: [],
    messages: [
      { role: "system", content: "sys" },
      { role: "user", content: "do it" },
      {
        role: "assistant",
        content: null,
        reasoning: "think",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "terminal", arguments: '{"command": "ls"}' } },
          { id: "c2", type: "function", function: { name: "terminal", arguments: '{"command":"rm -rf /"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", name: "terminal", content: "a b" },
      { role: "tool", tool_call_id: "c2", name: "terminal", content: '{"error":"BLOCKED"}' },
      { role: "assistant", content: "half" },
      { role: "user", content: LENGTH_CONTINUATION_MESSAGE },
      { role: "assistant", content: "and the rest", reasoning: "r", reasoning_without_details: "" },
    ],
    tools: [{ type: "function", function: { name: "terminal", description: "run", parameters: { type: "object" } } }],
    metadata: { model: "cfg-model", timestamp: "2026-01-01T00:00:10.000Z" },
    completed: true,
    partial: false,
    outcome: "completed",
    api_calls: 4,
    toolsets_used: ["terminal"],
    tool_stats: {},
    tool_error_counts: {},
    usage: { ...usage(100, 8), prompt_tokens_details: { cached_tokens: 40 } },
    approvals: [
      {
        command: "rm -rf /",
        pattern: "rm_recursive",
        decision: "deny",
        by: "policy",
        reason: "deny",
        latency_ms: 1,
        tool_call_id: "c2",
      },
      { command: "old", pattern: "p", decision: "approve", by: "allowlist", reason: "x", latency_ms: 0 },
    ],
    model_calls: [
      call(0, 2),
      call(1),
      call(2, 5),
      { ...call(3, 7), usage: { ...usage(40, 2), prompt_tokens_details: { cached_tokens: 40 } }, cost_usd: 0.5 },
    ],
    injected_messages: [6],
    final_response: "halfand the rest",
    duration_ms: 10_000,
    cost_usd: 1.25,
    ...over,
  };
}

describe("the converter", () => {
  it("writes a valid document whose steps give back the saved messages and harness turns", () => {
    const e = entry();
    const doc = atifDocument(e, OPTS);
    expect(AtifTrajectorySchema.safeParse(doc).success).toBe(true);
    expect(messagesFromAtif(doc)).toEqual(e.messages);
    expect(doc.steps.map((s) => s.source)).toEqual(["system", "user", "agent", "agent", "user", "agent"]);
    expect(doc.steps.flatMap((s, i) => (s.extra?.harness_injected ? [i] : []))).toEqual([4]);
    expect(doc.session_id).toBe("run-a");
    expect(doc.agent).toMatchObject({ name: "hermes-batch", version: "9.9.9", model_name: "cfg-model" });
  });

  it("puts each call's times, model, tokens and cost on its step and the discarded call only in the totals", () => {
    const doc = toAtif(entry(), OPTS);
    const [first, cut, last] = doc.steps.filter((s) => s.source === "agent");
    expect(first).toMatchObject({
      timestamp: "2026-01-01T00:00:00.000Z",
      model_name: "served",
      llm_call_count: 1,
      metrics: { prompt_tokens: 10, completion_tokens: 2 },
    });
    expect(cut!.metrics?.prompt_tokens).toBe(30);
    expect(last!.metrics).toMatchObject({ prompt_tokens: 40, cached_tokens: 40, cost_usd: 0.5 });
    expect(doc.final_metrics).toMatchObject({
      total_prompt_tokens: 100,
      total_completion_tokens: 8,
      total_cached_tokens: 40,
      total_cost_usd: 1.25,
      total_steps: 6,
    });
    expect(doc.final_metrics?.extra).toMatchObject({ discarded_model_calls: 1 });
    expect(doc.notes).toMatch(/1 model call/);
    // The task's start (end time less duration) for the system and user steps; the continuation turn when the cut answer came.
    expect(doc.steps[0]!.timestamp).toBe("2026-01-01T00:00:00.000Z");
    expect(doc.steps[4]!.timestamp).toBe("2026-01-01T00:00:02.500Z");
  });

  it("keeps argument text that is not canonical JSON, and puts approvals on their tool call", () => {
    const doc = toAtif(entry(), OPTS);
    const [c1, c2] = doc.steps[2]!.tool_calls!;
    expect(c1).toEqual({
      tool_call_id: "c1",
      function_name: "terminal",
      arguments: { command: "ls" },
      extra: { arguments_text: '{"command": "ls"}' },
    });
    expect(c2!.extra).toEqual({ approvals: [expect.objectContaining({ decision: "deny", tool_call_id: "c2" })] });
    expect(doc.extra?.approvals).toEqual([expect.objectContaining({ command: "old" })]);
    expect(doc.steps[2]!.observation!.results.map((r) => r.source_call_id)).toEqual(["c1", "c2"]);
  });

  it("converts a line of an older run (no model_calls, no injected_messages, no tool names)", () => {
    const messages = entry().messages.map((m) =>
      m.role === "tool" ? { role: "tool" as const, tool_call_id: m.tool_call_id, content: m.content } : m,
    );
    const old = entry({ model_calls: undefined, injected_messages: undefined, messages, approvals: [] });
    const doc = atifDocument(old, OPTS);
    expect(doc.steps.every((s) => s.metrics === undefined)).toBe(true);
    expect(messagesFromAtif(doc)).toEqual(messages);
  });

  it("refuses a line whose recorded calls are not readable, naming the task", () => {
    const bad = entry({ model_calls: [{ started_at: "x" } as never] });
    expect(() => atifDocument(bad, OPTS)).toThrow(
      /^task t-1: the trajectory line cannot be converted to ATIF: model_calls\.0\./,
    );
  });

  it("refuses a line that gives no valid document, naming the task", () => {
    expect(() => atifDocument(entry({ messages: [], epoch: 2 }), OPTS)).toThrow(
      /^task t-1 epoch 2: not a valid ATIF-v1\.7 document: steps: /,
    );
  });
});

/** A small valid document to break one rule at a time. */
function valid(): AtifTrajectory {
  return {
    schema_version: "ATIF-v1.7",
    session_id: "s",
    agent: { name: "a", version: "1" },
    steps: [
      { step_id: 1, source: "system", message: "sys", timestamp: "2026-01-01T00:00:00Z" },
      { step_id: 2, source: "user", message: "hi" },
      {
        step_id: 3,
        source: "agent",
        message: "",
        tool_calls: [{ tool_call_id: "x", function_name: "f", arguments: {} }],
        observation: { results: [{ source_call_id: "x", content: "ok" }] },
        metrics: { prompt_tokens: 1, completion_tokens: 1 },
      },
    ],
    final_metrics: { total_steps: 3 },
  };
}

type Breaker = [string, (d: any) => void, RegExp];
const BROKEN: Breaker[] = [
  ["an unknown root key", (d) => (d.task_id = "t"), /Unrecognized key: "task_id"/],
  ["an unknown step key", (d) => (d.steps[1].role = "user"), /Unrecognized key: "role"/],
  ["an unknown tool-call key", (d) => (d.steps[2].tool_calls[0].id = "x"), /Unrecognized key: "id"/],
  ["an unknown metrics key", (d) => (d.steps[2].metrics.total_tokens = 2), /Unrecognized key: "total_tokens"/],
  ["an unknown final_metrics key", (d) => (d.final_metrics.tokens = 2), /Unrecognized key: "tokens"/],
  [
    "step ids not from 1",
    (d) => d.steps.forEach((s: any) => (s.step_id += 1)),
    /expected 1 \(sequential from 1\), got 2/,
  ],
  ["a gap in the step ids", (d) => (d.steps[2].step_id = 4), /expected 3 \(sequential from 1\), got 4/],
  [
    "a source_call_id of no call of its step",
    (d) => (d.steps[2].observation.results[0].source_call_id = "y"),
    /'y' names no tool call of step 3/,
  ],
  [
    "a source_call_id of another step's call",
    (d) => (d.steps[1].observation = { results: [{ source_call_id: "x" }] }),
    /'x' names no tool call of step 2/,
  ],
  ["tool_calls on a user step", (d) => (d.steps[1].tool_calls = []), /only agent steps may have 'tool_calls'/],
  ["metrics on a system step", (d) => (d.steps[0].metrics = {}), /only agent steps may have 'metrics'/],
  ["model_name on a user step", (d) => (d.steps[1].model_name = "m"), /only agent steps may have 'model_name'/],
  [
    "reasoning_content on a user step",
    (d) => (d.steps[1].reasoning_content = "r"),
    /only agent steps may have 'reasoning_content'/,
  ],
  [
    "metrics with llm_call_count 0",
    (d) => (d.steps[2].llm_call_count = 0),
    /'metrics' must be absent when llm_call_count is 0/,
  ],
  ["a timestamp that is not ISO 8601", (d) => (d.steps[0].timestamp = "01/02/2026 10:00"), /not an ISO 8601 timestamp/],
  ["an impossible date", (d) => (d.steps[0].timestamp = "2026-02-30T00:00:00Z"), /not an ISO 8601 timestamp/],
  ["a missing agent version", (d) => delete d.agent.version, /agent\.version/],
  ["no steps", (d) => (d.steps = []), /steps/],
  ["another schema version", (d) => (d.schema_version = "ATIF-v2.0"), /schema_version/],
  ["tool arguments that are not an object", (d) => (d.steps[2].tool_calls[0].arguments = "{}"), /arguments/],
  [
    "a subagent ref with only a session_id",
    (d) => (d.steps[2].observation.results[0].subagent_trajectory_ref = [{ session_id: "s" }]),
    /trajectory_id or trajectory_path/,
  ],
  [
    "an embedded subagent without trajectory_id",
    (d) => (d.subagent_trajectories = [valid()]),
    /required for an embedded subagent/,
  ],
  ["a text content part without text", (d) => (d.steps[1].message = [{ type: "text" }]), /'text' is required/],
];

describe("the ATIF-v1.7 schema", () => {
  it("accepts the valid document", () => {
    const r = AtifTrajectorySchema.safeParse(valid());
    expect(r.success, JSON.stringify(r.error?.issues)).toBe(true);
  });

  it.each(BROKEN)("refuses %s", (_what, breakIt, message) => {
    const doc = valid();
    breakIt(doc);
    const r = AtifTrajectorySchema.safeParse(doc);
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n")).toMatch(message);
  });

  it("accepts unique embedded subagents and nulls where the reference allows None", () => {
    const doc: any = valid();
    doc.subagent_trajectories = [
      { ...valid(), trajectory_id: "a" },
      { ...valid(), trajectory_id: "b" },
    ];
    doc.notes = null;
    doc.steps[1].extra = null;
    expect(AtifTrajectorySchema.safeParse(doc).success).toBe(true);
    doc.subagent_trajectories[1].trajectory_id = "a";
    expect(AtifTrajectorySchema.safeParse(doc).error?.issues[0]?.message).toMatch(/'a' is not unique/);
  });

  it("reads ISO 8601 as Python's fromisoformat does", () => {
    for (const ok of [
      "2026-01-01",
      "2026-01-01T10",
      "2026-01-01T10:00",
      "2026-01-01T10:00:00Z",
      "2026-01-01 10:00:00.123456+02:00",
      "2024-02-29T23:59:59-0500",
    ])
      expect(isIso8601(ok), ok).toBe(true);
    for (const bad of [
      "2026-1-1",
      "2026-13-01",
      "2025-02-29",
      "2026-01-01T24:00",
      "2026-01-01T10:60",
      "yesterday",
      "2026-01-01T10:00:00 UTC",
    ])
      expect(isIso8601(bad), bad).toBe(false);
  });
});
