/**
 * The one way a tool call runs: look up → parse arguments → validate against the tool's zod schema →
 * pre hooks → approve the declared effects → dispatch → post hooks → the Hermes JSON string.
 *
 * Approval is a stage every call passes, not something a tool asks for: a tool declares what a call
 * will do (`effects`), and the gate judges it before the handler runs. A tool that declares nothing
 * (a plugin's default) gets an environment whose commands and writes pass the gate as they happen.
 * Without an approval service the gate denies whatever the detection flags (fail-closed).
 */
import type * as z from "zod";
import type { ApprovalRecord } from "../src/core/records.js";
import type { BackgroundStartOptions, Environment, ExecOptions } from "./environments/base.js";
import type { ApprovalGate, ApprovalService } from "./approval/gate.js";
import { lazyApprovalGate } from "./lazy_approval.js";
import { MCP_CALL_MATCH, effectForGate } from "./gate_effects.js";
import { toolHooks, type ToolHook } from "./plugins.js";
import {
  errorTypeAndMessage,
  registry as defaultRegistry,
  serializeToolResult,
  toolFailure,
  type FileReadTracker,
  type FileStamp,
  type ToolContext,
  type ToolEffect,
  type ToolEntry,
  type ToolOutput,
  type ToolRegistry,
  type ToolResult,
} from "./registry.js";

export interface ToolPipelineOptions {
  registry?: ToolRegistry;
  /** The task's approval service. Absent: whatever needs approval is denied, and recorded. */
  approval?: Pick<ApprovalService, "gate" | "records">;
  /** When given, a tool outside this set is refused (it was not offered to the model). */
  allowedTools?: ReadonlySet<string>;
  /** The plugin hooks; default: those added with addToolHook, read at each call. */
  hooks?: () => readonly ToolHook[];
  /** Which MCP calls the gate judges (`--mcp-approval`): none, those of servers outside the sandbox (default), all. */
  mcpApproval?: "none" | "host" | "all";
}

export interface ToolPipeline {
  /** Runs one call; resolves to the Hermes JSON string the model sees. Never throws. */
  call(name: string, args: Record<string, unknown> | string, ctx: ToolContext): Promise<string>;
  /** The same call, stopping before serialisation. */
  run(name: string, args: Record<string, unknown> | string, ctx: ToolContext): Promise<ToolResult>;
  /** Every approval decision made for this pipeline's calls. */
  readonly approvals: readonly ApprovalRecord[];
}

/** Thrown inside a handler when a gated environment refused a command; becomes the call's result. */
export class ApprovalDenied extends Error {
  override name = "ApprovalDenied";
}

const NOTHING_RAN = "nothing was run";

function denial(tool: string, message: string): ToolResult {
  const error = message.startsWith("BLOCKED") ? message : `BLOCKED: ${message}`;
  // The original's terminal answers a blocked command in its own result's shape (terminal_tool.py at cb51baec).
  if (tool === "terminal") return { content: { output: "", exit_code: -1, error, status: "blocked" } };
  return toolFailure(error, { status: "blocked" });
}

const RESULT_KEYS = new Set(["content", "error", "details"]);

/** Most argument problems an error lists (the rest are counted). */
const MAX_LISTED_PROBLEMS = 10;
/** A failure's result longer than this (as JSON) has its long strings cut: it is still JSON when the loop stores it. */
export const MAX_FAILURE_RESULT_CHARS = 20_000;
/** In such a failure, the longest string kept whole (a path, an id or a mode the model sent, echoed back). */
const FAILURE_STRING_CHARS = 2_000;

/** The text, or its head and tail with what was cut between them counted. */
function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}… [${(text.length - 2 * half).toLocaleString("en-US")} characters cut] …${text.slice(-half)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a result is a failure by the rules tool_stats counts with: an error, a content error, success false. */
function isFailure(result: ToolResult): boolean {
  if (result.error !== undefined) return true;
  const c = result.content;
  return isObject(c) && ((c.error !== undefined && c.error !== null) || c.success === false);
}

/** Every string in the value cut to `max` characters (results are shallow; deeper than 32 levels is left out). */
function shortened(value: unknown, max: number, depth = 0): unknown {
  if (typeof value === "string") return bounded(value, max);
  if (depth > 32 || typeof value !== "object" || value === null) return depth > 32 ? "[cut]" : value;
  if (Array.isArray(value)) return value.map((v) => shortened(v, max, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shortened(v, max, depth + 1)]));
}

/**
 * A failure is kept short: a model that sends a 10 MB path gets it back in the error, and the agent loop cuts a
 * result longer than its limit into text that no longer parses, which its statistics count as a success. Its long
 * strings are cut; when it is still too long (many of them), only the error message is kept.
 */
