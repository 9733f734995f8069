/**
 * The tool registry: the TypeScript form of Hermes' `registry.register(...)`.
 *
 * Tool modules in this folder call `registry.register({...})` at their top level; `discoverBuiltinTools`
 * imports the ones listed in `builtin_tools.ts`.
 */
import type { Environment } from "./environments/base.js";
import type { ProcessNotices } from "./process_notices.js";
import type { JsonSchema, OpenAITool, ToolSchema } from "../src/core/chat.js";
import type { ApprovalRecord } from "../src/core/records.js";
import type * as z from "zod";
import { toolParameters } from "./tool_args.js";

export type { JsonSchema, OpenAITool, ToolSchema, ApprovalRecord };

export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

/** A task's last read_file / search_files call (as JSON of its key) and how many times in a row it came. */
export interface FileReadTracker {
  lastKey?: string;
  consecutive: number;
}

/**
 * What the task last knew of a file it read or wrote (the original's file-state registry): the file's
 * modification time then, and whether the read showed only part of it (offset past 1, or truncated).
 */
export interface FileStamp {
  mtime: string;
  partial: boolean;
}

/** What a handler gets besides its arguments. */
export interface ToolContext {
  taskId: string;
  /** The task's environment, created on first use. */
  getEnv(): Promise<Environment>;
  /** The environment kind (local, docker, singularity) without creating it. */
  envKind: string;
  signal?: AbortSignal;
  logger: Logger;
  /** The task's user prompt, for tools (approval) that need it as context. */
  userTask?: string;
  /**
   * The task's record of its last read_file / search_files call and how many times in a row it was made
   * (the original's read-loop guard); the pipeline resets it when any other tool runs.
   */
  fileReads?: FileReadTracker;
  /**
   * The task's stamps of the files it read or wrote, by absolute path: write_file and patch warn when a file
   * changed on disk since, or was last read only in part (the original's stale-write warning).
   */
  fileStamps?: Map<string, FileStamp>;
  /** The task's read_file windows by file, offset and limit, with the file's time when read (the original's read dedup). */
  readDedup?: Map<string, string>;
  /** The task's notices about background processes (notify_on_complete, watch_patterns), told after the agent answers. */
  notices?: ProcessNotices;
  /** The id of the tool call being run (approval records name it), when the agent loop runs it. */
  toolCallId?: string;
  /** The task's MCP server connections (tools/mcp/mcp_tools.ts), when the run has MCP servers. */
  mcp?: {
    call(
      server: string,
      tool: string,
      args: Record<string, unknown>,
      signal?: AbortSignal,
      keepRaw?: (parts: RawContentPart[]) => void,
    ): Promise<ToolResult>;
  };
  /**
   * Keeps the raw parts (images, audio, binary resources) that placeholders in this call's result stand for: the
   * trajectory's tool message carries them as `raw_content`, the model never sees them. Set by the agent loop.
   */
  keepRawContent?: (parts: RawContentPart[]) => void;
}

/**
 * What a tool call produced. `content` is what the model sees (any JSON value, or JSON text as a
 * plugin handler returns it); `error` marks a failed call, shown as `{"error": error, ...details}`.
 */
/** A content part a tool result holds besides its text (an MCP image, audio or binary resource), as the server sent it. */
export type RawContentPart = Record<string, unknown>;

export interface ToolResult {
  content?: unknown;
  error?: string;
  details?: Record<string, unknown>;
}

/** A handler returns a ToolResult, or (plugins, the seeds' form) the JSON text of its result. */
export type ToolOutput = ToolResult | string;

export type ToolHandler<A = Record<string, unknown>, S = undefined> = (
  args: A,
  ctx: ToolContext,
  state: S,
) => ToolOutput | Promise<ToolOutput>;

/**
 * What a call will do that may need approval, declared before it runs. `run`: a shell command
 * (`cwd` when it is not the environment's `workdir`); `write`: a write of a resolved path.
 */
export type ToolEffect =
  | { kind: "run"; command: string; workdir: string; cwd?: string }
  | { kind: "write"; path: string; workdir: string }
  /** A call whose effects are another program's (an MCP server's): judged by the approver as data. */
  | {
      kind: "call";
      server: string;
      where: "host" | "sandbox";
      tool: string;
      arguments: Record<string, unknown>;
      workdir?: undefined;
    };

/** The registration of a read-only tool: nothing to approve. */
export const noEffects = (): ToolEffect[] => [];

