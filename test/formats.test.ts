import { describe, expect, it } from "vitest";
import type { OpenAITool } from "../tools/registry.js";
import type { ChatMessage } from "../src/core/chat.js";
import type { TrajectoryEntry } from "../src/core/records.js";
import {
  formatToolsForSystemPrompt,
  hermesSystemPrompt,
  parsePyJson,
  pyFloatRepr,
  pyJsonDumps,
  pyRstrip,
  pyStrip,
  toHermesConversations,
} from "../src/formats/hermes.js";
import { toOpenAIMessagesRecord } from "../src/formats/openai.js";
import { exportFormats, loadExportFormat } from "../src/formats/index.js";
import { reasoningStats } from "../src/report/tool_stats.js";

describe("pyJsonDumps (Python json.dumps, ensure_ascii=False)", () => {
  it("uses Python's separators and keeps non-ASCII", () => {
    expect(pyJsonDumps({ a: [1, 2], b: "é" })).toBe('{"a": [1, 2], "b": "é"}');
    expect(pyJsonDumps({ x: {}, y: [], z: null, t: true, f: false })).toBe(
      '{"x": {}, "y": [], "z": null, "t": true, "f": false}',
    );
    expect(pyJsonDumps([{ k: [{}] }])).toBe('[{"k": [{}]}]');
    expect(pyJsonDumps("日本\u2028\u007f")).toBe('"日本\u2028\u007f"');
  });

  it("escapes like Python", () => {
    // json.dumps('line\n"q"\\ \t\x01\x1f', ensure_ascii=False) == '"line\\n\\"q\\"\\\\ \\t\\u0001\\u001f"'
    expect(pyJsonDumps('line\n"q"\\ \t\x01\x1f')).toBe('"line\\n\\"q\\"\\\\ \\t\\u0001\\u001f"');
    expect(pyJsonDumps("\b\f\r/")).toBe('"\\b\\f\\r/"');
  });

  it("prints floats as Python's repr", () => {
    expect(pyFloatRepr(1)).toBe("1.0");
    expect(pyFloatRepr(0.1 + 0.2)).toBe("0.30000000000000004");
    expect(pyFloatRepr(1e16)).toBe("1e+16");
    expect(pyFloatRepr(1e15)).toBe("1000000000000000.0");
    expect(pyFloatRepr(1.5e-5)).toBe("1.5e-05");
    expect(pyFloatRepr(0.0001)).toBe("0.0001");
    expect(pyFloatRepr(-0)).toBe("-0.0");
    expect(pyFloatRepr(12345678901234567)).toBe("1.2345678901234568e+16");
    expect(pyFloatRepr(1.5e300)).toBe("1.5e+300");
    expect(pyFloatRepr(-2.5)).toBe("-2.5");
    expect(pyJsonDumps({ n: 2.5, i: 3, neg: -0, big: 2 ** 60 })).toBe(
      '{"n": 2.5, "i": 3, "neg": 0, "big": 1152921504606846976}',
    );
    expect(pyJsonDumps([NaN, Infinity, -Infinity])).toBe("[NaN, Infinity, -Infinity]");
  });

  it("round-trips parsed JSON exactly as Python's loads+dumps", () => {
    // json.dumps(json.loads('{"b":1,"2":2.50,"x":-0,"y":1E2,"z":NaN}'), ensure_ascii=False)
    expect(pyJsonDumps(parsePyJson('{"b":1,"2":2.50,"x":-0,"y":1E2,"z":NaN}'))).toBe(
      '{"b": 1, "2": 2.5, "x": 0, "y": 100.0, "z": NaN}',
    );
    expect(pyJsonDumps(parsePyJson('{"timeout": 1.0, "n": 123456789012345678901234567890}'))).toBe(
      '{"timeout": 1.0, "n": 123456789012345678901234567890}',
    );
    expect(pyJsonDumps(parsePyJson(' [ "a\\u00e9\\n", {"k" : {"a":1,"a":2}} ] '))).toBe('["aé\\n", {"k": {"a": 2}}]');
    expect(pyJsonDumps(parsePyJson('"\\ud83d\\ude00"'))).toBe('"😀"');
  });

  it("rejects what Python's json.loads rejects", () => {
    for (const bad of ["{'a': 1}", "[1,]", "01", '{"a":1} x', '"tab\there"', "", "{", '{"a" 1}', "tru", '"\\x"']) {
      expect(() => parsePyJson(bad), bad).toThrow(SyntaxError);
    }
  });

  it("strips Python whitespace, not JS whitespace", () => {
    expect(pyStrip(" \x1c a \x1f\x85")).toBe("a");
    expect(pyStrip("\ufeffa")).toBe("\ufeffa");
    // Every code unit: Python's str.isspace() set is exactly these.
    const python = new Set([..."\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"]);
    for (let c = 0x2000; c <= 0x200a; c++) python.add(String.fromCharCode(c));
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      expect(pyRstrip(`a${ch}${ch}`), `U+${c.toString(16)}`).toBe(python.has(ch) ? "a" : `a${ch}${ch}`);
    }
  });
});

