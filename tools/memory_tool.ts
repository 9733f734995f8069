/**
 * The `memory` tool (toolset "memory"): notes the agent keeps about the environment ("memory") and the
 * user ("user"). In batch runs the store lives in memory for one task (Hermes' batch mode had no store
 * at all, so every call failed). A loop tool: each task's pipeline holds its own MemoryStore.
 */
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { noEffects, registry, toolFailure, type ToolResult } from "./registry.js";

export type MemoryTarget = "memory" | "user";

export const MEMORY_CHAR_LIMITS: Record<MemoryTarget, number> = { memory: 2200, user: 1375 };
/** Entries are stored (and counted) joined by this separator, as in Hermes' MEMORY.md / USER.md. */
export const MEMORY_SEPARATOR = "\n§\n";

export interface MemoryResult {
  success: boolean;
  target: MemoryTarget;
  entries: string[];
  usage: string;
  entry_count: number;
  message?: string;
  error?: string;
}

export class MemoryStore {
  private readonly entries: Record<MemoryTarget, string[]> = { memory: [], user: [] };

  constructor(private readonly limits: Record<MemoryTarget, number> = MEMORY_CHAR_LIMITS) {}

  list(target: MemoryTarget): string[] {
    return [...this.entries[target]];
  }

  charCount(target: MemoryTarget, entries = this.entries[target]): number {
    return entries.join(MEMORY_SEPARATOR).length;
  }

  usage(target: MemoryTarget): string {
    const cur = this.charCount(target);
    const limit = this.limits[target];
    return `${Math.round((cur / limit) * 100)}% — ${cur}/${limit} chars`;
  }

  private result(target: MemoryTarget, extra: Partial<MemoryResult> = {}): MemoryResult {
    return {
      success: true,
      target,
      entries: this.list(target),
      usage: this.usage(target),
      entry_count: this.entries[target].length,
      ...extra,
    };
  }

  private failure(target: MemoryTarget, error: string): MemoryResult {
    return { ...this.result(target), success: false, error };
  }

  /** Indices of entries containing `oldText`; identical duplicates count as one match. */
  private matching(target: MemoryTarget, oldText: string): number[] {
    const hits = this.entries[target].map((e, i) => (e.includes(oldText) ? i : -1)).filter((i) => i >= 0);
    const distinct = new Set(hits.map((i) => this.entries[target][i]));
    return distinct.size <= 1 ? hits.slice(0, 1) : hits;
  }

  private overLimit(target: MemoryTarget, next: string[], what: string): MemoryResult | undefined {
    const size = this.charCount(target, next);
    const limit = this.limits[target];
    if (size <= limit) return undefined;
    return this.failure(
      target,
      `${what} would make ${target} ${size}/${limit} chars, over the limit. Replace or remove entries first, or write a shorter entry.`,
    );
  }

  add(target: MemoryTarget, content: string): MemoryResult {
    const text = content.trim();
    if (text === "") return this.failure(target, "content must not be empty");
    if (text.includes("§")) return this.failure(target, "content must not contain the entry separator '§'");
    if (this.entries[target].includes(text))
      return this.result(target, { message: "Entry already exists; nothing added." });
    const next = [...this.entries[target], text];
    const over = this.overLimit(target, next, "Adding this entry");
    if (over) return over;
    this.entries[target] = next;
    return this.result(target, { message: "Entry added." });
  }

  replace(target: MemoryTarget, oldText: string, content: string): MemoryResult {
    const text = content.trim();
    if (oldText === "") return this.failure(target, "old_text must not be empty");
    if (text === "") return this.failure(target, "content must not be empty (use action=remove to delete an entry)");
    if (text.includes("§")) return this.failure(target, "content must not contain the entry separator '§'");
    const hits = this.matching(target, oldText);
    if (hits.length === 0) return this.failure(target, `No ${target} entry contains old_text`);
    if (hits.length > 1)
      return this.failure(target, `old_text matches ${hits.length} entries; use a longer, unique substring`);
    const next = [...this.entries[target]];
    next[hits[0]!] = text;
    const over = this.overLimit(target, next, "This replacement");
    if (over) return over;
    this.entries[target] = next;
    return this.result(target, { message: "Entry replaced." });
  }

  remove(target: MemoryTarget, oldText: string): MemoryResult {
    if (oldText === "") return this.failure(target, "old_text must not be empty");
    const hits = this.matching(target, oldText);
    if (hits.length === 0) return this.failure(target, `No ${target} entry contains old_text`);
    if (hits.length > 1)
      return this.failure(target, `old_text matches ${hits.length} entries; use a longer, unique substring`);
    this.entries[target] = this.entries[target].filter((_, i) => i !== hits[0]);
    return this.result(target, { message: "Entry removed." });
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

export const memoryArgs = lazy(() =>
  z.object({
    action: z.enum(["add", "replace", "remove"]).describe("What to do."),
    target: z.enum(["memory", "user"]).describe("Which store."),
    content: z.string().optional().describe("Entry text (add, replace)."),
    old_text: z.string().optional().describe("Unique substring of the entry to replace or remove."),
  }),
);

/** Runs one `memory` call against the store. */
export function handleMemory(store: MemoryStore, args: z.infer<ReturnType<typeof memoryArgs>>): ToolResult {
  const { action, target, content, old_text } = args;
  const missing = (field: string) =>
    toolFailure(`Invalid arguments for memory: '${field}': required for action '${action}'`);
  switch (action) {
    case "add":
      if (content === undefined) return missing("content");
      return { content: store.add(target, content) };
    case "replace":
      if (old_text === undefined) return missing("old_text");
      if (content === undefined) return missing("content");
      return { content: store.replace(target, old_text, content) };
    case "remove":
      if (old_text === undefined) return missing("old_text");
      return { content: store.remove(target, old_text) };
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
