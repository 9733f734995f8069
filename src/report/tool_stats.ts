/**
 * Per-task tool and reasoning statistics with Hermes' rules (hermes-facts §2.3), computed from the raw
 * OpenAI-format messages of one task.
 */
import type { ChatMessage, OpenAITool } from "../core/chat.js";
import { HERMES_TOOL_NAMES } from "../core/hermes_tool_names.js";
import { resolveToolset } from "../../tools/toolsets.js";
import type { ToolStat } from "../core/records.js";
import { conversationReasoning } from "../formats/hermes.js";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const FAILURE_WORDS = /error|success|\\u/i;

/**
 * Whether one tool result counts as a failure. JSON results fail on a non-null top-level `error`, a
 * non-null `content.error`, or `success: false`; a non-zero `exit_code` is not a failure (the model can
 * recover). Non-JSON results fail when empty or starting with "error:" (any case).
 */
export function isToolResultFailure(content: string | null | undefined): boolean {
  const text = content ?? "";
  // Without the words (and without \u escapes that could spell them) no rule can apply: no parse needed.
  if (!FAILURE_WORDS.test(text) && text.trimStart().length > 0) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const t = text.trimStart();
    return t.length === 0 || t.slice(0, 6).toLowerCase() === "error:";
  }
  if (!isObject(parsed)) return false;
  if (parsed.error !== undefined && parsed.error !== null) return true;
  const inner = parsed.content;
  if (isObject(inner) && inner.error !== undefined && inner.error !== null) return true;
  return parsed.success === false;
}

/** Key sets already sorted and without duplicates (what `statsToolNames` returns), by identity, as sets. */
const sortedKeySets = new WeakMap<readonly string[], ReadonlySet<string>>();
let lastKeySet:
  | { registered: readonly string[]; names: readonly string[]; source: Iterable<string> | undefined }
  | undefined;

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The key set of an entry's `tool_stats` and `tool_error_counts`: every tool the original registers plus
 * every tool registered here, so lines of the original and ours load as one table (batch_runner
 * `_normalize_tool_stats`). Sorted; the same array while the registered names stay the same.
 */
export function statsToolNames(registered: Iterable<string>): readonly string[] {
  // A frozen list given again (the registry's sortedNames) cannot have changed: no copy, no comparison.
  if (lastKeySet?.source === registered && Object.isFrozen(registered)) return lastKeySet.names;
  const list = [...registered];
  if (!lastKeySet || !sameList(lastKeySet.registered, list)) {
    const names = Object.freeze([...new Set([...HERMES_TOOL_NAMES, ...list])].sort());
    sortedKeySets.set(names, new Set(names));
    lastKeySet = { registered: list, names, source: undefined };
  }
  lastKeySet.source = registered;
  return lastKeySet.names;
}

/** Of the toolsets drawn for a task, those that gave the model at least one tool here (in draw order). */
export function offeredToolsets(drawn: readonly string[], tools: readonly OpenAITool[]): string[] {
  const offered = new Set(tools.map((t) => t.function.name));
  return drawn.filter((ts) => {
    try {
      return resolveToolset(ts).some((name) => offered.has(name));
    } catch {
      return false;
    }
  });
}

export interface ToolStatsResult {
  /** Every known tool (zeros included) plus any other name called, sorted by name. */
  tool_stats: Record<string, ToolStat>;
  /** Failures per tool, same keys. */
  tool_error_counts: Record<string, number>;
}

/** The value of a tool that was not called (shared: entries are serialised, never changed). */
const NOT_CALLED: ToolStat = Object.freeze({ count: 0, success: 0, failure: 0 });

/**
 * Counts calls per tool name and classifies each result, matched to its call by `tool_call_id`
 * (falling back to the tool message's `name`). A call without a result counts in `count` only.
 * Only the tools called are in the map, in the order first seen.
 */
export function countToolCalls(messages: readonly ChatMessage[]): Map<string, ToolStat> {
  const used = new Map<string, ToolStat>();
  const stat = (name: string): ToolStat => {
    let s = used.get(name);
    if (!s) used.set(name, (s = { count: 0, success: 0, failure: 0 }));
    return s;
  };
  const callNames = new Map<string, string>();
  for (const msg of messages) {
    if (msg.role === "assistant") {
      for (const call of msg.tool_calls ?? []) {
        stat(call.function.name).count++;
        callNames.set(call.id, call.function.name);
      }
    } else if (msg.role === "tool") {
      const name = callNames.get(msg.tool_call_id) ?? msg.name;
      if (name === undefined) continue;
      const s = stat(name);
      if (isToolResultFailure(msg.content)) s.failure++;
      else s.success++;
    }
  }
  return used;
}

