/**
 * MCP servers as tools of the registry, as Hermes registers them: each tool of server S as `mcp_<S>_<tool>`
 * (every character outside [A-Za-z0-9_] made `_`), in toolset `mcp-<S>` (so distributions and rows can name it),
 * the tool's `inputSchema` as its parameters.
 *
 * The tools are listed once per run (`discoverMcpServer`, in the main thread, paginated, cached per config hash
 * within the process) and the list goes to every worker (`registerMcpCatalog`), so no worker connects just to
 * learn the tools. A task connects to a server on the first call of one of its tools (`McpTaskSessions`), where
 * the config says the server runs, and closes it when the task's agent loop ends. A server that goes away during
 * the task is started again by the next call, within Hermes' limits (restarts.ts), each restart a task event.
 *
 * A call's result is the Hermes JSON string: `{"result": text}` (text parts joined; the structured content as
 * JSON when there is no text; images and audio as placeholders); an `isError` result, a time-out or a lost
 * connection is `{"error": ...}`. As in Hermes, a call that found its server gone before it was sent is sent again
 * once the server is back; one the server went away during (or whose HTTP session it dropped) is not, as it may
 * have had its effect (`"outcome_uncertain": true`), unless the tool is read-only.
 */
import { createHash } from "node:crypto";
import * as z from "zod";
import { lazy } from "../../src/core/lazy.js";
import { UserError } from "../../src/core/errors.js";
import type { Environment } from "../environments/base.js";
import {
  registry as defaultRegistry,
  toolFailure,
  type JsonSchema,
  type RawContentPart,
  type ToolRegistry,
  type ToolResult,
} from "../registry.js";
import { registerToolset, TOOLSETS } from "../toolsets.js";
import type { JsonSchemaType, JsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import type { ConnectOptions, McpConnection } from "./client.js";
import { describeError } from "./errors.js";
import { GaveUpError, MCP_RESTARTS, ServerSlot } from "./restarts.js";
import type { McpServerCatalog, McpServerConfig, McpToolInfo } from "./types.js";

/** Hermes' name of an MCP tool; names longer than the providers' 64 characters keep a hash of the whole. */
export function mcpToolName(server: string, tool: string): string {
  const clean = (v: string) => v.replace(/[^A-Za-z0-9_]/g, "_");
  const name = `mcp_${clean(server)}_${clean(tool)}`;
  if (name.length <= 64) return name;
  return `${name.slice(0, 55)}_${createHash("sha256").update(name).digest("hex").slice(0, 8)}`;
}

export function mcpToolsetName(server: string): string {
  return `mcp-${server}`;
}

/** The part of a config that decides what a server offers (secrets hashed, never kept). */
export function mcpConfigHash(s: McpServerConfig): string {
  const { envValues, headerValues, ...rest } = s;
  return createHash("sha256")
    .update(JSON.stringify({ ...rest, envValues, headerValues }))
    .digest("hex")
    .slice(0, 16);
}

const isMapping = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/**
 * A tool's inputSchema as function parameters, which a provider takes only as an object schema: no type is an
 * object; a type list with "object" in it is "object"; `properties` that is not a mapping and `required` that
 * is not a list of names are left out (a provider refuses the whole request for them, failing every task). A
 * schema of another type describes no arguments a model can send: a UserError naming the tool.
 */
function objectSchema(schema: unknown, server: string, tool: string): JsonSchema {
  if (!isMapping(schema)) return { type: "object", properties: {} };
  const s = structuredClone(schema);
  if (s.type === undefined || (Array.isArray(s.type) && s.type.includes("object"))) s.type = "object";
  if (s.type !== "object")
    throw new UserError(
      `MCP server '${server}': tool '${tool}' has an inputSchema of type ${JSON.stringify(s.type)}, not "object" (a tool's arguments are an object); leave it out with tools.exclude`,
    );
  if (!isMapping(s.properties)) s.properties = {};
  if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((r) => typeof r === "string")))
    delete s.required;
  return s as JsonSchema;
}

const listings = new Map<string, Promise<McpServerCatalog>>();

/** The most pages of tools/list read from one server. */
const MAX_LISTING_PAGES = 1000;

/** A tools/list answer, as leniently as a tool can still be offered: a name, and any input schema. */
const ToolListingSchema = lazy(() =>
  z.looseObject({
    tools: z.array(
      z.looseObject({
        name: z.string().min(1),
        description: z.string().nullish(),
        inputSchema: z.unknown().optional(),
        annotations: z.unknown().optional(),
      }),
    ),
    nextCursor: z.string().nullish(),
  }),
);

