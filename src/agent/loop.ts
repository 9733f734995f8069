/**
 * The agent loop, with the original Hermes agent's rules (run_agent.py `run_conversation`):
 *
 * - a turn's tool calls run in call order unless all are parallel-safe (tool_batch.ts); identical calls once;
 * - an answer with no text is asked for again up to 3 times, then the loop ends `empty_response`; with
 *   `continueReasoningOnly`, one with reasoning and no text is first continued up to 2 times: it stays at
 *   the end of the request until a real answer or tool call replaces it (the original's thinking-only prefill);
 * - tool-call arguments that do not parse are repaired as the original's streaming path repairs them
 *   (tool_arguments.ts); what cannot be repaired is handled as a tool call cut by the length limit: the
 *   request is repeated once (nothing of the bad answer kept), then the task ends `partial`;
 * - a tool call without an id gets the original's id derived from it: `call_` + the first 12 hex digits of
 *   sha256("<name>:<arguments>:<index in the turn>"), so identical runs give identical files; an id another
 *   call of the conversation already has (servers that number every turn's calls from `call_0`, or give one
 *   id to every call of a turn) gets the upstream agent's `_d<n>` suffix (`uniquify_tool_call_ids`): each
 *   result then answers one call, in the requests sent back and in the saved trajectory;
 * - `finish_reason: length` without tool calls: the cut answer is kept and continuation is asked for
 *   (a closing human turn each time), at most 3 cut answers in all, then `partial`; with tool calls: the
 *   request is repeated once, then the calls are refused (`partial`);
 * - after `maxTurns` model calls without a final answer: the closing human turn and one call without tools
 *   (repeated once if it comes back empty); `completed` is false then, and also when the final answer
 *   came on the last allowed call (the original's `api_call_count < max_iterations`).
 *
 * As in the original, the repeated request for a cut tool call and the closing summary call are not counted
 * in `apiCalls` (every other request is, retries included); the tokens of all of them are in `usage`.
 */
import type { OpenAITool, ToolContext } from "../../tools/registry.js";
import { parseToolArguments, toolArgumentsObject } from "../../tools/pipeline.js";
import {
  addUsage,
  emptyUsage,
  type AssistantMessage,
  type ChatMessage,
  type ChatModel,
  type ChatResponse,
  type ToolCall,
  type ToolMessage,
  type Usage,
} from "../core/chat.js";
import { createHash } from "node:crypto";
import { AbortRace } from "./abort_race.js";
import { judgeArguments } from "./tool_arguments.js";
import { runToolBatch, type PlannedCall } from "./tool_batch.js";
import { ModelCallLog } from "./call_log.js";
import type { ModelCallRecord } from "../core/records.js";
import type { TokenLedger } from "./token_ledger.js";
import { repairToolName } from "./tool_name_repair.js";

/** Runs one tool call that passed name and JSON validation. Returns the JSON string result. */
export type ToolExecutor = (name: string, args: Record<string, unknown>, ctx: ToolContext) => Promise<string>;

export interface AgentLoopOptions {
  model: ChatModel;
  prompt: string;
  tools: readonly OpenAITool[];
  systemPrompt?: string;
  /** Sent with every request, never saved in the messages. */
  ephemeralSystemPrompt?: string;
  /** Inserted after the system message on every request, never saved. */
  prefill?: ChatMessage[];
  maxTurns: number;
  /** Turns in a row whose every call named an unknown tool or had arguments of the wrong shape, before the run stops as partial. */
  maxConsecutiveToolErrors: number;
  /** Most tool calls of one parallel-safe turn running at once. */
  toolConcurrency: number;
  executeTool: ToolExecutor;
  ctx: ToolContext;
  signal?: AbortSignal;
  /** Tool results longer than this are cut with a notice. */
  maxToolResultChars?: number;
  /**
   * Continue an answer that has reasoning and no text by sending it back as the last message (the
   * original's thinking-only prefill). Only meaningful when the model client sends reasoning back.
   */
  continueReasoningOnly?: boolean;
  /** `--rl-capture`: told of every answer and of the message made from it (see token_ledger.ts). */
  tokenLedger?: TokenLedger;
}

