/**
 * A trajectory line as an ATIF-v1.7 document (atif_schema.ts): a system step, the user step, then one agent
 * step per saved assistant message with its tool calls, their results as the step's observation, the model
 * call's tokens, cost and times, and the approvals of its commands under the tool calls' `extra`. Turns the
 * harness wrote are marked `extra.harness_injected`. Everything a message holds that ATIF has no field for
 * (a null content, argument text that is not the canonical JSON of its object, a tool message's own name)
 * goes under `extra`, so `messagesFromAtif` gives back the saved messages exactly. Lines of older runs,
 * without `model_calls`, convert too (their agent steps have no times or metrics).
 */
import { UserError } from "../core/errors.js";
import type { CallTokens } from "../core/rl_record.js";
import type { AssistantMessage, ChatMessage, ToolCall, ToolMessage, Usage } from "../core/chat.js";
import * as z from "zod";
import {
  ApprovalRecordSchema,
  ChatMessageSchema,
  ModelCallRecordSchema,
  UsageSchema,
  type ApprovalRecord,
  type ModelCallRecord,
} from "../core/record_parts.js";
import type { TrajectoryEntry } from "../core/records.js";
import {
  ATIF_SCHEMA_VERSION,
  AtifTrajectorySchema,
  describeAtifIssues,
  type AtifStep,
  type AtifTrajectory,
} from "./atif_schema.js";

export interface AtifOptions {
  /** The run's name: the document's `session_id` (every trajectory of a run shares it). */
  runName?: string;
  /** hermes-batch's version: `agent.version`. */
  agentVersion: string;
}

/** A trajectory line that cannot be written as a valid ATIF document (bad input: exit 2); the message names the task. */
export class AtifConversionError extends UserError {
  override name = "AtifConversionError";
}

type Step = Omit<AtifStep, "step_id">;
type Extra = Record<string, unknown>;

const withExtra = <T extends object>(obj: T, extra: Extra): T => (Object.keys(extra).length ? { ...obj, extra } : obj);

/** When the task started: the line's end time less its duration (undefined when either is missing). */
function taskStart(entry: TrajectoryEntry): string | undefined {
  const end = Date.parse(String(entry.metadata?.timestamp ?? ""));
  if (!Number.isFinite(end) || typeof entry.duration_ms !== "number") return undefined;
  return new Date(end - entry.duration_ms).toISOString();
}

function metricsOf(call: ModelCallRecord, tokens: CallTokens | undefined): NonNullable<AtifStep["metrics"]> {
  const u: Usage = call.usage;
  const extra: Extra = { total_tokens: u.total_tokens };
  if (u.completion_tokens_details) extra.reasoning_tokens = u.completion_tokens_details.reasoning_tokens;
  // ATIF's logprobs are aligned with the completion ids: an engine that sent another count (rl.jsonl records it as a
  // problem) gets none here, only the counts.
  let logprobs = tokens?.logprobs ?? undefined;
  if (logprobs && tokens && logprobs.length !== tokens.completion_token_ids.length) {
    extra.logprobs_left_out = `${logprobs.length} logprobs for ${tokens.completion_token_ids.length} completion ids`;
    logprobs = undefined;
  }
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    ...(u.prompt_tokens_details ? { cached_tokens: u.prompt_tokens_details.cached_tokens } : {}),
    ...(call.cost_usd !== undefined ? { cost_usd: call.cost_usd } : {}),
    // The engine's own ids and logprobs (--rl-capture), as rl.jsonl keeps them.
    ...(tokens ? { prompt_token_ids: tokens.prompt_token_ids, completion_token_ids: tokens.completion_token_ids } : {}),
    ...(logprobs ? { logprobs } : {}),
    extra,
  };
}

