/**
 * The built-in tool modules: each registers its tools at its top level when imported. A new tool module
 * is added here; `test/discovery.test.ts` fails when a module in this folder registers tools at top level
 * and is missing from this list (the compiler that checks it is a dev dependency, never loaded by a run).
 */
export const BUILTIN_TOOL_MODULES: readonly { name: string; load: () => Promise<unknown> }[] = [
  { name: "file_tools", load: () => import("./file_tools.js") },
  { name: "memory_tool", load: () => import("./memory_tool.js") },
  { name: "terminal_tool", load: () => import("./terminal_tool.js") },
  { name: "todo_tool", load: () => import("./todo_tool.js") },
  { name: "web_tools", load: () => import("./web_tools.js") },
];