/**
 * Connects to a server, lists its tools (every page), applies include/exclude and closes it again. Cached per
 * config hash in this process. `getEnv` gives an environment for a `where: sandbox` server; `signal` (a task's)
 * ends the caller's wait, not the listing.
 */
export function discoverMcpServer(
  server: McpServerConfig,
  opts: { getEnv?: () => Promise<Environment>; passEnv?: readonly string[]; signal?: AbortSignal } = {},
): Promise<McpServerCatalog> {
  const configHash = mcpConfigHash(server);
  let pending = listings.get(configHash);
  if (!pending) {
    pending = (async () => {
      // The listing is shared by every caller of the process: one caller's signal ends only its own wait (below).
      const conn = await connectMcpServer(server, { getEnv: opts.getEnv, passEnv: opts.passEnv });
      try {
        const listed: { name: string; description?: string | null; inputSchema?: unknown; annotations?: unknown }[] =
          [];
        let cursor: string | undefined;
        const seenCursors = new Set<string>();
        do {
          let page: z.infer<ReturnType<typeof ToolListingSchema>>;
          try {
            // Read leniently: an input schema as servers write it (no type, a top-level $ref, oneOf) is made an
            // object schema below, as Hermes takes it, instead of failing the whole server as the SDK's
            // listTools does.
            page = await conn.client.request(
              { method: "tools/list", params: cursor ? { cursor } : {} },
              ToolListingSchema(),
              { timeout: server.connectTimeoutSec * 1000 },
            );
          } catch (err) {
            throw new Error(`MCP server '${server.name}': tools/list failed: ${describeError(err)}`, { cause: err });
          }
          listed.push(...page.tools);
          cursor = page.nextCursor ?? undefined;
          if (cursor !== undefined && seenCursors.has(cursor))
            throw new Error(`MCP server '${server.name}' repeated the listTools cursor ${cursor}`);
          if (cursor !== undefined) seenCursors.add(cursor);
          // A cursor that is new on every page (made of a clock or a counter) would list for ever.
          if (cursor !== undefined && seenCursors.size >= MAX_LISTING_PAGES)
            throw new Error(
              `MCP server '${server.name}': tools/list gave a next page after ${MAX_LISTING_PAGES} pages (${listed.length} tools so far); its cursor never ends`,
            );
        } while (cursor);
        const { include, exclude } = server.tools;
        const wanted = listed.filter((t) =>
          include ? include.includes(t.name) : exclude ? !exclude.includes(t.name) : true,
        );
        for (const name of include ?? []) {
          if (!listed.some((t) => t.name === name))
            throw new UserError(
              `MCP server '${server.name}': tools.include names '${name}', which the server does not offer (it offers: ${listed.map((t) => t.name).join(", ") || "nothing"})`,
            );
        }
        const tools: McpToolInfo[] = wanted.map((t) => ({
          name: t.name,
          registeredName: mcpToolName(server.name, t.name),
          description: t.description?.trim() || `The ${t.name} tool of the MCP server ${server.name}.`,
          inputSchema: objectSchema(t.inputSchema, server.name, t.name),
          readOnly: isMapping(t.annotations) && t.annotations.readOnlyHint === true,
        }));
        return {
          config: server,
          configHash,
          serverInfo: conn.serverInfo,
          protocolVersion: conn.protocolVersion,
          tools,
        };
      } finally {
        await conn.close();
      }
    })();
    listings.set(configHash, pending);
    pending.catch(() => listings.delete(configHash));
  }
  // A task that ends (its time limit) stops waiting for a listing that hangs.
  return abortable(pending, opts.signal);
}

/** The SDK and the validator load only when a run has MCP servers (every worker imports this module). */
async function connectMcpServer(server: McpServerConfig, opts: ConnectOptions = {}): Promise<McpConnection> {
  return (await import("./client.js")).connectMcpServer(server, opts);
}

let ajvModule: Promise<typeof import("@modelcontextprotocol/sdk/validation/ajv")> | undefined;
const validators = new Map<string, JsonSchemaValidator<unknown> | null>();

