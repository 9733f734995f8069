/**
 * The `todo` tool (toolset "todo"): the agent's task list for one task, a loop tool: each task's
 * pipeline holds its own TodoStore.
 */
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { noEffects, registry, type ToolResult } from "./registry.js";
import { pyStrip } from "./file_tool_common.js";
import { booleanArg, toolParameters, withDefault } from "./tool_args.js";

export const TODO_STATUSES = ["pending", "in_progress", "completed", "cancelled"] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];

export interface TodoItem {
  id: string;
  content: string;
  status: TodoStatus;
}

export interface TodoSummary {
  total: number;
  pending: number;
  in_progress: number;
  completed: number;
  cancelled: number;
}

/**
 * Python's `str()` of a JSON value, as the original applies it to every item field (todo_tool.py:128-136):
 * `3` → "3", `true` → "True", `null` → "None", lists and objects as Python prints them.
 */
export function pyStr(value: unknown): string {
  return typeof value === "string" ? value : pyRepr(value);
}

function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "nan";
    if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
    return String(value);
  }
  if (typeof value === "string") {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const body = value
      .replace(/\\/g, "\\\\")
      .replace(/\n/g, "\\n")
      .replace(/\r/g, "\\r")
      .replace(/\t/g, "\\t")
      .replace(quote === "'" ? /'/g : /"/g, `\\${quote}`);
    return `${quote}${body}${quote}`;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object")
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
      .join(", ")}}`;
  return String(value);
}

/** Python's truthiness of a JSON value. */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (value && typeof value === "object") return Object.keys(value).length > 0;
  return Boolean(value);
}

/** `item.get(key, fallback)`: a key present with null is None, not the fallback. */
function field(item: Record<string, unknown>, key: string, fallback: unknown): unknown {
  return Object.hasOwn(item, key) ? item[key] : fallback;
}

/** Python's `str.strip()`. */
const strip = pyStrip;

function validStatus(s: string): s is TodoStatus {
  return (TODO_STATUSES as readonly string[]).includes(s);
}

/** The original's `_validate` (todo_tool.py:121-138). */
function validate(item: Record<string, unknown>): TodoItem {
  const id = strip(pyStr(field(item, "id", ""))) || "?";
  const content = strip(pyStr(field(item, "content", ""))) || "(no description)";
  const s = strip(pyStr(field(item, "status", "pending"))).toLowerCase();
  return { id, content, status: validStatus(s) ? s : "pending" };
}

/** The original's `_dedupe_by_id` (todo_tool.py:140-146): the last item of each id, in its place; no id is "?". */
function dedupeById(todos: Record<string, unknown>[]): Record<string, unknown>[] {
  const last = new Map<string, number>();
  todos.forEach((item, i) => {
    last.set(strip(pyStr(field(item, "id", ""))) || "?", i);
  });
  return [...last.values()].sort((a, b) => a - b).map((i) => todos[i]!);
}

/** One task's todo list with the original's semantics (replace, or merge by id: todo_tool.py:38-80). */
export class TodoStore {
  private items: TodoItem[] = [];

  /** Replaces the list, or (merge) updates the given fields of existing ids and appends new ids. */
  write(todos: Record<string, unknown>[], merge = false): TodoItem[] {
    if (!merge) {
      this.items = dedupeById(todos).map(validate);
      return this.read();
    }
    const existing = new Map(this.items.map((item) => [item.id, item]));
    for (const t of dedupeById(todos)) {
      const id = strip(pyStr(field(t, "id", "")));
      if (!id) continue; // can't merge without an id
      const old = existing.get(id);
      if (old) {
        if (Object.hasOwn(t, "content") && truthy(t.content)) old.content = strip(pyStr(t.content));
        if (Object.hasOwn(t, "status") && truthy(t.status)) {
          const s = strip(pyStr(t.status)).toLowerCase();
          if (validStatus(s)) old.status = s;
        }
      } else {
        const item = validate(t);
        existing.set(item.id, item);
        this.items.push(item);
      }
    }
    const seen = new Set<string>();
    const rebuilt: TodoItem[] = [];
    for (const item of this.items) {
      const current = existing.get(item.id) ?? item;
      if (!seen.has(current.id)) {
        rebuilt.push(current);
        seen.add(current.id);
      }
    }
    this.items = rebuilt;
    return this.read();
  }

  read(): TodoItem[] {
    return this.items.map((t) => ({ ...t }));
  }

  summary(): TodoSummary {
    const s: TodoSummary = { total: this.items.length, pending: 0, in_progress: 0, completed: 0, cancelled: 0 };
    for (const t of this.items) s[t.status]++;
    return s;
  }

  /**
   * The list as the original re-injects it after context compression (todo_tool.py:87-118): only pending and
   * in_progress items; empty string when there are none.
   */
  formatForInjection(): string {
    const marker: Record<TodoStatus, string> = {
      completed: "[x]",
      in_progress: "[>]",
      pending: "[ ]",
      cancelled: "[~]",
    };
    const active = this.items.filter((t) => t.status === "pending" || t.status === "in_progress");
    if (active.length === 0) return "";
    const lines = active.map((t) => `- ${marker[t.status]} ${t.id}. ${t.content} (${t.status})`);
    return `[Your active task list was preserved across context compression]\n${lines.join("\n")}`;
  }
}

/** The item shape the model is shown. Items are normalised leniently (Hermes' semantics: merge takes partial items). */
const todoItem = lazy(() =>
  z.object({
    id: z.string().describe("Unique item id."),
    content: z.string().describe("What to do."),
    status: z.enum(TODO_STATUSES).describe("Current status."),
  }),
);

export const todoArgs = lazy(() =>
  z.object({
    todos: z
      .array(z.record(z.string(), z.unknown()), { error: "must be an array of {id, content, status} objects" })
      .meta({ items: toolParameters(todoItem()) })
      .optional()
      .describe("The task items to write."),
    merge: withDefault(
      booleanArg().optional().describe("Merge into the existing list by id instead of replacing it (default false)."),
      false,
    ),
  }),
);

/** Runs one `todo` call against the store. */
export function handleTodo(store: TodoStore, args: z.infer<ReturnType<typeof todoArgs>>): ToolResult {
  const { todos, merge } = args;
  const list = todos === undefined ? store.read() : store.write(todos, merge ?? false);
  return { content: { todos: list, summary: store.summary() } };
}

registry.register({
  name: "todo",
  toolset: "todo",
  emoji: "📋",
  schema: {
    name: "todo",
    description:
      "Manage your task list for the current task. Call with no arguments to read the list. Pass `todos` to write it: " +
      "by default the list is replaced; with merge=true, items are matched by id, only the given fields are updated, " +
      "and new ids are appended. Keep exactly one item in_progress while working; mark items completed as you finish them.",
  },
  args: todoArgs,
  loopTool: true,
  createState: () => new TodoStore(),
  handler: (args, _ctx, store) => handleTodo(store, args),
  effects: noEffects,
});
