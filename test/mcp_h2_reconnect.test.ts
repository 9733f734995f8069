/**
 * An MCP stdio server that exits during a task is started again (as Hermes' MCP client does: a call that finds
 * the server gone before it was sent restarts it and is sent again; one that it died in is not repeated), through
 * a real run of the built CLI. The restarts are bounded: a server that cannot start again ends nothing past the
 * task's time limit, and leaves no process behind.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeBwrap } from "../tools/environments/local/bwrap.js";
import { ROOT, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { alivePids, hostileRun, killPids, scriptedByPrompt, toolResults } from "./helpers/mcp_hostile.js";
import { h2Server, reaped, starts } from "./helpers/mcp_h2_server.js";
import { waitUntil } from "./helpers/wait.js";

const turns = (...names: string[]) => JSON.stringify(names.map((name) => [{ name, arguments: {} }]));

describe("MCP stdio servers that exit during a task are started again", () => {
  let model: FakeOpenAI;
  const pidfiles: string[] = [];
  const cleanUp: string[] = [];
  /** The current test's pidfile: the model answers a turn only once the server that answered before has exited. */
  let waitFor: string | undefined;
  beforeAll(async () => {
    model = await startFakeOpenAI(async (req: RecordedRequest) => {
      if (
        waitFor &&
        !req.body.response_format &&
        req.body.messages.some((m: { role: string }) => m.role === "assistant")
      ) {
        const pidfile = waitFor;
        await waitUntil(() => reaped(pidfile), 5000);
      }
      return scriptedByPrompt(req);
    });
  });
  afterAll(async () => {
    for (const f of pidfiles) killPids(f);
    for (const d of cleanUp) rmSync(d, { recursive: true, force: true });
    await model.close();
  });

  function setUp() {
    const dir = tempDir("hb-h2-mcp-");
    const pidfile = join(dir, "pids");
    pidfiles.push(pidfile);
    waitFor = pidfile;
    return { dir, pidfile, server: h2Server(dir) };
  }

  for (const [label, where, env] of [
    ["on the host (where: host)", "host", "host"],
    ["in the task's environment (--env host)", "sandbox", "host"],
  ] as const) {
    it(`a server ${label} that exits after each call: every later call starts it again and succeeds`, async () => {
      const { dir, pidfile, server } = setUp();
      const r = await hostileRun(
        dir,
        model.baseURL,
        {
          mcpServers: {
            s: { command: process.execPath, args: server.args({ pidfile, exitAfterCall: true }), where },
          },
        },
        [{ id: "a", prompt: turns("mcp_s_whoami", "mcp_s_whoami", "mcp_s_whoami") }],
        ["--toolsets", "mcp-s", "--env", env, "--workers", "1"],
        { timeoutMs: 60_000 },
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const results = toolResults(r.entries[0]);
      // The listing's start was the first; each call had a server of its own.
      expect(results).toEqual([
        { result: expect.stringMatching(/^pid=\d+ start=2$/) },
        { result: expect.stringMatching(/^pid=\d+ start=3$/) },
        { result: expect.stringMatching(/^pid=\d+ start=4$/) },
      ]);
      expect(starts(pidfile)).toBe(4);
      expect(alivePids(pidfile)).toEqual([]);
      // Each restart is in the run's events.log, under the task.
      const events = readFileSync(join(dir, "runs", "r", "events.log"), "utf8");
      expect(events.match(/task a: .*restart 1 of 5: started again/g)?.length).toBe(2);
    }, 90_000);
  }

  it("a server that dies in a call: that call is {error}, not repeated; the next call starts it again", async () => {
    const { dir, pidfile, server } = setUp();
    waitFor = undefined;
    const r = await hostileRun(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: process.execPath, args: server.args({ pidfile }), where: "host" } } },
      [{ id: "a", prompt: turns("mcp_s_crash", "mcp_s_whoami") }],
      ["--toolsets", "mcp-s", "--env", "host", "--workers", "1"],
      { timeoutMs: 60_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const [crash, after] = toolResults(r.entries[0]);
    expect(crash.error).toMatch(/MCP tool crash of server 's' failed: .*h2: dying in the call/);
    expect(crash.error).toMatch(/not (repeated|sent again)/);
    expect(after).toEqual({ result: expect.stringMatching(/^pid=\d+ start=3$/) });
    // The listing's, the crashed one and the restarted one: the crashed call was not sent again.
    expect(starts(pidfile)).toBe(3);
    expect(alivePids(pidfile)).toEqual([]);
  }, 90_000);

  it.skipIf(!probeBwrap().ok)(
    "a server in the task's local sandbox that dies in a call: the next call starts it again there",
    async () => {
      const { dir } = setUp();
      waitFor = undefined;
      // Where the sandbox sees it (--sandbox-ro), apart from the dataset's folder and outside /tmp (its own).
      const srv = mkdtempSync(join(ROOT, ".hb-h2-srv-"));
      cleanUp.push(srv);
      // Readable by the sandbox's user.
      chmodSync(srv, 0o755);
      const server = h2Server(srv);
      const r = await hostileRun(
        dir,
        model.baseURL,
        // Its pidfile in the sandbox's working folder (the task's), its script read-only from the test's folder.
        { mcpServers: { s: { command: "node", args: server.args({ pidfile: "h2-pids" }) } } },
        [{ id: "a", prompt: turns("mcp_s_crash", "mcp_s_whoami") }],
        [
          "--toolsets",
          "mcp-s",
          "--env",
          "local",
          "--sandbox-ro",
          srv,
          "--sandbox-ro",
          join(ROOT, "node_modules"),
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
    const { dir, pidfile, server } = setUp();
    const r = await hostileRun(
      dir,
      model.baseURL,
      {
        mcpServers: {
          s: {
            command: process.execPath,
            args: server.args({ pidfile, exitAfterCall: true, failFromStart: 3 }),
            where: "host",
          },
        },
      },
      [{ id: "a", prompt: turns("mcp_s_whoami", "mcp_s_whoami", "mcp_s_whoami") }],
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
