/**
 * MCP servers of a run (`--mcp-config FILE`): the desktop-client JSON shape `{"mcpServers": {name: {command,
 * args, env} | {url, headers, type}}}` or Hermes' YAML `mcp_servers: {name: {...}}`, normalised to one shape
 * (`McpServerConfig`). `${VAR}` in `env` and `headers` is read from the environment at start (a variable that is
 * not set is an error naming it), as header values are; the values sent are kept in memory only, and run.yaml
 * shows a value only when it is nothing but `${VAR}` references (`publicMcpServers`).
 */
import YAML from "yaml";
import { parseSettingsYaml, readSettingsText } from "../core/settings_file.js";
import * as z from "zod";
import { lazy } from "../core/lazy.js";
import { UserError, errorMessage } from "../core/errors.js";
import { envReferences, expandEnvReferences } from "../core/env_refs.js";
import { looksLikeSecretName } from "../core/secret_names.js";
import { scrubUrlCredentials } from "../core/url_credentials.js";
import { HeadersSchema, expandHeaders, isShowableHeaderValue } from "./headers.js";
import { issueText } from "./run_config.js";
import type { McpServerConfig } from "../../tools/mcp/types.js";

export type { McpServerConfig };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A server's name becomes the toolset `mcp-<name>`: what a toolset name may hold. */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

const TRANSPORTS: Record<string, McpServerConfig["transport"]> = {
  stdio: "stdio",
  http: "http",
  "streamable-http": "http",
  streamable_http: "http",
  streamableHttp: "http",
  sse: "sse",
};

