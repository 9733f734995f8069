/**
 * Hostile MCP servers through a real run: servers that hang when a task starts them, die mid-call, or are stuck
 * in a call when the run ends. A task's time limit bounds them, the task is recorded with a clear reason, and no
 * server process outlives the run.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import {
  alivePids,
  hostileDir,
  hostileRun,
  killPids,
  scriptedByPrompt,
  toolResults,
  type HostileRun,
} from "./helpers/mcp_hostile.js";

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

  /**
   * One run (--task-timeout 2) of two servers, a task each that ends at its time limit: `s` answers its listing, then
   * hangs on initialize; `h`, shared, hangs in the call.
   */
  describe("one run whose tasks time out", () => {
    let r: HostileRun;
    let pidfile: { s: string; h: string };
    const failures = () => r.failed.map((f) => [f.task_id, f.outcome]).sort();
    beforeAll(async () => {
      const { dir, server } = hostileDir();
      pidfile = { s: join(dir, "pids-s"), h: join(dir, "pids-h") };
      pidfiles.push(pidfile.s, pidfile.h);
      const hangsOnInit = { init: "hang-after-listing", marker: join(dir, "listed"), pidfile: pidfile.s };
      const hangsInCall = { calls: { t: "hang" }, pidfile: pidfile.h };
      r = await hostileRun(
        dir,
        model.baseURL,
        {
          mcpServers: {
            s: { command: "python3", args: server(hangsOnInit), where: "host", connect_timeout: 120 },
            h: { command: "python3", args: server(hangsInCall), where: "host", shared: true },
          },
        },
        [
          { id: "a", prompt: call("mcp_s_t"), toolsets: ["mcp-s"] },
          { id: "c", prompt: call("mcp_h_t"), toolsets: ["mcp-h"] },
        ],
        ["--env", "host", "--task-timeout", "2", "--workers", "1"],
        { timeoutMs: 40_000 },
      );
    }, 60_000);

    it("a server that hangs on initialize when its task starts it: --task-timeout bounds the task, no process left", () => {
      expect(r.exitCode, r.stderr).toBe(1);
      expect(failures()).toEqual([
        ["a", "timeout"],
        ["c", "timeout"],
      ]);
      // The task's 2 s, not the server's 120 s start time-out.
      expect(r.ms).toBeLessThan(20_000);
      expect(alivePids(pidfile.s)).toEqual([]);
    });

    it("a shared server stuck in a call when the run ends does not outlive the run", () => {
      expect(r.exitCode, r.stderr).toBe(1);
      expect(failures()).toEqual([
        ["a", "timeout"],
        ["c", "timeout"],
      ]);
      // Two starts: the listing (closed at once) and the task's shared connection.
      expect(readFileSync(pidfile.h, "utf8").trim().split("\n")).toHaveLength(2);
      expect(alivePids(pidfile.h)).toEqual([]);
    });
  });

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
});
