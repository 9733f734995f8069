/**
 * An MCP stdio server made with the official SDK's server API (node), for the reconnect tests: its behaviour is a
 * JSON argument. Each start appends its pid to `pidfile` (the line count is its start number). Tools: `whoami`
 * (answers `pid=P start=N`), `crash` (exits in the call, without an answer). `exitAfterCall`: exits once it has
 * answered a call. `failFromStart: N`: from its Nth start on it exits at once (a server that cannot start again).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./cli.js";

const SDK = join(ROOT, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const sdk = (path: string) => JSON.stringify(pathToFileURL(join(SDK, path)).href);

export const H2_SERVER = `
import { appendFileSync, readFileSync } from "node:fs";
import { Server } from ${sdk("server/index.js")};
import { StdioServerTransport } from ${sdk("server/stdio.js")};
import { CallToolRequestSchema, ListToolsRequestSchema } from ${sdk("types.js")};
const cfg = JSON.parse(process.argv[2]);
appendFileSync(cfg.pidfile, process.pid + "\\n");
const start = readFileSync(cfg.pidfile, "utf8").split("\\n").filter(Boolean).length;
if (cfg.failFromStart && start >= cfg.failFromStart) {
  process.stderr.write("h2: cannot start (start " + start + ")\\n");
  process.exit(3);
}
const server = new Server({ name: "h2", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    { name: "whoami", description: "Which process answers.", inputSchema: { type: "object", properties: {} } },
    { name: "crash", description: "Dies in the call.", inputSchema: { type: "object", properties: {} } },
  ],
}));
let answeredCall = false;
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  if (req.params.name === "crash") {
    process.stderr.write("h2: dying in the call\\n");
    process.exit(7);
  }
  answeredCall = true;
  return { content: [{ type: "text", text: "pid=" + process.pid + " start=" + start }] };
});
const transport = new StdioServerTransport();
const send = transport.send.bind(transport);
transport.send = async (message) => {
  await send(message);
  // Writes to a pipe are synchronous on Linux: the answer is out before the exit.
  if (cfg.exitAfterCall && answeredCall && "result" in message) process.exit(0);
};
await server.connect(transport);
`;

/** Writes the server script into `dir`; `args(cfg)` is its argument list (SCRIPT JSON), to run with node. */
export function h2Server(dir: string): { args: (cfg: Record<string, unknown>) => string[] } {
  const script = join(dir, "h2_server.mjs");
  writeFileSync(script, H2_SERVER);
  return { args: (cfg) => [script, JSON.stringify(cfg)] };
}

/** How many times the server was started (the lines of its pidfile). */
export function starts(pidfile: string): number {
  return existsSync(pidfile) ? readFileSync(pidfile, "utf8").split("\n").filter(Boolean).length : 0;
}

/**
 * Whether every process the pidfile lists is gone and reaped (no /proc entry at all). A zombie is not enough: a
 * multi-threaded process's leader is a zombie while its other threads still exit, holding its stdin open.
 */
export function reaped(pidfile: string): boolean {
  if (!existsSync(pidfile)) return true;
  return readFileSync(pidfile, "utf8")
    .split("\n")
    .filter(Boolean)
    .every((pid) => !existsSync(`/proc/${pid}`));
}