/**
 * What is wrong with a call's arguments by the tool's inputSchema (checked here, as every tool's arguments are,
 * before the server is asked), or undefined. A schema this validator cannot compile is left to the server.
 * Each schema gets a validator (an Ajv instance) of its own: Ajv registers a schema by its `$id`, so tools whose
 * schemas share one (a generator's fixed `$id`) would otherwise all be checked against the first one's.
 */
async function argumentProblem(tool: McpToolInfo, args: unknown): Promise<string | undefined> {
  const key = `${tool.registeredName}\n${JSON.stringify(tool.inputSchema)}`;
  let validate = validators.get(key);
  if (validate === undefined) {
    try {
      ajvModule ??= import("@modelcontextprotocol/sdk/validation/ajv");
      validate = new (await ajvModule).AjvJsonSchemaValidator().getValidator(tool.inputSchema as JsonSchemaType);
    } catch {
      validate = null;
    }
    validators.set(key, validate);
  }
  if (!validate) return undefined;
  const r = validate(args);
  return r.valid ? undefined : r.errorMessage;
}

/** The toolsets this module made (registering a server again replaces its own toolset, never another one). */
const madeToolsets = new Set<string>();

/**
 * Registers the servers' tools and their `mcp-<server>` toolsets. Refuses (a UserError, exit 2) a name that two
 * tools would share or that another tool already has, naming both.
 */
export function registerMcpCatalog(catalogs: readonly McpServerCatalog[], reg: ToolRegistry = defaultRegistry): void {
  const owner = new Map<string, string>();
  for (const c of catalogs) {
    const toolset = mcpToolsetName(c.config.name);
    if (Object.hasOwn(TOOLSETS, toolset) && !madeToolsets.has(toolset)) {
      throw new UserError(
        `MCP server '${c.config.name}': a toolset named ${toolset} already exists (a plugin's); rename the server`,
      );
    }
    for (const t of c.tools) {
      const what = `tool '${t.name}' of MCP server '${c.config.name}'`;
      const earlier = owner.get(t.registeredName);
      if (earlier)
        throw new UserError(
          `MCP tool name collision: ${what} and ${earlier} would both be ${t.registeredName}; rename a server, or leave one out with tools.exclude`,
        );
      const existing = reg.get(t.registeredName);
      if (existing && existing.toolset !== toolset) {
        throw new UserError(
          `MCP tool name collision: ${what} would be ${t.registeredName}, which the tool of toolset '${existing.toolset}' already is; rename the server, or leave the tool out with tools.exclude`,
        );
      }
      owner.set(t.registeredName, what);
    }
  }
  for (const c of catalogs) {
    const toolset = mcpToolsetName(c.config.name);
    registeredSignatures.set(c.config.name, toolsSignature(c));
    catalogsByName.set(c.config.name, c);
    for (const t of c.tools) {
      mcpToolNames.add(t.registeredName);
      reg.register({
        name: t.registeredName,
        toolset,
        schema: { description: t.description, parameters: t.inputSchema },
        // What the server does is its own: the approver judges the call as data (the pipeline applies --mcp-approval).
        effects: (args) => [
          {
            kind: "call",
            server: c.config.name,
            where: mcpWhere(c.config),
            tool: t.name,
            arguments: args as Record<string, unknown>,
          },
        ],
        needsEnvironment: c.config.transport === "stdio" && c.config.where === "sandbox",
        handler: async (args, ctx) => {
          const invalid = await argumentProblem(t, args);
          if (invalid) return toolFailure(`Invalid arguments for ${t.registeredName}: ${invalid}`);
          if (!ctx.mcp) return toolFailure(`MCP server '${c.config.name}' is not connected in this task`);
          return ctx.mcp.call(c.config.name, t.name, args as Record<string, unknown>, ctx.signal, ctx.keepRawContent);
        },
      });
    }
    const where =
      c.config.transport === "stdio"
        ? c.config.where === "host"
          ? "on the host"
          : "in the task's sandbox"
        : `at ${c.config.url}`;
    madeToolsets.add(toolset);
    registerToolset(
      toolset,
      {
        description: `Tools of the MCP server ${c.config.name} (${c.config.transport}, ${where})`,
        tools: c.tools.map((t) => t.registeredName),
      },
      { override: true },
    );
  }
}

/** What a server offers, as the model sees it: a server name must stand for the same tools everywhere in a run. */
function toolsSignature(c: McpServerCatalog): string {
  return JSON.stringify(c.tools.map((t) => [t.registeredName, t.description, t.inputSchema]));
}