export interface ToolEntryInput<A = Record<string, unknown>, S = undefined> {
  name: string;
  toolset: string;
  /**
   * Name and description for the model. `parameters` (a JSON Schema) only for a tool without `args`
   * (plugins may register that way); with `args` it is derived from the zod schema.
   */
  schema: { name?: string; description: string; parameters?: JsonSchema };
  /**
   * The zod schema that arguments are validated against; the model's JSON Schema is derived from it. A function
   * returning it is called on first use: every thread registers every built-in tool, and a run offers a few.
   */
  args?: z.ZodType<A> | (() => z.ZodType<A>);
  handler: ToolHandler<A, S>;
  /**
   * What a call will do, for the approval gate. Absent (a plugin's default): every command and write
   * the handler makes through the environment is gated as it happens.
   */
  effects?: (args: A, ctx: ToolContext) => ToolEffect[] | Promise<ToolEffect[]>;
  /** Answered with per-task state that lives with the agent loop (todo, memory), created by `createState`. */
  loopTool?: boolean;
  createState?: () => S;
  /** Calls use the task's environment (the run preflights the backend when such a tool is offered). */
  needsEnvironment?: boolean;
  checkFn?: () => boolean | Promise<boolean>;
  requiresEnv?: string[];
  isAsync?: boolean;
  description?: string;
  emoji?: string;
}

export interface ToolEntry extends ToolEntryInput<any, any> {
  schema: ToolSchema;
  args?: z.ZodType;
  requiresEnv: string[];
  isAsync: boolean;
  loopTool: boolean;
  needsEnvironment: boolean;
  description: string;
  emoji: string;
}

export interface Availability {
  available: boolean;
  reason?: string;
}

export const consoleLogger: Logger = {
  debug: (m) => {
    if (process.env.HERMES_BATCH_DEBUG) process.stderr.write(`debug: ${m}\n`);
  },
  info: (m) => process.stderr.write(`${m}\n`),
  warn: (m) => process.stderr.write(`warning: ${m}\n`),
  error: (m) => process.stderr.write(`error: ${m}\n`),
};

/** A failed call: the model sees `{"error": message, ...details}`. */
export function toolFailure(message: string, details?: Record<string, unknown>): ToolResult {
  return details && Object.keys(details).length > 0 ? { error: message, details } : { error: message };
}

/** The Hermes JSON string of a result: the only place a result becomes text. */
export function serializeToolResult(result: ToolResult): string {
  if (result.error !== undefined) return JSON.stringify({ error: result.error, ...result.details });
  return typeof result.content === "string" ? result.content : JSON.stringify(result.content ?? null);
}

export function errorTypeAndMessage(err: unknown): [string, string] {
  if (err instanceof Error) return [err.constructor?.name || err.name || "Error", err.message];
  return [typeof err, String(err)];
}

/**
 * The tool's schema as the model sees it. A zod `args` schema becomes JSON Schema on first use, not at
 * registration: every thread registers every built-in tool at start-up, and a run offers only a few of them.
 */
function toolSchema(input: ToolEntryInput<any, any>, args: (() => z.ZodType) | undefined): ToolSchema {
  const schema = { ...input.schema, name: input.name, parameters: input.schema.parameters } as ToolSchema;
  if (!args) return schema;
  // Redefining the property keeps its place in the key order, so the JSON the model sees does not change.
  const settle = (value: Record<string, unknown>) => {
    Object.defineProperty(schema, "parameters", { value, writable: true, enumerable: true, configurable: true });
    return value;
  };
  Object.defineProperty(schema, "parameters", {
    enumerable: true,
    configurable: true,
    get: () => settle(toolParameters(args())),
    set: settle,
  });
  return schema;
}

/** A tool's argument schema as a function that builds it once (a given schema is returned as is). */
function argsSchema(args: ToolEntryInput<any, any>["args"]): (() => z.ZodType) | undefined {
  if (!args) return undefined;
  if (typeof args !== "function") return () => args;
  let built: z.ZodType | undefined;
  return () => (built ??= args());
}

export class ToolRegistry {
  private readonly tools = new Map<string, ToolEntry>();
  /** The names, sorted, until a tool is registered or removed (every task's record asks for them). */
  private sorted: readonly string[] | undefined;
  logger: Logger = consoleLogger;

  register<A, S>(input: ToolEntryInput<A, S>): void {
    if (!input || !input.name || !input.toolset) throw new Error("registry.register needs a name and a toolset");
    if (!input.schema || typeof input.schema !== "object")
      throw new Error(`tool ${input.name}: needs a schema (name, description)`);
    if (!input.args && (!input.schema.parameters || typeof input.schema.parameters !== "object")) {
      throw new Error(
        `tool ${input.name}: schema.parameters must be a JSON Schema object (or give a zod schema as args)`,
      );
    }
    if (input.loopTool && !input.createState) throw new Error(`tool ${input.name}: a loop tool needs createState`);
    const previous = this.tools.get(input.name);
    if (previous) {
      this.logger.warn(
        `tool '${input.name}' registered again (toolset '${input.toolset}', was '${previous.toolset}'); the later registration wins`,
      );
    }
    const args = argsSchema(input.args);
    const entry: ToolEntry = {
      ...(input as ToolEntryInput<unknown, unknown>),
      args: undefined,
      schema: toolSchema(input, args),
      requiresEnv: input.requiresEnv ?? [],
      isAsync: input.isAsync ?? false,
      loopTool: input.loopTool ?? false,
      needsEnvironment: input.needsEnvironment ?? false,
      description: input.description ?? input.schema.description,
      emoji: input.emoji ?? "",
    };
    // `args` keeps its place among the keys; given as a function, it is built on first read.
    if (args) Object.defineProperty(entry, "args", { enumerable: true, get: args });
    else delete entry.args;
    this.tools.set(input.name, entry);
    this.sorted = undefined;
  }