const TERMINAL: OpenAITool = {
  type: "function",
  function: {
    name: "terminal",
    description: "Run a command",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
};
const READ_FILE: OpenAITool = {
  type: "function",
  function: { name: "read_file", description: "Lire un fichier", parameters: { type: "object", properties: {} } },
};

const call = (id: string, name: string, args: string) => ({
  id,
  type: "function" as const,
  function: { name, arguments: args },
});

const MESSAGES: ChatMessage[] = [
  { role: "system", content: "the real system prompt" },
  { role: "user", content: "List files" },
  {
    role: "assistant",
    content: null,
    reasoning: "I should look.",
    tool_calls: [
      call("c1", "terminal", '{"command": "ls", "timeout": 1.0}'),
      call("c2", "read_file", '{"path":"a.txt"}'),
    ],
  },
  // Results arrive in a different order than the calls: names must follow tool_call_id.
  { role: "tool", tool_call_id: "c2", content: '{"content": "hello", "total_lines": 1}' },
  { role: "tool", tool_call_id: "c1", content: '{"output":"a.txt\\n","exit_code":0,"error":null}' },
  { role: "assistant", content: "Let me retry.", tool_calls: [call("c3", "terminal", '{"command": "ls -la')] },
  { role: "tool", tool_call_id: "c3", content: "plain text résultat" },
  { role: "system", content: "an injected system note" },
  { role: "user", content: "Summarize please." },
  { role: "assistant", content: "There is one file: a.txt.  \n" },
];

describe("toHermesConversations", () => {
  it("builds the system turn from Hermes' fixed template", () => {
    expect(formatToolsForSystemPrompt([TERMINAL, READ_FILE])).toBe(
      '[{"name": "terminal", "description": "Run a command", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}, "required": null}, ' +
        '{"name": "read_file", "description": "Lire un fichier", "parameters": {"type": "object", "properties": {}}, "required": null}]',
    );
    const sys = hermesSystemPrompt([TERMINAL]);
    expect(
      sys.startsWith(
        "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML tags. ",
      ),
    ).toBe(true);
    expect(sys).toContain(
      "Here are the available tools:\n<tools>\n" +
        formatToolsForSystemPrompt([TERMINAL]) +
        "\n</tools>\nFor each function call return a JSON object, with the following pydantic model json schema for each:\n",
    );
    expect(sys).toContain(
      "{'title': 'FunctionCall', 'type': 'object', 'properties': {'name': {'title': 'Name', 'type': 'string'}, 'arguments': {'title': 'Arguments', 'type': 'object'}}, 'required': ['name', 'arguments']}\n",
    );
    expect(
      sys.endsWith(
        "Each function call should be enclosed within <tool_call> </tool_call> XML tags.\nExample:\n<tool_call>\n{'name': <function-name>,'arguments': <args-dict>}\n</tool_call>",
      ),
    ).toBe(true);
    expect(hermesSystemPrompt([])).toContain("<tools>\n[]\n</tools>");
  });

  it("writes the original's system turn byte for byte (run_agent.py _convert_to_trajectory_format)", () => {
    const original =
      "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML tags. " +
      "You may call one or more functions to assist with the user query. If available tools are not relevant in assisting " +
      "with user query, just respond in natural conversational language. Don't make assumptions about what values to plug " +
      "into functions. After calling & executing the functions, you will be provided with function results within " +
      "<tool_response> </tool_response> XML tags. Here are the available tools:\n<tools>\n" +
      '[{"name": "terminal", "description": "Run a command", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}, "required": null}]' +
      "\n</tools>\nFor each function call return a JSON object, with the following pydantic model json schema for each:\n" +
      "{'title': 'FunctionCall', 'type': 'object', 'properties': {'name': {'title': 'Name', 'type': 'string'}, 'arguments': {'title': 'Arguments', 'type': 'object'}}, 'required': ['name', 'arguments']}\n" +
      "Each function call should be enclosed within <tool_call> </tool_call> XML tags.\nExample:\n<tool_call>\n{'name': <function-name>,'arguments': <args-dict>}\n</tool_call>";
    expect(hermesSystemPrompt([TERMINAL])).toBe(original);
  });

  it("converts a whole task exactly", () => {
    const conv = toHermesConversations(MESSAGES, [TERMINAL, READ_FILE]);
    expect(conv).toEqual([
      { from: "system", value: hermesSystemPrompt([TERMINAL, READ_FILE]) },
      { from: "human", value: "List files" },
      {
        from: "gpt",
        value:
          '<think>\nI should look.\n</think>\n<tool_call>\n{"name": "terminal", "arguments": {"command": "ls", "timeout": 1.0}}\n</tool_call>\n' +
          '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>',
      },
      {
        from: "tool",
        value:
          '<tool_response>\n{"tool_call_id": "c2", "name": "read_file", "content": {"content": "hello", "total_lines": 1}}\n</tool_response>\n' +
          '<tool_response>\n{"tool_call_id": "c1", "name": "terminal", "content": {"output": "a.txt\\n", "exit_code": 0, "error": null}}\n</tool_response>',
      },
      {
        from: "gpt",
        value: '<think>\n</think>\nLet me retry.\n<tool_call>\n{"name": "terminal", "arguments": {}}\n</tool_call>',
      },
      {
        from: "tool",
        value:
          '<tool_response>\n{"tool_call_id": "c3", "name": "terminal", "content": "plain text résultat"}\n</tool_response>',
      },
      { from: "human", value: "Summarize please." },
      { from: "gpt", value: "<think>\n</think>\nThere is one file: a.txt." },
    ]);
  });

  it("uses the given prompt and a precomputed system prompt", () => {
    const conv = toHermesConversations(MESSAGES.slice(0, 2), [TERMINAL], {
      prompt: "the dataset prompt",
      systemPrompt: "SYS",
    });
    expect(conv).toEqual([
      { from: "system", value: "SYS" },
      { from: "human", value: "the dataset prompt" },
    ]);
  });

  it("keeps reasoning of a final answer and converts scratchpad tags", () => {
    const conv = toHermesConversations(
      [
        { role: "user", content: "q" },
        { role: "assistant", content: "Answer", reasoning: "Done thinking" },
        { role: "user", content: "again" },
        { role: "assistant", content: "<REASONING_SCRATCHPAD>plan</REASONING_SCRATCHPAD>\nAnswer 2" },
        { role: "user", content: "blank reasoning" },
        { role: "assistant", content: null, reasoning: "  \n " },
      ],
      [],
    );
    expect(conv.slice(1).map((t) => t.value)).toEqual([
      "q",
      "<think>\nDone thinking\n</think>\nAnswer",
      "again",
      "<think>plan</think>\nAnswer 2",
      "blank reasoning",
      "<think>\n</think>",
    ]);
  });

  it("leaves out reasoning sent only in reasoning_details, as the original's streaming path does, unless asked", () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: null,
        reasoning: "details only",
        reasoning_without_details: "",
        tool_calls: [call("a", "terminal", "{}")],
      },
      { role: "tool", tool_call_id: "a", content: "{}" },
      { role: "assistant", content: "Answer", reasoning: "field\n\ndetails", reasoning_without_details: "field" },
    ];
    const gpt = (opts?: { detailsReasoning?: boolean }) =>
      toHermesConversations(messages, [], opts)
        .filter((t) => t.from === "gpt")
        .map((t) => t.value);
    expect(gpt()).toEqual([
      '<think>\n</think>\n<tool_call>\n{"name": "terminal", "arguments": {}}\n</tool_call>',
      "<think>\nfield\n</think>\nAnswer",
    ]);
    expect(gpt({ detailsReasoning: true })).toEqual([
      '<think>\ndetails only\n</think>\n<tool_call>\n{"name": "terminal", "arguments": {}}\n</tool_call>',
      "<think>\nfield\n\ndetails\n</think>\nAnswer",
    ]);
    // The statistics count what the conversation shows; ours names the turns left out.
    expect(reasoningStats(messages)).toMatchObject({
      turns_with_reasoning: 1,
      turns_with_reasoning_only_in_details: 1,
      has_any_reasoning: true,
    });
    expect(reasoningStats(messages, { detailsReasoning: true })).toMatchObject({
      turns_with_reasoning: 2,
      turns_with_reasoning_only_in_details: 1,
    });
    expect(reasoningStats(messages.slice(0, 3)).has_any_reasoning).toBe(false);
  });

  it("falls back to the tool message name, then position, then unknown; parses JSON content only when it is JSON", () => {
    const conv = toHermesConversations(
      [
        { role: "user", content: "q" },
        { role: "assistant", content: "", tool_calls: [call("a", "terminal", "{}"), call("b", "read_file", "")] },
        { role: "tool", tool_call_id: "x1", name: "web_search", content: "[not json" },
        { role: "tool", tool_call_id: "x2", content: '  [1, 2.0, {"k": "v"}]' },
        { role: "tool", tool_call_id: "x3", content: "" },
      ],
      [],
    );
    expect(conv[2]).toEqual({
      from: "gpt",
      value:
        '<think>\n</think>\n<tool_call>\n{"name": "terminal", "arguments": {}}\n</tool_call>\n<tool_call>\n{"name": "read_file", "arguments": {}}\n</tool_call>',
    });
    expect(conv[3]!.value).toBe(
      '<tool_response>\n{"tool_call_id": "x1", "name": "web_search", "content": "[not json"}\n</tool_response>\n' +
        '<tool_response>\n{"tool_call_id": "x2", "name": "read_file", "content": [1, 2.0, {"k": "v"}]}\n</tool_response>\n' +
        '<tool_response>\n{"tool_call_id": "x3", "name": "unknown", "content": ""}\n</tool_response>',
    );
  });

  it("handles a history without any user message", () => {
    const conv = toHermesConversations([{ role: "assistant", content: "hi" }], []);
    expect(conv.slice(1)).toEqual([
      { from: "human", value: "" },
      { from: "gpt", value: "<think>\n</think>\nhi" },
    ]);
  });
});