/** One server, as either shape writes it (the keys of both; Hermes' tuning keys are accepted and not used). */
const ServerEntrySchema = lazy(() => {
  const seconds = z.number().positive().max(2_147_483);
  const transportName = z.enum(Object.keys(TRANSPORTS) as [string, ...string[]]);
  return z
    .object({
      command: z.string().min(1).optional(),
      args: z.array(z.string()).optional(),
      env: z.record(z.string().regex(ENV_NAME, "must be an environment variable name"), z.string()).optional(),
      cwd: z.string().min(1).optional(),
      url: z.string().url().optional(),
      headers: HeadersSchema,
      type: transportName.optional(),
      transport: transportName.optional(),
      where: z.enum(["host", "sandbox"]).optional(),
      tools: z
        .object({ include: z.array(z.string().min(1)).optional(), exclude: z.array(z.string().min(1)).optional() })
        .strict()
        .optional(),
      timeout: seconds.optional(),
      connect_timeout: seconds.optional(),
      shared: z.boolean().optional(),
      disabled: z.boolean().optional(),
      enabled: z.boolean().optional(),
      // Hermes' keys for its long-lived sessions: accepted so that its config reads as is, not used by a batch run.
      keepalive_interval: z.unknown().optional(),
      sampling: z.unknown().optional(),
      supports_parallel_tool_calls: z.unknown().optional(),
      skip_preflight: z.unknown().optional(),
    })
    .strict()
    .superRefine((s, ctx) => {
      const add = (path: string, message: string) =>
        ctx.addIssue({ code: "custom", path: [path], message, input: undefined });
      if (s.command === undefined && s.url === undefined)
        add("command", "a server needs 'command' (stdio) or 'url' (HTTP)");
      if (s.command !== undefined && s.url !== undefined)
        add("url", "give 'command' (stdio) or 'url' (HTTP), not both");
      const declared = s.type ?? s.transport;
      const kind = declared === undefined ? undefined : TRANSPORTS[declared];
      if (kind === "stdio" && s.command === undefined) add("command", "a stdio server needs 'command'");
      if ((kind === "http" || kind === "sse") && s.url === undefined) add("url", `a ${declared} server needs 'url'`);
      if (s.url !== undefined) {
        if (!/^https?:\/\//i.test(s.url)) add("url", "must be an http:// or https:// URL");
        for (const k of ["args", "env", "cwd", "where"] as const)
          if (s[k] !== undefined) add(k, `applies to stdio servers (command), not to a server at a URL`);
      }
      if (s.command !== undefined && s.headers !== undefined)
        add("headers", "applies to servers at a URL, not to stdio servers (use 'env')");
      if (s.tools?.include && s.tools.exclude) add("tools", "give 'include' or 'exclude', not both");
      if (s.shared === true && s.command !== undefined && (s.where ?? "sandbox") === "sandbox")
        add(
          "shared",
          "a server in the task's sandbox belongs to its task: shared applies to where: host and URL servers",
        );
    });
});

type ServerEntry = z.infer<ReturnType<typeof ServerEntrySchema>>;

/** The 1-based line of the node at `path` in a YAML (or JSON) document, else of its nearest ancestor that is there. */
function lineAt(doc: YAML.Document, lines: YAML.LineCounter, path: readonly PropertyKey[]): number | undefined {
  for (let n = path.length; n >= 0; n--) {
    const p = path.slice(0, n).map((k) => (typeof k === "number" ? k : String(k)));
    const node = p.length === 0 ? doc.contents : doc.getIn(p, true);
    if (YAML.isNode(node) && node.range) {
      // A mapping's key is where a reader looks: the pair's key line, when the path ends at a key.
      const parent = p.length > 0 ? (p.length === 1 ? doc.contents : doc.getIn(p.slice(0, -1), true)) : undefined;
      if (YAML.isMap(parent)) {
        const pair = parent.items.find((i) => YAML.isScalar(i.key) && String(i.key.value) === String(p.at(-1)));
        const keyRange = (pair?.key as YAML.Scalar | undefined)?.range;
        if (keyRange) return lines.linePos(keyRange[0]).line;
      }
      return lines.linePos(node.range[0]).line;
    }
  }
  return undefined;
}

/**
 * Reads, validates and normalises an MCP config file; `env` gives the `${VAR}` values. Any problem is a
 * UserError (exit 2) of one line: `FILE:LINE: KEY.PATH: what is wrong`.
 */
export function loadMcpConfig(path: string, env: NodeJS.ProcessEnv = process.env): McpServerConfig[] {
  return parseMcpConfig(readSettingsText(path, "--mcp-config"), path, env);
}

export function parseMcpConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): McpServerConfig[] {
  const lines = new YAML.LineCounter();
  // JSON is YAML: one parser, with line numbers, for both shapes.
  const { value: top, doc } = parseSettingsYaml(text, file, undefined, lines);
  const at = (p: readonly PropertyKey[]) => {
    const line = lineAt(doc, lines, p);
    return `${file}${line ? `:${line}` : ""}`;
  };
  if (top === null || typeof top !== "object" || Array.isArray(top))
    throw new UserError(
      `${at([])}: an MCP config is a mapping with 'mcpServers' (JSON) or 'mcp_servers' (Hermes YAML)`,
    );
  const obj = top as Record<string, unknown>;
  if (obj.mcpServers !== undefined && obj.mcp_servers !== undefined)
    throw new UserError(`${at(["mcp_servers"])}: give 'mcpServers' or 'mcp_servers', not both`);
  const key = obj.mcpServers !== undefined ? "mcpServers" : obj.mcp_servers !== undefined ? "mcp_servers" : undefined;
  if (!key)
    throw new UserError(
      `${at([])}: no 'mcpServers' (the desktop-client JSON shape) or 'mcp_servers' (Hermes' YAML shape) in the file`,
    );
  const servers = obj[key];
  if (servers === null || typeof servers !== "object" || Array.isArray(servers))
    throw new UserError(`${at([key])}: '${key}' must be a mapping of server names to servers`);

  return normaliseServers(servers as Record<string, unknown>, [key], (p) => at(p), env);
}

/**
 * Each server of a mapping validated and normalised; `prefix` is the key path to the mapping and `at(path)` says
 * where a path is (`FILE:LINE`). The first problem throws a UserError `<at>: <key.path>: <what is wrong>`.
 */