function toolCallOf(call: ToolCall, approvals: ApprovalRecord[]): NonNullable<AtifStep["tool_calls"]>[number] {
  let args: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(call.function.arguments);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) args = parsed as Record<string, unknown>;
  } catch {
    // not JSON: kept as text below
  }
  const extra: Extra = {};
  if (JSON.stringify(args) !== call.function.arguments) extra.arguments_text = call.function.arguments;
  if (approvals.length) extra.approvals = approvals;
  return withExtra({ tool_call_id: call.id, function_name: call.function.name, arguments: args }, extra);
}

/** The call a result answers: the one at its position when it has the result's id (two calls may share one), else the first of that id. */
function callOfResult<C>(
  calls: readonly C[] | null | undefined,
  k: number,
  id: string | null | undefined,
  idOf: (c: C) => string = (c) => (c as ToolCall).id,
): C | undefined {
  const atPosition = calls?.[k];
  return atPosition !== undefined && idOf(atPosition) === id ? atPosition : calls?.find((c) => idOf(c) === id);
}

function observationOf(results: ToolMessage[], calls: readonly ToolCall[]): NonNullable<AtifStep["observation"]> {
  return {
    results: results.map((m, k) => {
      const call = callOfResult(calls, k, m.tool_call_id);
      const extra: Extra = {};
      if (!call) extra.tool_call_id = m.tool_call_id;
      if (m.name !== call?.function.name) extra.name = m.name ?? null;
      if (m.raw_content) extra.raw_content = m.raw_content;
      return withExtra({ ...(call ? { source_call_id: m.tool_call_id } : {}), content: m.content }, extra);
    }),
  };
}

interface AgentStepInput {
  message: AssistantMessage;
  results: ToolMessage[];
  call?: ModelCallRecord;
  tokens?: CallTokens;
  injected: boolean;
  approvals: Map<string, ApprovalRecord[]>;
}

function agentStep({ message, results, call, tokens, injected, approvals }: AgentStepInput): Step {
  const calls = message.tool_calls ?? [];
  const extra: Extra = {};
  if (message.content === null) extra.content_null = true;
  if (message.reasoning_without_details !== undefined)
    extra.reasoning_without_details = message.reasoning_without_details;
  if (injected) extra.harness_injected = true;
  if (call) Object.assign(extra, { ended_at: call.ended_at, finish_reason: call.finish_reason });
  const step: Step = {
    source: "agent",
    ...(call ? { timestamp: call.started_at, model_name: call.model, llm_call_count: 1 } : {}),
    message: message.content ?? "",
    ...(message.reasoning !== undefined ? { reasoning_content: message.reasoning } : {}),
    ...(calls.length ? { tool_calls: calls.map((c) => toolCallOf(c, approvals.get(c.id) ?? [])) } : {}),
    ...(results.length ? { observation: observationOf(results, calls) } : {}),
    ...(call ? { metrics: metricsOf(call, tokens) } : {}),
  };
  return withExtra(step, extra);
}

/** The steps of the saved messages, in order; tool results join the agent step of their assistant turn. */
function stepsOf(
  entry: TrajectoryEntry,
  approvals: Map<string, ApprovalRecord[]>,
  tokens: Map<number, CallTokens> | undefined,
): Step[] {
  const messages: ChatMessage[] = entry.messages ?? [];
  const callOf = new Map(
    (entry.model_calls ?? []).filter((c) => c.message_index !== undefined).map((c) => [c.message_index!, c]),
  );
  const injected = new Set(entry.injected_messages ?? []);
  const start = taskStart(entry);
  const steps: Step[] = [];
  let lastEnd = start;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const mark = injected.has(i) ? { extra: { harness_injected: true } } : {};
    if (m.role === "system" || m.role === "user") {
      const at = m.role === "user" && injected.has(i) ? lastEnd : start;
      steps.push({ source: m.role, ...(at ? { timestamp: at } : {}), message: m.content, ...mark });
    } else if (m.role === "assistant") {
      const results: ToolMessage[] = [];
      while (messages[i + 1]?.role === "tool") results.push(messages[++i] as ToolMessage);
      const call = callOf.get(i - results.length);
      if (call) lastEnd = call.ended_at;
      const at = i - results.length;
      steps.push(
        agentStep({ message: m, results, call, tokens: tokens?.get(at), injected: injected.has(at), approvals }),
      );
    } else {
      // A tool result without its assistant turn (not written by this loop): a system step's observation.
      steps.push({ source: "system", message: "", observation: observationOf([m], []) });
    }
  }
  return steps;
}