function boundedFailure(result: ToolResult): ToolResult {
  if (!isFailure(result) || serializeToolResult(result).length <= MAX_FAILURE_RESULT_CHARS) return result;
  const short: ToolResult = {
    ...(result.content !== undefined ? { content: shortened(result.content, FAILURE_STRING_CHARS) } : {}),
    ...(result.error !== undefined ? { error: bounded(result.error, FAILURE_STRING_CHARS) } : {}),
    ...(result.details !== undefined
      ? { details: shortened(result.details, FAILURE_STRING_CHARS) as ToolResult["details"] }
      : {}),
  };
  if (serializeToolResult(short).length <= MAX_FAILURE_RESULT_CHARS) return short;
  const message = result.error ?? (result.content as Record<string, unknown>).error ?? "the call failed";
  return toolFailure(bounded(typeof message === "string" ? message : JSON.stringify(message), FAILURE_STRING_CHARS), {
    result_cut: `the failure's result was ${serializeToolResult(result).length.toLocaleString("en-US")} characters`,
  });
}

/** The JSON string of a result; one that cannot be serialised (a BigInt, a cycle) is a failure of its tool. */
function serialized(name: string, result: ToolResult): string {
  try {
    return serializeToolResult(result);
  } catch (err) {
    const [type, message] = errorTypeAndMessage(err);
    return serializeToolResult(
      toolFailure(`Tool execution failed: ${type}: ${message} (the result of ${name} is not JSON)`),
    );
  }
}

function asResult(output: ToolOutput, name: string): ToolResult {
  if (typeof output === "string") return { content: output };
  if (output && typeof output === "object" && !Array.isArray(output)) {
    const keys = Object.keys(output);
    if (keys.every((k) => RESULT_KEYS.has(k)) && ("content" in output || typeof output.error === "string"))
      return output;
  }
  const what = Array.isArray(output) ? "an array" : output && typeof output === "object" ? "an object" : typeof output;
  return toolFailure(
    `Tool execution failed: TypeError: handler of ${name} returned ${what}, not a JSON string or a {content, error} result`,
  );
}

/** The model's arguments text as an object, or the error the model is told (one wording for the loop and the pipeline). */
export function parseToolArguments(
  name: string,
  raw: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  const text = raw.trim();
  if (text === "") return { ok: true, value: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return {
      ok: false,
      error: `Invalid JSON in the arguments of ${name}: ${(err as Error).message}. Send the arguments as one JSON object.`,
    };
  }
  return toolArgumentsObject(name, parsed);
}

/** Parsed arguments as the object a tool takes, or the error the model is told. */
export function toolArgumentsObject(
  name: string,
  parsed: unknown,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return {
      ok: false,
      error: `Arguments of ${name} must be a JSON object, got ${Array.isArray(parsed) ? "an array" : parsed === null ? "null" : typeof parsed}`,
    };
  }
  return { ok: true, value: parsed as Record<string, unknown> };
}

/** Validates against the zod schema; the error names each bad field. */
function validate(
  entry: ToolEntry,
  args: Record<string, unknown>,
): { ok: true; value: unknown } | { ok: false; result: ToolResult } {
  if (!entry.args) return { ok: true, value: args };
  const parsed = (entry.args as z.ZodType).safeParse(args);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues;
  // A model can send 100,000 bad items: the error names the first few and counts the rest.
  const problems = issues.slice(0, MAX_LISTED_PROBLEMS).map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "arguments";
    return `'${bounded(field, 200)}': ${bounded(issue.message, 500)}`;
  });
  const more = issues.length - problems.length;
  if (more > 0) problems.push(`and ${more.toLocaleString("en-US")} more problems`);
  return { ok: false, result: toolFailure(`Invalid arguments for ${entry.name}: ${problems.join("; ")}`) };
}

