import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { handleMemory as memoryCall, memoryArgs, MemoryStore } from "../tools/memory_tool.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { registry } from "../tools/registry.js";
import { handleTodo as todoCall, todoArgs, TodoStore } from "../tools/todo_tool.js";
import "../tools/web_tools.js";
import { localTask } from "./helpers/local_ctx.js";
import { callTool } from "./helpers/tool_call.js";

/** The JSON text the model would see for a call on a store (arguments validated as the pipeline does). */
const handleTodo = (store: TodoStore, args: unknown) => JSON.stringify(todoCall(store, todoArgs().parse(args)).content);
const handleMemory = (store: MemoryStore, args: unknown) =>
  JSON.stringify(memoryCall(store, memoryArgs().parse(args)).content);

const task = localTask();
afterAll(() => task.dispose());

describe("todo", () => {
  it("reads with no params, replaces, and merges by id", () => {
    const store = new TodoStore();
    expect(JSON.parse(handleTodo(store, {}))).toEqual({
      todos: [],
      summary: { total: 0, pending: 0, in_progress: 0, completed: 0, cancelled: 0 },
    });
    const written = JSON.parse(
      handleTodo(store, {
        todos: [
          { id: "1", content: "explore", status: "in_progress" },
          { id: "2", content: "fix", status: "pending" },
        ],
      }),
    );
    expect(written.summary).toEqual({ total: 2, pending: 1, in_progress: 1, completed: 0, cancelled: 0 });

    const merged = JSON.parse(
      handleTodo(store, {
        todos: [
          { id: "1", status: "completed" },
          { id: "3", content: "test", status: "pending" },
        ],
        merge: true,
      }),
    );
    expect(merged.todos).toEqual([
      { id: "1", content: "explore", status: "completed" },
      { id: "2", content: "fix", status: "pending" },
      { id: "3", content: "test", status: "pending" },
    ]);

    const replaced = JSON.parse(handleTodo(store, { todos: [{ id: "9", content: "only", status: "cancelled" }] }));
    expect(replaced.todos).toEqual([{ id: "9", content: "only", status: "cancelled" }]);
    expect(replaced.summary.cancelled).toBe(1);
  });

  it("normalises bad items the way Hermes does", async () => {
    const store = new TodoStore();
    const r = JSON.parse(
      handleTodo(store, {
        todos: [
          { content: "", status: "doing" },
          { id: 7, content: "x", status: "completed" },
        ],
      }),
    );
    expect(r.todos).toEqual([
      { id: "?", content: "(no description)", status: "pending" },
      { id: "7", content: "x", status: "completed" },
    ]);
    expect(store.formatForInjection()).toBe(
      "[Your active task list was preserved across context compression]\n- [ ] ?. (no description) (pending)",
    );
    expect((await callTool("todo", { todos: "not a list" }, task.ctx)).error).toMatch(/'todos'/);
  });

  it("is a loop tool: each task's pipeline keeps its own list", async () => {
    const entry = registry.get("todo")!;
    expect([entry.toolset, entry.loopTool, entry.needsEnvironment]).toEqual(["todo", true, false]);
    const a = createToolPipeline();
    const b = createToolPipeline();
    await a.call("todo", { todos: [{ id: "1", content: "only in a", status: "pending" }] }, task.ctx);
    expect(JSON.parse(await a.call("todo", {}, task.ctx)).todos).toEqual([
      { id: "1", content: "only in a", status: "pending" },
    ]);
    expect(JSON.parse(await b.call("todo", "", task.ctx)).todos).toEqual([]);
  });
});

