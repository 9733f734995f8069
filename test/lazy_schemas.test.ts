import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { ToolRegistry, type ToolContext } from "../tools/registry.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { toolParameters } from "../tools/tool_args.js";
import { registerToolset, resetToolsets } from "../tools/toolsets.js";
import { silentLogger } from "./helpers/local_ctx.js";

const ctx: ToolContext = {
  taskId: "t1",
  envKind: "local",
  getEnv: () => Promise.reject(new Error("no environment in this test")),
  logger: silentLogger,
};

describe("lazy()", () => {
  it("builds the value on the first call only, and returns that value every time", () => {
    let builds = 0;
    const value = lazy(() => ({ n: ++builds }));
    expect(builds).toBe(0);
    const first = value();
    expect(value()).toBe(first);
    expect(builds).toBe(1);
  });

  it("keeps a built value that is undefined", () => {
    let builds = 0;
    const value = lazy(() => {
      builds++;
      return undefined;
    });
    value();
    value();
    expect(builds).toBe(1);
  });
});

describe("a tool whose args are given as a function", () => {
  function register() {
    let builds = 0;
    const args = () => {
      builds++;
      return z.object({ count: z.number().int().min(1).describe("How many.") });
    };
    const reg = new ToolRegistry();
    reg.logger = silentLogger;
    reg.register({
      name: "count",
      toolset: "demo",
      schema: { description: "Counts." },
      args,
      handler: (a: { count: number }) => JSON.stringify({ got: a.count }),
    });
    return { reg, builds: () => builds, args };
  }

  it("is registered without building the schema", () => {
    const { reg, builds } = register();
    expect(reg.has("count")).toBe(true);
    expect(builds()).toBe(0);
  });

  it("offers the model the JSON Schema of the built zod schema, building it once", () => {
    const { reg, builds, args } = register();
    const entry = reg.get("count")!;
    expect(entry.schema.parameters).toEqual(toolParameters(args()));
    expect(entry.args).toBe(entry.args);
    expect(builds()).toBe(2); // once for the registry, once for this test's own copy above
  });

  it("validates calls against it, with the usual error for a bad argument", async () => {
    const { reg, builds } = register();
    const pipeline = createToolPipeline({ registry: reg });
    expect(await pipeline.call("count", { count: "3" }, ctx)).toContain("Invalid arguments for count");
    expect(await pipeline.call("count", { count: 3 }, ctx)).toBe('{"got":3}');
    expect(builds()).toBe(1);
  });
});

describe("getOfferedToolNames", () => {
  afterEach(() => resetToolsets());

  it("names the tools getToolDefinitions gives, in its order, without building their JSON Schemas", async () => {
    const { getOfferedToolNames, getToolDefinitions } = await import("../tools/model_tools.js");
    registerToolset("offered_names_demo", { description: "Demo tools.", tools: ["zeta", "alpha", "hidden"] });
    let builds = 0;
    const reg = new ToolRegistry();
    reg.logger = silentLogger;
    for (const [name, available] of [
      ["zeta", true],
      ["alpha", true],
      ["hidden", false],
    ] as const) {
      reg.register({
        name,
        toolset: "offered_names_demo",
        schema: { description: `The ${name} tool.` },
        args: () => {
          builds++;
          return z.object({ n: z.number() });
        },
        checkFn: () => available,
        handler: () => "{}",
      });
    }
    const sel = { enabledToolsets: ["offered_names_demo"] };
    const names = await getOfferedToolNames(sel, { registry: reg });
    expect(names).toEqual(["alpha", "zeta"]);
    expect(builds).toBe(0);
    const defs = await getToolDefinitions(sel, { registry: reg });
    expect(defs.map((d) => d.function.name)).toEqual(names);
    await expect(getOfferedToolNames({ enabledToolsets: ["no_such_toolset"] }, { registry: reg })).rejects.toThrow(
      /no_such_toolset/,
    );
  });
});