function finalMetricsOf(entry: TrajectoryEntry, steps: number): NonNullable<AtifTrajectory["final_metrics"]> {
  const u = entry.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const discarded = (entry.model_calls ?? []).filter((c) => c.message_index === undefined).length;
  const extra: Extra = { total_tokens: u.total_tokens, discarded_model_calls: discarded };
  if (u.completion_tokens_details) extra.total_reasoning_tokens = u.completion_tokens_details.reasoning_tokens;
  if (entry.approval_usage) extra.approval_usage = entry.approval_usage;
  if (entry.judge_usage) extra.judge_usage = entry.judge_usage;
  return {
    total_prompt_tokens: u.prompt_tokens,
    total_completion_tokens: u.completion_tokens,
    ...(u.prompt_tokens_details ? { total_cached_tokens: u.prompt_tokens_details.cached_tokens } : {}),
    ...(entry.cost_usd !== undefined ? { total_cost_usd: entry.cost_usd } : {}),
    total_steps: steps,
    extra,
  };
}

/** The trajectory's own facts that ATIF has no field for. */
function rootExtra(entry: TrajectoryEntry, unattributed: ApprovalRecord[]): Extra {
  return {
    task_id: entry.task_id,
    ...(entry.epoch !== undefined ? { epoch: entry.epoch } : {}),
    prompt_index: entry.prompt_index,
    outcome: entry.outcome,
    completed: entry.completed,
    partial: entry.partial,
    api_calls: entry.api_calls,
    final_response: entry.final_response,
    ...(entry.score ? { score: entry.score } : {}),
    ...(entry.verify ? { verify: entry.verify } : {}),
    ...(entry.error ? { error: entry.error } : {}),
    ...(unattributed.length ? { approvals: unattributed } : {}),
  };
}

/** The line as an ATIF document, not yet validated (`atifDocument` validates). */
export function toAtif(entry: TrajectoryEntry, opts: AtifOptions, tokens?: Map<number, CallTokens>): AtifTrajectory {
  const approvals = new Map<string, ApprovalRecord[]>();
  const unattributed: ApprovalRecord[] = [];
  for (const a of entry.approvals ?? []) {
    if (a.tool_call_id === undefined) unattributed.push(a);
    else approvals.set(a.tool_call_id, [...(approvals.get(a.tool_call_id) ?? []), a]);
  }
  const steps = stepsOf(entry, approvals, tokens).map((s, i) => ({ step_id: i + 1, ...s }));
  const model = typeof entry.metadata?.model === "string" ? entry.metadata.model : undefined;
  const discarded = (entry.model_calls ?? []).filter((c) => c.message_index === undefined).length;
  return {
    schema_version: ATIF_SCHEMA_VERSION,
    ...(opts.runName ? { session_id: opts.runName } : {}),
    trajectory_id: entry.epoch === undefined ? entry.task_id : `${entry.task_id}#epoch-${entry.epoch}`,
    agent: {
      name: "hermes-batch",
      version: opts.agentVersion,
      ...(model ? { model_name: model } : {}),
      ...(entry.tools?.length ? { tool_definitions: entry.tools as unknown as Record<string, unknown>[] } : {}),
    },
    steps,
    ...(discarded
      ? {
          notes: `final_metrics totals include ${discarded} model call(s) whose answers the agent loop threw away (not in any step)`,
        }
      : {}),
    final_metrics: finalMetricsOf(entry, steps.length),
    extra: rootExtra(entry, unattributed),
  };
}