describe("toOpenAIMessagesRecord", () => {
  it("writes only fine-tuning keys, tool calls kept, reasoning dropped by default", () => {
    const rec = toOpenAIMessagesRecord({ messages: MESSAGES, tools: [TERMINAL, { junk: true }] });
    expect(rec.tools).toEqual([TERMINAL]);
    expect(rec.messages[0]).toEqual({ role: "system", content: "the real system prompt" });
    expect(rec.messages[2]).toEqual({
      role: "assistant",
      tool_calls: [
        { id: "c1", type: "function", function: { name: "terminal", arguments: '{"command": "ls", "timeout": 1.0}' } },
        { id: "c2", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } },
      ],
    });
    expect(rec.messages[3]).toEqual({
      role: "tool",
      tool_call_id: "c2",
      content: '{"content": "hello", "total_lines": 1}',
    });
    expect(rec.messages[5]).toEqual({
      role: "assistant",
      content: "Let me retry.",
      tool_calls: [call("c3", "terminal", '{"command": "ls -la')],
    });
    expect(rec.messages.at(-1)).toEqual({ role: "assistant", content: "There is one file: a.txt.  \n" });
    expect(JSON.stringify(rec)).not.toContain("reasoning");
    expect(JSON.stringify(rec)).not.toContain("I should look.");
  });

  it("can carry reasoning as a think block and leave system messages out", () => {
    const rec = toOpenAIMessagesRecord({ messages: MESSAGES, tools: [] }, { reasoning: "think", includeSystem: false });
    expect(rec.messages.some((m) => m.role === "system")).toBe(false);
    expect(rec.messages[1]).toMatchObject({ role: "assistant", content: "<think>\nI should look.\n</think>\n" });
  });
});

