/**
 * The `memory` tool (toolset "memory"): notes the agent keeps about the environment ("memory") and the
 * user ("user"). In batch runs the store lives in memory for one task (Hermes' batch mode had no store
 * at all, so every call failed). A loop tool: each task's pipeline holds its own MemoryStore.
 */
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { noEffects, registry, type ToolResult } from "./registry.js";
import { pyStrip } from "./file_tool_common.js";
import { requiredInSchema } from "./tool_args.js";

export type MemoryTarget = "memory" | "user";

export const MEMORY_CHAR_LIMITS: Record<MemoryTarget, number> = { memory: 2200, user: 1375 };
/** Entries are stored (and counted) joined by this separator, as in Hermes' MEMORY.md / USER.md. */
export const MEMORY_SEPARATOR = "\n§\n";

/** The original's results: a success (`_success_response`) or `{success: false, error, …}`. */
export type MemoryResult = Record<string, unknown> & { success: boolean; entries?: string[]; usage?: string };

/** Python's `len()`: code points, not UTF-16 units. */
const pyLen = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};
/** Python's `f"{n:,}"`. */
const thousands = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** The original's `_MEMORY_THREAT_PATTERNS` (memory_tool.py:64-80), searched case-insensitively. */
const THREAT_PATTERNS: [RegExp, string][] = [
  [/ignore\s+(previous|all|above|prior)\s+instructions/i, "prompt_injection"],
  [/you\s+are\s+now\s+/i, "role_hijack"],
  [/do\s+not\s+tell\s+the\s+user/i, "deception_hide"],
  [/system\s+prompt\s+override/i, "sys_prompt_override"],
  [/disregard\s+(your|all|any)\s+(instructions|rules|guidelines)/i, "disregard_rules"],
  [/act\s+as\s+(if|though)\s+you\s+(have\s+no|don't\s+have)\s+(restrictions|limits|rules)/i, "bypass_restrictions"],
  [/curl\s+[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)/i, "exfil_curl"],
  [/wget\s+[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)/i, "exfil_wget"],
  [/cat\s+[^\n]*(\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)/i, "read_secrets"],
  [/authorized_keys/i, "ssh_backdoor"],
  [/\$HOME\/\.ssh|~\/\.ssh/i, "ssh_access"],
  [/\$HOME\/\.hermes\/\.env|~\/\.hermes\/\.env/i, "hermes_env"],
];
/** The original's `_INVISIBLE_CHARS` (memory_tool.py:83-86). */
const INVISIBLE_CHARS = [
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
];

/** The original's `_scan_memory_content` (memory_tool.py:89-101): an error text, or undefined. */
function scanContent(content: string): string | undefined {
  for (const ch of INVISIBLE_CHARS) {
    if (content.includes(ch))
      return `Blocked: content contains invisible unicode character U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")} (possible injection).`;
  }
  for (const [pattern, id] of THREAT_PATTERNS) {
    if (pattern.test(content))
      return `Blocked: content matches threat pattern '${id}'. Memory entries are injected into the system prompt and must not contain injection or exfiltration payloads.`;
  }
  return undefined;
}

const failure = (error: string, extra: Record<string, unknown> = {}): MemoryResult => ({
  success: false,
  error,
  ...extra,
});

/**
 * The original's MemoryStore (tools/memory_tool.py), its files kept in memory for one task: each change
 * re-reads the "file" first as the original does under its lock (the entries joined by the separator,
 * split again, stripped, blanks and repeats dropped), so results match the original's call for call.
 */
export class MemoryStore {
  /** The text of MEMORY.md / USER.md. */
  private readonly files: Record<MemoryTarget, string> = { memory: "", user: "" };
  private readonly entries: Record<MemoryTarget, string[]> = { memory: [], user: [] };

  constructor(private readonly limits: Record<MemoryTarget, number> = MEMORY_CHAR_LIMITS) {}

  list(target: MemoryTarget): string[] {
    return [...this.entries[target]];
  }

  charCount(target: MemoryTarget, entries = this.entries[target]): number {
    return pyLen(entries.join(MEMORY_SEPARATOR));
  }

  /** `_reload_target` + `_read_file` (memory_tool.py:182-187, 405-425). */
  private reload(target: MemoryTarget): string[] {
    const raw = this.files[target];
    const fresh =
      pyStrip(raw) === ""
        ? []
        : raw
            .split(MEMORY_SEPARATOR)
            .map(pyStrip)
            .filter((e) => e);
    this.entries[target] = [...new Set(fresh)];
    return this.entries[target];
  }

  private save(target: MemoryTarget, entries: string[]): void {
    this.entries[target] = entries;
    this.files[target] = entries.join(MEMORY_SEPARATOR);
  }

  /** `_success_response` (memory_tool.py:372-388). */
  private success(target: MemoryTarget, message: string): MemoryResult {
    const entries = this.entries[target];
    const current = this.charCount(target);
    const limit = this.limits[target];
    const pct = limit > 0 ? Math.min(100, Math.trunc((current / limit) * 100)) : 0;
    return {
      success: true,
      target,
      entries: [...entries],
      usage: `${pct}% — ${thousands(current)}/${thousands(limit)} chars`,
      entry_count: entries.length,
      ...(message ? { message } : {}),
    };
  }

  /** The one entry `oldText` names, or the original's error (memory_tool.py:282-297). */
  private match(entries: string[], oldText: string): number | MemoryResult {
    const matches = entries.map((e, i) => [i, e] as const).filter(([, e]) => e.includes(oldText));
    if (matches.length === 0) return failure(`No entry matched '${oldText}'.`);
    if (new Set(matches.map(([, e]) => e)).size > 1) {
      const previews = matches.map(([, e]) => {
        const cps = [...e];
        return cps.slice(0, 80).join("") + (cps.length > 80 ? "..." : "");
      });
      return failure(`Multiple entries matched '${oldText}'. Be more specific.`, { matches: previews });
    }
    return matches[0]![0];
  }

  /** `MemoryStore.add` (memory_tool.py:218-260). */
  add(target: MemoryTarget, content: string): MemoryResult {
    const text = pyStrip(content);
    if (!text) return failure("Content cannot be empty.");
    const blocked = scanContent(text);
    if (blocked) return failure(blocked);
    const entries = this.reload(target);
    const limit = this.limits[target];
    if (entries.includes(text)) return this.success(target, "Entry already exists (no duplicate added).");
    const newTotal = this.charCount(target, [...entries, text]);
    if (newTotal > limit) {
      const current = this.charCount(target);
      return failure(
        `Memory at ${thousands(current)}/${thousands(limit)} chars. Adding this entry (${pyLen(text)} chars) would exceed the limit. Replace or remove existing entries first.`,
        { current_entries: [...entries], usage: `${thousands(current)}/${thousands(limit)}` },
      );
    }
    this.save(target, [...entries, text]);
    return this.success(target, "Entry added.");
  }

  /** `MemoryStore.replace` (memory_tool.py:262-315). */
  replace(target: MemoryTarget, oldText: string, content: string): MemoryResult {
    const old = pyStrip(oldText);
    const text = pyStrip(content);
    if (!old) return failure("old_text cannot be empty.");
    if (!text) return failure("new_content cannot be empty. Use 'remove' to delete entries.");
    const blocked = scanContent(text);
    if (blocked) return failure(blocked);
    const entries = this.reload(target);
    const idx = this.match(entries, old);
    if (typeof idx !== "number") return idx;
    const limit = this.limits[target];
    const next = [...entries];
    next[idx] = text;
    const newTotal = this.charCount(target, next);
    if (newTotal > limit)
      return failure(
        `Replacement would put memory at ${thousands(newTotal)}/${thousands(limit)} chars. Shorten the new content or remove other entries first.`,
      );
    this.save(target, next);
    return this.success(target, "Entry replaced.");
  }

  /** `MemoryStore.remove` (memory_tool.py:317-350). */
  remove(target: MemoryTarget, oldText: string): MemoryResult {
    const old = pyStrip(oldText);
    if (!old) return failure("old_text cannot be empty.");
    const entries = this.reload(target);
    const idx = this.match(entries, old);
    if (typeof idx !== "number") return idx;
    this.save(
      target,
      entries.filter((_, i) => i !== idx),
    );
    return this.success(target, "Entry removed.");
  }

  /** The stored notes as a block for a system prompt; empty string when there are none. */
  formatForPrompt(): string {
    const parts: string[] = [];
    if (this.entries.memory.length > 0)
      parts.push(`MEMORY (your notes):\n${this.entries.memory.join(MEMORY_SEPARATOR)}`);
    if (this.entries.user.length > 0) parts.push(`USER PROFILE:\n${this.entries.user.join(MEMORY_SEPARATOR)}`);
    return parts.join("\n\n");
  }
}

/**
 * Arguments as the original's loop passes them (run_agent.py:8293-8301): not validated against the schema,
 * so an unknown action or target reaches the handler and gets the original's error; target defaults to memory.
 */
export const memoryArgs = lazy(() =>
  z.object({
    action: requiredInSchema(
      z
        .string()
        .optional()
        .meta({ enum: ["add", "replace", "remove"] })
        .describe("What to do."),
    ),
    target: requiredInSchema(
      z
        .string()
        .optional()
        .meta({ enum: ["memory", "user"] })
        .describe("Which store."),
    ),
    content: z.string().optional().describe("Entry text (add, replace)."),
    old_text: z.string().optional().describe("Unique substring of the entry to replace or remove."),
  }),
);

/** `memory_tool` (memory_tool.py:456-492): the original's argument checks and wording, then the store. */
export function handleMemory(store: MemoryStore, args: z.infer<ReturnType<typeof memoryArgs>>): ToolResult {
  const { action, content, old_text } = args;
  const target = args.target ?? "memory";
  const error = (message: string): ToolResult => ({ content: { error: message, success: false } });
  if (target !== "memory" && target !== "user") return error(`Invalid target '${target}'. Use 'memory' or 'user'.`);
  switch (action) {
    case "add":
      if (!content) return error("Content is required for 'add' action.");
      return { content: store.add(target, content) };
    case "replace":
      if (!old_text) return error("old_text is required for 'replace' action.");
      if (!content) return error("content is required for 'replace' action.");
      return { content: store.replace(target, old_text, content) };
    case "remove":
      if (!old_text) return error("old_text is required for 'remove' action.");
      return { content: store.remove(target, old_text) };
    default:
      return error(`Unknown action '${action ?? "None"}'. Use: add, replace, remove`);
  }
}

registry.register({
  name: "memory",
  toolset: "memory",
  emoji: "🧠",
  schema: {
    name: "memory",
    description:
      "Save durable notes. target=memory: facts about the environment, project conventions and lessons learned; " +
      "target=user: facts about the user and their preferences. action=add needs content; action=replace needs " +
      "old_text (a unique substring of an existing entry) and content; action=remove needs old_text. " +
      `Space is limited (memory ${MEMORY_CHAR_LIMITS.memory} chars, user ${MEMORY_CHAR_LIMITS.user} chars): keep entries short.`,
  },
  args: memoryArgs,
  loopTool: true,
  createState: () => new MemoryStore(),
  handler: (args, _ctx, store) => handleMemory(store, args),
  effects: noEffects,
});