/** What the conversion reads of a line (a file `export` was given may hold anything in these fields). */
const ConvertibleLineSchema = z.looseObject({
  task_id: z.string(),
  epoch: z.number().int().nonnegative().optional(),
  messages: z.array(ChatMessageSchema),
  tools: z.array(z.looseObject({})).optional(),
  usage: UsageSchema.optional(),
  approvals: z.array(ApprovalRecordSchema).optional(),
  model_calls: z.array(ModelCallRecordSchema).optional(),
  injected_messages: z.array(z.number().int().nonnegative()).optional(),
  duration_ms: z.number().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** The line as a validated ATIF document; a line that cannot be read or gives an invalid document throws, naming its task. */
export function atifDocument(
  entry: TrajectoryEntry,
  opts: AtifOptions,
  tokens?: Map<number, CallTokens>,
): AtifTrajectory {
  const name = `task ${entry.task_id}${entry.epoch === undefined ? "" : ` epoch ${entry.epoch}`}`;
  const readable = ConvertibleLineSchema.safeParse(entry);
  if (!readable.success)
    throw new AtifConversionError(
      `${name}: the trajectory line cannot be converted to ATIF: ${describeAtifIssues(readable.error)}`,
    );
  const doc = toAtif(entry, opts, tokens);
  // The tool definitions are the line's `tools`, each already checked as an object above: the document's schema
  // asks no more of them, and they are most of its size (about half of the check's time).
  const checked = AtifTrajectorySchema.safeParse(
    doc.agent.tool_definitions ? { ...doc, agent: { ...doc.agent, tool_definitions: [] } } : doc,
  );
  if (!checked.success)
    throw new AtifConversionError(
      `${name}: not a valid ${ATIF_SCHEMA_VERSION} document: ${describeAtifIssues(checked.error)}`,
    );
  return doc;
}

const textOf = (content: AtifStep["message"] | null | undefined): string =>
  typeof content === "string" ? content : (content ?? []).map((p) => p.text ?? "").join("");

function toolMessagesOf(step: AtifStep): ToolMessage[] {
  return (step.observation?.results ?? []).map((r, k) => {
    const extra = r.extra ?? {};
    const name =
      "name" in extra
        ? (extra.name as string | null)
        : callOfResult(step.tool_calls, k, r.source_call_id, (c) => c.tool_call_id)?.function_name;
    const msg: ToolMessage = {
      role: "tool",
      tool_call_id: r.source_call_id ?? String(extra.tool_call_id ?? ""),
      content: textOf(r.content),
    };
    if (name != null) msg.name = name;
    if (Array.isArray(extra.raw_content)) msg.raw_content = extra.raw_content as Record<string, unknown>[];
    return msg;
  });
}

/** The saved messages of a document this module wrote (the inverse of `toAtif` on `messages`). */
export function messagesFromAtif(doc: AtifTrajectory): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const step of doc.steps) {
    const extra = step.extra ?? {};
    if (step.source === "agent") {
      const msg: AssistantMessage = {
        role: "assistant",
        content: extra.content_null === true ? null : textOf(step.message),
      };
      if (step.tool_calls?.length) {
        msg.tool_calls = step.tool_calls.map((c) => ({
          id: c.tool_call_id,
          type: "function",
          function: {
            name: c.function_name,
            arguments:
              typeof c.extra?.arguments_text === "string" ? c.extra.arguments_text : JSON.stringify(c.arguments),
          },
        }));
      }
      if (step.reasoning_content != null) msg.reasoning = step.reasoning_content;
      if (typeof extra.reasoning_without_details === "string")
        msg.reasoning_without_details = extra.reasoning_without_details;
      out.push(msg);
    } else if (!(step.source === "system" && step.observation)) {
      out.push({ role: step.source, content: textOf(step.message) });
    }
    out.push(...toolMessagesOf(step));
  }
  return out;
}
