/**
 * Light MCP stdio fixture servers, for tests whose subject is the harness (its restarts, kills, environments), not the
 * server's library. A start of an SDK-made server loads the SDK (about 0.3 s of CPU); a node start alone costs about
 * 0.1 s, a shell's next to nothing; the restart tests start a server up to seven times each. Each file that used the
 * SDK-made server (test/helpers/mcp_h2_server.ts) or server-everything keeps a test with it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./cli.js";

/**
 * The reconnect tests' server in POSIX sh (test/fixtures/mcp_h2_server.sh: the configuration, tools and answers of
 * mcp_h2_server.ts's): `command` and `args(cfg)` of an MCP server config that starts it.
 */
export const H2_SH_SERVER = {
  command: "/bin/sh",
  args: (cfg: { pidfile: string; exitAfterCall?: boolean; failFromStart?: number; stubborn?: boolean }): string[] => [
    join(ROOT, "test", "fixtures", "mcp_h2_server.sh"),
    cfg.pidfile,
    ...(cfg.exitAfterCall ? ["exit-after-call"] : []),
    ...(cfg.failFromStart ? [`fail-from-start=${cfg.failFromStart}`] : []),
    ...(cfg.stubborn ? ["stubborn"] : []),
  ],
};

/**
 * A stand-in for server-everything's `echo` and `get-env` tools (answered as that server does: `Echo: MESSAGE`, the
 * environment as indented JSON), in plain node without the SDK. Its argument: a file its pid is appended to.
 */
export const EVERYTHING_LIGHT_SERVER = String.raw`
import { appendFileSync } from "node:fs";
appendFileSync(process.argv[2], process.pid + "\n");
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
const message = { type: "object", properties: { message: { type: "string" } }, required: ["message"] };
const tools = [
  { name: "echo", description: "Echoes back the input.", inputSchema: message },
  { name: "get-env", description: "Its environment.", inputSchema: { type: "object", properties: {} } },
];
function handle(m) {
  if (m.id === undefined) return;
  if (m.method === "initialize") {
    const info = { name: "everything-light", version: "1.0.0" };
    send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: info } });
  } else if (m.method === "tools/list") {
    send({ id: m.id, result: { tools } });
  } else if (m.method === "tools/call") {
    const text =
      m.params.name === "echo" ? "Echo: " + m.params.arguments.message : JSON.stringify(process.env, null, 2);
    send({ id: m.id, result: { content: [{ type: "text", text }] } });
  } else {
    send({ id: m.id, error: { code: -32601, message: "Method not found" } });
  }
}
let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  buf += chunk;
  for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
    const line = buf.slice(0, nl).trim();
    buf = buf.slice(nl + 1);
    if (line) handle(JSON.parse(line));
  }
});
`;

/** Writes the stand-in into `dir`; `args(pidfile)` is its argument list (SCRIPT PIDFILE), to run with node. */
export function everythingLightServer(dir: string): { args: (pidfile: string) => string[] } {
  const script = join(dir, "everything_light_server.mjs");
  writeFileSync(script, EVERYTHING_LIGHT_SERVER);
  return { args: (pidfile) => [script, pidfile] };
}
