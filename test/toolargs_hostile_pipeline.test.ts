/**
 * A hostile model's tool arguments through the real dispatch path (the pipeline a task's agent loop calls), in a
 * real `--env local` sandbox (bubblewrap): every call answers a JSON string, errors as `{"error": ...}`, bounded in
 * size (so the loop's cut at `maxToolResultChars` never turns a failure into text that counts as a success), and
 * no call stalls the task.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as z from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { registry, type ToolContext } from "../tools/registry.js";
import { isToolResultFailure } from "../src/report/tool_stats.js";
import "../tools/file_tools.js";
import "../tools/terminal_tool.js";
import "../tools/todo_tool.js";
import "../tools/memory_tool.js";
import "../tools/web_tools.js";
import { silentLogger } from "./helpers/local_ctx.js";

let root: string;
let env: SandboxEnvironment;
let ctx: ToolContext;
const allow = { gate: async () => ({ allowed: true }), records: [] };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "hb-toolargs-"));
  env = await SandboxEnvironment.create({ runName: "r", taskId: "toolargs", hostTaskDir: join(root, "task") }, {});
  await env.exec("printf 'a\\nb\\n' > f.txt; echo ok");
  ctx = { taskId: "toolargs", envKind: "local", getEnv: async () => env, logger: silentLogger };
});

afterAll(async () => {
  await env?.cleanup();
  rmSync(root, { recursive: true, force: true });
});

/** One call through a fresh pipeline (gate allowing everything: the sandbox is what stands in the way). */
async function call(name: string, args: Record<string, unknown> | string): Promise<string> {
  return createToolPipeline({ approval: allow }).call(name, args, ctx);
}

/** What the agent loop stores when a result is longer than its default cap (100,000 characters). */
const LOOP_CAP = 100_000;
const storedByLoop = (text: string) =>
  text.length <= LOOP_CAP ? text : `${text.slice(0, LOOP_CAP)}\n[Truncated: tool response was ${text.length} chars]`;

describe("argument errors stay short, whatever the model sent", () => {
  it("100,000 bad items in an array: the error names a few and counts the rest", async () => {
    const text = await call("todo", { todos: Array.from({ length: 100_000 }, (_, i) => `item ${i}`) });
    expect(text.length).toBeLessThan(2_000);
    const parsed = JSON.parse(text);
    expect(parsed.error).toMatch(/^Invalid arguments for todo: 'todos\.0': /);
    expect(parsed.error).toMatch(/and 99,990 more problems/);
  });

  it("web_extract with 10,000 bad URLs: the same bound", async () => {
    const text = await call("web_extract", { urls: Array.from({ length: 10_000 }, () => "not a url") });
    expect(text.length).toBeLessThan(2_000);
    expect(isToolResultFailure(text)).toBe(true);
  });
});

describe("a failure that echoes a huge argument is still a short JSON failure", () => {
  // Over every cap on the way (the loop's 100,000, the 2,000,000 of a search's output): 10,000,000 proves no more.
  const huge = "x".repeat(3_000_000);
  it.each([
    ["read_file", { path: huge }],
    ["patch", { path: huge, old_string: "a", new_string: "b" }],
    ["patch", { mode: huge }],
    ["search_files", { pattern: "a", path: huge }],
    ["process", { action: "poll", session_id: huge }],
  ])("%s %#", { timeout: 60_000 }, async (tool, args) => {
    const text = await call(tool, args);
    expect(text.length).toBeLessThan(LOOP_CAP / 2);
    // What the loop stores still parses and still counts as the failure it is.
    expect(isToolResultFailure(storedByLoop(text))).toBe(true);
    expect(JSON.stringify(JSON.parse(text))).toContain("characters cut");
  });
});

describe("a handler whose result cannot be serialised", () => {
  it("gets a JSON error from call(), not a rejected promise", async () => {
    registry.register({
      name: "toolargs_bigint",
      toolset: "toolargs_test",
      schema: { description: "returns a BigInt" },
      args: z.object({}),
      handler: () => ({ content: { n: 1n } }),
      effects: () => [],
    });
    try {
      const text = await call("toolargs_bigint", {});
      expect(JSON.parse(text).error).toMatch(/^Tool execution failed: TypeError: /);
    } finally {
      registry.deregister("toolargs_bigint");
    }
  });
});
