/**
 * A built-in, network-free demo model (`--model scripted`). It reads the prompt, plans a few plausible
 * tool calls with the tools it was given (shell arithmetic, writing and reading files, running a Python
 * script, searching, a todo plan), then answers from the tool results. Deterministic: the same prompt
 * and tools give the same trajectory. It is a demo and a test double, not an agent.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { OpenAITool } from "../../tools/registry.js";
import type { ChatModel, ChatRequest, ChatResponse, ToolCall } from "../core/chat.js";
import type { ModelProvider } from "./provider.js";

interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
}

const FIB_PY = `a, b = 0, 1\nfor _ in range(10):\n    print(a)\n    a, b = b, a + b\n`;

function quoted(prompt: string): string | undefined {
  return /["'“‘]([^"'”’]{1,200})["'”’]/.exec(prompt)?.[1];
}

/** The turns of tool calls this prompt deserves, given the available tools. */
export function planToolCalls(prompt: string, available: Set<string>): PlannedCall[][] {
  const p = prompt.toLowerCase();
  const turns: PlannedCall[][] = [];
  const has = (n: string) => available.has(n);

  if (has("todo") && /\b(plan|todo|steps?)\b/.test(p)) {
    turns.push([
      {
        name: "todo",
        args: {
          todos: [
            { id: "1", content: "Understand the request", status: "completed" },
            { id: "2", content: "Do the work with the available tools", status: "in_progress" },
            { id: "3", content: "Report the result", status: "pending" },
          ],
        },
      },
    ]);
  }

  // "run `some command`": the demo does exactly that (it is how the approval gate shows up in a demo run).
  const explicit = /`([^`]+)`/.exec(prompt)?.[1];
  if (explicit && has("terminal")) {
    turns.push([{ name: "terminal", args: { command: explicit } }]);
    return turns;
  }

  const arithmetic = /(-?\d+)\s*([*x×+\-/])\s*(-?\d+)/.exec(prompt);
  const pyFile = /\b([\w-]+\.py)\b/.exec(prompt)?.[1];
  const dataFile = /\b([\w-]+\.(?:txt|md|json|csv|log))\b/.exec(prompt)?.[1];

  if (pyFile && has("write_file") && has("terminal")) {
    const body = /fibonacci/.test(p) ? FIB_PY : `print("hello from ${pyFile}")\n`;
    turns.push([{ name: "write_file", args: { path: pyFile, content: body } }]);
    turns.push([{ name: "terminal", args: { command: `python3 ${pyFile}` } }]);
  } else if (arithmetic && has("terminal")) {
    const [, a, op, b] = arithmetic;
    const sym = op === "x" || op === "×" ? "*" : op;
    turns.push([{ name: "terminal", args: { command: `echo $(( ${a} ${sym} ${b} ))` } }]);
  } else if (dataFile && has("write_file") && /\b(create|write|make|save)\b/.test(p)) {
    const content = quoted(prompt) ?? "created by the scripted demo model";
    turns.push([{ name: "write_file", args: { path: dataFile, content: `${content}\n` } }]);
    if (has("read_file")) turns.push([{ name: "read_file", args: { path: dataFile } }]);
  } else if (has("search_files") && /\b(search|find|grep|mention)/.test(p)) {
    const word = quoted(prompt) ?? /\b([A-Z]{3,})\b/.exec(prompt)?.[1] ?? "TODO";
    const calls: PlannedCall[] = [];
    if (has("write_file"))
      calls.push({
        name: "write_file",
        args: { path: "notes.md", content: `# notes\n- ${word}: check the scripted demo\n` },
      });
    if (calls.length) turns.push(calls);
    turns.push([{ name: "search_files", args: { pattern: word, path: "." } }]);
  } else if (dataFile && has("read_file")) {
    turns.push([{ name: "read_file", args: { path: dataFile } }]);
  } else if (has("terminal")) {
    // Two independent calls in one turn: shows parallel tool execution.
    const calls: PlannedCall[] = [{ name: "terminal", args: { command: "pwd && ls -la" } }];
    if (has("search_files")) calls.push({ name: "search_files", args: { pattern: "*", path: ".", target: "files" } });
    turns.push(calls);
  }
  return turns;
}

function summarizeToolOutput(content: string): string {
  try {
    const v = JSON.parse(content) as Record<string, unknown>;
    if (typeof v.error === "string" && v.error) return `error: ${v.error}`;
    for (const key of ["output", "content", "stdout"]) if (typeof v[key] === "string") return (v[key] as string).trim();
    return JSON.stringify(v);
  } catch {
    return content.trim();
  }
}

const approxTokens = (s: string) => Math.ceil(s.length / 4);

export class ScriptedModel implements ChatModel {
  readonly name = "scripted";
  private counter = 0;

  constructor(private readonly latencyMs = 0) {}

  async complete(req: ChatRequest): Promise<ChatResponse> {
    if (this.latencyMs > 0) await sleep(this.latencyMs, undefined, { signal: req.signal });
    req.signal?.throwIfAborted();
    const prompt = req.messages.find((m) => m.role === "user")?.content ?? "";
    const available = new Set((req.tools ?? []).map((t: OpenAITool) => t.function.name));
    const plan = planToolCalls(prompt, available);
    const turn = req.messages.filter((m) => m.role === "assistant").length;
    const promptTokens = req.messages.reduce(
      (n, m) => n + approxTokens(typeof m.content === "string" ? m.content : ""),
      0,
    );

    if (turn < plan.length) {
      const calls = plan[turn]!;
      const toolCalls: ToolCall[] = calls.map((c) => ({
        id: `call_scripted_${++this.counter}`,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      }));
      const reasoning = `Step ${turn + 1} of ${plan.length}: use ${calls.map((c) => c.name).join(" and ")}.`;
      return {
        message: { role: "assistant", content: null, tool_calls: toolCalls, reasoning },
        finishReason: "tool_calls",
        usage: { prompt_tokens: promptTokens, completion_tokens: 20, total_tokens: promptTokens + 20 },
      };
    }

    const results = req.messages.filter((m) => m.role === "tool").map((m) => summarizeToolOutput(m.content));
    const answer = results.length
      ? `Done. What the tools returned:\n${results.map((r) => `- ${r.split("\n").slice(0, 12).join("\n  ")}`).join("\n")}`
      : "I have no tools that fit this request, so here is my answer without them: this is the scripted demo model.";
    return {
      message: { role: "assistant", content: answer, reasoning: "All planned steps are done; summarise the results." },
      finishReason: "stop",
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: approxTokens(answer),
        total_tokens: promptTokens + approxTokens(answer),
      },
    };
  }
}

/** `scripted` or `scripted:<latency ms>` (the latency simulates a remote model, for benchmarks). */
export function parseScriptedModel(name: string | undefined): { latencyMs: number } | undefined {
  const m = /^scripted(?::(\d+))?$/.exec(name ?? "");
  return m ? { latencyMs: m[1] ? Number(m[1]) : 0 } : undefined;
}

export const scriptedProvider: ModelProvider = {
  name: "scripted",
  create: (o) => new ScriptedModel(parseScriptedModel(o.model)?.latencyMs ?? 0),
};
