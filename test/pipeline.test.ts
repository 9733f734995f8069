/**
 * The tool-call pipeline in process: parsing, zod validation naming the field, the approval gate every
 * call passes (declared effects, and the gated environment of tools that declare nothing), dispatch,
 * result serialisation and hooks.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { createApprovalGate, type ApprovalGate } from "../tools/approval/gate.js";
import { ensureToolsLoaded } from "../tools/model_tools.js";
import { addToolHook } from "../tools/plugins.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { registry, ToolRegistry, type ToolContext, type ToolEntryInput } from "../tools/registry.js";
import { booleanArg, integerArg } from "../tools/tool_args.js";
import { localTask, silentLogger, type LocalTaskFixture } from "./helpers/local_ctx.js";

const noEnvCtx: ToolContext = {
  taskId: "task_0",
  envKind: "local",
  getEnv: () => Promise.reject(new Error("no environment in this test")),
  logger: silentLogger,
};

function registryWith(...tools: ToolEntryInput<any, any>[]): ToolRegistry {
  const r = new ToolRegistry();
  r.logger = silentLogger;
  for (const t of tools) r.register(t);
  return r;
}

const echoArgs = z.object({
  text: z.string().describe("What to echo."),
  times: integerArg({ min: 1, max: 3 }).optional().describe("How often."),
  loud: booleanArg().optional(),
});

const echo: ToolEntryInput<z.infer<typeof echoArgs>> = {
  name: "echo",
  toolset: "test",
  schema: { name: "echo", description: "Echoes." },
  args: echoArgs,
  effects: () => [],
  handler: (args) => ({ content: { echoed: args } }),
};

const fixtures: LocalTaskFixture[] = [];
afterEach(async () => {
  for (const f of fixtures.splice(0)) await f.dispose();
});
function fixture(): LocalTaskFixture {
  const f = localTask();
  fixtures.push(f);
  return f;
}

describe("arguments", () => {
  const pipeline = createToolPipeline({ registry: registryWith(echo) });
  const call = async (args: Record<string, unknown> | string) =>
    JSON.parse(await pipeline.call("echo", args, noEnvCtx));

  it("takes an object or the model's JSON text; empty text is no arguments", async () => {
    expect(await call({ text: "a" })).toEqual({ echoed: { text: "a" } });
    expect(await call('{"text":"b","times":"2","loud":"TRUE"}')).toEqual({
      echoed: { text: "b", times: 2, loud: true },
    });
    expect((await call("")).error).toBe(
      "Invalid arguments for echo: 'text': Invalid input: expected string, received undefined",
    );
  });

  it("unparsable text and a non-object are told to the model as such", async () => {
    expect((await call("{not json")).error).toMatch(
      /^Invalid JSON in the arguments of echo: .*Send the arguments as one JSON object\.$/,
    );
    expect(await call("[1]")).toEqual({ error: "Arguments of echo must be a JSON object, got an array" });
    expect(await call("3")).toEqual({ error: "Arguments of echo must be a JSON object, got number" });
    expect(await call("null")).toEqual({ error: "Arguments of echo must be a JSON object, got null" });
  });

  it("invalid arguments come back naming every bad field", async () => {
    expect(await call({ text: "a", times: 7 })).toEqual({ error: "Invalid arguments for echo: 'times': must be <= 3" });
    expect(await call({ text: 1, times: "soon", loud: "maybe" })).toEqual({
      error:
        "Invalid arguments for echo: 'text': Invalid input: expected string, received number; 'times': expected an integer; 'loud': expected true or false",
    });
  });

  it("the JSON Schema the model sees is derived from the zod schema", () => {
    expect(registryWith(echo).get("echo")!.schema).toEqual({
      name: "echo",
      description: "Echoes.",
      parameters: {
        type: "object",
        properties: {
          text: { type: "string", description: "What to echo." },
          times: { type: "integer", minimum: 1, maximum: 3, description: "How often." },
          loud: { type: "boolean" },
        },
        required: ["text"],
      },
    });
  });

  it("a plugin tool with a plain JSON Schema gets its arguments unvalidated", async () => {
    const plain: ToolEntryInput = {
      name: "plain",
      toolset: "test",
      schema: {
        name: "plain",
        description: "Plain.",
        parameters: { type: "object", properties: { n: { type: "integer" } } },
      },
      handler: (args) => JSON.stringify({ got: args }),
    };
    const reg = registryWith(plain);
    expect(reg.get("plain")!.schema.parameters).toEqual({ type: "object", properties: { n: { type: "integer" } } });
    expect(
      JSON.parse(await createToolPipeline({ registry: reg }).call("plain", { n: "x", extra: true }, noEnvCtx)),
    ).toEqual({
      got: { n: "x", extra: true },
    });
  });
});

describe("every built-in tool", () => {
  it("sends the model the same JSON Schema as before the zod conversion, byte for byte", async () => {
    await ensureToolsLoaded({ plugins: false });
    const before = JSON.parse(
      readFileSync(join(import.meta.dirname, "fixtures", "builtin_tool_schemas.json"), "utf8"),
    ) as Record<string, unknown>;
    for (const [name, schema] of Object.entries(before)) {
      expect(JSON.stringify(registry.get(name)!.schema), name).toBe(JSON.stringify(schema));
      expect(registry.get(name)!.args, `${name} validates with zod`).toBeDefined();
    }
  });

  it("declares its kind on the registration", async () => {
    await ensureToolsLoaded({ plugins: false });
    const envTools = registry
      .entries()
      .filter((e) => e.needsEnvironment)
      .map((e) => e.name);
    expect(envTools).toEqual(["patch", "process", "read_file", "search_files", "terminal", "write_file"]);
    expect(
      registry
        .entries()
        .filter((e) => e.loopTool)
        .map((e) => e.name),
    ).toEqual(["memory", "todo"]);
    // Each built-in declares what its calls do; only plugins rely on the gated environment.
    expect(
      registry
        .entries()
        .filter((e) => !e.effects)
        .map((e) => e.name),
    ).toEqual([]);
  });
});

describe("dispatch and the result at the edge", () => {
  it("unknown tools, tools not offered, and the registry's error wording", async () => {
    const reg = registryWith(
      echo,
      {
        ...echo,
        name: "boom",
        args: undefined,
        schema: { name: "boom", description: "x", parameters: { type: "object" } },
        handler: () => {
          throw new SyntaxError("bad");
        },
      },
      {
        ...echo,
        name: "nothing",
        args: undefined,
        schema: { name: "nothing", description: "x", parameters: { type: "object" } },
        handler: () => undefined as never,
      },
    );
    const p = createToolPipeline({ registry: reg });
    expect(JSON.parse(await p.call("nope", {}, noEnvCtx))).toEqual({ error: "Unknown tool: nope" });
    expect(JSON.parse(await p.call("boom", {}, noEnvCtx))).toEqual({
      error: "Tool execution failed: SyntaxError: bad",
    });
    expect(JSON.parse(await p.call("nothing", {}, noEnvCtx)).error).toBe(
      "Tool execution failed: TypeError: handler of nothing returned undefined, not a JSON string or a {content, error} result",
    );
    const offered = createToolPipeline({ registry: reg, allowedTools: new Set(["nothing", "boom"]) });
    expect(JSON.parse(await offered.call("echo", { text: "a" }, noEnvCtx))).toEqual({
      error: "Tool echo is not available in this task. Available: boom, nothing",
    });
  });

  it("serialises content, JSON text and failures with details only at the end", async () => {
    const reg = registryWith(
      echo,
      { ...echo, name: "text", handler: () => '{"raw": true}' },
      { ...echo, name: "fails", handler: () => ({ error: "File not found: x", details: { similar_files: ["y"] } }) },
    );
    const p = createToolPipeline({ registry: reg });
    expect(await p.run("echo", { text: "a" }, noEnvCtx)).toEqual({ content: { echoed: { text: "a" } } });
    expect(await p.call("text", { text: "a" }, noEnvCtx)).toBe('{"raw": true}');
    expect(await p.call("fails", { text: "a" }, noEnvCtx)).toBe('{"error":"File not found: x","similar_files":["y"]}');
  });

  it("runs pre hooks on validated arguments (they may short-circuit) and post hooks (they may replace the result)", async () => {
    const seen: string[] = [];
    const removers = [
      addToolHook({
        pre: (call) => {
          seen.push(`pre:${call.name}:${call.ctx.taskId}:${JSON.stringify(call.args)}`);
          if (call.args.text === "block") return JSON.stringify({ error: "blocked by policy" });
        },
        post: (call, result) => {
          seen.push(`post:${call.name}`);
          return JSON.stringify({ wrapped: JSON.parse(result) });
        },
      }),
      addToolHook({ post: () => undefined }),
    ];
    const p = createToolPipeline({ registry: registryWith(echo) });
    try {
      expect(JSON.parse(await p.call("echo", { text: "a", times: "2" }, noEnvCtx))).toEqual({
        wrapped: { echoed: { text: "a", times: 2 } },
      });
      expect(JSON.parse(await p.call("echo", { text: "block" }, noEnvCtx))).toEqual({ error: "blocked by policy" });
      expect(seen).toEqual(['pre:echo:task_0:{"text":"a","times":2}', "post:echo", 'pre:echo:task_0:{"text":"block"}']);
    } finally {
      removers.forEach((r) => r());
    }
    const crash = addToolHook({
      pre: () => {
        throw new Error("hook crashed");
      },
    });
    try {
      expect(JSON.parse(await p.call("echo", { text: "a" }, noEnvCtx))).toEqual({
        error: "Error executing echo: hook crashed",
      });
    } finally {
      crash();
    }
  });
});

describe("the approval gate", () => {
  const ran: string[] = [];
  const runner: ToolEntryInput<{ command: string }> = {
    name: "runner",
    toolset: "test",
    schema: { name: "runner", description: "Declares the command it runs." },
    args: z.object({ command: z.string() }),
    effects: (args) => [{ kind: "run", command: args.command, workdir: "/work/task" }],
    handler: (args) => {
      ran.push(args.command);
      return { content: { ran: args.command } };
    },
  };
  const reg = registryWith(runner);
  afterEach(() => {
    ran.length = 0;
  });

  it("policy deny: a flagged call is refused before the handler runs, and recorded", async () => {
    const approval = createApprovalGate({ policy: "deny", taskId: "t" });
    const p = createToolPipeline({ registry: reg, approval });
    const r = JSON.parse(await p.call("runner", { command: "git -C /srv/app reset --hard" }, noEnvCtx));
    expect(r.status).toBe("blocked");
    expect(r.error).toMatch(/^BLOCKED: .*git reset --hard.*approval policy is 'deny'/);
    expect(ran).toEqual([]);
    expect(p.approvals).toEqual([
      expect.objectContaining({
        command: "git -C /srv/app reset --hard",
        pattern: "git_reset_hard",
        decision: "deny",
        by: "policy",
      }),
    ]);
    expect(JSON.parse(await p.call("runner", { command: "ls" }, noEnvCtx))).toEqual({ ran: "ls" });
    expect(p.approvals).toHaveLength(1);
  });

  it("policy allow: the call runs and the decision is recorded", async () => {
    const p = createToolPipeline({ registry: reg, approval: createApprovalGate({ policy: "allow", taskId: "t" }) });
    expect(JSON.parse(await p.call("runner", { command: "git -C /srv/app reset --hard" }, noEnvCtx))).toEqual({
      ran: "git -C /srv/app reset --hard",
    });
    expect(p.approvals).toEqual([
      expect.objectContaining({ decision: "approve", by: "policy", reason: "approval policy is 'allow'" }),
    ]);
  });

  it("no approval service: fail-closed, with the reason recorded", async () => {
    const p = createToolPipeline({ registry: reg });
    const r = JSON.parse(await p.call("runner", { command: "git -C /srv/app reset --hard" }, noEnvCtx));
    expect(r).toEqual({
      error: expect.stringMatching(/^BLOCKED: .*and no approval service is configured\. Do NOT retry/),
      status: "blocked",
    });
    expect(ran).toEqual([]);
    expect(p.approvals).toEqual([
      expect.objectContaining({ decision: "deny", by: "policy", reason: "no approval service is configured" }),
    ]);
    expect(JSON.parse(await p.call("runner", { command: "echo harmless" }, noEnvCtx))).toEqual({
      ran: "echo harmless",
    });
  });

  it("a gate that fails denies", async () => {
    const broken: ApprovalGate = async () => {
      throw new Error("approver crashed");
    };
    const p = createToolPipeline({ registry: reg, approval: { gate: broken, records: [] } });
    const r = JSON.parse(await p.call("runner", { command: "ls" }, noEnvCtx));
    expect(r).toEqual({ error: "BLOCKED: approval failed (approver crashed); nothing was run", status: "blocked" });
    expect(ran).toEqual([]);
  });

  it("an unknown policy denies, naming the known ones", async () => {
    const p = createToolPipeline({
      registry: reg,
      approval: createApprovalGate({ policy: "yolo" as never, taskId: "t" }),
    });
    const r = JSON.parse(await p.call("runner", { command: "git -C /srv/app reset --hard" }, noEnvCtx));
    expect(r.error).toMatch(/unknown approval policy 'yolo'; known: allow, deny, interactive, smart/);
    expect(ran).toEqual([]);
  });
});

describe("a plugin tool that uses the environment and declares nothing", () => {
  /** Registered the way a plugin does: a plain JSON Schema, a handler returning JSON text, no effects. */
  const plugin: ToolEntryInput = {
    name: "plug_shell",
    toolset: "plug",
    schema: {
      name: "plug_shell",
      description: "Runs a shell command.",
      parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    },
    handler: async (args, ctx) => {
      const env = await ctx.getEnv();
      const r = await env.exec(String(args.command));
      return JSON.stringify({ exit_code: r.exitCode, output: r.stdout });
    },
  };
  const writer: ToolEntryInput = {
    ...plugin,
    name: "plug_write",
    schema: { ...plugin.schema, name: "plug_write" },
    handler: async (args, ctx) => {
      const env = await ctx.getEnv();
      await env.writeFile(String(args.command), "x");
      return JSON.stringify({ written: true });
    },
  };
  const reg = registryWith(plugin, writer);

  it("is gated: with no approval service a flagged command is denied and never runs", async () => {
    const t = fixture();
    const marker = join(t.taskDir, "marker");
    const p = createToolPipeline({ registry: reg });
    const r = JSON.parse(
      await p.call("plug_shell", { command: `touch ${marker} && git -C /srv/app reset --hard` }, t.ctx),
    );
    expect(r).toEqual({
      error: expect.stringMatching(/^BLOCKED: .*git reset --hard.*no approval service is configured/),
      status: "blocked",
    });
    expect(existsSync(marker)).toBe(false);
    expect(p.approvals).toEqual([
      expect.objectContaining({ command: `touch ${marker} && git -C /srv/app reset --hard`, decision: "deny" }),
    ]);
  });

  it("a harmless command runs; with an approving service a flagged one runs and is recorded", async () => {
    const t = fixture();
    const p = createToolPipeline({ registry: reg });
    expect(JSON.parse(await p.call("plug_shell", { command: "echo hi" }, t.ctx))).toEqual({
      exit_code: 0,
      output: "hi\n",
    });
    expect(p.approvals).toEqual([]);
    const marker = join(t.taskDir, "marker");
    const allowing = createToolPipeline({
      registry: reg,
      approval: createApprovalGate({ policy: "allow", taskId: "t" }),
    });
    const r = JSON.parse(
      await allowing.call("plug_shell", { command: `touch ${marker} && git -C /srv/app reset --hard` }, t.ctx),
    );
    expect(r.exit_code).not.toBe(0); // not a git repository: git fails, after touch ran
    expect(existsSync(marker)).toBe(true);
    expect(allowing.approvals).toEqual([expect.objectContaining({ decision: "approve", by: "policy" })]);
  });

  it("its writes through the environment are gated too", async () => {
    const t = fixture();
    const key = join(t.root, "home", ".ssh", "authorized_keys");
    const r = JSON.parse(await createToolPipeline({ registry: reg }).call("plug_write", { command: key }, t.ctx));
    expect(r.status).toBe("blocked");
    expect(existsSync(key)).toBe(false);
  });

  it("a plugin that declares its effects is judged on the declaration", async () => {
    const t = fixture();
    const declared = registryWith({
      ...plugin,
      effects: (args) => [
        { kind: "run", command: `${String(args.command)} && git -C /srv/app reset --hard`, workdir: t.taskDir },
      ],
    });
    const p = createToolPipeline({ registry: declared });
    const r = JSON.parse(await p.call("plug_shell", { command: "echo declared" }, t.ctx));
    expect(r.status).toBe("blocked");
    expect(p.approvals[0]!.command).toBe("echo declared && git -C /srv/app reset --hard");
  });
});
