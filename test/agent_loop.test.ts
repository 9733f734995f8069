/** The agent loop in process (src/agent/loop.ts) with a scripted ChatModel and scripted tools: no CLI, no network. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  AgentLoopAborted,
  derivedCallId,
  EMPTY_RESPONSE_CONTENT,
  LENGTH_CONTINUATION_MESSAGE,
  MAX_TURNS_MESSAGE,
  NO_SUMMARY_RESPONSE,
  runAgentLoop,
  type AgentLoopOptions,
  type ToolExecutor,
} from "../src/agent/loop.js";
import type { AssistantMessage, ChatRequest, ChatResponse, OpenAITool, ToolCall } from "../src/core/chat.js";
import type { ToolContext } from "../tools/registry.js";
import { silentLogger } from "./helpers/local_ctx.js";

const ctx: ToolContext = {
  taskId: "t",
  envKind: "local",
  logger: silentLogger,
  getEnv: () => Promise.reject(new Error("no environment in these tests")),
};

function tool(name: string): OpenAITool {
  return { type: "function", function: { name, description: name, parameters: { type: "object", properties: {} } } };
}

let callNo = 0;
function call(name: string, args: string = "{}"): ToolCall {
  return { id: `call_${++callNo}`, type: "function", function: { name, arguments: args } };
}

type Turn = Partial<AssistantMessage> & { finish?: string };

/** A ChatModel that answers from a script, one entry a request, and keeps every request it got. */
function scriptedModel(turns: Turn[] | ((n: number) => Turn)) {
  const requests: ChatRequest[] = [];
  return {
    requests,
    model: {
      name: "scripted-test",
      async complete(req: ChatRequest): Promise<ChatResponse> {
        requests.push({ ...req, messages: [...req.messages] });
        const n = requests.length - 1;
        const turn = typeof turns === "function" ? turns(n) : turns[n];
        if (!turn) throw new Error(`script has no turn ${n}`);
        const { finish, ...message } = turn;
        return {
          message: { role: "assistant", content: null, ...message },
          finishReason: finish ?? (message.tool_calls ? "tool_calls" : "stop"),
          usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
        };
      },
    },
  };
}

const echo: ToolExecutor = async (name, args) => JSON.stringify({ output: `${name}:${JSON.stringify(args)}` });

function options(model: AgentLoopOptions["model"], over: Partial<AgentLoopOptions> = {}): AgentLoopOptions {
  return {
    model,
    prompt: "do the thing",
    tools: [tool("terminal"), tool("read_file")],
    systemPrompt: "SYSTEM",
    maxTurns: 5,
    maxConsecutiveToolErrors: 3,
    toolConcurrency: 4,
    executeTool: echo,
    ctx,
    ...over,
  };
}