describe("export format registry", () => {
  const entry = {
    prompt_index: 4,
    task_id: "t4",
    conversations: [],
    messages: MESSAGES,
    tools: [TERMINAL, READ_FILE],
    metadata: { model: "m" },
    completed: true,
    partial: false,
    outcome: "completed",
    api_calls: 3,
    toolsets_used: ["terminal"],
    tool_stats: { terminal: { count: 2, success: 2, failure: 0 } },
    tool_error_counts: { terminal: 0 },
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    approvals: [],
    final_response: "x",
    duration_ms: 5,
  } as TrajectoryEntry;

  it("lists sharegpt, hermes, openai, atif and groups and rejects unknown names, naming every format", async () => {
    expect(exportFormats().map((f) => f.name)).toEqual(["sharegpt", "hermes", "openai", "atif", "groups"]);
    expect(
      exportFormats()
        .filter((f) => f.perTask)
        .map((f) => f.name),
    ).toEqual(["groups"]);
    await expect(loadExportFormat("nope")).rejects.toThrow(
      "unknown export format 'nope'. Formats: sharegpt, hermes, openai, atif, groups",
    );
    await expect(loadExportFormat("groups")).rejects.toThrow(/one line per task/);
  });

  it("rebuilds conversations from messages when the entry has none", async () => {
    const sharegpt = await loadExportFormat("sharegpt");
    expect(sharegpt(entry, {})).toEqual({ conversations: toHermesConversations(MESSAGES, [TERMINAL, READ_FILE]) });
    const withMeta = sharegpt(entry, { withMetadata: true });
    expect(withMeta.metadata).toEqual({
      task_id: "t4",
      prompt_index: 4,
      outcome: "completed",
      completed: true,
      model: "m",
    });
    const hermes = await loadExportFormat("hermes");
    // Stored conversations are written as they are; --reasoning-details rebuilds them from the messages.
    const details: ChatMessage[] = [
      { role: "user", content: "q" },
      { role: "assistant", content: "A", reasoning: "d", reasoning_without_details: "" },
    ];
    const stored = {
      ...entry,
      messages: details,
      conversations: toHermesConversations(details, []),
    } as TrajectoryEntry;
    expect((sharegpt(stored, {}).conversations as { value: string }[])[2]!.value).toBe("<think>\n</think>\nA");
    expect((sharegpt(stored, { reasoningDetails: true }).conversations as { value: string }[])[2]!.value).toBe(
      "<think>\nd\n</think>\nA",
    );
    expect((hermes(stored, { reasoningDetails: true }).conversations as { value: string }[])[2]!.value).toBe(
      "<think>\nd\n</think>\nA",
    );
    expect(Object.keys(hermes(entry, {}))).toEqual([
      "prompt_index",
      "conversations",
      "metadata",
      "completed",
      "partial",
      "api_calls",
      "toolsets_used",
      "tool_stats",
      "tool_error_counts",
    ]);
  });
});
