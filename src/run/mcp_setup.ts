/**
 * A run's MCP servers, set up once in the main thread before anything runs: the `--mcp-config` file read and
 * checked, each server started once to list its tools (a `where: sandbox` server in a throw-away sandbox of the
 * run's environment), the tools registered here (so toolsets, distributions and rows can name `mcp-<server>`),
 * and the listing handed to every worker thread. Any problem is one exit-2 line.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadMcpConfig, parseRowMcpServers } from "../config/mcp_config.js";
import { SECRET_KEYS, defaultApiKey, type RunConfig } from "../config/run_config.js";
import { flagOf } from "../config/run_options.js";
import { UserError, errorMessage } from "../core/errors.js";
import { envReferences } from "../core/env_refs.js";
import { TaskEnvironment } from "../../tools/environments/manager.js";
import type { Environment } from "../../tools/environments/base.js";
import { catalogForName, discoverMcpServer, ensureMcpRegistered, mcpConfigHash } from "../../tools/mcp/mcp_tools.js";
import type { McpServerCatalog, McpServerConfig } from "../../tools/mcp/types.js";

/** A value sent to an MCP server may not be one of the run's keys (the --pass-env rule). */
function checkNoRunKeys(config: RunConfig, servers: readonly McpServerConfig[]): void {
  const keys = new Map<string, string>();
  for (const k of SECRET_KEYS) if (config[k]) keys.set(config[k]!, flagOf(k) ?? k);
  const fromEnv = defaultApiKey(config.base_url);
  if (fromEnv && !keys.has(fromEnv)) keys.set(fromEnv, flagOf("api_key") ?? "api_key");
  for (const s of servers) {
    for (const [name, value] of [...Object.entries(s.envValues), ...Object.entries(s.headerValues)]) {
      // A key inside a longer value (`Bearer <key>`) counts too, once it is long enough to be a key at all.
      const flag = keys.get(value) ?? [...keys].find(([k]) => k.length >= 8 && value.includes(k))?.[1];
      if (flag) {
        const via = envReferences(s.env[name] ?? s.headers[name] ?? "").join(", ");
        throw new UserError(
          `--mcp-config: server '${s.name}' ${name}${via ? ` (\${${via}})` : ""}: it holds the run's ${flag}; the keys of the endpoint, approver and judge never go to an MCP server`,
        );
      }
    }
  }
}

/** Reads the run's MCP config, lists every server's tools and registers them; undefined without --mcp-config. */
export async function setUpMcp(config: RunConfig): Promise<McpServerCatalog[] | undefined> {
  if (!config.mcp_config) return undefined;
  const servers = loadMcpConfig(config.mcp_config);
  checkNoRunKeys(config, servers);
  const catalogs: McpServerCatalog[] = [];
  const listing = listingEnvironment(config);
  try {
    for (const server of servers) {
      try {
        catalogs.push(await discoverMcpServer(server, { getEnv: listing.getEnv, passEnv: config.pass_env }));
      } catch (err) {
        if (err instanceof UserError) throw err;
        throw new UserError(`--mcp-config ${config.mcp_config}: ${errorMessage(err).split("\n")[0]}`);
      }
    }
  } finally {
    await listing.done();
  }
  ensureMcpRegistered(catalogs);
  return catalogs;
}

/** A throw-away environment of the run's kind, for listing one sandboxed server's tools; cleaned up by `done`. */
function listingEnvironment(config: RunConfig): { getEnv: () => Promise<Environment>; done: () => Promise<void> } {
  let sandbox: { env: TaskEnvironment; dir: string } | undefined;
  return {
    getEnv: () => {
      if (!sandbox) {
        const dir = mkdtempSync(join(tmpdir(), "hermes-mcp-list-"));
        const env = new TaskEnvironment(
          config.env,
          {
            runName: config.run_name ?? "mcp",
            taskId: "mcp-tools-listing",
            hostTaskDir: join(dir, "workspace"),
            network: config.network,
          },
          {
            network: config.network,
            memoryMb: config.memory_mb,
            cpus: config.cpus,
            pidsLimit: config.pids_limit,
            passEnv: config.pass_env,
            sandboxRo: config.sandbox_ro,
            image: config.image,
            pull: config.pull,
            removeTaskDirOnCleanup: true,
          },
        );
        sandbox = { env, dir };
      }
      return sandbox.env.get();
    },
    done: async () => {
      if (!sandbox) return;
      await sandbox.env.cleanup().catch(() => undefined);
      rmSync(sandbox.dir, { recursive: true, force: true });
      sandbox = undefined;
    },
  };
}

/** The rows' servers seen by this process (main thread), by config hash: their values are secrets to scrub too. */
const rowServers = new Map<string, McpServerConfig>();

export function rowMcpServersSeen(): McpServerConfig[] {
  return [...rowServers.values()];
}

/**
 * Why a row's `mcp_servers` cannot be used, or undefined: checked like a config file's servers; a server name seen for
 * the first time is listed and registered (so the row's `toolsets` may name `mcp-<server>`), a name seen before
 * stands for the tools listed then (one name, one set of tools in a run), so rows that start a server each in their
 * own way do not start it here once per row. A Harbor task's servers are only checked here (its image may not be built
 * yet); its task lists them in its own sandbox.
 */
export async function rowMcpProblem(config: RunConfig, row: object): Promise<string | undefined> {
  const value = (row as Record<string, unknown>).mcp_servers;
  if (value === undefined) return undefined;
  let servers: McpServerConfig[];
  try {
    servers = parseRowMcpServers(value, process.env, config.pass_env);
    checkNoRunKeys(config, servers);
  } catch (err) {
    return errorMessage(err).replace(/^--mcp-config: /, "");
  }
  if ((row as Record<string, unknown>).harbor !== undefined) {
    // A Harbor task's stdio servers run in its own image, which may not be built yet: listed when the task starts.
    for (const server of servers) rowServers.set(mcpConfigHash(server), server);
    return undefined;
  }
  const listing = listingEnvironment(config);
  try {
    for (const server of servers) {
      try {
        // A name already listed (the file's, or an earlier row's) stands for its tools: not started again.
        if (!catalogForName(server))
          ensureMcpRegistered([await discoverMcpServer(server, { getEnv: listing.getEnv, passEnv: config.pass_env })]);
        rowServers.set(mcpConfigHash(server), server);
      } catch (err) {
        return `mcp_servers.${server.name}: ${errorMessage(err).split("\n")[0]}`;
      }
    }
  } finally {
    await listing.done();
  }
  return undefined;
}

/**
 * A task's own servers (its row's `mcp_servers`, checked before the run): a name this worker knows stands for its
 * registered tools; a new one is listed (in the task's own environment for a sandboxed one) and registered here.
 * Throws when one cannot start.
 */
export async function taskRowMcp(
  value: unknown,
  opts: { getEnv: () => Promise<Environment>; passEnv: readonly string[]; signal?: AbortSignal },
): Promise<McpServerCatalog[]> {
  if (value === undefined) return [];
  const catalogs: McpServerCatalog[] = [];
  for (const server of parseRowMcpServers(value, process.env, opts.passEnv)) {
    const known = catalogForName(server);
    if (known) {
      catalogs.push(known);
      continue;
    }
    const listed = await discoverMcpServer(server, opts);
    ensureMcpRegistered([listed]);
    catalogs.push(listed);
  }
  return catalogs;
}
