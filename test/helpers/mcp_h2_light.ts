/**
 * The reconnect tests' MCP stdio server (test/helpers/mcp_h2_server.ts) written without the SDK: newline-delimited
 * JSON-RPC in plain node, the same configuration, tools and answers. A start of the SDK-made one loads the SDK
 * (about 0.3 s of CPU, more than node itself); these tests start a server up to seven times each, and what they
 * check is the harness's restarts, not the server's library. Each file that used the SDK-made server keeps a test
 * with it. Extra options: `stubborn` (ignores TERM and stays up when its stdin closes); `everything` (its tools are
 * server-everything's `echo` and `get-env`, answered as that server does, instead of `whoami` and `crash`).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export const H2_LIGHT_SERVER = String.raw`
import { appendFileSync, readFileSync } from "node:fs";
const cfg = JSON.parse(process.argv[2]);
appendFileSync(cfg.pidfile, process.pid + "\n");
const start = readFileSync(cfg.pidfile, "utf8").split("\n").filter(Boolean).length;
if (cfg.failFromStart && start >= cfg.failFromStart) {
  process.stderr.write("h2: cannot start (start " + start + ")\n");
  process.exit(3);
}
if (cfg.stubborn) {
  process.on("SIGTERM", () => process.stderr.write("stubborn: TERM ignored\n"));
  setInterval(() => {}, 1000);
}
// Writes to a pipe are synchronous on Linux: an answer is out before an exit that follows it.
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
const none = { type: "object", properties: {} };
const tools = cfg.everything
  ? [
      { name: "echo", description: "Echoes back the input.", inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] } },
      { name: "get-env", description: "Its environment.", inputSchema: none },
    ]
  : [
      { name: "whoami", description: "Which process answers.", inputSchema: none },
      { name: "crash", description: "Dies in the call.", inputSchema: none },
    ];
const text = (m) =>
  m.params.name === "echo"
    ? "Echo: " + m.params.arguments.message
    : m.params.name === "get-env"
      ? JSON.stringify(process.env, null, 2)
      : "pid=" + process.pid + " start=" + start;
function handle(m) {
  if (m.id === undefined) return;
  if (m.method === "initialize") {
    const info = { name: "h2", version: "1.0.0" };
    send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: info } });
  } else if (m.method === "tools/list") {
    send({ id: m.id, result: { tools } });
  } else if (m.method === "tools/call") {
    if (m.params.name === "crash") {
      process.stderr.write("h2: dying in the call\n");
      process.exit(7);
    }
    send({ id: m.id, result: { content: [{ type: "text", text: text(m) }] } });
    if (cfg.exitAfterCall) process.exit(0);
  } else if (m.method === "ping") {
    send({ id: m.id, result: {} });
  } else {
    send({ id: m.id, error: { code: -32601, message: "Method not found" } });
  }
}
let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf("\n")) >= 0) {
    const line = buf.slice(0, nl).trim();
    buf = buf.slice(nl + 1);
    if (line) handle(JSON.parse(line));
  }
});
`;

/** Writes the server script into `dir`; `args(cfg)` is its argument list (SCRIPT JSON), to run with node. */
export function h2LightServer(dir: string): { args: (cfg: Record<string, unknown>) => string[] } {
  const script = join(dir, "h2_light_server.mjs");
  writeFileSync(script, H2_LIGHT_SERVER);
  return { args: (cfg) => [script, JSON.stringify(cfg)] };
}
