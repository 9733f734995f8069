/**
 * Hostile MCP servers through a real run: servers that hang when a task starts them, die mid-call, or are stuck
 * in a call when the run ends. A task's time limit bounds them, the task is recorded with a clear reason, and no
 * server process outlives the run.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { alivePids, hostileDir, hostileRun, killPids, scriptedByPrompt, toolResults } from "./helpers/mcp_hostile.js";

const call = (name: string, args: Record<string, unknown> = {}) => JSON.stringify([{ name, arguments: args }]);

describe("hostile MCP servers: lifecycle", () => {
  let model: FakeOpenAI;
  const pidfiles: string[] = [];
  beforeAll(async () => {
    model = await startFakeOpenAI(scriptedByPrompt);
  });
  afterAll(async () => {
    for (const f of pidfiles) killPids(f);
    await model.close();
  });

  it("a server that hangs on initialize when its task starts it: --task-timeout bounds the task, no process left", async () => {
    const { dir, server } = hostileDir();
    const pidfile = join(dir, "pids");
    pidfiles.push(pidfile);
    const cfg = { init: "hang-after-listing", marker: join(dir, "listed"), pidfile };
    const r = await hostileRun(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: "python3", args: server(cfg), where: "host", connect_timeout: 120 } } },
      [{ id: "a", prompt: call("mcp_s_t") }],
      ["--toolsets", "mcp-s", "--env", "host", "--task-timeout", "2", "--workers", "1"],
      { timeoutMs: 40_000 },
    );
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.failed.map((f) => [f.task_id, f.outcome])).toEqual([["a", "timeout"]]);
    // The task's 2 s, not the server's 120 s start time-out.
    expect(r.ms).toBeLessThan(20_000);
    expect(alivePids(pidfile)).toEqual([]);
  }, 60_000);

  it("a server that dies mid-call: that call is {error} naming the server's exit and its stderr; the next call starts it again", async () => {
    const { dir, server } = hostileDir();
    const pidfile = join(dir, "pids");
    pidfiles.push(pidfile);
    const cfg = {
      calls: { boom: "crash" },
      pidfile,
      tools: ["boom", "t"].map((name) => ({ name, inputSchema: { type: "object" } })),
    };
    const r = await hostileRun(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: "python3", args: server(cfg), where: "host" } } },
      [
        {
          id: "a",
          prompt: JSON.stringify([[{ name: "mcp_s_boom", arguments: {} }], [{ name: "mcp_s_t", arguments: { n: 1 } }]]),
        },
      ],
      ["--toolsets", "mcp-s", "--env", "host"],
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [boom, after] = toolResults(r.entries[0]);
    expect(boom.error).toMatch(/MCP tool boom of server 's' failed: .*hostile: segfault in the tool/);
    expect(after).toEqual({ result: 'args={"n": 1}' });
    expect(alivePids(pidfile)).toEqual([]);
  }, 30_000);

  it("a shared server stuck in a call when the run ends does not outlive the run", async () => {
    const { dir, server } = hostileDir();
    const pidfile = join(dir, "pids");
    pidfiles.push(pidfile);
    const cfg = { calls: { t: "hang" }, pidfile };
    const r = await hostileRun(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: "python3", args: server(cfg), where: "host", shared: true } } },
      [{ id: "a", prompt: call("mcp_s_t") }],
      ["--toolsets", "mcp-s", "--env", "host", "--task-timeout", "2", "--workers", "1"],
      { timeoutMs: 30_000 },
    );
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.failed.map((f) => [f.task_id, f.outcome])).toEqual([["a", "timeout"]]);
    // Two starts: the listing (closed at once) and the task's shared connection.
    expect(readFileSync(pidfile, "utf8").trim().split("\n")).toHaveLength(2);
    expect(alivePids(pidfile)).toEqual([]);
  }, 40_000);
});