const registeredSignatures = new Map<string, string>();
const catalogsByName = new Map<string, McpServerCatalog>();

/**
 * The tools a server name stands for in this run, for another config of that name (a row's): the listing of the
 * first config registered under the name, with `server` as the config to start. Undefined for a new name.
 */
export function catalogForName(server: McpServerConfig): McpServerCatalog | undefined {
  const known = catalogsByName.get(server.name);
  return known && { ...known, config: server, configHash: mcpConfigHash(server) };
}
const mcpToolNames = new Set<string>();

/** Whether a registered tool is a tool of an MCP server. */
export function isMcpTool(name: string): boolean {
  return mcpToolNames.has(name);
}

/**
 * Registers servers whose name is new, skips those registered already with the same tools (a row repeating the
 * run's server, or another row's), and refuses (UserError) a name already registered with other tools.
 */
export function ensureMcpRegistered(catalogs: readonly McpServerCatalog[], reg: ToolRegistry = defaultRegistry): void {
  const fresh: McpServerCatalog[] = [];
  for (const c of catalogs) {
    const earlier = registeredSignatures.get(c.config.name);
    if (earlier === undefined) fresh.push(c);
    else if (earlier !== toolsSignature(c)) {
      throw new UserError(
        `MCP server '${c.config.name}' offers other tools than the server of that name registered before (from --mcp-config or another row): one name must offer the same tools in the whole run`,
      );
    }
  }
  if (fresh.length) registerMcpCatalog(fresh, reg);
}

/** Where a server's code runs: a stdio server in the task's sandbox, or outside it (on the host, or at a URL). */
function mcpWhere(config: McpServerConfig): "host" | "sandbox" {
  return config.transport === "stdio" && config.where === "sandbox" ? "sandbox" : "host";
}

/** What `metadata.mcp_servers` records about each server of a task. */
export function mcpServersMetadata(catalogs: readonly McpServerCatalog[]): Record<string, unknown>[] {
  return catalogs.map((c) => ({
    name: c.config.name,
    transport: c.config.transport,
    where: c.config.where,
    ...(c.serverInfo ? { server_info: c.serverInfo } : {}),
    ...(c.protocolVersion ? { protocol_version: c.protocolVersion } : {}),
    tools: c.tools.map((t) => t.registeredName),
  }));
}

/** An MCP content part as text: text as is; images, audio and resources as placeholders. */
function partText(part: Record<string, unknown>): string {
  const kb = (data: unknown) =>
    typeof data === "string" ? `${Math.max(1, Math.round((data.length * 3) / 4 / 1024))} KB` : "? KB";
  switch (part.type) {
    case "text":
      return String(part.text ?? "");
    case "image":
    case "audio":
      return `[${part.type} ${String(part.mimeType ?? "")}, ${kb(part.data)}]`;
    case "resource_link":
      return `[resource ${String(part.uri ?? "")}${part.name ? ` (${String(part.name)})` : ""}]`;
    case "resource": {
      const r = (part.resource ?? {}) as Record<string, unknown>;
      return typeof r.text === "string"
        ? r.text
        : `[resource ${String(r.uri ?? "")} ${String(r.mimeType ?? "")}, ${kb(r.blob)}]`;
    }
    default:
      return `[${String(part.type)} content]`;
  }
}

/** Base64 data longer than this is not kept in the trajectory (its part is kept, with the size it had). */
const RAW_DATA_CAP = 2 * 2 ** 20;

/** The parts of a callTool result that its text shows only as placeholders: images, audio, binary resources. */
export function rawParts(result: Record<string, unknown>): RawContentPart[] {
  const parts = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  const capped = (data: unknown) =>
    typeof data === "string" && data.length > RAW_DATA_CAP
      ? { data: null, data_dropped_bytes: Math.round((data.length * 3) / 4) }
      : {};
  return parts.flatMap((part): RawContentPart[] => {
    if (part.type === "image" || part.type === "audio") return [{ ...part, ...capped(part.data) }];
    const resource = part.type === "resource" ? (part.resource as Record<string, unknown> | undefined) : undefined;
    if (resource && typeof resource.blob === "string") {
      const c = capped(resource.blob);
      return [
        {
          ...part,
          resource: "data" in c ? { ...resource, blob: null, blob_dropped_bytes: c.data_dropped_bytes } : resource,
        },
      ];
    }
    return [];
  });
}

