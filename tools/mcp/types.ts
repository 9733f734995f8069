/** The shapes MCP support passes around: a normalised server config and what a server offered. */
import type { JsonSchema } from "../registry.js";

/** One MCP server, normalised from either config shape (src/config/mcp_config.ts). */
export interface McpServerConfig {
  name: string;
  transport: "stdio" | "http" | "sse";
  /** stdio: the program and its arguments. */
  command?: string;
  args?: string[];
  /** stdio: the working directory (inside the sandbox for `where: sandbox`; default its workdir). */
  cwd?: string;
  /** http/sse: the endpoint. */
  url?: string;
  /** stdio only: `sandbox` (the task's sandbox, the default) or `host` (this machine: trusted code). URL servers: `host`. */
  where: "host" | "sandbox";
  /** As written (`${VAR}` kept): for run.yaml. */
  env: Record<string, string>;
  headers: Record<string, string>;
  /** As sent (`${VAR}` read from the environment at start): never written anywhere. */
  envValues: Record<string, string>;
  headerValues: Record<string, string>;
  tools: { include?: string[]; exclude?: string[] };
  /** A tool call's time-out, and the start (connect, initialise, list tools) time-out. */
  timeoutSec: number;
  connectTimeoutSec: number;
  /** Host and URL servers only: one connection per worker thread, kept across its tasks (the server's state too). */
  shared: boolean;
}

/** One tool of a server, as its listTools gave it. */
export interface McpToolInfo {
  /** The server's own name of the tool (what callTool gets). */
  name: string;
  /** The registered name, `mcp_<server>_<tool>` sanitised. */
  registeredName: string;
  description: string;
  inputSchema: JsonSchema;
  /** Its annotations say `readOnlyHint: true`: a call whose outcome is unknown may be sent again (Hermes does). */
  readOnly: boolean;
}

/** What one server offered when the run started (listed once, in the main thread, and handed to every worker). */
export interface McpServerCatalog {
  config: McpServerConfig;
  /** A hash of the config's effective part: the listing's cache key. */
  configHash: string;
  serverInfo?: { name: string; version: string };
  protocolVersion?: string;
  tools: McpToolInfo[];
}