describe("memory", () => {
  it("adds, replaces and removes entries with usage", () => {
    const store = new MemoryStore();
    const added = JSON.parse(handleMemory(store, { action: "add", target: "memory", content: "repo uses pnpm" }));
    expect(added).toMatchObject({ success: true, target: "memory", entries: ["repo uses pnpm"], entry_count: 1 });
    expect(added.usage).toBe("0% — 14/2,200 chars");
    handleMemory(store, { action: "add", target: "memory", content: "tests: pnpm test" });
    expect(store.charCount("memory")).toBe("repo uses pnpm\n§\ntests: pnpm test".length);

    const replaced = JSON.parse(
      handleMemory(store, { action: "replace", target: "memory", old_text: "pnpm test", content: "tests: make check" }),
    );
    expect(replaced.entries).toEqual(["repo uses pnpm", "tests: make check"]);

    const ambiguous = JSON.parse(handleMemory(store, { action: "remove", target: "memory", old_text: "s" }));
    expect(ambiguous.success).toBe(false);
    expect(ambiguous.error).toBe("Multiple entries matched 's'. Be more specific.");

    const removed = JSON.parse(handleMemory(store, { action: "remove", target: "memory", old_text: "pnpm" }));
    expect(removed.entries).toEqual(["tests: make check"]);
    expect(JSON.parse(handleMemory(store, { action: "remove", target: "memory", old_text: "zzz" })).error).toBe(
      "No entry matched 'zzz'.",
    );
    // The user store is separate.
    expect(
      JSON.parse(handleMemory(store, { action: "add", target: "user", content: "prefers terse answers" })).usage,
    ).toBe("1% — 21/1,375 chars");
    expect(store.list("memory")).toEqual(["tests: make check"]);
  });

  it("enforces the char limits per target", () => {
    const store = new MemoryStore();
    const big = "x".repeat(1300);
    expect(JSON.parse(handleMemory(store, { action: "add", target: "user", content: big })).success).toBe(true);
    const over = JSON.parse(handleMemory(store, { action: "add", target: "user", content: "y".repeat(100) }));
    expect(over.success).toBe(false);
    expect(over.error).toMatch(/^Memory at 1,300\/1,375 chars\. Adding this entry \(100 chars\)/);
    expect(over.current_entries).toEqual([big]);
    expect(
      JSON.parse(handleMemory(store, { action: "add", target: "memory", content: "y".repeat(2000) })).success,
    ).toBe(true);
  });

  it("validates arguments, and each task's pipeline keeps its own notes", async () => {
    const p = createToolPipeline();
    expect(JSON.parse(await p.call("memory", { action: "add", target: "brain", content: "x" }, task.ctx)).error).toBe(
      "Invalid target 'brain'. Use 'memory' or 'user'.",
    );
    expect(
      JSON.parse(await p.call("memory", { action: "replace", target: "memory", content: "x" }, task.ctx)).error,
    ).toBe("old_text is required for 'replace' action.");
    expect(
      JSON.parse(await p.call("memory", { action: "add", target: "memory", content: "x" }, task.ctx)),
    ).toMatchObject({ success: true, entries: ["x"] });
    expect(
      JSON.parse(await p.call("memory", { action: "add", target: "memory", content: "y" }, task.ctx)).entries,
    ).toEqual(["x", "y"]);
    expect(
      JSON.parse(await createToolPipeline().call("memory", { action: "add", target: "memory", content: "z" }, task.ctx))
        .entries,
    ).toEqual(["z"]);
    expect(registry.get("memory")!.loopTool).toBe(true);
  });
});

