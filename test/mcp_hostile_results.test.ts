/**
 * Hostile MCP results through a real run: an answer larger than a stdio message may be, non-text content, an
 * error result. Each result is a JSON string ({"result"} or {"error"}), and one task's server never takes down
 * the other tasks of its worker thread.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { hostileDir, hostileRun, scriptedByPrompt, toolResults } from "./helpers/mcp_hostile.js";

const call = (name: string, args: Record<string, unknown> = {}) => JSON.stringify([{ name, arguments: args }]);

describe("hostile MCP servers: results", () => {
  let model: FakeOpenAI;
  beforeAll(async () => {
    model = await startFakeOpenAI(scriptedByPrompt);
  });
  afterAll(async () => {
    await model.close();
  });

  it("12 MB and 40 MB answers on stdio: the first truncated like any tool result, the second an {error}; the other tasks of the worker thread finish", async () => {
    const { dir, server } = hostileDir();
    const cfg = {
      calls: { big: { text_of_size: 12 * 2 ** 20 }, huge: { text_of_size: 40 * 2 ** 20 }, slow: "slow" },
      tools: ["big", "huge", "slow"].map((name) => ({ name, inputSchema: { type: "object" } })),
    };
    const r = await hostileRun(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: "python3", args: server(cfg), where: "host" } } },
      [
        { id: "slow", prompt: call("mcp_s_slow", { n: 1 }) },
        { id: "big", prompt: call("mcp_s_big") },
        { id: "huge", prompt: call("mcp_s_huge") },
      ],
      ["--toolsets", "mcp-s", "--env", "host", "--workers", "1"],
    );
    expect(r.failed.map((f) => [f.task_id, f.outcome, f.error])).toEqual([]);
    expect(r.exitCode, r.stderr).toBe(0);
    const byId = Object.fromEntries(r.entries.map((e) => [e.task_id, e]));
    expect(toolResults(byId.slow)).toEqual([{ result: 'args={"n": 1}' }]);
    const big = byId.big.messages.find((m: any) => m.role === "tool").content as string;
    expect(big.length).toBeLessThan(200_000);
    expect(big).toMatch(/Truncated: tool response was \d+ chars/);
    const [huge] = toolResults(byId.huge);
    expect(huge.error).toMatch(/MCP tool huge of server 's' failed: .*message over 32 MB/);
  }, 30_000);
});
