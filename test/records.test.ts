/** The output record schemas (src/core/records.ts) and the JSON Schemas generated from them into docs/schemas/. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recordJsonSchemaFiles } from "../src/core/record_json_schemas.js";
import { DroppedRecordSchema, FailureRecordSchema, OUTCOMES, TrajectoryEntrySchema } from "../src/core/records.js";
import { expectExactRecord } from "./helpers/records.js";

const SCHEMA_DIR = join(import.meta.dirname, "..", "docs", "schemas");

const entry = {
  prompt_index: 0,
  task_id: "t1",
  conversations: [
    { from: "human", value: "hi" },
    { from: "gpt", value: "hello" },
  ],
  messages: [
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "c1", name: "terminal", content: "{}" },
    { role: "assistant", content: "hello", reasoning: "think" },
  ],
  tools: [{ type: "function", function: { name: "terminal", description: "run", parameters: { type: "object" } } }],
  metadata: { model: "m" },
  completed: true,
  partial: false,
  outcome: "completed",
  api_calls: 2,
  toolsets_used: ["terminal"],
  tool_stats: { terminal: { count: 1, success: 1, failure: 0 } },
  tool_error_counts: {},
  usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  approvals: [{ command: "rm -rf x", pattern: "rm", decision: "deny", by: "smart", reason: "no", latency_ms: 3 }],
  final_response: "hello",
  duration_ms: 12,
};

describe("output records", () => {
  it("docs/schemas/ holds exactly what `npm run schemas` generates (stale files fail here)", () => {
    const expected = recordJsonSchemaFiles();
    expect(readdirSync(SCHEMA_DIR).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, text] of Object.entries(expected))
      expect(readFileSync(join(SCHEMA_DIR, name), "utf8"), `${name} is stale: run npm run schemas`).toBe(text);
  });

  it("the outcome list is the JSON Schema's enum, internal_error included", () => {
    const outcome = JSON.parse(readFileSync(join(SCHEMA_DIR, "outcome.schema.json"), "utf8"));
    expect(outcome.enum).toEqual([...OUTCOMES]);
    expect(OUTCOMES).toContain("internal_error");
  });

  it("accepts a trajectory line and refuses a renamed or missing field", () => {
    expectExactRecord(TrajectoryEntrySchema, entry);
    const { final_response: _, ...missing } = entry;
    expect(TrajectoryEntrySchema.safeParse(missing).success).toBe(false);
    expect(() => expectExactRecord(TrajectoryEntrySchema, { ...entry, finalResponse: "x" })).toThrow(
      /keys its schema does not know/,
    );
  });

  it("a failure record has a failure outcome; a worker-crash record needs no trajectory fields", () => {
    const failed = { ...entry, outcome: "model_error", completed: false, error: "400 bad" };
    expectExactRecord(FailureRecordSchema, failed);
    expect(FailureRecordSchema.safeParse({ ...failed, outcome: "completed" }).success).toBe(false);
    expectExactRecord(FailureRecordSchema, {
      prompt_index: 3,
      task_id: "boom",
      outcome: "environment_error",
      completed: false,
      partial: false,
      error: "worker crashed: x",
      toolsets_used: [],
      metadata: { attempt: 1 },
    });
  });

  it("a dropped record is a trajectory with its reason", () => {
    expectExactRecord(DroppedRecordSchema, { ...entry, dropped: "no_reasoning" });
    expect(DroppedRecordSchema.safeParse({ ...entry, dropped: "other" }).success).toBe(false);
  });
});