describe("agent loop", () => {
  it("ends on a final answer: completed, usage summed, ephemeral prompt and prefill sent but never saved", async () => {
    const { model, requests } = scriptedModel([
      { tool_calls: [call("terminal", '{"command":"ls"}')] },
      { content: "all done", reasoning: "thought" },
    ]);
    const result = await runAgentLoop(
      options(model, { ephemeralSystemPrompt: "EPHEMERAL", prefill: [{ role: "user", content: "PREFILL" }] }),
    );
    expect(result).toMatchObject({
      completed: true,
      partial: false,
      end: "final_answer",
      finalResponse: "all done",
      apiCalls: 2,
    });
    expect(result.usage).toEqual({ prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 });
    expect(result.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(result.messages[0]).toEqual({ role: "system", content: "SYSTEM" });
    expect(result.messages[3]).toMatchObject({
      role: "tool",
      name: "terminal",
      content: JSON.stringify({ output: 'terminal:{"command":"ls"}' }),
    });
    expect(result.messages[4]).toEqual({ role: "assistant", content: "all done", reasoning: "thought" });
    expect(JSON.stringify(result.messages)).not.toMatch(/EPHEMERAL|PREFILL/);
    // Every request: system prompt with the ephemeral part, then the prefill, then the conversation.
    for (const req of requests) {
      expect(req.messages[0]).toEqual({ role: "system", content: "SYSTEM\n\nEPHEMERAL" });
      expect(req.messages[1]).toEqual({ role: "user", content: "PREFILL" });
      expect(req.messages[2]).toEqual({ role: "user", content: "do the thing" });
    }
    expect(requests[1]!.messages).toHaveLength(5);
  });

  it("loops with the same system text and prefill send the same head objects; any change gives its own head", async () => {
    const prefill: AgentLoopOptions["prefill"] = [{ role: "user", content: "PREFILL" }];
    const heads: ChatRequest["messages"][] = [];
    const run = async (over: Partial<AgentLoopOptions>) => {
      const { model, requests } = scriptedModel([{ content: "done" }]);
      await runAgentLoop(options(model, over));
      heads.push(requests[0]!.messages);
    };
    await run({ ephemeralSystemPrompt: "E1", prefill });
    await run({ ephemeralSystemPrompt: "E1", prefill });
    await run({ ephemeralSystemPrompt: "E2", prefill });
    await run({ ephemeralSystemPrompt: "E2" });
    await run({ systemPrompt: undefined, ephemeralSystemPrompt: "E2" });
    await run({ systemPrompt: undefined });
    expect(heads[1]![0]).toBe(heads[0]![0]);
    expect(heads.map((m) => m.map((x) => x.content))).toEqual([
      ["SYSTEM\n\nE1", "PREFILL", "do the thing"],
      ["SYSTEM\n\nE1", "PREFILL", "do the thing"],
      ["SYSTEM\n\nE2", "PREFILL", "do the thing"],
      ["SYSTEM\n\nE2", "do the thing"],
      ["E2", "do the thing"],
      ["do the thing"],
    ]);
  });

  it("at max turns: the original's closing human turn, one call without tools, not completed", async () => {
    const { model, requests } = scriptedModel((n) =>
      n < 3 ? { tool_calls: [call("terminal", `{"n":${n}}`)] } : { content: "  summary of work  " },
    );
    const result = await runAgentLoop(options(model, { maxTurns: 3 }));
    expect(result).toMatchObject({
      completed: false,
      partial: false,
      end: "max_turns",
      apiCalls: 3,
      finalResponse: "summary of work",
    });
    expect(requests).toHaveLength(4);
    expect(requests.slice(0, 3).every((r) => r.tools?.length === 2)).toBe(true);
    expect(requests[3]!.tools).toBeUndefined();
    expect(requests[3]!.messages.at(-1)).toEqual({ role: "user", content: MAX_TURNS_MESSAGE });
    expect(result.messages.slice(-2)).toEqual([
      { role: "user", content: MAX_TURNS_MESSAGE },
      { role: "assistant", content: "summary of work" },
    ]);
  });

  it("at max turns, an empty summary is asked for once more, then the original's fallback text is the answer", async () => {
    const { model, requests } = scriptedModel((n) =>
      n < 2 ? { tool_calls: [call("terminal", `{"n":${n}}`)] } : { content: "   " },
    );
    const result = await runAgentLoop(options(model, { maxTurns: 2 }));
    expect(requests).toHaveLength(4);
    expect(result).toMatchObject({ completed: false, end: "max_turns", finalResponse: NO_SUMMARY_RESPONSE });
    expect(result.messages.at(-1)).toEqual({ role: "user", content: MAX_TURNS_MESSAGE });
  });

  it("a final answer on the last allowed call is not completed (the original's api_calls < max_turns)", async () => {
    const { model } = scriptedModel([{ tool_calls: [call("terminal")] }, { content: "done" }]);
    expect(await runAgentLoop(options(model, { maxTurns: 2 }))).toMatchObject({
      completed: false,
      partial: false,
      end: "final_answer",
      finalResponse: "done",
      apiCalls: 2,
    });
    const { model: roomy } = scriptedModel([{ tool_calls: [call("terminal")] }, { content: "done" }]);
    expect(await runAgentLoop(options(roomy, { maxTurns: 3 }))).toMatchObject({ completed: true, end: "final_answer" });
  });

  it("an answer cut by the length limit is continued with the original's human turn and joined", async () => {
    const { model, requests } = scriptedModel([
      { content: "The answer", finish: "length" },
      { content: "is forty", finish: "length" },
      { content: "two." },
    ]);
    const result = await runAgentLoop(options(model));
    expect(result).toMatchObject({
      completed: true,
      partial: false,
      end: "final_answer",
      finalResponse: "The answeris fortytwo.",
      apiCalls: 3,
    });
    expect(result.messages.slice(2).map((m) => [m.role, m.content])).toEqual([
      ["assistant", "The answer"],
      ["user", LENGTH_CONTINUATION_MESSAGE],
      ["assistant", "is forty"],
      ["user", LENGTH_CONTINUATION_MESSAGE],
      ["assistant", "two."],
    ]);
    expect(requests[2]!.messages.at(-1)).toEqual({ role: "user", content: LENGTH_CONTINUATION_MESSAGE });
  });

  it("a third cut answer ends the task partial with what was received", async () => {
    const { model, requests } = scriptedModel(() => ({ content: "more", finish: "length" }));
    const result = await runAgentLoop(options(model));
    expect(requests).toHaveLength(3);
    expect(result).toMatchObject({ completed: false, partial: true, end: "length", finalResponse: "moremoremore" });
    expect(result.messages.filter((m) => m.role === "user")).toHaveLength(3); // the prompt and two continuation requests
  });

  it("a tool call cut by the length limit is asked for once more, then refused: never executed", async () => {
    const executed: string[] = [];
    const executeTool: ToolExecutor = async (name, args) => {
      executed.push(name);
      return echo(name, args, ctx);
    };
    const { model, requests } = scriptedModel(() => ({
      tool_calls: [call("terminal", '{"command":"rm -rf bu')],
      finish: "length",
    }));
    const result = await runAgentLoop(options(model, { executeTool }));
    expect(requests).toHaveLength(2);
    expect(requests[1]!.messages).toEqual(requests[0]!.messages);
    expect(executed).toEqual([]);
    expect(result).toMatchObject({
      completed: false,
      partial: true,
      end: "truncated_tool_call",
      apiCalls: 1,
      finalResponse: null,
    });
    expect(result.messages.map((m) => m.role)).toEqual(["system", "user"]);

    const { model: recovers } = scriptedModel([
      { tool_calls: [call("terminal", '{"comm')], finish: "length" },
      { tool_calls: [call("terminal", '{"command":"ls"}')] },
      { content: "ok" },
    ]);
    expect(await runAgentLoop(options(recovers, { executeTool }))).toMatchObject({
      completed: true,
      apiCalls: 2,
      finalResponse: "ok",
    });
    expect(executed).toEqual(["terminal"]);
  });

  it("arguments cut after a complete value are repaired by closing them, and run", async () => {
    const executed: unknown[] = [];
    const executeTool: ToolExecutor = async (name, args) => {
      executed.push(args);
      return echo(name, args, ctx);
    };
    const { model } = scriptedModel([
      { tool_calls: [call("terminal", '{"command": "ls", "opts": {"all": true')] },
      { content: "ok" },
    ]);
    const result = await runAgentLoop(options(model, { executeTool }));
    expect(executed).toEqual([{ command: "ls", opts: { all: true } }]);
    const assistant = result.messages[2] as AssistantMessage;
    expect(JSON.parse(assistant.tool_calls![0]!.function.arguments)).toEqual({ command: "ls", opts: { all: true } });
    expect(result).toMatchObject({ completed: true, finalResponse: "ok" });
  });

  it("arguments cut inside a string cannot be repaired: asked for once more (nothing kept), then the task ends partial", async () => {
    let ran = false;
    const { model, requests } = scriptedModel(() => ({ tool_calls: [call("terminal", '{"command": "echo hel')] }));
    const result = await runAgentLoop(options(model, { executeTool: async () => ((ran = true), "{}") }));
    expect(ran).toBe(false);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.messages).toEqual(requests[0]!.messages);
    expect(result).toMatchObject({ completed: false, partial: true, end: "truncated_tool_call", apiCalls: 1 });
    expect(result.messages.map((m) => m.role)).toEqual(["system", "user"]);
  });

  it("malformed argument JSON that cannot be repaired is handled as a cut tool call: one repeat, then partial with nothing of it kept", async () => {
    const bad = () => ({ tool_calls: [call("terminal", '{command: "ls"}')] });
    const { model, requests } = scriptedModel(bad);
    const result = await runAgentLoop(options(model, { maxTurns: 10 }));
    expect(requests).toHaveLength(2);
    expect(requests[1]!.messages).toEqual(requests[0]!.messages);
    expect(result).toMatchObject({ completed: false, partial: true, end: "truncated_tool_call", apiCalls: 1 });
    // No `{}` call and no error turn: an export never carries the broken call.
    expect(result.messages.map((m) => m.role)).toEqual(["system", "user"]);

    const { model: fixes } = scriptedModel([
      bad(),
      { tool_calls: [call("terminal", '{"command":"ls"}')] },
      { content: "ok" },
    ]);
    const ok = await runAgentLoop(options(fixes));
    expect(ok).toMatchObject({ completed: true, finalResponse: "ok", apiCalls: 2 });
    expect(ok.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
  });

  it("repairs what the original repairs: trailing commas, raw control characters in strings, surplus closers", async () => {
    const executed: unknown[] = [];
    const executeTool: ToolExecutor = async (name, args) => {
      executed.push(args);
      return echo(name, args, ctx);
    };
    const { model } = scriptedModel([
      {
        tool_calls: [
          call("terminal", '{"command": "ls",}'),
          call("terminal", '{"command": "a\tb é"}'),
          call("terminal", '{"command": "pwd"}}'),
        ],
      },
      { content: "ok" },
    ]);
    const result = await runAgentLoop(options(model, { executeTool }));
    expect(executed).toEqual([{ command: "ls" }, { command: "a\tb é" }, { command: "pwd" }]);
    const sent = (result.messages[2] as AssistantMessage).tool_calls!.map((c) => c.function.arguments);
    // As the original: control characters re-serialised compactly (non-ASCII escaped), the rest fixed in place.
    expect(sent).toEqual(['{"command": "ls"}', '{"command":"a\\tb \\u00e9"}', '{"command": "pwd"}']);
  });

  it("a tool call without an id gets the original's id derived from name, arguments and position", async () => {
    const noId = (name: string, args: string): ToolCall => ({
      id: "",
      type: "function",
      function: { name, arguments: args },
    });
    const run = async () =>
      runAgentLoop(
        options(
          scriptedModel([
            { tool_calls: [noId("terminal", '{"command":"ls"}'), noId("terminal", '{"command":"ls"}')] },
            { content: "ok" },
          ]).model,
        ),
      );
    const first = await run();
    const ids = (first.messages[2] as AssistantMessage).tool_calls!.map((c) => c.id);
    // sha256("terminal:{\"command\":\"ls\"}:0") and ":1", first 12 hex digits (the original's _deterministic_call_id).
    expect(ids).toEqual([
      derivedCallId("terminal", '{"command":"ls"}', 0),
      derivedCallId("terminal", '{"command":"ls"}', 1),
    ]);
    expect(ids[0]).toBe(
      `call_${createHash("sha256").update('terminal:{"command":"ls"}:0').digest("hex").slice(0, 12)}`,
    );
    expect(
      first.messages.filter((m) => m.role === "tool").map((m) => (m as { tool_call_id: string }).tool_call_id),
    ).toEqual(ids);
    expect((await run()).messages).toEqual(first.messages);
  });

  it("keeps a turn's reasoning without its reasoning_details beside the full reasoning in the saved messages", async () => {
    const { model } = scriptedModel([
      { tool_calls: [call("terminal")], reasoning: "from details", reasoning_without_details: "" },
      { content: "done", reasoning: "field\n\nfrom details", reasoning_without_details: "field" },
    ]);
    const result = await runAgentLoop(options(model));
    const assistants = result.messages.filter((m): m is AssistantMessage => m.role === "assistant");
    expect(assistants.map((m) => [m.reasoning, m.reasoning_without_details])).toEqual([
      ["from details", ""],
      ["field\n\nfrom details", "field"],
    ]);
  });

  it("an empty answer (reasoning-only ones too, by default) is asked for again up to 3 times, then the loop ends empty_response (never completed)", async () => {
    const { model, requests } = scriptedModel((n) =>
      n === 0 ? { content: "" } : n === 1 ? { content: "  \n " } : { content: null, reasoning: "thinking only" },
    );
    const result = await runAgentLoop(options(model, { maxTurns: 10 }));
    expect(requests).toHaveLength(4);
    for (const r of requests) expect(r.messages).toEqual(requests[0]!.messages);
    expect(result).toMatchObject({
      completed: false,
      partial: true,
      end: "empty_response",
      finalResponse: null,
      apiCalls: 4,
    });
    expect(result.messages.at(-1)).toEqual({
      role: "assistant",
      content: EMPTY_RESPONSE_CONTENT,
      reasoning: "thinking only",
    });

    const { model: late } = scriptedModel([{ content: "" }, { content: "" }, { content: "there it is" }]);
    expect(await runAgentLoop(options(late))).toMatchObject({
      completed: true,
      finalResponse: "there it is",
      apiCalls: 3,
    });
  });

  it("with continueReasoningOnly, an answer with reasoning and no text is sent back and continued; a real answer replaces it", async () => {
    const { model, requests } = scriptedModel([
      { content: null, reasoning: "first thoughts" },
      { content: "the answer", reasoning: "more" },
    ]);
    const result = await runAgentLoop(options(model, { continueReasoningOnly: true }));
    expect(requests).toHaveLength(2);
    expect(requests[1]!.messages).toEqual([
      ...requests[0]!.messages,
      { role: "assistant", content: null, reasoning: "first thoughts" },
    ]);
    expect(result).toMatchObject({
      completed: true,
      partial: false,
      end: "final_answer",
      finalResponse: "the answer",
      apiCalls: 2,
    });
    expect(result.messages).toEqual([
      { role: "system", content: "SYSTEM" },
      { role: "user", content: "do the thing" },
      { role: "assistant", content: "the answer", reasoning: "more" },
    ]);
  });

  it("with continueReasoningOnly: 2 continuations, then the 3 empty-answer retries with them still sent, then empty_response", async () => {
    const { model, requests } = scriptedModel((n) => ({ content: null, reasoning: `r${n}` }));
    const result = await runAgentLoop(options(model, { maxTurns: 10, continueReasoningOnly: true }));
    const continued = [
      { role: "assistant", content: null, reasoning: "r0" },
      { role: "assistant", content: null, reasoning: "r1" },
    ];
    expect(requests).toHaveLength(6);
    expect(requests[1]!.messages).toEqual([...requests[0]!.messages, continued[0]]);
    for (const r of requests.slice(2)) expect(r.messages).toEqual([...requests[0]!.messages, ...continued]);
    expect(result).toMatchObject({
      completed: false,
      partial: true,
      end: "empty_response",
      finalResponse: null,
      apiCalls: 6,
    });
    expect(result.messages.slice(2)).toEqual([
      ...continued,
      { role: "assistant", content: EMPTY_RESPONSE_CONTENT, reasoning: "r5" },
    ]);
  });

  it("with continueReasoningOnly, a tool call replaces the continued answer and gives the next one fresh continuations", async () => {
    const script: Turn[] = [
      { content: null, reasoning: "a" },
      { tool_calls: [call("terminal", '{"command":"ls"}')] },
      { content: null, reasoning: "b" },
      { content: null, reasoning: "c" },
      { content: "done" },
    ];
    const { model, requests } = scriptedModel(script);
    const result = await runAgentLoop(options(model, { maxTurns: 10, continueReasoningOnly: true }));
    expect(result).toMatchObject({ completed: true, finalResponse: "done", apiCalls: 5 });
    expect(result.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(result.messages[2]).toMatchObject({ tool_calls: [{ function: { name: "terminal" } }] });
    // "c" was continued too (a second continuation, not a plain retry): the count started again after the tool call.
    expect(requests[4]!.messages.slice(-2)).toEqual([
      { role: "assistant", content: null, reasoning: "b" },
      { role: "assistant", content: null, reasoning: "c" },
    ]);
  });

  it("with continueReasoningOnly, a continued answer stays once a cut answer's continuation turn follows it", async () => {
    const { model } = scriptedModel([
      { content: null, reasoning: "plan" },
      { content: "Half", finish: "length" },
      { content: "way." },
    ]);
    const result = await runAgentLoop(options(model, { continueReasoningOnly: true }));
    expect(result).toMatchObject({ completed: true, finalResponse: "Halfway." });
    expect(result.messages.slice(2)).toEqual([
      { role: "assistant", content: null, reasoning: "plan" },
      { role: "assistant", content: "Half" },
      { role: "user", content: LENGTH_CONTINUATION_MESSAGE },
      { role: "assistant", content: "way." },
    ]);
  });

  it("unknown tools and arguments that are not an object get an error result; such turns in a row end the task partial", async () => {
    const script: Turn[] = [
      { tool_calls: [call("no_such_tool")] },
      { tool_calls: [call("terminal")] }, // a good turn: the count starts again
      { tool_calls: [call("terminal", "[1,2]"), call("nope")] },
      { tool_calls: [call("nope")] },
      { content: "never reached" },
    ];
    const { model } = scriptedModel(script);
    const executed: string[] = [];
    const result = await runAgentLoop(
      options(model, {
        maxTurns: 10,
        maxConsecutiveToolErrors: 2,
        executeTool: async (name, args) => {
          executed.push(name);
          return echo(name, args, ctx);
        },
      }),
    );
    expect(result).toMatchObject({ completed: false, partial: true, end: "malformed_calls", apiCalls: 4 });
    expect(executed).toEqual(["terminal"]);
    const errors = result.messages
      .filter((m) => m.role === "tool")
      .map((m) => JSON.parse(m.content).error as string | undefined);
    expect(errors[0]).toMatch(/^Unknown tool 'no_such_tool'. Available tools: read_file, terminal$/);
    expect(errors[1]).toBeUndefined();
    expect(errors[2]).toMatch(/must be a JSON object, got an array/);
    expect(errors[3]).toMatch(/^Unknown tool 'nope'/);
  });

  it("runs parallel-safe calls concurrently and gives results in call order, whatever order they finish in", async () => {
    const calls = [
      call("read_file", '{"path":"a.txt"}'),
      call("web_search", '{"query":"q"}'),
      call("read_file", '{"path":"b.txt"}'),
    ];
    const { model, requests } = scriptedModel([{ tool_calls: calls }, { content: "ok" }]);
    const finishOrder: string[] = [];
    const release: (() => void)[] = [];
    const executeTool: ToolExecutor = (name, args) =>
      new Promise((resolve) => {
        const label = String(args.path ?? args.query);
        release.push(() => {
          finishOrder.push(label);
          resolve(`${name}#${label}`);
        });
        // Once all three have started, finish them last to first.
        if (release.length === 3) for (const r of [...release].reverse()) r();
      });
    const result = await runAgentLoop(options(model, { executeTool, tools: [tool("read_file"), tool("web_search")] }));
    expect(finishOrder).toEqual(["b.txt", "q", "a.txt"]);
    const tools = result.messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => [m.tool_call_id, m.content])).toEqual([
      [calls[0]!.id, "read_file#a.txt"],
      [calls[1]!.id, "web_search#q"],
      [calls[2]!.id, "read_file#b.txt"],
    ]);
    expect(requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "read_file#a.txt",
      "web_search#q",
      "read_file#b.txt",
    ]);
  });

  it("runs a turn in call order, one call at a time, when any call is not parallel-safe", async () => {
    const files = new Map<string, string>();
    const log: string[] = [];
    let running = 0;
    let peak = 0;
    const executeTool: ToolExecutor = async (name, args) => {
      running++;
      peak = Math.max(peak, running);
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, 5));
      let out: string;
      if (name === "terminal") {
        // `echo late > r.txt`, the write landing only after a delay
        await new Promise((r) => setTimeout(r, 20));
        files.set("r.txt", "late\n");
        out = JSON.stringify({ output: "", exit_code: 0 });
      } else {
        out = files.has(String(args.path))
          ? JSON.stringify({ content: files.get(String(args.path)) })
          : JSON.stringify({ error: "File not found" });
      }
      log.push(`end ${name}`);
      running--;
      return out;
    };
    const { model } = scriptedModel([
      { tool_calls: [call("terminal", '{"command":"echo late > r.txt"}'), call("read_file", '{"path":"r.txt"}')] },
      { content: "ok" },
    ]);
    const result = await runAgentLoop(options(model, { executeTool }));
    expect(peak).toBe(1);
    expect(log).toEqual(["start terminal", "end terminal", "start read_file", "end read_file"]);
    expect(JSON.parse(result.messages[4]!.content as string)).toEqual({ content: "late\n" });
  });

  it("file tools run together only on distinct paths", async () => {
    const peakFor = async (calls: ToolCall[]) => {
      let running = 0;
      let peak = 0;
      const executeTool: ToolExecutor = async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        return "{}";
      };
      const { model } = scriptedModel([{ tool_calls: calls }, { content: "ok" }]);
      await runAgentLoop(
        options(model, { executeTool, tools: [tool("read_file"), tool("write_file"), tool("patch")] }),
      );
      return peak;
    };
    expect(
      await peakFor([
        call("write_file", '{"path":"a.txt","content":"x"}'),
        call("write_file", '{"path":"sub/b.txt","content":"y"}'),
      ]),
    ).toBe(2);
    expect(
      await peakFor([
        call("write_file", '{"path":"out.txt","content":"x"}'),
        call("read_file", '{"path":"./out.txt"}'),
      ]),
    ).toBe(1);
    expect(
      await peakFor([call("write_file", '{"path":"src/x.ts","content":"x"}'), call("patch", '{"path":"src"}')]),
    ).toBe(1);
    expect(
      await peakFor([call("read_file", '{"path":"a/../b.txt"}'), call("write_file", '{"path":"b.txt","content":"x"}')]),
    ).toBe(1);
    expect(
      await peakFor([
        call("read_file", '{"path":"/workspace/a.txt"}'),
        call("write_file", '{"path":"a.txt","content":"x"}'),
      ]),
    ).toBe(1);
    expect(await peakFor([call("read_file", '{"offset":2}'), call("read_file", '{"path":"b.txt"}')])).toBe(1);
  });

  it("identical calls of one turn run once; every call id gets its result", async () => {
    const executed: string[] = [];
    const executeTool: ToolExecutor = async (name, args) => {
      executed.push(`${name} ${JSON.stringify(args)}`);
      return `result ${executed.length}`;
    };
    const calls = [
      call("terminal", '{"command":"date","timeout":5}'),
      call("terminal", '{"timeout":5, "command":"date"}'),
      call("terminal", '{"command":"ls"}'),
    ];
    const { model } = scriptedModel([{ tool_calls: calls }, { content: "ok" }]);
    const result = await runAgentLoop(options(model, { executeTool }));
    expect(executed).toEqual(['terminal {"command":"date","timeout":5}', 'terminal {"command":"ls"}']);
    expect(
      result.messages
        .filter((m) => m.role === "tool")
        .map((m) => [(m as { tool_call_id: string }).tool_call_id, m.content]),
    ).toEqual([
      [calls[0]!.id, "result 1"],
      [calls[1]!.id, "result 1"],
      [calls[2]!.id, "result 2"],
    ]);
  });

  it("runs at most toolConcurrency parallel-safe calls at once", async () => {
    const { model } = scriptedModel([
      { tool_calls: Array.from({ length: 5 }, (_, i) => call("read_file", `{"path":"f${i}"}`)) },
      { content: "ok" },
    ]);
    let running = 0;
    let peak = 0;
    const executeTool: ToolExecutor = async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return "{}";
    };
    await runAgentLoop(options(model, { executeTool, toolConcurrency: 2 }));
    expect(peak).toBe(2);
  });

  it("an abort during a tool throws AgentLoopAborted carrying what was done so far", async () => {
    const abort = new AbortController();
    const { model } = scriptedModel([
      { tool_calls: [call("terminal", '{"n":1}')] },
      { tool_calls: [call("terminal", '{"n":2}')] },
    ]);
    let started = 0;
    const executeTool: ToolExecutor = (_name, args) => {
      started++;
      if (args.n === 1) return Promise.resolve("first");
      abort.abort(new Error("cancelled by the run"));
      return new Promise(() => {}); // a tool that ignores the signal must not hold the loop
    };
    const err = await runAgentLoop(options(model, { executeTool, signal: abort.signal })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentLoopAborted);
    const aborted = err as AgentLoopAborted;
    expect((aborted.cause as Error).message).toBe("cancelled by the run");
    expect(started).toBe(2);
    expect(aborted.partialResult).toMatchObject({ apiCalls: 2, completed: false, partial: false });
    expect(aborted.partialResult.usage.total_tokens).toBe(24);
    expect(aborted.partialResult.messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
  });

  it("a model failure throws AgentLoopAborted with the turns before it", async () => {
    const { model } = scriptedModel([{ tool_calls: [call("terminal")] }]); // no second turn: the model throws
    const err = (await runAgentLoop(options(model)).catch((e: unknown) => e)) as AgentLoopAborted;
    expect(err).toBeInstanceOf(AgentLoopAborted);
    expect((err.cause as Error).message).toBe("script has no turn 1");
    expect(err.partialResult.apiCalls).toBe(1);
    expect(err.partialResult.messages).toHaveLength(4);
  });

  it("cuts a tool result over the cap, with a notice saying how long it was", async () => {
    const { model } = scriptedModel([{ tool_calls: [call("terminal"), call("read_file")] }, { content: "ok" }]);
    const executeTool: ToolExecutor = async (name) => (name === "terminal" ? "x".repeat(25) : "short");
    const result = await runAgentLoop(options(model, { executeTool, maxToolResultChars: 10 }));
    const [long, short] = result.messages.filter((m) => m.role === "tool").map((m) => m.content);
    expect(long).toBe(`${"x".repeat(10)}\n[Truncated: tool response was 25 chars, exceeding the 10 char limit]`);
    expect(short).toBe("short");
  });
});

