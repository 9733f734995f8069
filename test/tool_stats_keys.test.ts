/**
 * tool_stats / tool_error_counts: every known tool with zeros plus the other names called, in one sorted key
 * order, whether the known names come as statsToolNames' cached list or as any other iterable.
 */
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../src/core/chat.js";
import { HERMES_TOOL_NAMES } from "../src/core/hermes_tool_names.js";
import { extractToolStats, statsToolNames } from "../src/report/tool_stats.js";

const call = (id: string, name: string) => ({ id, type: "function" as const, function: { name, arguments: "{}" } });
const MESSAGES: ChatMessage[] = [
  { role: "user", content: "go" },
  {
    role: "assistant",
    content: null,
    tool_calls: [call("1", "aaa_plugin"), call("2", "terminal"), call("3", "zzz_plugin"), call("4", "m_plugin")],
  },
  { role: "tool", tool_call_id: "1", content: '{"ok": true}' },
  { role: "tool", tool_call_id: "2", content: '{"error": "boom"}' },
  { role: "tool", tool_call_id: "3", content: "error: nope" },
  { role: "assistant", content: "done" },
];

describe("tool stats keys", () => {
  it("lists the known tools and the other names called in one sorted order", () => {
    const known = statsToolNames(["terminal", "todo"]);
    const { tool_stats, tool_error_counts } = extractToolStats(MESSAGES, known);
    const keys = Object.keys(tool_stats);
    expect(keys).toEqual([...new Set([...HERMES_TOOL_NAMES, "todo", "aaa_plugin", "zzz_plugin", "m_plugin"])].sort());
    expect(Object.keys(tool_error_counts)).toEqual(keys);
    expect(tool_stats.aaa_plugin).toEqual({ count: 1, success: 1, failure: 0 });
    expect(tool_stats.terminal).toEqual({ count: 1, success: 0, failure: 1 });
    expect(tool_stats.zzz_plugin).toEqual({ count: 1, success: 0, failure: 1 });
    expect(tool_stats.m_plugin).toEqual({ count: 1, success: 0, failure: 0 });
    expect(tool_stats.todo).toEqual({ count: 0, success: 0, failure: 0 });
    expect(tool_error_counts.terminal).toBe(1);
  });

  it("gives the same JSON for the cached key list and for an unsorted iterable with duplicates", () => {
    const names = ["todo", "terminal", "todo", "read_file"];
    const cached = extractToolStats(MESSAGES, statsToolNames(names));
    const plain = extractToolStats(MESSAGES, new Set([...HERMES_TOOL_NAMES, ...names].reverse()));
    expect(JSON.stringify(cached)).toBe(JSON.stringify(plain));
  });

  it("keeps one key list while the registered names stay the same, and a new one when they change", () => {
    const a = statsToolNames(["todo", "terminal"]);
    expect(statsToolNames(["todo", "terminal"])).toBe(a);
    const b = statsToolNames(["todo", "terminal", "mcp_x_y"]);
    expect(b).not.toBe(a);
    expect(b).toContain("mcp_x_y");
  });
});