function normaliseServers(
  servers: Record<string, unknown>,
  prefix: (string | number)[],
  at: (path: readonly PropertyKey[]) => string,
  env: NodeJS.ProcessEnv,
): McpServerConfig[] {
  const out: McpServerConfig[] = [];
  for (const [name, raw] of Object.entries(servers)) {
    if (!SERVER_NAME.test(name))
      throw new UserError(
        `${at([...prefix, name])}: ${[...prefix, name].join(".")}: a server name is letters, digits, '_', '.', '-' (it names the toolset mcp-<name>)`,
      );
    const parsed = ServerEntrySchema().safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = [...prefix, name, ...issue.path];
      let value: unknown = raw;
      for (const k of issue.path)
        value = value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[k] : undefined;
      const what =
        issue.code === "unrecognized_keys"
          ? `unknown key(s) ${issue.keys.map((k) => `'${k}'`).join(", ")}`
          : issueText(issue, value);
      const keyPath = issue.code === "unrecognized_keys" ? [...path, issue.keys[0]!] : path;
      throw new UserError(`${at(keyPath)}: ${keyPath.map(String).join(".")}: ${what}`);
    }
    const s = parsed.data;
    if (s.disabled === true || s.enabled === false) continue;
    try {
      out.push(normalise(name, s, env, (p) => `${at([...prefix, name, ...p])}: ${[...prefix, name, ...p].join(".")}`));
    } catch (err) {
      throw err instanceof UserError ? err : new UserError(errorMessage(err));
    }
  }
  return out;
}

/**
 * A dataset row's `mcp_servers`: the same servers as a config file's, as a mapping `{name: {...}}` or in Harbor's
 * list form `[{name, transport, command, args, url, headers, env}]`. Throws a UserError whose message is the
 * row's reason (`mcp_servers.fs.args: must be a list …`), for `FILE:LINE: ` to go before it.
 *
 * A row is data: given `passEnv` (the run's --pass-env), its `${VAR}` may name only those variables, as a task's
 * environment holds only them; without it any variable of `env` is read, and a dataset row could send any secret
 * of this machine's environment to a URL of its choosing.
 */
export function parseRowMcpServers(
  value: unknown,
  env: NodeJS.ProcessEnv = process.env,
  passEnv?: readonly string[],
): McpServerConfig[] {
  let servers: Record<string, unknown>;
  if (Array.isArray(value)) {
    servers = {};
    for (const [i, item] of value.entries()) {
      const name = item !== null && typeof item === "object" ? (item as Record<string, unknown>).name : undefined;
      if (typeof name !== "string" || name === "")
        throw new UserError(`mcp_servers.${i}: each server of the list needs a 'name'`);
      if (Object.hasOwn(servers, name)) throw new UserError(`mcp_servers.${i}: a second server named '${name}'`);
      const { name: _name, ...rest } = item as Record<string, unknown>;
      servers[name] = rest;
    }
  } else if (value !== null && typeof value === "object") {
    servers = value as Record<string, unknown>;
  } else {
    throw new UserError(
      `mcp_servers: must be a mapping of server names to servers, or a list of servers with a 'name'`,
    );
  }
  if (passEnv) checkRowVariables(servers, passEnv);
  let out: McpServerConfig[];
  try {
    out = normaliseServers(servers, ["mcp_servers"], () => "", env);
  } catch (err) {
    // Without a file of its own, the reason starts at the key path.
    throw new UserError(errorMessage(err).replace(/^: /, ""));
  }
  // A row is data: its servers run in its task's sandbox, never on this machine outside it.
  for (const s of out)
    if (s.transport === "stdio" && s.where === "host")
      throw new UserError(
        `mcp_servers.${s.name}.where: a row's stdio server runs in its task's sandbox; where: host (this machine, outside the sandbox) is for the run's --mcp-config only`,
      );
  return out;
}

/** Refuses a `${VAR}` in a row's `env` or `headers` that is not one of the --pass-env names. */
function checkRowVariables(servers: Record<string, unknown>, passEnv: readonly string[]): void {
  for (const [name, raw] of Object.entries(servers)) {
    if (raw === null || typeof raw !== "object") continue;
    for (const key of ["env", "headers"] as const) {
      const table = (raw as Record<string, unknown>)[key];
      if (table === null || typeof table !== "object" || Array.isArray(table)) continue;
      for (const [k, v] of Object.entries(table as Record<string, unknown>)) {
        if (typeof v !== "string") continue;
        const other = envReferences(v).find((ref) => !passEnv.includes(ref));
        if (other !== undefined)
          throw new UserError(
            `mcp_servers.${name}.${key}.${k}: \${${other}} is not a --pass-env name; a row's servers may read only the variables --pass-env gives its tasks`,
          );
      }
    }
  }
}

