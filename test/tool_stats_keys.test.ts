/**
 * tool_stats / tool_error_counts: every known tool with zeros plus the other names called, in one sorted key
 * order, whether the known names come as statsToolNames' cached list or as any other iterable.
 */
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../src/core/chat.js";
import { HERMES_TOOL_NAMES } from "../src/core/hermes_tool_names.js";
import { countToolCalls, extractToolStats, statsToolNames, toolStatsJson } from "../src/report/tool_stats.js";
import { ToolRegistry } from "../tools/registry.js";
import { silentLogger } from "./helpers/local_ctx.js";

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

  it("follows the registry's sorted names: the same list until a tool is registered or removed", () => {
    const registry = new ToolRegistry();
    registry.logger = silentLogger;
    const add = (name: string) =>
      registry.register({ name, toolset: "t", schema: { name, description: name, parameters: { type: "object" } } });
    add("zz_tool");
    add("aa_tool");
    const first = registry.sortedNames();
    expect(first).toEqual(["aa_tool", "zz_tool"]);
    expect(registry.sortedNames()).toBe(first);
    const a = statsToolNames(first);
    expect(statsToolNames(registry.sortedNames())).toBe(a);
    add("mm_tool");
    expect(registry.sortedNames()).toEqual(["aa_tool", "mm_tool", "zz_tool"]);
    const b = statsToolNames(registry.sortedNames());
    expect(b).toContain("mm_tool");
    registry.deregister("mm_tool");
    expect(statsToolNames(registry.sortedNames())).not.toContain("mm_tool");
    expect(registry.names()).toEqual(["aa_tool", "zz_tool"]);
  });

  it("writes the JSON of extractToolStats byte for byte from the zero-filled texts, whatever was called", () => {
    const known = statsToolNames(["terminal", "todo", "read_file"]);
    const cases: ChatMessage[][] = [
      [],
      MESSAGES,
      // Names before the first known one, after the last, between two, and one known tool called twice.
      [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: null,
          tool_calls: [call("a", "!first"), call("b", "~last"), call("c", "todo"), call("d", "todo"), call("e", "~~")],
        },
        { role: "tool", tool_call_id: "a", content: "" },
        { role: "tool", tool_call_id: "c", content: '{"success": false}' },
        { role: "tool", tool_call_id: "d", content: "fine" },
        { role: "tool", tool_call_id: "x", name: "orphan", content: "error: lost" },
      ],
      // Keys an object does not keep in sorted order: array indexes come first, __proto__ is no key.
      [
        { role: "assistant", content: null, tool_calls: [call("1", "42"), call("2", "__proto__"), call("3", 'b"q')] },
        { role: "tool", tool_call_id: "1", content: "error: x" },
      ],
      // A malformed call without a name.
      [{ role: "assistant", content: null, tool_calls: [call("1", undefined as unknown as string)] }],
    ];
    for (const messages of cases) {
      const objects = extractToolStats(messages, known);
      const texts = toolStatsJson(countToolCalls(messages), known);
      expect(texts.tool_stats).toBe(JSON.stringify(objects.tool_stats));
      expect(texts.tool_error_counts).toBe(JSON.stringify(objects.tool_error_counts));
    }
    // A key list that is not statsToolNames' own array gives the same texts.
    const plain = toolStatsJson(countToolCalls(MESSAGES), ["todo", "terminal", ...HERMES_TOOL_NAMES]);
    expect(plain.tool_stats).toBe(JSON.stringify(extractToolStats(MESSAGES, known).tool_stats));
  });
});