export type LoopEnd =
  | "final_answer"
  | "max_turns"
  | "malformed_calls"
  | "length"
  | "truncated_tool_call"
  | "empty_response";

export interface AgentLoopResult {
  /** The saved conversation: system (without the ephemeral part), user prompt, then the exchange. */
  messages: ChatMessage[];
  /** Model calls of the loop, as the original counts them (see the module comment). */
  apiCalls: number;
  completed: boolean;
  partial: boolean;
  end: LoopEnd;
  finalResponse: string | null;
  usage: Usage;
  /** Every model call in order, each with the index of the message it produced when that message was kept. */
  modelCalls: ModelCallRecord[];
  /** Indexes in `messages` of the turns the harness wrote (continuation and closing turns, the "(empty)" stand-in). */
  injectedMessages: number[];
}

/** Thrown when the loop stops early for a reason other than its own logic; carries what was done so far. */
export class AgentLoopAborted extends Error {
  constructor(
    override readonly cause: unknown,
    readonly partialResult: AgentLoopResult,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = "AgentLoopAborted";
  }
}

/** The original's closing human turn when the turn budget is spent. */
export const MAX_TURNS_MESSAGE =
  "You've reached the maximum number of tool-calling iterations allowed. Please provide a final response summarizing what you've found and accomplished so far, without calling any more tools.";
/** The original's human turn asking for the rest of an answer cut by the output length limit. */
export const LENGTH_CONTINUATION_MESSAGE =
  "[System: Your previous response was truncated by the output length limit. Continue exactly where you left off. Do not restart or repeat prior text. Finish the answer directly.]";
/** The original's final answer when the closing summary call gave no text. */
export const NO_SUMMARY_RESPONSE = "I reached the iteration limit and couldn't generate a summary.";
/** The original's stored text of an answer that stayed empty after every retry. */
export const EMPTY_RESPONSE_CONTENT = "(empty)";

const EMPTY_RETRIES = 3;
const REASONING_ONLY_CONTINUATIONS = 2;
const LENGTH_CUTS = 3;
const TRUNCATED_TOOL_CALL_RETRIES = 1;
const DEFAULT_MAX_TOOL_RESULT = 100_000;

function capToolResult(text: string, cap: number): string {
  if (text.length <= cap) return text;
  return `${text.slice(0, cap)}\n[Truncated: tool response was ${text.length} chars, exceeding the ${cap} char limit]`;
}

const hasText = (s: string | null | undefined): s is string => typeof s === "string" && s.trim() !== "";

interface PreparedCall {
  call: ToolCall;
  planned?: PlannedCall;
  error?: string;
}

/** `value`: the arguments already parsed by the argument check (undefined when they were repaired). */
function prepareCall(call: ToolCall, known: ReadonlySet<string>, value: unknown): PreparedCall {
  const name = call.function?.name;
  if (!name || !known.has(name)) {
    const list = [...known].sort().join(", ") || "(none)";
    return { call, error: `Unknown tool '${name ?? ""}'. Available tools: ${list}` };
  }
  const parsed =
    value !== undefined ? toolArgumentsObject(name, value) : parseToolArguments(name, call.function.arguments ?? "");
  return parsed.ok ? { call, planned: { name, args: parsed.value, id: call.id } } : { call, error: parsed.error };
}

/** What the argument check decided for a whole turn. */
type ArgumentsCheck = { kind: "ok"; calls: ToolCall[]; values: unknown[] } | { kind: "unrepairable" };

/** The original's id for a tool call the server sent without one (`_deterministic_call_id`). */
export function derivedCallId(name: string, args: string, index: number): string {
  return `call_${createHash("sha256").update(`${name}:${args}:${index}`, "utf8").digest("hex").slice(0, 12)}`;
}

/** `id`, or when the conversation already has it, `<id>_d<n>` with the smallest n from 2 it does not have. */
function unusedId(id: string, used: ReadonlySet<string>): string {
  if (!used.has(id)) return id;
  let n = 2;
  while (used.has(`${id}_d${n}`)) n++;
  return `${id}_d${n}`;
}