function normalise(
  name: string,
  s: ServerEntry,
  env: NodeJS.ProcessEnv,
  where: (path: string[]) => string,
): McpServerConfig {
  const declared = s.type ?? s.transport;
  const transport = s.command !== undefined ? "stdio" : declared === undefined ? "http" : TRANSPORTS[declared]!;
  const envRaw = s.env ?? {};
  const envValues: Record<string, string> = {};
  for (const [k, v] of Object.entries(envRaw)) {
    try {
      envValues[k] = expandEnvReferences(v, env, where(["env", k]));
    } catch (err) {
      throw new UserError(errorMessage(err));
    }
  }
  let headerValues: Record<string, string> = {};
  try {
    headerValues = expandHeaders(s.headers, env, where(["headers"]));
  } catch (err) {
    throw new UserError(errorMessage(err));
  }
  return {
    name,
    transport,
    ...(s.command !== undefined ? { command: s.command, args: s.args ?? [], cwd: s.cwd } : {}),
    ...(s.url !== undefined ? { url: s.url } : {}),
    where: transport === "stdio" ? (s.where ?? "sandbox") : "host",
    env: envRaw,
    envValues,
    headers: s.headers ?? {},
    headerValues,
    tools: { include: s.tools?.include, exclude: s.tools?.exclude },
    timeoutSec: s.timeout ?? 60,
    connectTimeoutSec: s.connect_timeout ?? 30,
    shared: s.shared === true,
  };
}

/** A value as run.yaml shows it: written as is when it is only `${VAR}` references, else redacted. */
function shownValue(value: string): string {
  return isShowableHeaderValue(value) ||
    (envReferences(value).length > 0 && /^(?:\$\{[A-Za-z_][A-Za-z0-9_]*\})+$/.test(value))
    ? value
    : "<redacted>";
}

/** The servers as run.yaml records them: env and header values redacted unless they are `${VAR}` references. */
export function publicMcpServers(servers: readonly McpServerConfig[]): Record<string, unknown>[] {
  return servers.map((s) => ({
    name: s.name,
    transport: s.transport,
    where: s.where,
    ...(s.command !== undefined ? { command: s.command, args: s.args } : {}),
    ...(s.cwd !== undefined ? { cwd: s.cwd } : {}),
    ...(s.url !== undefined ? { url: scrubUrlCredentials(s.url) } : {}),
    ...(Object.keys(s.env).length
      ? { env: Object.fromEntries(Object.entries(s.env).map(([k, v]) => [k, shownValue(v)])) }
      : {}),
    ...(Object.keys(s.headers).length
      ? { headers: Object.fromEntries(Object.entries(s.headers).map(([k, v]) => [k, shownValue(v)])) }
      : {}),
    ...(s.tools.include
      ? { tools: { include: s.tools.include } }
      : s.tools.exclude
        ? { tools: { exclude: s.tools.exclude } }
        : {}),
    timeout: s.timeoutSec,
    connect_timeout: s.connectTimeoutSec,
    ...(s.shared ? { shared: true } : {}),
  }));
}

/** Every value sent to a server that could be a secret (the redactor scrubs them from every output). */
export function mcpSecretValues(servers: readonly McpServerConfig[]): string[] {
  const out: string[] = [];
  for (const s of servers) {
    // A value read from the environment, or written under a name that says it is a secret.
    for (const [k, v] of Object.entries(s.envValues))
      if (envReferences(s.env[k] ?? "").length > 0 || looksLikeSecretName(k)) out.push(v);
    for (const v of Object.values(s.headerValues)) {
      out.push(v);
      const token = /^(?:Bearer|Basic|Token|Key|ApiKey|Api-Key|Digest)\s+(\S.*)$/i.exec(v)?.[1];
      if (token) out.push(token);
    }
  }
  return out.filter((v) => v.length >= 8);
}
