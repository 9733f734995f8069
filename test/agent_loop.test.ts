/** The agent loop in process (src/agent/loop.ts) with a scripted ChatModel and scripted tools: no CLI, no network. */
import { describe, expect, it } from "vitest";
import { AgentLoopAborted, runAgentLoop, type AgentLoopOptions, type ToolExecutor } from "../src/agent/loop.js";
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
    const { model, requests } = scriptedModel([{ tool_calls: [call("terminal", '{"command":"ls"}')] }, { content: "all done", reasoning: "thought" }]);
    const result = await runAgentLoop(
      options(model, { ephemeralSystemPrompt: "EPHEMERAL", prefill: [{ role: "user", content: "PREFILL" }] }),
    );
    expect(result).toMatchObject({ completed: true, partial: false, end: "final_answer", finalResponse: "all done", apiCalls: 2 });
    expect(result.usage).toEqual({ prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 });
    expect(result.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(result.messages[0]).toEqual({ role: "system", content: "SYSTEM" });
    expect(result.messages[3]).toMatchObject({ role: "tool", name: "terminal", content: JSON.stringify({ output: 'terminal:{"command":"ls"}' }) });
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

  it("stops at max turns: neither completed nor partial", async () => {
    const { model, requests } = scriptedModel(() => ({ tool_calls: [call("terminal")] }));
    const result = await runAgentLoop(options(model, { maxTurns: 3 }));
    expect(result).toMatchObject({ completed: false, partial: false, end: "max_turns", apiCalls: 3, finalResponse: null });
    expect(requests).toHaveLength(3);
  });

  it("a final answer cut by the token limit is partial", async () => {
    const { model } = scriptedModel([{ content: "half an ans", finish: "length" }]);
    expect(await runAgentLoop(options(model))).toMatchObject({ completed: false, partial: true, end: "length", finalResponse: "half an ans" });
  });

  it("malformed calls in a row end the task as partial; a good call in between resets the count", async () => {
    const script: Turn[] = [
      { tool_calls: [call("no_such_tool")] },
      { tool_calls: [call("terminal")] }, // a good turn: the count starts again
      { tool_calls: [call("terminal", "{not json")] },
      { tool_calls: [call("terminal", "[1,2]"), call("nope")] },
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
    const errors = result.messages.filter((m) => m.role === "tool").map((m) => JSON.parse(m.content).error as string | undefined);
    expect(errors[0]).toMatch(/^Unknown tool 'no_such_tool'. Available tools: read_file, terminal$/);
    expect(errors[1]).toBeUndefined();
    expect(errors[2]).toMatch(/^Invalid JSON in the arguments of terminal/);
    expect(errors[3]).toMatch(/must be a JSON object, got an array/);
    expect(errors[4]).toMatch(/^Unknown tool 'nope'/);
  });

  it("gives tool results in call order, whatever order the tools finish in", async () => {
    const calls = [call("terminal", '{"n":1}'), call("read_file", '{"n":2}'), call("terminal", '{"n":3}')];
    const { model, requests } = scriptedModel([{ tool_calls: calls }, { content: "ok" }]);
    const finishOrder: number[] = [];
    const release: (() => void)[] = [];
    const executeTool: ToolExecutor = (name, args) =>
      new Promise((resolve) => {
        release.push(() => {
          finishOrder.push(args.n as number);
          resolve(`${name}#${String(args.n)}`);
        });
        // Once all three have started, finish them last to first.
        if (release.length === 3) for (const r of [...release].reverse()) r();
      });
    const result = await runAgentLoop(options(model, { executeTool }));
    expect(finishOrder).toEqual([3, 2, 1]);
    const tools = result.messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => [m.tool_call_id, m.content])).toEqual([
      [calls[0]!.id, "terminal#1"],
      [calls[1]!.id, "read_file#2"],
      [calls[2]!.id, "terminal#3"],
    ]);
    // The model's second request carries the three results in the same order.
    expect(requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["terminal#1", "read_file#2", "terminal#3"]);
  });

  it("runs at most toolConcurrency tools at once", async () => {
    const { model } = scriptedModel([{ tool_calls: Array.from({ length: 5 }, () => call("terminal")) }, { content: "ok" }]);
    let running = 0;
    let peak = 0;
    const executeTool: ToolExecutor = async () => {
      running++;
      peak = Math.max(peak, running);
      await Promise.resolve();
      await Promise.resolve();
      running--;
      return "{}";
    };
    await runAgentLoop(options(model, { executeTool, toolConcurrency: 2 }));
    expect(peak).toBe(2);
  });

  it("an abort during a tool throws AgentLoopAborted carrying what was done so far", async () => {
    const abort = new AbortController();
    const { model } = scriptedModel([{ tool_calls: [call("terminal", '{"n":1}')] }, { tool_calls: [call("terminal", '{"n":2}')] }]);
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
    expect(aborted.partialResult.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
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