/**
 * Judges every call's argument text; repaired and empty arguments are rewritten in the returned calls, calls
 * without an id get the derived one (from the arguments as kept, as the original does), an id that `used`
 * (the conversation's) or an earlier call of the turn has gets a suffix, and a near-miss name of an offered
 * tool is repaired (src/agent/tool_name_repair.ts), as the original does before it calls a name unknown.
 */
function checkArguments(
  calls: readonly ToolCall[],
  used: ReadonlySet<string>,
  offered: ReadonlySet<string>,
): ArgumentsCheck {
  const out: ToolCall[] = [];
  const values: unknown[] = [];
  let turnIds: Set<string> | undefined;
  for (const [i, call] of calls.entries()) {
    const verdict = judgeArguments(call.function?.arguments ?? "");
    if (verdict.kind === "unrepairable") return { kind: "unrepairable" };
    values.push(verdict.kind === "valid" ? verdict.value : undefined);
    let id =
      typeof call.id === "string" && call.id.trim()
        ? call.id.trim()
        : derivedCallId(call.function?.name ?? "", verdict.text, i);
    if (used.has(id) || turnIds?.has(id)) id = unusedId(id, new Set([...used, ...(turnIds ?? [])]));
    if (calls.length > 1) (turnIds ??= new Set()).add(id);
    const givenName = call.function?.name ?? "";
    const name = offered.has(givenName) ? givenName : (repairToolName(givenName, offered) ?? givenName);
    // A call that needs no change (the usual case) is kept as it came, not copied (the copy is kept to the end).
    if (call.id === id && call.function?.arguments === verdict.text && name === givenName) out.push(call);
    else {
      const renamed = name === givenName ? {} : { name };
      out.push({ ...call, id, function: { ...call.function, ...renamed, arguments: verdict.text } });
    }
  }
  return { kind: "ok", calls: out, values };
}

const toolNameSets = new WeakMap<readonly OpenAITool[], ReadonlySet<string>>();

/** The names of a tool list; one set per frozen list (the tasks of a toolset choice share theirs). */
function toolNames(tools: readonly OpenAITool[]): ReadonlySet<string> {
  let names = toolNameSets.get(tools);
  if (!names) {
    names = new Set(tools.map((t) => t.function.name));
    if (Object.isFrozen(tools)) toolNameSets.set(tools, names);
  }
  return names;
}

/** The last request head made: the tasks of a run share their system prompt and prefill. */
let lastHead: { system: string; prefill: ChatMessage[] | undefined; head: readonly ChatMessage[] } | undefined;

/**
 * The head of every request (the system turn with the ephemeral part, then the prefill), the same objects for
 * every task that has the same system text and prefill: the model client caches each message's JSON by identity,
 * so the system turn is serialised once per run rather than once per task.
 */
function requestHead(
  opts: Pick<AgentLoopOptions, "systemPrompt" | "ephemeralSystemPrompt" | "prefill">,
): readonly ChatMessage[] {
  const system =
    opts.systemPrompt && opts.ephemeralSystemPrompt
      ? `${opts.systemPrompt}\n\n${opts.ephemeralSystemPrompt}`
      : opts.systemPrompt || opts.ephemeralSystemPrompt || "";
  if (lastHead?.system === system && lastHead.prefill === opts.prefill) return lastHead.head;
  const head: readonly ChatMessage[] = [
    ...(system ? [{ role: "system", content: system } as const] : []),
    ...(opts.prefill ?? []),
  ];
  lastHead = { system, prefill: opts.prefill, head };
  return head;
}