describe("web tools", () => {
  let server: Server;
  let base: string;
  const requests: { path: string; auth: string | undefined; body: any }[] = [];
  const savedKey = process.env.FIRECRAWL_API_KEY;
  const savedUrl = process.env.FIRECRAWL_API_URL;

  beforeAll(async () => {
    server = createServer(async (req: IncomingMessage, res) => {
      let raw = "";
      for await (const chunk of req) raw += chunk;
      const body = raw ? JSON.parse(raw) : {};
      requests.push({ path: req.url ?? "", auth: req.headers.authorization, body });
      res.setHeader("content-type", "application/json");
      if (req.url === "/v1/search") {
        const data = Array.from({ length: body.limit }, (_, i) => ({
          title: `T${i}`,
          url: `https://example.test/${i}`,
          description: `D${i}`,
        }));
        res.end(JSON.stringify({ success: true, data }));
      } else if (req.url === "/v1/scrape") {
        if (String(body.url).includes("broken")) {
          res.statusCode = 500;
          res.end(JSON.stringify({ success: false, error: "upstream exploded" }));
        } else if (String(body.url).includes("huge")) {
          res.end(
            JSON.stringify({ success: true, data: { markdown: "m".repeat(30_000), metadata: { title: "Huge" } } }),
          );
        } else {
          res.end(
            JSON.stringify({ success: true, data: { markdown: `# Page ${body.url}`, metadata: { title: "Small" } } }),
          );
        }
      } else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  afterEach(() => {
    if (savedKey === undefined) delete process.env.FIRECRAWL_API_KEY;
    else process.env.FIRECRAWL_API_KEY = savedKey;
    if (savedUrl === undefined) delete process.env.FIRECRAWL_API_URL;
    else process.env.FIRECRAWL_API_URL = savedUrl;
  });

  it("are unavailable without FIRECRAWL_API_KEY", async () => {
    delete process.env.FIRECRAWL_API_KEY;
    const avail = await registry.availability(["web_search", "web_extract"]);
    expect(avail.get("web_search")).toEqual({ available: false, reason: "needs FIRECRAWL_API_KEY" });
    expect(avail.get("web_extract")?.available).toBe(false);
    expect((await registry.getDefinitions(["web_search", "web_extract"])).length).toBe(0);
    process.env.FIRECRAWL_API_KEY = "fc-test";
    expect((await registry.availability(["web_search"])).get("web_search")).toEqual({ available: true });
  });

  it("web_search calls the Firecrawl API with the key and returns results", async () => {
    process.env.FIRECRAWL_API_KEY = "fc-test";
    process.env.FIRECRAWL_API_URL = base;
    requests.length = 0;
    const r = await callTool("web_search", { query: "hermes agent", limit: 3 }, task.ctx);
    expect(r.success).toBe(true);
    expect(r.results).toEqual(
      [0, 1, 2].map((i) => ({ title: `T${i}`, url: `https://example.test/${i}`, description: `D${i}` })),
    );
    expect(requests).toEqual([
      { path: "/v1/search", auth: "Bearer fc-test", body: { query: "hermes agent", limit: 3 } },
    ]);
    expect((await callTool("web_search", {}, task.ctx)).error).toMatch(/'query'/);
  });

  it("web_extract reads up to 5 URLs, cuts long pages and reports per-URL errors", async () => {
    process.env.FIRECRAWL_API_KEY = "fc-test";
    process.env.FIRECRAWL_API_URL = base;
    requests.length = 0;
    const urls = [
      "https://a.test/",
      "https://b.test/huge",
      "https://c.test/broken",
      "https://d.test/",
      "https://e.test/",
      "https://f.test/",
    ];
    const r = await callTool("web_extract", { urls }, task.ctx);
    expect(r.results).toHaveLength(5);
    expect(requests).toHaveLength(5);
    expect(r.note).toMatch(/first 5/);
    expect(r.results[0]).toEqual({ url: "https://a.test/", title: "Small", content: "# Page https://a.test/" });
    expect(r.results[1].truncated).toBe(true);
    expect(r.results[1].content).toContain("showing 20000 of 30000 chars");
    expect(r.results[2].error).toMatch(/HTTP 500: upstream exploded/);
    expect(r.error).toBeUndefined();
    expect((await callTool("web_extract", { urls: ["not a url"] }, task.ctx)).error).toMatch(/'urls.0'/);
  });

  it("a failing server becomes an error result, never a throw", async () => {
    process.env.FIRECRAWL_API_KEY = "fc-test";
    process.env.FIRECRAWL_API_URL = `${base}/nothing-here`;
    const r = await callTool("web_search", { query: "x" }, task.ctx);
    expect(r.error).toMatch(/web_search failed: HTTP 404/);
    expect(JSON.stringify(r)).not.toContain("fc-test");
  });
});