  get(name: string): ToolEntry | undefined {
    return this.tools.get(name);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  names(): string[] {
    return [...this.sortedNames()];
  }

  /** The names, sorted: the same frozen array until a tool is registered or removed. */
  sortedNames(): readonly string[] {
    return (this.sorted ??= Object.freeze([...this.tools.keys()].sort()));
  }

  entries(): ToolEntry[] {
    return this.names().map((n) => this.tools.get(n)!);
  }

  toolsetOf(name: string): string | undefined {
    return this.tools.get(name)?.toolset;
  }

  /** Removes a tool (tests and plugins replacing a built-in). */
  deregister(name: string): boolean {
    this.sorted = undefined;
    return this.tools.delete(name);
  }

  /**
   * Availability of the named tools. A checkFn shared by several tools runs once per call
   * (the memo lives only for this call, so a key set later is seen by the next call).
   */
  async availability(names: Iterable<string>): Promise<Map<string, Availability>> {
    const memo = new Map<ToolEntryInput["checkFn"], Promise<Availability>>();
    const out = new Map<string, Availability>();
    for (const name of names) {
      const entry = this.tools.get(name);
      if (!entry) {
        out.set(name, { available: false, reason: "not registered" });
        continue;
      }
      const missingEnv = entry.requiresEnv.filter((v) => !process.env[v]);
      if (!entry.checkFn) {
        out.set(
          name,
          missingEnv.length ? { available: false, reason: `needs ${missingEnv.join(", ")}` } : { available: true },
        );
        continue;
      }
      let pending = memo.get(entry.checkFn);
      if (!pending) {
        const fn = entry.checkFn;
        pending = (async (): Promise<Availability> => {
          try {
            return (await fn()) ? { available: true } : { available: false, reason: "check failed" };
          } catch (err) {
            return { available: false, reason: `check threw: ${errorTypeAndMessage(err)[1]}` };
          }
        })();
        memo.set(fn, pending);
      }
      const result = await pending;
      if (!result.available && missingEnv.length > 0) {
        out.set(name, { available: false, reason: `needs ${missingEnv.join(", ")}` });
      } else {
        out.set(name, result);
      }
    }
    return out;
  }

  /** The registered and available tools among `names`, sorted: the ones `getDefinitions` lists. */
  async availableNames(names: Iterable<string>): Promise<string[]> {
    const wanted = [...new Set(names)].filter((n) => this.tools.has(n)).sort();
    const avail = await this.availability(wanted);
    return wanted.filter((n) => avail.get(n)?.available);
  }

  /** OpenAI tool definitions for the available tools among `names`, sorted by name. */
  async getDefinitions(names: Iterable<string>): Promise<OpenAITool[]> {
    return (await this.availableNames(names)).map((n) => ({
      type: "function" as const,
      function: structuredClone(this.tools.get(n)!.schema),
    }));
  }
}

export const registry = new ToolRegistry();

export interface DiscoveryReport {
  loaded: string[];
  failed: { file: string; error: string }[];
}

/** Imports each module (a name and its loader); one that fails is logged and reported, the others still load. */
export async function importToolModules(
  modules: readonly { name: string; load: () => Promise<unknown> }[],
  logger: Logger = registry.logger,
): Promise<DiscoveryReport> {
  const report: DiscoveryReport = { loaded: [], failed: [] };
  for (const { name, load } of modules) {
    try {
      await load();
      report.loaded.push(name);
    } catch (err) {
      const [type, message] = errorTypeAndMessage(err);
      logger.warn(`could not load tool module ${name}: ${type}: ${message}`);
      report.failed.push({ file: name, error: `${type}: ${message}` });
    }
  }
  return report;
}

let builtinLoading: Promise<DiscoveryReport> | undefined;

/** Imports the built-in tool modules (`builtin_tools.ts`), once per process. */
export function discoverBuiltinTools(): Promise<DiscoveryReport> {
  builtinLoading ??= import("./builtin_tools.js").then((m) => importToolModules(m.BUILTIN_TOOL_MODULES));
  return builtinLoading;
}
