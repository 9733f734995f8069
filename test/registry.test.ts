import { describe, expect, it } from "vitest";
import { ToolRegistry, type Logger, type ToolContext, type ToolEntryInput } from "../tools/registry.js";
import { createToolPipeline } from "../tools/pipeline.js";

function capturingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug: () => {}, info: () => {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
}

function tool(name: string, toolset: string, extra: Partial<ToolEntryInput> = {}): ToolEntryInput {
  return {
    name,
    toolset,
    schema: { name, description: `The ${name} tool.`, parameters: { type: "object", properties: {} } },
    handler: () => JSON.stringify({ tool: name }),
    ...extra,
  };
}

const ctx: ToolContext = {
  taskId: "t1",
  envKind: "local",
  getEnv: () => Promise.reject(new Error("no environment in this test")),
  logger: capturingLogger(),
};

describe("ToolRegistry.register", () => {
  it("lets a later registration with a clashing name win, with a warning", async () => {
    const reg = new ToolRegistry();
    const log = capturingLogger();
    reg.logger = log;
    reg.register(tool("echo", "first", { handler: () => '"first"' }));
    reg.register(tool("echo", "second", { handler: () => '"second"' }));
    expect(reg.toolsetOf("echo")).toBe("second");
    expect(await createToolPipeline({ registry: reg }).call("echo", {}, ctx)).toBe('"second"');
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]).toContain("echo");
    expect(log.warnings[0]).toContain("later registration wins");
  });

  it("rejects a schema without parameters", () => {
    const reg = new ToolRegistry();
    expect(() =>
      reg.register({ ...tool("bad", "x"), schema: { name: "bad", description: "", parameters: undefined as never } }),
    ).toThrow(/parameters/);
  });

  it("forces schema.name to the registered name", async () => {
    const reg = new ToolRegistry();
    reg.register({ ...tool("real", "x"), schema: { name: "other", description: "d", parameters: { type: "object" } } });
    const defs = await reg.getDefinitions(["real"]);
    expect(defs[0]!.function.name).toBe("real");
  });
});

describe("ToolRegistry.getDefinitions", () => {
  it("skips unknown tools and tools whose checkFn is false or throws; sorts by name", async () => {
    const reg = new ToolRegistry();
    reg.register(tool("zeta", "a"));
    reg.register(tool("alpha", "a", { checkFn: () => true }));
    reg.register(tool("off", "a", { checkFn: () => false }));
    reg.register(
      tool("broken", "a", {
        checkFn: () => {
          throw new Error("no docker");
        },
      }),
    );
    reg.register(tool("async_off", "a", { checkFn: async () => false }));
    const defs = await reg.getDefinitions(["zeta", "off", "alpha", "broken", "async_off", "missing"]);
    expect(defs.map((d) => d.function.name)).toEqual(["alpha", "zeta"]);
    expect(defs[0]).toEqual({
      type: "function",
      function: { name: "alpha", description: "The alpha tool.", parameters: { type: "object", properties: {} } },
    });
    const avail = await reg.availability(["off", "broken", "missing"]);
    expect(avail.get("off")).toEqual({ available: false, reason: "check failed" });
    expect(avail.get("broken")?.reason).toContain("no docker");
    expect(avail.get("missing")?.available).toBe(false);
  });

  it("runs a checkFn shared by two tools once per call, and again on the next call", async () => {
    const reg = new ToolRegistry();
    let calls = 0;
    const shared = () => {
      calls++;
      return true;
    };
    reg.register(tool("web_search", "web", { checkFn: shared }));
    reg.register(tool("web_extract", "web", { checkFn: shared }));
    expect((await reg.getDefinitions(["web_search", "web_extract"])).length).toBe(2);
    expect(calls).toBe(1);
    await reg.getDefinitions(["web_search", "web_extract"]);
    expect(calls).toBe(2);
  });

  it("returns copies: mutating a definition does not change the registry", async () => {
    const reg = new ToolRegistry();
    reg.register(tool("echo", "x"));
    const [def] = await reg.getDefinitions(["echo"]);
    def!.function.description = "changed";
    expect((await reg.getDefinitions(["echo"]))[0]!.function.description).toBe("The echo tool.");
  });
});

/** One call through a pipeline over `reg` (the only way a handler runs). */
function dispatch(reg: ToolRegistry, name: string, args: Record<string, unknown>): Promise<string> {
  return createToolPipeline({ registry: reg }).call(name, args, ctx);
}

describe("dispatch through the pipeline", () => {
  it("wraps a throwing handler as Tool execution failed: <Type>: <message>", async () => {
    const reg = new ToolRegistry();
    class QuotaError extends Error {}
    reg.register(
      tool("boom", "x", {
        handler: () => {
          throw new TypeError("bad arg");
        },
      }),
    );
    reg.register(
      tool("quota", "x", {
        handler: () => {
          throw new QuotaError("over quota");
        },
      }),
    );
    expect(JSON.parse(await dispatch(reg, "boom", {}))).toEqual({ error: "Tool execution failed: TypeError: bad arg" });
    expect(JSON.parse(await dispatch(reg, "quota", {}))).toEqual({
      error: "Tool execution failed: QuotaError: over quota",
    });
  });

  it("awaits async handlers, including rejections", async () => {
    const reg = new ToolRegistry();
    reg.register(
      tool("slow", "x", {
        isAsync: true,
        handler: async (args) => {
          await new Promise((r) => setTimeout(r, 20));
          return JSON.stringify({ got: args.v });
        },
      }),
    );
    reg.register(tool("reject", "x", { handler: async () => Promise.reject(new RangeError("late")) }));
    expect(JSON.parse(await dispatch(reg, "slow", { v: 42 }))).toEqual({ got: 42 });
    expect(JSON.parse(await dispatch(reg, "reject", {}))).toEqual({ error: "Tool execution failed: RangeError: late" });
  });

  it("answers an unknown tool with an error result", async () => {
    const reg = new ToolRegistry();
    expect(JSON.parse(await dispatch(reg, "nope", {}))).toEqual({ error: "Unknown tool: nope" });
  });

  it("turns a handler that returns neither JSON text nor a result into an error", async () => {
    const reg = new ToolRegistry();
    reg.register(tool("obj", "x", { handler: (() => ({ ok: true })) as never }));
    reg.register(tool("num", "x", { handler: (() => 3) as never }));
    reg.register(tool("result", "x", { handler: () => ({ content: { ok: true } }) }));
    expect(JSON.parse(await dispatch(reg, "obj", {})).error).toBe(
      "Tool execution failed: TypeError: handler of obj returned an object, not a JSON string or a {content, error} result",
    );
    expect(JSON.parse(await dispatch(reg, "num", {})).error).toMatch(
      /^Tool execution failed: TypeError: handler of num returned number/,
    );
    expect(JSON.parse(await dispatch(reg, "result", {}))).toEqual({ ok: true });
  });

  it("passes args and ctx to the handler", async () => {
    const reg = new ToolRegistry();
    reg.register(tool("who", "x", { handler: (args, c) => JSON.stringify({ task: c.taskId, args }) }));
    expect(JSON.parse(await dispatch(reg, "who", { a: 1 }))).toEqual({ task: "t1", args: { a: 1 } });
  });
});
