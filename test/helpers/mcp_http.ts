/**
 * MCP servers for tests, on 127.0.0.1 only, made with the official SDK's server API: streamable HTTP (stateless,
 * a fresh server per request) and, for the fallback, SSE only. Tools: add, fail (an isError result), slow (waits
 * `ms`), picture (an image part), weather (structured content only); `pageSize` pages listTools.
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const TOOLS = [
  {
    name: "add",
    description: "Adds two numbers.",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
  },
  { name: "fail", description: "Always fails.", inputSchema: { type: "object", properties: {} } },
  { name: "slow", description: "Waits.", inputSchema: { type: "object", properties: { ms: { type: "number" } } } },
  { name: "picture", description: "An image.", inputSchema: { type: "object" } },
  { name: "weather", description: "Structured only.", inputSchema: { type: "object", properties: {} } },
];

export interface McpTestServer {
  url: string;
  /** Requests seen, with their headers. */
  requests: { method?: string; path?: string; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}

function buildServer(pageSize: number): Server {
  const server = new Server({ name: "test-mcp", version: "1.2.3" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (req) => {
    const start = Number(req.params?.cursor ?? 0);
    const page = TOOLS.slice(start, start + pageSize);
    return { tools: page, ...(start + pageSize < TOOLS.length ? { nextCursor: String(start + pageSize) } : {}) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = (req.params.arguments ?? {}) as Record<string, number>;
    switch (req.params.name) {
      case "add":
        return { content: [{ type: "text", text: `sum=${args.a! + args.b!}` }] };
      case "fail":
        return { content: [{ type: "text", text: "the database is down" }], isError: true };
      case "slow":
        await new Promise((r) => setTimeout(r, args.ms ?? 60_000));
        return { content: [{ type: "text", text: "late" }] };
      case "picture":
        return {
          content: [
            { type: "text", text: "a dot:" },
            { type: "image", mimeType: "image/png", data: Buffer.alloc(3000).toString("base64") },
          ],
        };
      case "weather":
        return { content: [], structuredContent: { temp: 21, unit: "C" } };
      default:
        throw new Error(`no tool ${req.params.name}`);
    }
  });
  return server;
}

async function listen(http: HttpServer): Promise<number> {
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return (http.address() as AddressInfo).port;
}

/** A streamable-HTTP MCP server at http://127.0.0.1:PORT/mcp. */
export async function startMcpHttpServer(opts: { pageSize?: number } = {}): Promise<McpTestServer> {
  const requests: McpTestServer["requests"] = [];
  const http = createServer((req, res) => {
    requests.push({ method: req.method, path: req.url, headers: req.headers });
    if (req.url !== "/mcp") return void res.writeHead(404).end();
    if (req.method !== "POST") return void res.writeHead(405).end();
    const server = buildServer(opts.pageSize ?? 100);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  const port = await listen(http);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** An SSE-only MCP server (the legacy transport): GET /sse opens the stream, POST /messages carries requests; POST /sse is a 405. */
export async function startMcpSseServer(): Promise<McpTestServer> {
  const requests: McpTestServer["requests"] = [];
  const transports = new Map<string, SSEServerTransport>();
  const http = createServer((req, res) => {
    requests.push({ method: req.method, path: req.url, headers: req.headers });
    if (req.url === "/sse" && req.method === "GET") {
      const transport = new SSEServerTransport("/messages", res);
      transports.set(transport.sessionId, transport);
      const server = buildServer(100);
      res.on("close", () => {
        transports.delete(transport.sessionId);
        void server.close();
      });
      void server.connect(transport);
      return;
    }
    if (req.url?.startsWith("/messages") && req.method === "POST") {
      const id = new URL(req.url, "http://x").searchParams.get("sessionId") ?? "";
      const transport = transports.get(id);
      if (!transport) return void res.writeHead(404).end();
      void transport.handlePostMessage(req, res);
      return;
    }
    res.writeHead(405).end();
  });
  const port = await listen(http);
  return {
    url: `http://127.0.0.1:${port}/sse`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
