/** A trajectory line written from parts already serialised is the line JSON.stringify gives, byte for byte. */
import { describe, expect, it } from "vitest";
import type { OpenAITool } from "../src/core/chat.js";
import { hermesSystemPrompt } from "../src/formats/hermes.js";
import { conversationsJson, JsonText, recordJson, toolsJson } from "../src/formats/trajectory_line.js";

const TOOLS: readonly OpenAITool[] = Object.freeze([
  {
    type: "function",
    function: { name: "todo", description: 'A "list" \\ é\n', parameters: { type: "object", properties: {} } },
  },
]);

describe("trajectory line", () => {
  it("writes a record like JSON.stringify: raw parts as they are, undefined values left out, extras last", () => {
    const record = {
      a: 1,
      skipped: undefined,
      raw: new JsonText('{"x":[1,2]}'),
      s: 'q"\n',
      nested: { k: undefined, d: new Date(0) },
      fn: () => 1,
    };
    expect(recordJson(record)).toBe(JSON.stringify({ ...record, raw: { x: [1, 2] } }));
    expect(recordJson(record, { retryable: false, reason: undefined, dropped: "no_reasoning" })).toBe(
      JSON.stringify({ ...record, raw: { x: [1, 2] }, retryable: false, dropped: "no_reasoning" }),
    );
    expect(recordJson({})).toBe("{}");
    expect(recordJson({ u: undefined }, { v: undefined })).toBe("{}");
  });

  it("writes conversations and tool lists as JSON.stringify does, from the cache on the second time", () => {
    const system = hermesSystemPrompt(TOOLS);
    const turns = [
      { from: "system" as const, value: system },
      { from: "human" as const, value: "task\u2028 \ud800 é" },
      { from: "gpt" as const, value: "<think>\n</think>\nok" },
    ];
    expect(conversationsJson(turns)).toBe(JSON.stringify(turns));
    expect(conversationsJson(turns)).toBe(JSON.stringify(turns));
    const other = [{ from: "system" as const, value: `${system} ` }, ...turns.slice(1)];
    expect(conversationsJson(other)).toBe(JSON.stringify(other));
    expect(conversationsJson([])).toBe("[]");
    const odd = [{ from: "human", value: undefined }, ...turns] as unknown as typeof turns;
    expect(conversationsJson(odd)).toBe(JSON.stringify(odd));
    expect(toolsJson(TOOLS)).toBe(JSON.stringify(TOOLS));
    expect(toolsJson(TOOLS)).toBe(JSON.stringify(TOOLS));
    const open = [...TOOLS];
    expect(toolsJson(open)).toBe(JSON.stringify(open));
  });
});
