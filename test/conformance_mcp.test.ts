/**
 * Conformance of our MCP client side with the protocol as the official TypeScript SDK (1.32.2) speaks it: a
 * server on 127.0.0.1 made with the SDK's low-level Server (so its tools' inputSchema are raw JSON Schema, as a
 * Python or Go server sends them), listed, registered and called through the tool pipeline. Checks: the
 * protocol version the server chose (an older one it negotiated down to) is recorded; input schemas with
 * `$id`, `$ref`/`$defs`, `oneOf` and no properties validate each tool's arguments by its own schema;
 * `structuredContent`, embedded resources, resource links and `isError` results become the tool's result.
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMcpConfig } from "../src/config/mcp_config.js";
import { discoverMcpServer, McpTaskSessions, mcpServersMetadata, registerMcpCatalog } from "../tools/mcp/mcp_tools.js";
import type { McpServerCatalog } from "../tools/mcp/types.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { ToolRegistry, type ToolContext } from "../tools/registry.js";
import { resetToolsets } from "../tools/toolsets.js";

const SHARED_ID = "https://example.com/schemas/tool-input.json";

const TOOLS = [
  // Two tools whose generator gave their input schemas the same $id (each its own schema).
  {
    name: "first",
    inputSchema: { $id: SHARED_ID, type: "object", properties: { x: { type: "number" } }, required: ["x"] },
  },
  {
    name: "second",
    inputSchema: { $id: SHARED_ID, type: "object", properties: { y: { type: "string" } }, required: ["y"] },
  },
  // pydantic-style: $defs and $ref, a oneOf.
  {
    name: "refs",
    inputSchema: {
      type: "object",
      $defs: { Point: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"] } },
      properties: {
        at: { $ref: "#/$defs/Point" },
        mode: { oneOf: [{ const: "fast" }, { type: "integer", minimum: 1 }] },
      },
      required: ["at"],
    },
  },
  { name: "bare", inputSchema: { type: "object" } },
  { name: "results", inputSchema: { type: "object", properties: { kind: { type: "string" } } } },
];

function buildServer(): Server {
  const server = new Server({ name: "conf-mcp", version: "0.0.1" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    if (req.params.name !== "results") return { content: [{ type: "text", text: `ok ${JSON.stringify(args)}` }] };
    switch (args.kind) {
      case "structured":
        return { content: [], structuredContent: { temp: 21 } };
      case "resource":
        return {
          content: [
            { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "the notes" } },
            { type: "resource_link", uri: "file:///big.bin", name: "big.bin" },
          ],
        };
      default:
        return { content: [{ type: "text", text: "no such kind" }], isError: true };
    }
  });
  return server;
}

/** A stateless streamable-HTTP server that answers initialize with `version` whatever the client asked. */
async function startServer(version: string): Promise<{ url: string; close(): Promise<void> }> {
  const http: HttpServer = createServer((req, res) => {
    if (req.url !== "/mcp" || req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const message = JSON.parse(body);
      if (message.method === "initialize") message.params.protocolVersion = version;
      const server = buildServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => void transport.close());
      void server.connect(transport).then(() => transport.handleRequest(req, res, message));
    });
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const port = (http.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((r) => http.close(() => r())) };
}

const ctxWith = (mcp: McpTaskSessions): ToolContext => ({
  taskId: "t",
  envKind: "host",
  getEnv: async () => {
    throw new Error("no environment");
  },
  logger: { debug() {}, info() {}, warn() {}, error() {} },
  mcp,
});

describe("MCP against the protocol", () => {
  let srv: Awaited<ReturnType<typeof startServer>>;
  let catalog: McpServerCatalog;
  let call: (tool: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;
  let sessions: McpTaskSessions;

  beforeAll(async () => {
    srv = await startServer("2025-03-26");
    const [server] = parseMcpConfig(JSON.stringify({ mcpServers: { conf: { url: srv.url } } }), "mcp.json", {});
    catalog = await discoverMcpServer(server!);
    const reg = new ToolRegistry();
    registerMcpCatalog([catalog], reg);
    sessions = new McpTaskSessions([catalog], { getEnv: async () => Promise.reject(new Error("none")) });
    const pipeline = createToolPipeline({ registry: reg, mcpApproval: "none" });
    call = async (tool, args) => JSON.parse(await pipeline.call(`mcp_conf_${tool}`, args, ctxWith(sessions)));
  });
  afterAll(async () => {
    await sessions?.close();
    resetToolsets();
    await srv?.close();
  });

  it("records the protocol version the server negotiated down to", () => {
    expect(mcpServersMetadata([catalog])[0]).toMatchObject({
      server_info: { name: "conf-mcp", version: "0.0.1" },
      protocol_version: "2025-03-26",
    });
  });

  it("two tools with one $id: each tool's arguments are checked against its own schema", async () => {
    expect(await call("first", { x: 1 })).toEqual({ result: 'ok {"x":1}' });
    expect(await call("second", { y: "s" })).toEqual({ result: 'ok {"y":"s"}' });
    expect((await call("second", { x: 1 })).error).toMatch(/^Invalid arguments for mcp_conf_second: .*'y'/);
  });

  it("$ref into $defs and oneOf validate; a schema without properties takes any object", async () => {
    expect(await call("refs", { at: { lat: 1.5 }, mode: "fast" })).toEqual({
      result: 'ok {"at":{"lat":1.5},"mode":"fast"}',
    });
    expect(await call("refs", { at: { lat: 1 }, mode: 3 })).toHaveProperty("result");
    expect((await call("refs", { at: {} })).error).toMatch(/Invalid arguments.*lat/);
    expect((await call("refs", { at: { lat: 1 }, mode: "slow" })).error).toMatch(/Invalid arguments/);
    expect(await call("bare", { anything: [1, 2] })).toEqual({ result: 'ok {"anything":[1,2]}' });
  });

  it("structuredContent, embedded resources and resource links, isError", async () => {
    expect(await call("results", { kind: "structured" })).toEqual({ result: '{"temp":21}' });
    expect(await call("results", { kind: "resource" })).toEqual({
      result: "the notes\n[resource file:///big.bin (big.bin)]",
    });
    expect(await call("results", { kind: "nope" })).toEqual({ error: "no such kind" });
  });
});