describe("agent loop: the record of model calls and harness turns", () => {
  const indexes = (r: { modelCalls: { message_index?: number }[] }) => r.modelCalls.map((c) => c.message_index);

  it("links each call to the message it produced; a cut tool call's first answer is thrown away", async () => {
    const { model } = scriptedModel([
      { tool_calls: [call("terminal")], finish: "length" },
      { tool_calls: [call("terminal")] },
      { content: "done" },
    ]);
    const result = await runAgentLoop(options(model));
    expect(indexes(result)).toEqual([undefined, 2, 4]);
    expect(result.modelCalls.map((c) => c.finish_reason)).toEqual(["length", "tool_calls", "stop"]);
    expect(
      result.modelCalls.every((c) => c.model === "scripted-test" && Date.parse(c.ended_at) >= Date.parse(c.started_at)),
    ).toBe(true);
    expect(result.modelCalls[0]!.usage).toEqual({ prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 });
    expect(result.injectedMessages).toEqual([]);
  });

  it("marks the max-turns closing turn and links the summary call; an empty summary is thrown away", async () => {
    const { model } = scriptedModel((n) =>
      n < 2 ? { tool_calls: [call("terminal", `{"n":${n}}`)] } : n === 2 ? { content: "" } : { content: "summary" },
    );
    const result = await runAgentLoop(options(model, { maxTurns: 2 }));
    expect(result.messages[6]).toEqual({ role: "user", content: MAX_TURNS_MESSAGE });
    expect(result.injectedMessages).toEqual([6]);
    expect(indexes(result)).toEqual([2, 4, undefined, 7]);
  });

  it("a replaced reasoning-only answer counts as thrown away; the (empty) stand-in is the harness's", async () => {
    const { model } = scriptedModel([{ content: null, reasoning: "hmm" }, { content: "answer" }]);
    const replaced = await runAgentLoop(options(model, { continueReasoningOnly: true }));
    expect(indexes(replaced)).toEqual([undefined, 2]);
    const { model: silent } = scriptedModel(() => ({ content: "" }));
    const empty = await runAgentLoop(options(silent));
    expect(empty.messages[2]).toMatchObject({ content: EMPTY_RESPONSE_CONTENT });
    expect(indexes(empty)).toEqual([undefined, undefined, undefined, 2]);
    expect(empty.injectedMessages).toEqual([2]);
  });

  it("marks the continuation turn after a cut answer and keeps the record when the loop is aborted", async () => {
    const { model } = scriptedModel((n) =>
      n === 0 ? { content: "part", finish: "length" } : { tool_calls: [call("terminal")] },
    );
    const failing: ToolExecutor = async () => {
      throw new Error("tool exploded");
    };
    const err = await runAgentLoop(options(model, { executeTool: failing })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentLoopAborted);
    const partial = (err as AgentLoopAborted).partialResult;
    expect(partial.messages[3]).toEqual({ role: "user", content: LENGTH_CONTINUATION_MESSAGE });
    expect(partial.injectedMessages).toEqual([3]);
    expect(indexes(partial)).toEqual([2, 4]);
  });

  it("runs each tool call with its own id in the context (approval records name it)", async () => {
    const seen: (string | undefined)[] = [];
    const { model } = scriptedModel([
      { tool_calls: [call("terminal", '{"a":1}'), call("terminal", '{"a":2}')] },
      { content: "ok" },
    ]);
    await runAgentLoop(options(model, { executeTool: async (_n, _a, c) => (seen.push(c.toolCallId), "{}") }));
    expect(seen).toHaveLength(2);
    expect(seen.every((id) => typeof id === "string" && id.startsWith("call_"))).toBe(true);
    expect(new Set(seen).size).toBe(2);
  });
});