/**
 * Counts calls per tool name and classifies each result (see `countToolCalls`). Only the tools called are
 * counted; the known ones that were not get zeros.
 */
export function extractToolStats(messages: readonly ChatMessage[], knownTools: Iterable<string>): ToolStatsResult {
  return toolStatsRecords(countToolCalls(messages), knownTools);
}

/** `tool_stats` and `tool_error_counts` of the counted tools over the known ones, as objects. */
function toolStatsRecords(used: ReadonlyMap<string, ToolStat>, knownTools: Iterable<string>): ToolStatsResult {
  let knownSet = sortedKeySets.get(knownTools as readonly string[]);
  let known = knownTools as readonly string[];
  if (!knownSet) {
    knownSet = new Set(knownTools);
    known = [...knownSet].sort();
  }
  const others = [...used.keys()].filter((n) => !knownSet.has(n)).sort();
  const tool_stats: Record<string, ToolStat> = {};
  const tool_error_counts: Record<string, number> = {};
  const put = (name: string) => {
    const s = used.get(name) ?? NOT_CALLED;
    tool_stats[name] = s;
    tool_error_counts[name] = s.failure;
  };
  // Both lists are sorted: merged, the keys come out in the order of one sort over all of them.
  let o = 0;
  for (const name of known) {
    while (o < others.length && others[o]! < name) put(others[o++]!);
    put(name);
  }
  while (o < others.length) put(others[o++]!);
  return { tool_stats, tool_error_counts };
}

/** `JSON.stringify` of `tool_stats` and of `tool_error_counts`. */
export interface ToolStatsJson {
  tool_stats: string;
  tool_error_counts: string;
}

/**
 * The JSON texts of `extractToolStats`' two objects, byte for byte, from the counted tools: the known tools'
 * zero-filled texts are made once per key list (`statsToolNames`' array), and only the tools called are
 * written into them (a line's tool stats are ~5 KB of zeros over every known tool, the same for every task).
 */
export function toolStatsJson(used: ReadonlyMap<string, ToolStat>, knownTools: Iterable<string>): ToolStatsJson {
  const known = knownTools as readonly string[];
  const template = sortedKeySets.has(known) ? zeroTemplate(known) : undefined;
  if (!template || [...used.keys()].some(isUnorderedKey)) {
    const records = toolStatsRecords(used, knownTools);
    return {
      tool_stats: JSON.stringify(records.tool_stats),
      tool_error_counts: JSON.stringify(records.tool_error_counts),
    };
  }
  const stats = new TemplatePatch(template.stats, template.statsSpans);
  const errors = new TemplatePatch(template.errors, template.errorsSpans);
  for (const name of [...used.keys()].sort()) {
    const s = used.get(name)!;
    const key = JSON.stringify(name);
    const statText = `${key}:{"count":${s.count},"success":${s.success},"failure":${s.failure}}`;
    const errorText = `${key}:${s.failure}`;
    const at = sortedIndex(known, name);
    const replaces = known[at] === name;
    stats.put(at, statText, replaces);
    errors.put(at, errorText, replaces);
  }
  return { tool_stats: stats.done(), tool_error_counts: errors.done() };
}

/**
 * An array index comes first in an object's key order whatever its place, `__proto__` is no key at all, and a
 * name that is not a string (a malformed call) sorts last as the text of its value.
 */
function isUnorderedKey(name: unknown): boolean {
  return typeof name !== "string" || name === "__proto__" || /^(?:0|[1-9]\d{0,9})$/.test(name);
}

/** The zero-filled texts of a key list and where each key's member starts and ends in them. */
interface ZeroTemplate {
  stats: string;
  statsSpans: Int32Array;
  errors: string;
  errorsSpans: Int32Array;
}

const zeroTemplates = new WeakMap<readonly string[], ZeroTemplate | null>();

