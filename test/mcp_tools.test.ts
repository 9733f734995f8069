/**
 * MCP servers as registry tools: listing (paged, cached per config), Hermes names and toolsets, collisions refused,
 * calls through the pipeline as Hermes JSON strings, where each kind of server runs (host stdio, HTTP with the SSE
 * fallback, stdio inside the local sandbox through its pipes).
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMcpConfig } from "../src/config/mcp_config.js";
import { resolveRunConfig } from "../src/config/run_config.js";
import { rowMcpProblem } from "../src/run/mcp_setup.js";
import { UserError } from "../src/core/errors.js";
import { probeBwrap } from "../tools/environments/local/bwrap.js";
import { createLocalEnvironment } from "../tools/environments/local/local.js";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import {
  closeSharedMcpConnections,
  discoverMcpServer,
  ensureMcpRegistered,
  isMcpTool,
  mcpResultToToolResult,
  mcpToolName,
  McpTaskSessions,
  registerMcpCatalog,
} from "../tools/mcp/mcp_tools.js";
import type { McpServerCatalog } from "../tools/mcp/types.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { ToolRegistry, type ToolContext } from "../tools/registry.js";
import { resetToolsets, resolveToolset } from "../tools/toolsets.js";
import { ROOT, tempDir } from "./helpers/cli.js";
import { everythingLightServer } from "./helpers/mcp_h2_light.js";
import { startMcpHttpServer, startMcpSseServer, type McpTestServer } from "./helpers/mcp_http.js";

const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const FILESYSTEM = join(ROOT, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");

const servers = (config: unknown, env: NodeJS.ProcessEnv = {}) =>
  parseMcpConfig(JSON.stringify({ mcpServers: config }), "mcp.json", env);
const noEnv = async () => {
  throw new Error("no environment in this test");
};
const ctxWith = (mcp: McpTaskSessions): ToolContext => ({
  taskId: "t",
  envKind: "host",
  getEnv: noEnv,
  logger: { debug() {}, info() {}, warn() {}, error() {} },
  mcp,
});

describe("MCP tools", () => {
  let http: McpTestServer;
  let sse: McpTestServer;
  beforeAll(async () => {
    http = await startMcpHttpServer({ pageSize: 2 });
    sse = await startMcpSseServer();
  });
  afterAll(async () => {
    resetToolsets();
    await http.close();
    await sse.close();
  });

  it("names tools as Hermes does", () => {
    expect(mcpToolName("my-server", "list.dir")).toBe("mcp_my_server_list_dir");
    const long = mcpToolName("s", "x".repeat(80));
    expect(long).toMatch(/^mcp_s_x+_[0-9a-f]{8}$/);
    expect(long.length).toBe(64);
  });

  it("lists every page of an HTTP server once per config, sends its headers, registers tools and an mcp-<server> toolset", async () => {
    const [server] = servers({ api: { url: http.url, headers: { "X-Test": "Bearer ${T}" } } }, { T: "tok123" });
    const before = http.requests.length;
    const catalog = await discoverMcpServer(server!);
    expect(catalog.tools.map((t) => t.registeredName)).toEqual([
      "mcp_api_add",
      "mcp_api_fail",
      "mcp_api_slow",
      "mcp_api_picture",
      "mcp_api_weather",
    ]);
    expect(catalog.serverInfo).toEqual({ name: "test-mcp", version: "1.2.3" });
    expect(catalog.protocolVersion).toMatch(/^\d{4}-\d\d-\d\d$/);
    expect(http.requests.slice(before).every((r) => r.headers["x-test"] === "Bearer tok123")).toBe(true);
    const requestsAfter = http.requests.length;
    expect(await discoverMcpServer(server!)).toBe(catalog); // cached per config
    expect(http.requests.length).toBe(requestsAfter);

    const reg = new ToolRegistry();
    registerMcpCatalog([catalog], reg);
    expect(resolveToolset("mcp-api")).toEqual([
      "mcp_api_add",
      "mcp_api_fail",
      "mcp_api_picture",
      "mcp_api_slow",
      "mcp_api_weather",
    ]);
    expect(reg.get("mcp_api_add")!.schema.parameters).toEqual({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
    });
    expect(reg.get("mcp_api_picture")!.schema.parameters).toEqual({ type: "object", properties: {} });

    const sessions = new McpTaskSessions([catalog], { getEnv: noEnv });
    // Without an approval service a judged call is denied (fail-closed): this test is about the calls themselves.
    const unjudged = createToolPipeline({ registry: reg });
    const ctx = ctxWith(sessions);
    expect(JSON.parse(await unjudged.call("mcp_api_add", { a: 2, b: 3 }, ctx)).error).toMatch(
      /^BLOCKED: .*MCP server's tool/,
    );
    const pipeline = createToolPipeline({ registry: reg, mcpApproval: "none" });
    expect(JSON.parse(await pipeline.call("mcp_api_add", { a: 2, b: 3 }, ctx))).toEqual({ result: "sum=5" });
    expect(JSON.parse(await pipeline.call("mcp_api_fail", {}, ctx))).toEqual({ error: "the database is down" });
    // Arguments are checked against the inputSchema here, before the server is asked.
    const postsBefore = http.requests.length;
    expect(JSON.parse(await pipeline.call("mcp_api_add", { a: "two", b: 3 }, ctx)).error).toMatch(
      /^Invalid arguments for mcp_api_add: .*\ba\b.*number/,
    );
    expect(JSON.parse(await pipeline.call("mcp_api_add", { a: 2 }, ctx)).error).toMatch(
      /^Invalid arguments for mcp_api_add: .*required.*\bb\b/,
    );
    expect(http.requests.length).toBe(postsBefore);
    expect(JSON.parse(await pipeline.call("mcp_api_picture", {}, ctx))).toEqual({
      result: "a dot:\n[image image/png, 3 KB]",
    });
    expect(JSON.parse(await pipeline.call("mcp_api_weather", {}, ctx))).toEqual({ result: '{"temp":21,"unit":"C"}' });
    await sessions.close();
    expect(JSON.parse(await pipeline.call("mcp_api_add", { a: 1, b: 1 }, ctx)).error).toMatch(/already closed/);
  });

  it("one server name stands for the same tools in a run: registering it again is a no-op, with other tools refused", async () => {
    const [server] = servers({ same: { url: http.url, tools: { include: ["add"] } } });
    const catalog = await discoverMcpServer(server!);
    const reg = new ToolRegistry();
    ensureMcpRegistered([catalog], reg);
    ensureMcpRegistered([{ ...catalog, configHash: "other-config" }], reg);
    expect(isMcpTool("mcp_same_add")).toBe(true);
    expect(() =>
      ensureMcpRegistered(
        [
          {
            ...catalog,
            tools: [...catalog.tools, { ...catalog.tools[0]!, name: "fail", registeredName: "mcp_same_fail" }],
          },
        ],
        reg,
      ),
    ).toThrow(/MCP server 'same' offers other tools than the server of that name registered before/);
  });

  it("a shared: true server is connected once per thread and kept across tasks", async () => {
    const [server] = servers({ shared_api: { url: http.url, shared: true, tools: { include: ["add"] } } });
    const catalog = await discoverMcpServer(server!);
    const posts = () => http.requests.filter((q) => q.method === "POST").length;
    const first = new McpTaskSessions([catalog], { getEnv: noEnv });
    expect(await first.call("shared_api", "add", { a: 1, b: 1 })).toEqual({ content: { result: "sum=2" } });
    await first.close();
    const before = posts();
    const second = new McpTaskSessions([catalog], { getEnv: noEnv });
    expect(await second.call("shared_api", "add", { a: 1, b: 2 })).toEqual({ content: { result: "sum=3" } });
    expect(posts() - before).toBe(1); // the call alone: no second initialize
    await second.close();
    await closeSharedMcpConnections();
  });

  it("rows' servers: a name is listed once, from its first config; a bad one is the row's reason", async () => {
    const config = resolveRunConfig({ dataset: "d.jsonl", env: "host", api_key: "k" });
    const before = http.requests.length;
    expect(await rowMcpProblem(config, { mcp_servers: { rows1: { url: http.url } } })).toBeUndefined();
    const afterFirst = http.requests.length;
    expect(afterFirst).toBeGreaterThan(before);
    expect(resolveToolset("mcp-rows1")).toContain("mcp_rows1_add");
    expect(
      await rowMcpProblem(config, { mcp_servers: [{ name: "rows1", url: http.url, headers: { "X-Other": "1" } }] }),
    ).toBeUndefined();
    expect(http.requests.length).toBe(afterFirst);
    expect(await rowMcpProblem(config, { mcp_servers: { bad: { command: "node", args: "x" } } })).toBe(
      "mcp_servers.bad.args: must be a list, got 'x'",
    );
    expect(await rowMcpProblem(config, { prompt: "no servers" })).toBeUndefined();
  });

  it("a call that outlasts the server's timeout is a tool error to the model", async () => {
    const [server] = servers({ slowapi: { url: http.url, timeout: 0.5, tools: { include: ["slow"] } } });
    const catalog = await discoverMcpServer(server!);
    expect(catalog.tools.map((t) => t.name)).toEqual(["slow"]);
    const sessions = new McpTaskSessions([catalog], { getEnv: noEnv });
    const r = await sessions.call("slowapi", "slow", { ms: 5000 });
    expect(r.error).toMatch(/^MCP tool slow of server 'slowapi' failed: .*timed out/i);
    await sessions.close();
  });

  it("falls back to SSE when the server refuses streamable HTTP", async () => {
    const [server] = servers({ legacy: { url: sse.url, tools: { exclude: ["slow", "fail", "picture", "weather"] } } });
    const catalog = await discoverMcpServer(server!);
    expect(catalog.tools.map((t) => t.registeredName)).toEqual(["mcp_legacy_add"]);
    const sessions = new McpTaskSessions([catalog], { getEnv: noEnv });
    expect(await sessions.call("legacy", "add", { a: 40, b: 2 })).toEqual({ content: { result: "sum=42" } });
    await sessions.close();
    expect(sse.requests.some((r) => r.method === "POST" && r.path === "/sse")).toBe(true);
  });

  it("refuses a name two tools would share, and one a built-in already has", async () => {
    const [a] = servers({ api: { url: http.url } });
    const catalog = await discoverMcpServer(a!);
    const twin: McpServerCatalog = {
      ...catalog,
      config: { ...catalog.config, name: "api_" },
      tools: [{ ...catalog.tools[0]!, registeredName: "mcp_api_add" }],
    };
    expect(() => registerMcpCatalog([catalog, twin], new ToolRegistry())).toThrow(UserError);
    expect(() => registerMcpCatalog([catalog, twin], new ToolRegistry())).toThrow(
      /MCP tool name collision: tool 'add' of MCP server 'api_' and tool 'add' of MCP server 'api' would both be mcp_api_add/,
    );
    const reg = new ToolRegistry();
    reg.register({
      name: "mcp_api_add",
      toolset: "file",
      schema: { description: "x", parameters: { type: "object" } },
      handler: () => "{}",
    });
    expect(() => registerMcpCatalog([catalog], reg)).toThrow(
      /mcp_api_add, which the tool of toolset 'file' already is/,
    );
  });

  it("runs a stdio server on the host (where: host), with the SDK's minimal environment", async () => {
    process.env.HB_MCP_NOT_PASSED = "hidden-value";
    const [server] = servers({
      every: {
        command: process.execPath,
        args: [EVERYTHING, "stdio"],
        where: "host",
        tools: { include: ["echo", "get-env"] },
      },
    });
    const catalog = await discoverMcpServer(server!, { passEnv: [] });
    expect(catalog.tools.map((t) => t.registeredName)).toEqual(["mcp_every_echo", "mcp_every_get_env"]);
    const sessions = new McpTaskSessions([catalog], { getEnv: noEnv });
    expect(await sessions.call("every", "echo", { message: "hi" })).toEqual({ content: { result: "Echo: hi" } });
    const envText = String(((await sessions.call("every", "get-env", {})).content as { result: string }).result);
    expect(envText).toContain("PATH");
    expect(envText).not.toContain("hidden-value");
    await sessions.close();
    delete process.env.HB_MCP_NOT_PASSED;
  });

  it("a stdio server that dies at start fails with its stderr, and the task is told", async () => {
    const [server] = servers({
      broken: {
        command: process.execPath,
        args: ["-e", "console.error('cannot open the database'); process.exit(3)"],
        where: "host",
      },
    });
    await expect(discoverMcpServer(server!)).rejects.toThrow(
      /MCP server 'broken' did not start: .*cannot open the database/,
    );
    const catalog: McpServerCatalog = { config: server!, configHash: "x", tools: [] };
    const failures: string[] = [];
    const sessions = new McpTaskSessions([catalog], { getEnv: noEnv, onStartFailure: (r) => failures.push(r) });
    expect((await sessions.call("broken", "x", {})).error).toMatch(/cannot open the database/);
    expect(failures).toEqual([expect.stringMatching(/did not start/)]);
    await sessions.close();
  });

  it("a stdio server that never answers the handshake fails after its connect_timeout", async () => {
    const [server] = servers({
      mute: {
        command: process.execPath,
        args: ["-e", "setInterval(() => {}, 1000)"],
        where: "host",
        connect_timeout: 1,
      },
    });
    const started = Date.now();
    await expect(discoverMcpServer(server!)).rejects.toThrow(
      /MCP server 'mute' did not start: .*(did not answer within 1 s|timed out)/i,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("turns results into text: images and audio as placeholders, structured content as JSON, isError as an error", () => {
    expect(mcpResultToToolResult({ content: [{ type: "audio", mimeType: "audio/wav", data: "AAAA" }] })).toEqual({
      content: { result: "[audio audio/wav, 1 KB]" },
    });
    expect(
      mcpResultToToolResult({ content: [{ type: "resource", resource: { uri: "file:///a", text: "body" } }] }),
    ).toEqual({ content: { result: "body" } });
    expect(mcpResultToToolResult({ content: [], isError: true })).toEqual({
      error: "the MCP tool reported an error without a message",
    });
  });

  it("with --env host, a where: sandbox server runs in the task's folder with the task's environment", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "here.txt"), "x");
    process.env.HB_MCP_NOT_PASSED = "hidden-value";
    const env = await createLocalEnvironment({ runName: "r", taskId: "t", hostTaskDir: dir }, {});
    try {
      // server-everything's get-env, from a server without the SDK (cheaper to start; the host test has the real one).
      const fixtureDir = tempDir();
      const fixture = everythingLightServer(fixtureDir).args(join(fixtureDir, "pids"));
      const [server] = servers({
        every: {
          command: process.execPath,
          args: fixture,
          tools: { include: ["get-env"] },
          env: { EXTRA: "given" },
        },
      });
      expect(server!.where).toBe("sandbox");
      const catalog = await discoverMcpServer(server!, { getEnv: async () => env });
      const sessions = new McpTaskSessions([catalog], { getEnv: async () => env });
      const text = String(((await sessions.call("every", "get-env", {})).content as { result: string }).result);
      expect(text).toContain('"EXTRA": "given"');
      expect(text).not.toContain("hidden-value");
      await sessions.close();
    } finally {
      delete process.env.HB_MCP_NOT_PASSED;
      await env.cleanup();
    }
  });

  it("with --env singularity, a where: sandbox server runs through an exec of the instance (the stand-in apptainer)", async () => {
    const base = tempDir();
    const bin = join(base, "bin");
    mkdirSync(bin);
    symlinkSync(join(ROOT, "test", "fixtures", "fake-apptainer"), join(bin, "apptainer"));
    writeFileSync(join(base, "image.sif"), "fake sif");
    const saved = {
      PATH: process.env.PATH,
      APPTAINER_FAKE_LOG: process.env.APPTAINER_FAKE_LOG,
      APPTAINER_FAKE_STATE: process.env.APPTAINER_FAKE_STATE,
      APPTAINER_CACHEDIR: process.env.APPTAINER_CACHEDIR,
    };
    Object.assign(process.env, {
      PATH: `${bin}:${saved.PATH}`,
      APPTAINER_FAKE_LOG: join(base, "log"),
      APPTAINER_FAKE_STATE: join(base, "state"),
      APPTAINER_CACHEDIR: join(base, "cache"),
    });
    const { createSingularityEnvironment, cleanupAllSingularityEnvironments } = await import(
      "../tools/environments/singularity/singularity.js"
    );
    try {
      const env = await createSingularityEnvironment(
        {
          runName: "mcp",
          taskId: "s1",
          hostTaskDir: join(base, "task"),
          image: join(base, "image.sif"),
          taskTimeoutSec: 600,
        },
        {},
      );
      // server-everything's echo, from a server without the SDK (cheaper to start; the host test has the real one).
      const fixture = everythingLightServer(base).args(join(base, "pids"));
      const [server] = servers({ every: { command: process.execPath, args: fixture, tools: { include: ["echo"] } } });
      const catalog = await discoverMcpServer(server!, { getEnv: async () => env });
      const sessions = new McpTaskSessions([catalog], { getEnv: async () => env });
      expect(await sessions.call("every", "echo", { message: "in the instance" })).toEqual({
        content: { result: "Echo: in the instance" },
      });
      await sessions.close();
      const execs = readFileSync(join(base, "log"), "utf8")
        .split("\x1e\n")
        .filter((r) => r.startsWith("exec\x1f") && r.includes(fixture[0]!));
      expect(execs[0]!.split("\x1f").slice(0, 5)).toEqual([
        "exec",
        "--cleanenv",
        "--pwd",
        expect.any(String),
        expect.stringMatching(/^instance:\/\//),
      ]);
      await env.cleanup();
    } finally {
      await cleanupAllSingularityEnvironments();
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });

  it.skipIf(!probeBwrap().ok)(
    "runs a stdio server inside the local sandbox: it sees the task's files and nothing outside them",
    async () => {
      const dir = tempDir();
      const task = join(dir, "task");
      mkdirSync(task);
      writeFileSync(join(task, "notes.txt"), "from the task folder\n");
      writeFileSync(join(dir, "outside.txt"), "never seen\n");
      const env = await SandboxEnvironment.create(
        { runName: "r", taskId: "t", hostTaskDir: task },
        { sandboxRo: [join(ROOT, "node_modules")] },
      );
      try {
        const [server] = servers({
          fs: {
            command: "node",
            args: [FILESYSTEM, "/workspace"],
            tools: { include: ["read_text_file", "list_directory"] },
          },
        });
        const catalog = await discoverMcpServer(server!, { getEnv: async () => env });
        expect(catalog.tools.map((t) => t.registeredName)).toEqual(["mcp_fs_read_text_file", "mcp_fs_list_directory"]);
        const sessions = new McpTaskSessions([catalog], { getEnv: async () => env });
        expect(await sessions.call("fs", "read_text_file", { path: "/workspace/notes.txt" })).toEqual({
          content: { result: "from the task folder\n" },
        });
        expect(await sessions.call("fs", "list_directory", { path: "/workspace" })).toEqual({
          content: { result: "[FILE] notes.txt" },
        });
        expect((await sessions.call("fs", "read_text_file", { path: join(dir, "outside.txt") })).error).toMatch(
          /outside allowed directories/,
        );
        // Allowed everything, the server still sees only the sandbox: the host's file is not there at all.
        const [wide] = servers({
          fsroot: { command: "node", args: [FILESYSTEM, "/"], tools: { include: ["read_text_file"] } },
        });
        const wideCatalog = await discoverMcpServer(wide!, { getEnv: async () => env });
        const wideSessions = new McpTaskSessions([wideCatalog], { getEnv: async () => env });
        expect((await wideSessions.call("fsroot", "read_text_file", { path: join(dir, "outside.txt") })).error).toMatch(
          /ENOENT|no such file/i,
        );
        expect(await wideSessions.call("fsroot", "read_text_file", { path: "/workspace/notes.txt" })).toEqual({
          content: { result: "from the task folder\n" },
        });
        await wideSessions.close();
        // The server is a process of the sandbox: its pid namespace shows it.
        expect((await env.exec("ps -eo args")).stdout).toContain(FILESYSTEM);
        await sessions.close();
        expect((await env.exec("ps -eo args")).stdout).not.toContain(FILESYSTEM);
      } finally {
        await env.cleanup();
      }
    },
  );
});
