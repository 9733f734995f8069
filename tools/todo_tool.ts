/**
 * The `todo` tool (toolset "todo"): the agent's task list for one task, a loop tool: each task's
 * pipeline holds its own TodoStore.
 */
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { noEffects, registry, type ToolResult } from "./registry.js";
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

function normalizeStatus(value: unknown): TodoStatus {
  const s = typeof value === "string" ? value.trim().toLowerCase() : "";
  return (TODO_STATUSES as readonly string[]).includes(s) ? (s as TodoStatus) : "pending";
}

function normalizeId(value: unknown): string {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : "?";
}

function normalizeContent(value: unknown): string {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : "(no description)";
}

/** One task's todo list with Hermes' semantics (replace, or merge by id). */
export class TodoStore {
  private items: TodoItem[] = [];

  /** Replaces the list, or (merge) updates the given fields of existing ids and appends new ids. */
  write(todos: Record<string, unknown>[], merge = false): TodoItem[] {
    if (!merge) {
      this.items = todos.map((t) => ({
        id: normalizeId(t.id),
        content: normalizeContent(t.content),
        status: normalizeStatus(t.status),
      }));
      return this.read();
    }
    for (const t of todos) {
      const id = normalizeId(t.id);
      const existing = this.items.find((item) => item.id === id);
      if (existing) {
        if (typeof t.content === "string" && t.content.trim() !== "") existing.content = t.content.trim();
        if (t.status !== undefined) existing.status = normalizeStatus(t.status);
      } else {
        this.items.push({ id, content: normalizeContent(t.content), status: normalizeStatus(t.status) });
      }
    }
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

  /** The list as the loop re-injects it after context compression; empty string when there is none. */
  formatForInjection(): string {
    if (this.items.length === 0) return "";
    const marker: Record<TodoStatus, string> = {
      completed: "[x]",
      in_progress: "[>]",
      pending: "[ ]",
      cancelled: "[~]",
    };
    const lines = this.items.map((t) => `- ${marker[t.status]} ${t.id}. ${t.content}`);
    return `[Your task list was preserved across context compression]\n${lines.join("\n")}`;
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