/** null for a key list whose object key order is not its sorted order. */
function zeroTemplate(known: readonly string[]): ZeroTemplate | null {
  let t = zeroTemplates.get(known);
  if (t === undefined) {
    if (known.some(isUnorderedKey)) {
      zeroTemplates.set(known, null);
      return null;
    }
    const build = (member: (key: string) => string) => {
      const spans = new Int32Array(known.length * 2);
      let text = "{";
      known.forEach((name, i) => {
        if (i > 0) text += ",";
        spans[2 * i] = text.length;
        text += member(JSON.stringify(name));
        spans[2 * i + 1] = text.length;
      });
      return { text: `${text}}`, spans };
    };
    const stats = build((key) => `${key}:{"count":0,"success":0,"failure":0}`);
    const errors = build((key) => `${key}:0`);
    t = { stats: stats.text, statsSpans: stats.spans, errors: errors.text, errorsSpans: errors.spans };
    zeroTemplates.set(known, t);
  }
  return t;
}

/** The first index of a sorted list whose name is not below `name` (the list's length when none). */
function sortedIndex(sorted: readonly string[], name: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A zero-filled object text with members replaced or inserted, in key order. */
class TemplatePatch {
  private out = "";
  private cursor = 0;
  private written = 0;

  constructor(
    private readonly text: string,
    private readonly spans: Int32Array,
  ) {}

  /** The member of key index `at` replaced by `member`, or `member` inserted before it (at the end: after all). */
  put(at: number, member: string, replaces: boolean): void {
    const count = this.spans.length / 2;
    if (at < count) {
      const start = this.spans[2 * at]!;
      this.out += this.text.slice(this.cursor, start) + member;
      if (replaces) this.cursor = this.spans[2 * at + 1]!;
      else {
        this.out += ",";
        this.cursor = start;
      }
    } else {
      const end = count ? this.spans[2 * count - 1]! : 1;
      this.out += this.text.slice(this.cursor, end) + (count || this.written ? "," : "") + member;
      this.cursor = end;
    }
    this.written++;
  }

  done(): string {
    return this.out + this.text.slice(this.cursor);
  }
}

/** Names of tools called in `messages` that are not in `known` (for the unknown-tools filter). */
export function unknownToolsCalled(messages: readonly ChatMessage[], known: ReadonlySet<string>): string[] {
  const unknown = new Set<string>();
  for (const msg of messages) {
    if (msg.role !== "assistant") continue;
    for (const call of msg.tool_calls ?? []) if (!known.has(call.function.name)) unknown.add(call.function.name);
  }
  return [...unknown];
}

export interface ReasoningStats {
  total_assistant_turns: number;
  turns_with_reasoning: number;
  turns_without_reasoning: number;
  has_any_reasoning: boolean;
  /** Turns whose reasoning came only in `reasoning_details` (counted as with reasoning only under `detailsReasoning`). */
  turns_with_reasoning_only_in_details: number;
}

/** An assistant turn has reasoning when its `reasoning` is non-blank or its content holds a think/scratchpad block. */
export function turnHasReasoning(content: string | null, reasoning: string | undefined): boolean {
  if (reasoning && reasoning.trim()) return true;
  return !!content && (content.includes("<REASONING_SCRATCHPAD>") || content.includes("<think>"));
}

/**
 * Reasoning per assistant turn as the Hermes conversation shows it: by default without reasoning that came
 * only in `reasoning_details` (the original's streaming path never sees it), with it under `detailsReasoning`.
 */
export function reasoningStats(
  messages: readonly ChatMessage[],
  opts: { detailsReasoning?: boolean } = {},
): ReasoningStats {
  let total = 0;
  let withReasoning = 0;
  let onlyInDetails = 0;
  for (const msg of messages) {
    if (msg.role !== "assistant") continue;
    total++;
    const shown = turnHasReasoning(msg.content, conversationReasoning(msg, opts.detailsReasoning));
    if (shown) withReasoning++;
    if (
      msg.reasoning_without_details !== undefined &&
      !turnHasReasoning(msg.content, msg.reasoning_without_details) &&
      turnHasReasoning(msg.content, msg.reasoning)
    ) {
      onlyInDetails++;
    }
  }
  return {
    total_assistant_turns: total,
    turns_with_reasoning: withReasoning,
    turns_without_reasoning: total - withReasoning,
    has_any_reasoning: withReasoning > 0,
    turns_with_reasoning_only_in_details: onlyInDetails,
  };
}