export function createToolPipeline(opts: ToolPipelineOptions = {}): ToolPipeline {
  const reg = opts.registry ?? defaultRegistry;
  const hooks = opts.hooks ?? toolHooks;
  const approval = opts.approval ?? lazyApprovalGate({ policy: "deny", taskId: "", unconfigured: true });
  const states = new Map<string, unknown>();
  // The original's read-loop guard: identical read_file/search_files calls in a row are counted; any other
  // tool that is not answered by the loop itself (todo, memory) starts the count again.
  const fileReads: FileReadTracker = { consecutive: 0 };
  // The original's file-state registry: what the task last read or wrote of each file, for stale-write warnings.
  const fileStamps = new Map<string, FileStamp>();
  // The original's read dedup: a window read again while the file's time is unchanged gets a stub.
  const readDedup = new Map<string, string>();

  /** Asks the gate about each effect; the first denial is the call's result. */
  async function approve(
    tool: string,
    effects: readonly ToolEffect[],
    ctx: ToolContext,
  ): Promise<ToolResult | undefined> {
    const mcpApproval = opts.mcpApproval ?? "host";
    for (const effect of effects) {
      if (effect.kind === "call" && (mcpApproval === "none" || (mcpApproval === "host" && effect.where === "sandbox")))
        continue;
      const { command, cwd } = effectForGate(tool, effect);
      const flagged = effect.kind === "call" ? MCP_CALL_MATCH : undefined;
      // Targets are resolved through symlinks where the command will run, when the environment can say.
      const env = effect.workdir ? await ctx.getEnv().catch(() => undefined) : undefined;
      const realpath = env?.realpath ? (path: string) => env.realpath!(path) : undefined;
      // Files earlier calls wrote are read where the command will run (cross-call judging in the gate).
      const readFile = env ? async (path: string) => (await env.readFile(path)).toString("utf8") : undefined;
      const verdict = await approval
        .gate(command, {
          cwd,
          workdir: effect.workdir,
          backend: ctx.envKind,
          realpath,
          readFile,
          toolCallId: ctx.toolCallId,
          ...(flagged ? { flagged } : {}),
        })
        .catch((err: unknown) => ({
          allowed: false,
          message: `BLOCKED: approval failed (${errorTypeAndMessage(err)[1]}); ${NOTHING_RAN}`,
        }));
      if (!verdict.allowed)
        return denial(tool, verdict.message ?? `the approval policy denied this call; ${NOTHING_RAN}`);
    }
    return undefined;
  }

  /** An environment whose commands and writes pass the gate first (for tools that declare nothing). */
  function gatedEnvironment(tool: string, env: Environment, ctx: ToolContext): Environment {
    const check = async (effect: ToolEffect) => {
      const refused = await approve(tool, [effect], ctx);
      if (refused) throw new ApprovalDenied(refused.error ?? (refused.content as { error: string }).error);
    };
    const gated: Partial<Environment> = {
      exec: async (command: string, o?: ExecOptions) => {
        await check({ kind: "run", command, workdir: env.workdir, cwd: o?.cwd });
        return env.exec(command, o);
      },
      startBackground: async (command: string, o?: BackgroundStartOptions) => {
        await check({ kind: "run", command, workdir: env.workdir, cwd: o?.cwd });
        return env.startBackground(command, o);
      },
      writeFile: async (path: string, data: string | Buffer) => {
        await check({ kind: "write", path, workdir: env.workdir });
        return env.writeFile(path, data);
      },
    };
    return new Proxy(env, {
      get(target, prop) {
        if (Object.hasOwn(gated, prop)) return gated[prop as keyof Environment];
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  async function dispatch(entry: ToolEntry, args: unknown, callerCtx: ToolContext): Promise<ToolResult> {
    const readTool = entry.name === "read_file" || entry.name === "search_files";
    if (!readTool && !entry.loopTool) {
      fileReads.lastKey = undefined;
      fileReads.consecutive = 0;
    }
    const ctx: ToolContext = readTool
      ? { ...callerCtx, fileReads, fileStamps, readDedup }
      : { ...callerCtx, fileStamps };
    let state: unknown;
    if (entry.loopTool) {
      if (!states.has(entry.name)) states.set(entry.name, entry.createState!());
      state = states.get(entry.name);
    }
    const handlerCtx: ToolContext = entry.effects
      ? ctx
      : { ...ctx, getEnv: async () => gatedEnvironment(entry.name, await ctx.getEnv(), ctx) };
    try {
      return asResult(await entry.handler(args, handlerCtx, state), entry.name);
    } catch (err) {
      if (err instanceof ApprovalDenied) return denial(entry.name, err.message);
      const [type, message] = errorTypeAndMessage(err);
      return toolFailure(`Tool execution failed: ${type}: ${message}`);
    }
  }

  async function run(name: string, rawArgs: Record<string, unknown> | string, ctx: ToolContext): Promise<ToolResult> {
    try {
      if (opts.allowedTools && !opts.allowedTools.has(name)) {
        return toolFailure(
          `Tool ${name} is not available in this task. Available: ${[...opts.allowedTools].sort().join(", ")}`,
        );
      }
      const entry = reg.get(name);
      if (!entry) return toolFailure(`Unknown tool: ${name}`);
      const parsed =
        typeof rawArgs === "string" ? parseToolArguments(name, rawArgs) : { ok: true as const, value: rawArgs ?? {} };
      if (!parsed.ok) return toolFailure(parsed.error);
      const checked = validate(entry, parsed.value);
      if (!checked.ok) return checked.result;
      const args = checked.value;

      const call = { name, args: args as Record<string, unknown>, ctx };
      const active = hooks();
      for (const hook of active) {
        const early = hook.pre ? await hook.pre(call) : undefined;
        if (typeof early === "string") return { content: early };
      }

      let effects: ToolEffect[] = [];
      if (entry.effects) {
        try {
          effects = await entry.effects(args, ctx);
        } catch (err) {
          const [type, message] = errorTypeAndMessage(err);
          return toolFailure(`Tool execution failed: ${type}: ${message}`);
        }
      }
      // A call with nothing to approve (todo, reads) skips the gate's async step.
      const refused = effects.length > 0 ? await approve(name, effects, ctx) : undefined;
      let result = refused ?? (await dispatch(entry, args, ctx));

      for (const hook of active) {
        if (!hook.post) continue;
        const replaced = await hook.post(call, serialized(name, result));
        if (typeof replaced === "string") result = { content: replaced };
      }
      return boundedFailure(result);
    } catch (err) {
      return toolFailure(`Error executing ${name}: ${errorTypeAndMessage(err)[1]}`);
    }
  }

  return {
    run,
    call: async (name, args, ctx) => serialized(name, await run(name, args, ctx)),
    get approvals() {
      return approval.records;
    },
  };
}
