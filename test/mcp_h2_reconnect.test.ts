/**
 * An MCP stdio server that exits during a task is started again (as Hermes' MCP client does: a call that finds
 * the server gone before it was sent restarts it and is sent again; one that it died in is not repeated), through
 * a real run of the built CLI. The restarts are bounded: a server that cannot start again ends nothing past the
 * task's time limit, and leaves no process behind.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeBwrap } from "../tools/environments/local/bwrap.js";
import { ROOT, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { H2_SH_SERVER as server } from "./helpers/mcp_h2_light.js";
import {
  alivePids,
  hostileRun,
  killPids,
  scriptedByPrompt,
  toolResults,
  type HostileRun,
} from "./helpers/mcp_hostile.js";
import { reaped, starts } from "./helpers/mcp_h2_server.js";
import { waitUntil } from "./helpers/wait.js";

const turns = (...names: string[]) => JSON.stringify(names.map((name) => [{ name, arguments: {} }]));

describe("MCP stdio servers that exit during a task are started again", () => {
  let model: FakeOpenAI;
  const pidfiles: string[] = [];
  /** By prompt, the pidfile of its server: the model answers a turn only once the one that answered has exited. */
  const waitFor = new Map<string, string>();
  beforeAll(async () => {
    model = await startFakeOpenAI(async (req: RecordedRequest) => {
      const messages = req.body.messages as { role: string; content: string }[];
      const pidfile = waitFor.get(messages.find((m) => m.role === "user")?.content ?? "");
      if (pidfile && !req.body.response_format && messages.some((m) => m.role === "assistant")) {
        await waitUntil(() => reaped(pidfile), 5000);
      }
      return scriptedByPrompt(req);
    });
  });
  afterAll(async () => {
    for (const f of pidfiles) killPids(f);
    await model.close();
  });

  function pidfileIn(dir: string, name: string) {
    const pidfile = join(dir, name);
    pidfiles.push(pidfile);
    return pidfile;
  }

  /**
   * One run (--env host) for three servers, a task each: `s` on the host and `t` in the task's environment exit
   * after each call; `u` on the host dies in its first call.
   */
  describe("in one run", () => {
    let r: HostileRun;
    const pids = { s: "", t: "", u: "" };
    const prompts = {
      s: turns("mcp_s_whoami", "mcp_s_whoami", "mcp_s_whoami"),
      t: turns("mcp_t_whoami", "mcp_t_whoami", "mcp_t_whoami"),
      u: turns("mcp_u_crash", "mcp_u_whoami"),
    };
    beforeAll(async () => {
      const dir = tempDir("hb-h2-mcp-");
      for (const name of ["s", "t", "u"] as const) pids[name] = pidfileIn(dir, `pids-${name}`);
      waitFor.set(prompts.s, pids.s).set(prompts.t, pids.t);
      r = await hostileRun(
        dir,
        model.baseURL,
        {
          mcpServers: {
            s: {
              command: server.command,
              args: server.args({ pidfile: pids.s, exitAfterCall: true }),
              where: "host",
            },
            t: { command: server.command, args: server.args({ pidfile: pids.t, exitAfterCall: true }) },
            u: { command: server.command, args: server.args({ pidfile: pids.u }), where: "host" },
          },
        },
        [
          { id: "a", prompt: prompts.s, toolsets: ["mcp-s"] },
          { id: "b", prompt: prompts.t, toolsets: ["mcp-t"] },
          { id: "c", prompt: prompts.u, toolsets: ["mcp-u"] },
        ],
        ["--env", "host", "--workers", "1"],
        { timeoutMs: 60_000 },
      );
    }, 90_000);
    const entry = (id: string) => r.entries.find((e) => e.task_id === id);

    for (const [label, name, task] of [
      ["on the host (where: host)", "s", "a"],
      ["in the task's environment (--env host)", "t", "b"],
    ] as const) {
      it(`a server ${label} that exits after each call: every later call starts it again and succeeds`, () => {
        expect(r.exitCode, r.stderr).toBe(0);
        const results = toolResults(entry(task));
        // The listing's start was the first; each call had a server of its own.
        expect(results).toEqual([
          { result: expect.stringMatching(/^pid=\d+ start=2$/) },
          { result: expect.stringMatching(/^pid=\d+ start=3$/) },
          { result: expect.stringMatching(/^pid=\d+ start=4$/) },
        ]);
        expect(starts(pids[name])).toBe(4);
        expect(alivePids(pids[name])).toEqual([]);
        // Each restart is in the run's events.log, under the task.
        const events = readFileSync(join(r.dir, "runs", "r", "events.log"), "utf8");
        expect(events.match(new RegExp(`task ${task}: .*restart 1 of 5: started again`, "g"))?.length).toBe(2);
      });
    }

    it("a server that dies in a call: that call is {error}, not repeated; the next call starts it again", () => {
      expect(r.exitCode, r.stderr).toBe(0);
      const [crash, after] = toolResults(entry("c"));
      expect(crash.error).toMatch(/MCP tool crash of server 'u' failed: .*h2: dying in the call/);
      expect(crash.error).toMatch(/not (repeated|sent again)/);
      expect(after).toEqual({ result: expect.stringMatching(/^pid=\d+ start=3$/) });
      // The listing's, the crashed one and the restarted one: the crashed call was not sent again.
      expect(starts(pids.u)).toBe(3);
      expect(alivePids(pids.u)).toEqual([]);
    });
  });

  it.skipIf(!probeBwrap().ok)(
    "a server in the task's local sandbox that dies in a call: the next call starts it again there",
    async () => {
      const dir = tempDir("hb-h2-mcp-");
      const r = await hostileRun(
        dir,
        model.baseURL,
        // Its pidfile in the sandbox's working folder (the task's), its script read-only from test/fixtures.
        { mcpServers: { s: { command: server.command, args: server.args({ pidfile: "h2-pids" }) } } },
        [{ id: "a", prompt: turns("mcp_s_crash", "mcp_s_whoami") }],
        [
          "--toolsets",
          "mcp-s",
          "--env",
          "local",
          // Where the sandbox sees the script, apart from the dataset's folder and outside /tmp (its own).
          "--sandbox-ro",
          join(ROOT, "test", "fixtures"),
          "--workers",
          "1",
        ],
        { timeoutMs: 60_000 },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const [crash, after] = toolResults(r.entries[0]);
      expect(crash.error).toMatch(/MCP tool crash of server 's' failed: .*h2: dying in the call.*not sent again/);
      // The task's first start crashed; the second answered.
      expect(after).toEqual({ result: expect.stringMatching(/^pid=\d+ start=2$/) });
    },
    90_000,
  );

  it("a server that cannot start again: its restarts end with the task's time limit, no process is left", async () => {
    const dir = tempDir("hb-h2-mcp-");
    const pidfile = pidfileIn(dir, "pids");
    const prompt = turns("mcp_s_whoami", "mcp_s_whoami", "mcp_s_whoami");
    waitFor.set(prompt, pidfile);
    const r = await hostileRun(
      dir,
      model.baseURL,
      {
        mcpServers: {
          s: {
            command: server.command,
            args: server.args({ pidfile, exitAfterCall: true, failFromStart: 3 }),
            where: "host",
          },
        },
      },
      [{ id: "a", prompt }],
      ["--toolsets", "mcp-s", "--env", "host", "--workers", "1", "--task-timeout", "6"],
      { timeoutMs: 60_000 },
    );
    expect(r.ms).toBeLessThan(30_000);
    expect(r.failed.map((f) => [f.task_id, f.outcome])).toEqual([["a", "timeout"]]);
    // Started by the listing, the task, then restarted with a back-off (1 s, 2 s, ...) until the task ended.
    expect(starts(pidfile)).toBeGreaterThanOrEqual(4);
    expect(starts(pidfile)).toBeLessThanOrEqual(6);
    expect(alivePids(pidfile)).toEqual([]);
  }, 90_000);
});
