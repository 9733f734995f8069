/**
 * Near-miss tool names are repaired as the original repairs them (hermes-agent agent/agent_runtime_helpers.py
 * `repair_tool_call`) before a call counts as one to an unknown tool. Expected fuzzy matches are Python 3's own
 * `difflib.get_close_matches(word, offered, n=1, cutoff=0.7)` output for these inputs.
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop, type ToolExecutor } from "../src/agent/loop.js";
import { closestMatch, repairToolName } from "../src/agent/tool_name_repair.js";
import type { ChatRequest, ChatResponse, OpenAITool, ToolCall } from "../src/core/chat.js";
import type { ToolContext } from "../tools/registry.js";
import { silentLogger } from "./helpers/local_ctx.js";

const OFFERED = new Set([
  "terminal",
  "read_file",
  "write_file",
  "search_files",
  "patch",
  "todo",
  "memory",
  "web_search",
  "browser_click",
]);

describe("repairToolName", () => {
  it.each([
    ["Terminal", "terminal"],
    ["READ_FILE", "read_file"],
    ["read-file", "read_file"],
    ["write file", "write_file"],
    ["TodoTool", "todo"],
    ["TodoTool_tool", "todo"],
    ["Patch_tool", "patch"],
    ["BrowserClick_tool", "browser_click"],
    ["SearchFiles", "search_files"],
    ['terminal" parameter="command" string="true', "terminal"],
    ["read_file<|tool_sep|>", "read_file"],
    // difflib: Python gives these for the lowered name against OFFERED.
    ["serch_files", "search_files"],
    ["termnal", "terminal"],
    ["rad_file", "read_file"],
    ["web-serch", "web_search"],
    ["browserclick", "browser_click"],
    ["memroy", "memory"],
    ["patchh", "patch"],
    ["writefile", "write_file"],
    ['"terminal', "terminal"],
  ])("%s → %s", (given, repaired) => {
    expect(repairToolName(given, OFFERED)).toBe(repaired);
  });

  it.each([["todo_lst"], ["xyz"], ["delete_everything"], [""]])("%s stays unknown", (given) => {
    expect(repairToolName(given, OFFERED)).toBeUndefined();
  });

  it("repairs only to a tool the task was offered", () => {
    expect(repairToolName("Terminal", new Set(["read_file"]))).toBeUndefined();
  });

  it("scores as difflib does: the best ratio wins, ties go to the greatest name, long words drop popular letters", () => {
    expect(closestMatch("file", ["read_file", "write_file"], 0.5)).toBe("read_file");
    expect(closestMatch("ab", ["ax", "xb"], 0.4)).toBe("xb");
    expect(closestMatch("ab", ["ax", "xb"], 0.6)).toBeUndefined();
    // Python: SequenceMatcher(None, "terminal" * 30, "termnal" * 30).ratio() == 0.0177…: a word of 200 or more
    // characters leaves out its letters that occur more than len // 100 + 1 times, so nothing matches.
    expect(closestMatch("termnal".repeat(30), ["terminal".repeat(30)], 0.01)).toBe("terminal".repeat(30));
    expect(closestMatch("termnal".repeat(30), ["terminal".repeat(30)], 0.02)).toBeUndefined();
  });
});

describe("the agent loop repairs a near-miss name before it runs the call", () => {
  const tools: OpenAITool[] = ["terminal", "read_file", "todo"].map((name) => ({
    type: "function",
    function: { name, description: name, parameters: { type: "object", properties: {} } },
  }));
  const ctx: ToolContext = {
    taskId: "t",
    envKind: "local",
    logger: silentLogger,
    getEnv: () => Promise.reject(new Error("no environment")),
  };

  it("runs the repaired tool and saves the call under the repaired name, as the original does", async () => {
    const calls: ToolCall[] = [
      { id: "c1", type: "function", function: { name: "Terminal", arguments: '{"command":"ls"}' } },
      { id: "c2", type: "function", function: { name: "read-file", arguments: '{"path":"a"}' } },
      { id: "c3", type: "function", function: { name: "TodoTool_tool", arguments: "{}" } },
      { id: "c4", type: "function", function: { name: "rm_rf", arguments: "{}" } },
    ];
    let n = 0;
    const model = {
      name: "scripted",
      async complete(_req: ChatRequest): Promise<ChatResponse> {
        const message =
          n++ === 0
            ? { role: "assistant" as const, content: null, tool_calls: calls }
            : { role: "assistant" as const, content: "done" };
        return {
          message,
          finishReason: n === 1 ? "tool_calls" : "stop",
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        };
      },
    };
    const executed: string[] = [];
    const executeTool: ToolExecutor = async (name) => {
      executed.push(name);
      return JSON.stringify({ output: name });
    };
    const result = await runAgentLoop({
      model,
      prompt: "p",
      tools,
      systemPrompt: "S",
      maxTurns: 3,
      maxConsecutiveToolErrors: 3,
      toolConcurrency: 1,
      executeTool,
      ctx,
    });
    expect(executed).toEqual(["terminal", "read_file", "todo"]);
    const assistant = result.messages.find((m) => m.role === "assistant" && "tool_calls" in m && m.tool_calls);
    expect((assistant as { tool_calls: ToolCall[] }).tool_calls.map((c) => c.function.name)).toEqual([
      "terminal",
      "read_file",
      "todo",
      "rm_rf",
    ]);
    const results = result.messages.filter((m) => m.role === "tool");
    expect(results.map((m) => (m as { name?: string }).name)).toEqual(["terminal", "read_file", "todo", "rm_rf"]);
    expect(JSON.parse(results[3]!.content as string).error).toMatch(/^Unknown tool 'rm_rf'/);
  });
});