/** A callTool result as the tool's result: `{result}`, or `{error}` when the server marked it an error. */
export function mcpResultToToolResult(result: Record<string, unknown>): ToolResult {
  const parts = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  let text = parts.map(partText).join("\n");
  if (text === "" && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (text === "" && result.toolResult !== undefined)
    text = typeof result.toolResult === "string" ? result.toolResult : JSON.stringify(result.toolResult);
  if (result.isError === true) return toolFailure(text || "the MCP tool reported an error without a message");
  return { content: { result: text } };
}

/** Ends the task when a server cannot start (the task's environment_error, retryable). */
export type McpStartFailure = (reason: string) => void;

/** `shared: true` servers in this thread, by config hash: started by the first task that calls one. */
const sharedSlots = new Map<string, ServerSlot>();

/**
 * Closes this thread's shared connections (tests). A run's worker threads end without it: the servers exit when
 * their stdin closes with the thread, and the main thread ends those still there at its exit (client.ts).
 */
export async function closeSharedMcpConnections(): Promise<void> {
  const all = [...sharedSlots.values()];
  sharedSlots.clear();
  await Promise.all(all.map((slot) => slot.close()));
}

function sharedSlot(server: McpServerConfig, passEnv: readonly string[] | undefined): ServerSlot {
  const key = mcpConfigHash(server);
  let slot = sharedSlots.get(key);
  if (!slot) {
    // Its signal is its own (aborted by closeSharedMcpConnections): the end of the task that started it is not.
    slot = new ServerSlot(server, (signal) => connectMcpServer(server, { passEnv, signal }));
    sharedSlots.set(key, slot);
  }
  return slot;
}

/** `p`, or the signal's reason once it aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort: (() => void) | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
    }),
  ]).finally(() => signal.removeEventListener("abort", onAbort!));
}

/** A call's wait for a restart is over (MCP_RESTARTS.callWaitMs). */
class WaitOver extends Error {}

/**
 * One task's connections: each server connected on the first call of one of its tools, started again when it went
 * away, all closed by close().
 */
export class McpTaskSessions {
  private readonly slots = new Map<string, ServerSlot>();
  /** First starts whose failure is reported (onStartFailure) already. */
  private readonly watched = new WeakSet<Promise<McpConnection>>();
  private closed = false;
  private readonly servers: Map<string, McpServerConfig>;
  private readonly tools: Map<string, Map<string, McpToolInfo>>;

  constructor(
    catalogs: readonly McpServerCatalog[],
    private readonly opts: {
      getEnv: () => Promise<Environment>;
      passEnv?: readonly string[];
      onStartFailure?: McpStartFailure;
      /** A task event (events.log): each restart of a server, and a server given up on. */
      onEvent?: (message: string) => void;
    },
  ) {
    this.servers = new Map(catalogs.map((c) => [c.config.name, c.config]));
    this.tools = new Map(catalogs.map((c) => [c.config.name, new Map(c.tools.map((t) => [t.name, t]))]));
  }

  private slot(server: McpServerConfig): ServerSlot {
    if (server.shared) return sharedSlot(server, this.opts.passEnv);
    let slot = this.slots.get(server.name);
    if (!slot) {
      slot = new ServerSlot(server, (signal) =>
        connectMcpServer(server, { getEnv: this.opts.getEnv, passEnv: this.opts.passEnv, signal }),
      );
      this.slots.set(server.name, slot);
    }
    return slot;
  }

  /** The slot's connection; a first start that fails ends the task (onStartFailure). */
  private connection(slot: ServerSlot): Promise<McpConnection> {
    const pending = slot.connection();
    if (!this.watched.has(pending)) {
      this.watched.add(pending);
      pending.catch((err: unknown) => {
        // A start given up because the task ended is not the server's failure.
        if (!this.closed) this.opts.onStartFailure?.(err instanceof Error ? err.message : String(err));
      });
    }
    return pending;
  }

  /**
   * A connection instead of `dead` (gone: `why`), or the error the call returns: the server given up on, its
   * restart still under way after MCP_RESTARTS.callWaitMs, the call's end (`signal`: its task's time limit).
   */
  private async restarted(
    server: McpServerConfig,
    slot: ServerSlot,
    dead: McpConnection,
    why: string,
    signal: AbortSignal | undefined,
  ): Promise<McpConnection | ToolResult> {
    const waitMs = MCP_RESTARTS.callWaitMs;
    let timer: NodeJS.Timeout | undefined;
    const over = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WaitOver()), waitMs);
    });
    try {
      return await Promise.race([abortable(slot.restart(dead, why, this.opts.onEvent), signal), over]);
    } catch (err) {
      if (err instanceof GaveUpError) return toolFailure(err.message);
      if (err instanceof WaitOver)
        return toolFailure(
          `MCP server '${server.name}' ${why}, and is being ${slot.again} (no new session within ${waitMs / 1000} s; the call did not reach the server); wait a moment before calling it again`,
        );
      const ended = signal?.aborted || this.closed ? `; the call ended while it was being ${slot.again}` : "";
      return toolFailure(`MCP server '${server.name}' ${why}${ended}: ${describeError(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async call(
    serverName: string,
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    keepRaw?: (parts: RawContentPart[]) => void,
  ): Promise<ToolResult> {
    const server = this.servers.get(serverName);
    if (!server) return toolFailure(`unknown MCP server '${serverName}'`);
    if (this.closed) return toolFailure(`MCP server '${serverName}' was already closed for this task`);
    const slot = this.slot(server);
    const givenUp = slot.givenUp();
    if (givenUp) return toolFailure(givenUp);
    let conn: McpConnection;
    try {
      // A start that hangs does not hold the call past the task's time limit (the signal).
      conn = await abortable(this.connection(slot), signal);
    } catch (err) {
      return toolFailure(err instanceof Error ? err.message : String(err));
    }
    // Gone before the call: it is sent once the server is back.
    let restarted = false;
    const gone = await slot.deadReason(conn);
    if (gone !== undefined) {
      const next = await this.restarted(server, slot, conn, gone, signal);
      if (!("client" in next)) return next;
      conn = next;
      restarted = true;
    }
    const readOnly = this.tools.get(serverName)?.get(tool)?.readOnly === true;
    for (;;) {
      // A new object for each try: the transport knows by it whether this try's request was written.
      const params = { name: tool, arguments: args };
      try {
        const result = await conn.client.callTool(params, undefined, {
          timeout: server.timeoutSec * 1000,
          signal,
          resetTimeoutOnProgress: true,
          maxTotalTimeout: server.timeoutSec * 1000 * 10,
        });
        slot.answered();
        const raw = rawParts(result as Record<string, unknown>);
        if (raw.length > 0) keepRaw?.(raw);
        return mcpResultToToolResult(result as Record<string, unknown>);
      } catch (err) {
        const kind = conn.failureKind(err, params);
        const message = `${kind === "session_dropped" ? "HTTP 404: " : ""}${describeError(err)}`;
        const failed = `MCP tool ${tool} of server '${serverName}' failed: ${message}`;
        if (kind === undefined) {
          // A server that went away in the call: why is in what it wrote last. The call may have had its effect.
          const gone = await slot.deadReason(conn);
          if (gone === undefined) return toolFailure(failed);
          return toolFailure(
            `${failed}; the server ${gone.replace(/^had exited/, "exited")}. The call may have had its effect before then, so it was not sent again: check before calling it again (the server is ${slot.again} on the next call)`,
            { outcome_uncertain: true },
          );
        }
        const why =
          kind === "session_dropped"
            ? `dropped the session (${message})`
            : ((await slot.deadReason(conn)) ??
              (server.transport === "stdio" ? "had exited" : `refused the connection (${message})`));
        slot.drop(conn, why);
        if (kind === "session_dropped" && !readOnly)
          return toolFailure(
            `${failed}: the server dropped the session; the call was not sent again, as it may have had its effect: check before calling it again (the next call makes a new session)`,
            { outcome_uncertain: true },
          );
        // It cannot have reached the server (or it is read-only): sent again once, on a new connection.
        if (restarted)
          return toolFailure(
            `${failed}: the server ${why} again right after it was ${slot.again}; it is not starting cleanly: do not call it again now`,
          );
        const next = await this.restarted(server, slot, conn, why, signal);
        if (!("client" in next)) return next;
        conn = next;
        restarted = true;
      }
    }
  }

  /** Closes every connection of the task's own (stops the servers it started); shared ones stay for the next task. */
  async close(): Promise<void> {
    this.closed = true;
    const own = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(own.map((slot) => slot.close()));
  }
}