export async function runAgentLoop(opts: AgentLoopOptions): Promise<AgentLoopResult> {
  const known = toolNames(opts.tools);
  const messages: ChatMessage[] = [];
  if (opts.systemPrompt) messages.push({ role: "system", content: opts.systemPrompt });
  messages.push({ role: "user", content: opts.prompt });

  const result: AgentLoopResult = {
    messages,
    apiCalls: 0,
    completed: false,
    partial: false,
    end: "max_turns",
    finalResponse: null,
    usage: emptyUsage(),
    modelCalls: [],
    injectedMessages: [],
  };
  const log = new ModelCallLog(opts.model.name);
  const settle = (): void => {
    result.modelCalls = log.records(messages);
    result.injectedMessages = log.injectedIndexes(messages);
  };
  const cap = opts.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT;
  const finish = (
    end: LoopEnd,
    partial: boolean,
    finalResponse: string | null = result.finalResponse,
  ): AgentLoopResult => {
    result.end = end;
    result.partial = partial;
    result.finalResponse = finalResponse;
    settle();
    return result;
  };

  const head = requestHead(opts);
  const savedStart = opts.systemPrompt ? 1 : 0;
  // Made at its final length (a copy of the head grown by pushes reallocates its store and leaves the old one).
  const requestMessages = (): ChatMessage[] => {
    const out = new Array<ChatMessage>(head.length + messages.length - savedStart);
    let n = 0;
    for (const m of head) out[n++] = m;
    for (let i = savedStart; i < messages.length; i++) out[n++] = messages[i]!;
    return out;
  };
  // A model call is `received(await send(…))` in the loop itself, not an async function of its own: that
  // function's frame, promise and await would be kept for the whole wait for the answer, on every call.
  let started = 0;
  const send = (withTools: boolean): Promise<ChatResponse> => {
    opts.signal?.throwIfAborted();
    started = Date.now();
    return opts.model.complete({
      messages: requestMessages(),
      tools: withTools && opts.tools.length ? opts.tools : undefined,
      signal: opts.signal,
    });
  };
  const received = (response: ChatResponse): ChatResponse => {
    addUsage(result.usage, response.usage);
    log.add(started, response);
    opts.tokenLedger?.sent(response);
    return response;
  };
  /** Saves a message; `from` says who wrote it: the latest model call, or the harness. */
  const save = <M extends ChatMessage>(msg: M, from: "model" | "harness"): M => {
    messages.push(msg);
    if (from === "model") log.keep(msg);
    else log.inject(msg);
    return msg;
  };
  const assistantOf = (response: ChatResponse, toolCalls?: ToolCall[]): AssistantMessage => {
    const msg: AssistantMessage = { role: "assistant", content: response.message.content };
    if (toolCalls?.length) msg.tool_calls = toolCalls;
    if (response.message.reasoning) msg.reasoning = response.message.reasoning;
    if (response.message.reasoning_without_details !== undefined)
      msg.reasoning_without_details = response.message.reasoning_without_details;
    opts.tokenLedger?.link(msg, response);
    return msg;
  };

  let emptyRetries = 0;
  let reasoningOnlyContinuations = 0;
  // Reasoning-only answers being continued. A real turn replaces those still at the end of the messages;
  // once anything else follows them (a cut answer's continuation turn) they stay, as in the original.
  let reasoningOnly: Set<ChatMessage> | undefined;
  const dropTrailingReasoningOnly = (): boolean => {
    if (!reasoningOnly?.size) return false;
    let dropped = false;
    while (messages.length && reasoningOnly.has(messages.at(-1)!)) {
      reasoningOnly.delete(messages.pop()!);
      dropped = true;
    }
    return dropped;
  };
  let truncatedToolCallRetries = 0;
  let lengthCuts = 0;
  let cutPrefix = "";
  let malformedTurns = 0;
  // The tool-call ids of the saved conversation: a call that repeats one gets a new one (checkArguments).
  const usedIds = new Set<string>();
  // The repeated request for a cut tool call is not a new turn for the budget, as in the original.
  let repeat = false;
  // A tool that ignores the signal must not hold the task past its timeout or a cancel.
  const toolTurns = new AbortRace(opts.signal);

  try {
    while (repeat || result.apiCalls < opts.maxTurns) {
      const counted = !repeat;
      repeat = false;
      const response = received(await send(true));
      if (counted) result.apiCalls++;
      const calls = response.message.tool_calls ?? [];

      // Arguments that cannot be repaired are a cut tool call to the original (its stream says "length").
      const checked = calls.length > 0 ? checkArguments(calls, usedIds, known) : undefined;
      if (response.finishReason === "length" || checked?.kind === "unrepairable") {
        if (calls.length > 0) {
          if (truncatedToolCallRetries < TRUNCATED_TOOL_CALL_RETRIES) {
            truncatedToolCallRetries++;
            repeat = true;
            continue;
          }
          return finish("truncated_tool_call", true, null);
        }
        lengthCuts++;
        save(assistantOf(response), "model");
        cutPrefix += response.message.content ?? "";
        if (lengthCuts < LENGTH_CUTS) {
          save({ role: "user", content: LENGTH_CONTINUATION_MESSAGE }, "harness");
          continue;
        }
        return finish("length", true, hasText(cutPrefix) ? cutPrefix.trim() : null);
      }

      if (checked?.kind === "ok") {
        if (dropTrailingReasoningOnly()) {
          reasoningOnlyContinuations = 0;
          emptyRetries = 0;
        }
        save(assistantOf(response, checked.calls), "model");
        for (const c of checked.calls) usedIds.add(c.id);
        const prepared = checked.calls.map((c, i) => prepareCall(c, known, checked.values[i]));
        const runnable = prepared.filter((p) => p.planned);
        const raw = new Map<PlannedCall, Record<string, unknown>[]>();
        const contextOf = (c: PlannedCall): ToolContext => ({
          ...opts.ctx,
          ...(c.id ? { toolCallId: c.id } : {}),
          keepRawContent: (parts) => raw.set(c, parts),
        });
        const outputs = await toolTurns.race(
          runToolBatch(
            runnable.map((p) => p.planned!),
            (c) => opts.executeTool(c.name, c.args, contextOf(c)),
            opts.toolConcurrency,
          ),
        );
        const byCall = new Map(runnable.map((p, i) => [p, outputs[i]!]));
        for (const p of prepared) {
          const content = p.error !== undefined ? JSON.stringify({ error: p.error }) : byCall.get(p)!;
          const msg: ToolMessage = {
            role: "tool",
            tool_call_id: p.call.id,
            name: p.call.function?.name,
            content: capToolResult(content, cap),
          };
          const parts = p.planned && raw.get(p.planned);
          if (parts) msg.raw_content = parts;
          messages.push(msg);
        }
        truncatedToolCallRetries = 0;
        malformedTurns = prepared.every((p) => p.error !== undefined) ? malformedTurns + 1 : 0;
        if (malformedTurns >= opts.maxConsecutiveToolErrors) return finish("malformed_calls", true);
        continue;
      }

      if (!hasText(response.message.content)) {
        if (
          opts.continueReasoningOnly &&
          hasText(response.message.reasoning) &&
          reasoningOnlyContinuations < REASONING_ONLY_CONTINUATIONS
        ) {
          reasoningOnlyContinuations++;
          (reasoningOnly ??= new Set()).add(save(assistantOf(response), "model"));
          continue;
        }
        if (emptyRetries < EMPTY_RETRIES) {
          emptyRetries++;
          continue;
        }
        const emptyMsg = save({ ...assistantOf(response), content: EMPTY_RESPONSE_CONTENT }, "harness");
        log.keep(emptyMsg);
        opts.tokenLedger?.link(emptyMsg, response);
        return finish("empty_response", true, null);
      }
      emptyRetries = 0;
      dropTrailingReasoningOnly();
      save(assistantOf(response), "model");
      // A background process the agent asked about: its notice is the next user turn (the original's CLI).
      const notice =
        result.apiCalls < opts.maxTurns ? await opts.ctx.notices?.next(opts.ctx.getEnv, opts.signal) : undefined;
      if (notice !== undefined) {
        save({ role: "user", content: notice }, "harness");
        cutPrefix = "";
        continue;
      }
      const answer = (cutPrefix + response.message.content).trim();
      result.completed = result.apiCalls < opts.maxTurns;
      return finish("final_answer", false, answer);
    }

    // The budget is spent without a final answer: the original's closing turn and one call without tools.
    save({ role: "user", content: MAX_TURNS_MESSAGE }, "harness");
    let summary = received(await send(false));
    if (!hasText(summary.message.content)) summary = received(await send(false));
    const text = hasText(summary.message.content) ? summary.message.content.trim() : null;
    if (text) {
      const summaryMsg = save({ role: "assistant", content: text }, "model");
      opts.tokenLedger?.link(summaryMsg, summary);
    }
    return finish("max_turns", false, text ?? NO_SUMMARY_RESPONSE);
  } catch (err) {
    settle();
    throw new AgentLoopAborted(err, result);
  } finally {
    toolTurns.dispose();
  }
}
