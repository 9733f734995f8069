/**
 * A task's MCP server connections when the server goes away (McpTaskSessions, in process, with real servers):
 * every restart is reported as a task event; Hermes' limits hold (5 restarts in a row without a call answered in
 * between, a back-off doubling from 1 s, a call waiting at most 15 s for one; shortened here); a server that keeps
 * failing is given up on with a clear error; an HTTP session the server dropped is made again, and the call is
 * sent again only when it cannot have run (a read-only tool, or a refused connection).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseMcpConfig } from "../src/config/mcp_config.js";
import { closeSharedMcpConnections, discoverMcpServer, McpTaskSessions } from "../tools/mcp/mcp_tools.js";
import { MCP_RESTARTS } from "../tools/mcp/restarts.js";
import { tempDir } from "./helpers/cli.js";
import { alivePids, killPids } from "./helpers/mcp_hostile.js";
import { H2_SH_SERVER } from "./helpers/mcp_h2_light.js";
import { h2Server, reaped, starts } from "./helpers/mcp_h2_server.js";
import { waitUntil } from "./helpers/wait.js";

const noEnv = async () => {
  throw new Error("no environment in this test");
};
const config = (servers: unknown) => parseMcpConfig(JSON.stringify({ mcpServers: servers }), "mcp.json", {})[0]!;
const result = (r: { content?: unknown; error?: string }) => (r.error !== undefined ? { error: r.error } : r.content);

const HERMES = { ...MCP_RESTARTS };

describe("MCP restarts within a task", () => {
  const pidfiles: string[] = [];
  beforeAll(() => {
    // Hermes' numbers, at a tenth of a second's scale.
    Object.assign(MCP_RESTARTS, { firstBackoffMs: 50, maxBackoffMs: 400, callWaitMs: 20_000 });
  });
  afterAll(() => {
    Object.assign(MCP_RESTARTS, HERMES);
    for (const f of pidfiles) killPids(f);
  });

  it("are Hermes' numbers: 5 restarts, back-off from 1 s doubling up to 60 s (±20 %), a call waits 15 s", () => {
    expect(HERMES).toMatchObject({
      max: 5,
      firstBackoffMs: 1000,
      maxBackoffMs: 60_000,
      jitter: 0.2,
      callWaitMs: 15_000,
    });
  });

  async function stdioSessions(cfg: { exitAfterCall?: boolean; failFromStart?: number }) {
    const dir = tempDir("hb-h2-restarts-");
    const pidfile = join(dir, "pids");
    pidfiles.push(pidfile);
    const server = config({
      s: { command: H2_SH_SERVER.command, args: H2_SH_SERVER.args({ pidfile, ...cfg }), where: "host" },
    });
    const catalog = await discoverMcpServer(server);
    const events: string[] = [];
    const startFailures: string[] = [];
    const sessions = new McpTaskSessions([catalog], {
      getEnv: noEnv,
      onEvent: (m) => events.push(m),
      onStartFailure: (m) => startFailures.push(m),
    });
    return { pidfile, sessions, events, startFailures };
  }

  it("each restart is a task event; a call answered in between starts the count again", async () => {
    const { pidfile, sessions, events, startFailures } = await stdioSessions({ exitAfterCall: true });
    try {
      for (const n of [2, 3, 4]) {
        expect(result(await sessions.call("s", "whoami", {}))).toEqual({
          result: expect.stringMatching(new RegExp(`^pid=\\d+ start=${n}$`)),
        });
        expect(await waitUntil(() => reaped(pidfile))).toBe(true);
      }
      expect(events).toEqual([
        expect.stringMatching(/^MCP server 's' had exited; restart 1 of 5: started again$/),
        expect.stringMatching(/^MCP server 's' had exited; restart 1 of 5: started again$/),
      ]);
      expect(startFailures).toEqual([]);
    } finally {
      await sessions.close();
    }
    expect(alivePids(pidfile)).toEqual([]);
  }, 30_000);

  it("a server that cannot start again is given up on after 5 restarts: a clear error, at once for later calls", async () => {
    const { pidfile, sessions, events, startFailures } = await stdioSessions({ exitAfterCall: true, failFromStart: 3 });
    try {
      expect(result(await sessions.call("s", "whoami", {}))).toEqual({ result: expect.stringMatching(/start=2$/) });
      expect(await waitUntil(() => reaped(pidfile))).toBe(true);
      const failed = result(await sessions.call("s", "whoami", {})) as { error: string };
      expect(failed.error).toMatch(
        /^MCP server 's' had exited, and 5 restarts in a row did not bring it back \(the last: MCP server 's' did not start: .*h2: cannot start \(start 7\)\); gave up on it: its tools cannot be called again in this task$/,
      );
      // The listing's start, the task's, and 5 restarts: no more.
      expect(starts(pidfile)).toBe(7);
      const at = Date.now();
      expect(result(await sessions.call("s", "whoami", {}))).toEqual(failed);
      expect(Date.now() - at).toBeLessThan(500);
      expect(starts(pidfile)).toBe(7);
      expect(events).toEqual([
        ...[1, 2, 3, 4, 5].map((n) =>
          expect.stringMatching(new RegExp(`^MCP server 's' had exited; restart ${n} of 5: failed: .*did not start`)),
        ),
        expect.stringMatching(/^MCP server 's': gave up on it after 5 restarts in a row/),
      ]);
      // A restart's failure is not the task's start failure (that ends the task as an environment error).
      expect(startFailures).toEqual([]);
    } finally {
      await sessions.close();
    }
    expect(alivePids(pidfile)).toEqual([]);
  }, 30_000);

  // The SDK-made server here (the other tests' one is a shell script, to start cheaply).
  it("a shared server that exited is started again by another task's call; a task's end does not close it", async () => {
    const dir = tempDir("hb-h2-restarts-");
    const pidfile = join(dir, "pids");
    pidfiles.push(pidfile);
    const server = config({
      s: {
        command: process.execPath,
        args: h2Server(dir).args({ pidfile, exitAfterCall: true }),
        where: "host",
        shared: true,
      },
    });
    const catalog = await discoverMcpServer(server);
    const events: string[][] = [[], []];
    const tasks = events.map((e) => new McpTaskSessions([catalog], { getEnv: noEnv, onEvent: (m) => e.push(m) }));
    try {
      expect(result(await tasks[0]!.call("s", "whoami", {}))).toEqual({ result: expect.stringMatching(/start=2$/) });
      await tasks[0]!.close();
      expect(await waitUntil(() => reaped(pidfile))).toBe(true);
      expect(result(await tasks[1]!.call("s", "whoami", {}))).toEqual({ result: expect.stringMatching(/start=3$/) });
      expect(events).toEqual([
        [],
        [expect.stringMatching(/^MCP server 's' had exited; restart 1 of 5: started again$/)],
      ]);
    } finally {
      await tasks[1]!.close();
      await closeSharedMcpConnections();
    }
    expect(alivePids(pidfile)).toEqual([]);
  }, 30_000);

  it("a call waits for a restart at most callWaitMs; the task's end stops the restarts", async () => {
    const { pidfile, sessions } = await stdioSessions({ exitAfterCall: true, failFromStart: 3 });
    const saved = { ...MCP_RESTARTS };
    Object.assign(MCP_RESTARTS, { firstBackoffMs: 1000, callWaitMs: 300 });
    try {
      expect(result(await sessions.call("s", "whoami", {}))).toEqual({ result: expect.stringMatching(/start=2$/) });
      expect(await waitUntil(() => reaped(pidfile))).toBe(true);
      // The exit is just past: the first restart waits its 1 s back-off, longer than the call may wait.
      const at = Date.now();
      const waited = result(await sessions.call("s", "whoami", {})) as { error: string };
      expect(Date.now() - at).toBeLessThan(900);
      expect(waited.error).toMatch(
        /^MCP server 's' had exited, and is being started again \(no new session within 0.3 s; the call did not reach the server\); wait a moment before calling it again$/,
      );
    } finally {
      await sessions.close();
      Object.assign(MCP_RESTARTS, saved);
    }
    // Ended with the task: no restart after it.
    const after = starts(pidfile);
    await new Promise((r) => setTimeout(r, 1500));
    expect(starts(pidfile)).toBe(after);
    expect(alivePids(pidfile)).toEqual([]);
  }, 30_000);

  it("a signal (the task's time limit) ends a call's wait for a restart", async () => {
    const { pidfile, sessions } = await stdioSessions({ exitAfterCall: true, failFromStart: 3 });
    const saved = { ...MCP_RESTARTS };
    Object.assign(MCP_RESTARTS, { firstBackoffMs: 2000, callWaitMs: 10_000 });
    try {
      expect(result(await sessions.call("s", "whoami", {}))).toEqual({ result: expect.stringMatching(/start=2$/) });
      expect(await waitUntil(() => reaped(pidfile))).toBe(true);
      const at = Date.now();
      const r = result(await sessions.call("s", "whoami", {}, AbortSignal.timeout(300))) as { error: string };
      expect(Date.now() - at).toBeLessThan(1500);
      expect(r.error).toMatch(/MCP server 's'/);
    } finally {
      await sessions.close();
      Object.assign(MCP_RESTARTS, saved);
    }
    expect(alivePids(pidfile)).toEqual([]);
  }, 30_000);
});

/** A stateful streamable-HTTP MCP server on 127.0.0.1 whose sessions a test can drop (as a restarted server has). */
async function sessionServer() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const ran: string[] = [];
  const build = () => {
    const s = new Server({ name: "sessions", version: "1.0.0" }, { capabilities: { tools: {} } });
    s.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: "look",
          description: "Reads.",
          inputSchema: { type: "object", properties: {} },
          annotations: { readOnlyHint: true },
        },
        { name: "change", description: "Writes.", inputSchema: { type: "object", properties: {} } },
      ],
    }));
    s.setRequestHandler(CallToolRequestSchema, async (req) => {
      ran.push(req.params.name);
      return { content: [{ type: "text", text: `${req.params.name} done` }] };
    });
    return s;
  };
  const body = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
  };
  const handler = async (req: IncomingMessage, res: import("node:http").ServerResponse) => {
    const parsed = req.method === "POST" ? await body(req) : undefined;
    const sid = req.headers["mcp-session-id"] as string | undefined;
    let t = sid ? sessions.get(sid) : undefined;
    if (!t) {
      if (sid || !isInitializeRequest(parsed)) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));
        return;
      }
      const made = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, made),
      });
      t = made;
      await build().connect(made);
    }
    await t.handleRequest(req, res, parsed);
  };
  let http: HttpServer = createServer((req, res) => void handler(req, res));
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const port = (http.address() as AddressInfo).port;
  const stop = async () => {
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.all(all.map((t) => t.close().catch(() => undefined)));
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    ran,
    /** Forgets every session: the next request of a client that had one is a 404. */
    dropSessions: stop,
    async down() {
      await stop();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
    async up() {
      http = createServer((req, res) => void handler(req, res));
      await new Promise<void>((r) => http.listen(port, "127.0.0.1", r));
    },
    close: async () => {
      await stop();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

describe("MCP HTTP sessions the server dropped", () => {
  let srv: Awaited<ReturnType<typeof sessionServer>>;
  let sessions: McpTaskSessions | undefined;
  beforeAll(async () => {
    Object.assign(MCP_RESTARTS, { firstBackoffMs: 50, maxBackoffMs: 400, callWaitMs: 20_000 });
    srv = await sessionServer();
  });
  afterEach(async () => {
    await sessions?.close();
  });
  afterAll(async () => {
    Object.assign(MCP_RESTARTS, HERMES);
    await srv.close();
  });

  async function open() {
    const catalog = await discoverMcpServer(config({ api: { url: srv.url } }));
    expect(catalog.tools.map((t) => [t.name, t.readOnly])).toEqual([
      ["look", true],
      ["change", false],
    ]);
    const events: string[] = [];
    sessions = new McpTaskSessions([catalog], { getEnv: noEnv, onEvent: (m) => events.push(m) });
    return { sessions, events };
  }

  it("a read-only tool's call is sent again on a new session; a write's is not (its outcome is unknown)", async () => {
    const { sessions, events } = await open();
    expect(result(await sessions.call("api", "look", {}))).toEqual({ result: "look done" });
    await srv.dropSessions();
    srv.ran.length = 0;
    expect(result(await sessions.call("api", "look", {}))).toEqual({ result: "look done" });
    expect(srv.ran).toEqual(["look"]);
    expect(events).toEqual([
      expect.stringMatching(/^MCP server 'api' dropped the session .*404.*; restart 1 of 5: connected again$/),
    ]);

    await srv.dropSessions();
    const change = result(await sessions.call("api", "change", {})) as { error: string };
    expect(change.error).toMatch(
      /^MCP tool change of server 'api' failed: .*404.*: the server dropped the session; the call was not sent again, as it may have had its effect/,
    );
    expect(srv.ran).toEqual(["look"]);
    // The next call makes a new session.
    expect(result(await sessions.call("api", "change", {}))).toEqual({ result: "change done" });
    expect(srv.ran).toEqual(["look", "change"]);
    expect(events).toHaveLength(2);
  }, 30_000);

  it("a server that refused the connection (it was down): connected again, and the call sent once it is back", async () => {
    const { sessions, events } = await open();
    expect(result(await sessions.call("api", "change", {}))).toEqual({ result: "change done" });
    await srv.down();
    // The client's kept-alive sockets see the server's side closed (else a request on one fails as "other side
    // closed", which may have reached the server: not this case).
    await new Promise((r) => setTimeout(r, 100));
    srv.ran.length = 0;
    setTimeout(() => void srv.up(), 250);
    expect(result(await sessions.call("api", "change", {}))).toEqual({ result: "change done" });
    expect(srv.ran).toEqual(["change"]);
    expect(events.at(-1)).toMatch(/^MCP server 'api' .*; restart \d of 5: connected again$/);
  }, 30_000);
});
