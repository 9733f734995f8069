import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ToolRegistry,
  type Logger,
  type OpenAITool,
  type ToolContext,
  type ToolEntryInput,
} from "../tools/registry.js";
import {
  clearToolDefinitionCache,
  ensureToolsLoaded,
  getToolDefinitions,
  providedToolsets,
  removeToolMentions,
  selectToolNames,
  toolNamesOf,
  toolsetStatus,
} from "../tools/model_tools.js";
import { ToolsetError, registerToolset, resetToolsets } from "../tools/toolsets.js";

const silent: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const ctx: ToolContext = {
  taskId: "task_0",
  envKind: "local",
  getEnv: () => Promise.reject(new Error("no environment in this test")),
  logger: silent,
};

const TERMINAL_DESCRIPTION = [
  "Run a shell command in the task's environment.",
  "Do not use cat or head to read files; use read_file instead. To search, prefer search_files over grep.",
  "For long jobs set background=true and check on them with the `process` tool.",
  "Apply a patch only after reading the file.",
].join(" ");

function fake(name: string, toolset: string, extra: Partial<ToolEntryInput> = {}): ToolEntryInput {
  return {
    name,
    toolset,
    schema: { name, description: `The ${name} tool.`, parameters: { type: "object", properties: {} } },
    handler: (args) => JSON.stringify({ tool: name, args }),
    ...extra,
  };
}

let reg: ToolRegistry;
let webKey = true;
let webChecks = 0;

function buildRegistry(): ToolRegistry {
  const r = new ToolRegistry();
  r.logger = silent;
  const webCheck = () => {
    webChecks++;
    return webKey;
  };
  r.register(fake("web_search", "web", { checkFn: webCheck }));
  r.register(fake("web_extract", "web", { checkFn: webCheck }));
  r.register(
    fake("terminal", "terminal", {
      schema: {
        name: "terminal",
        description: TERMINAL_DESCRIPTION,
        parameters: {
          type: "object",
          properties: {
            command: { type: "string", description: "The command. Never pipe into a pager." },
            background: { type: "boolean", description: "Run in the background. Poll it with the `process` tool." },
          },
          required: ["command"],
        },
      },
    }),
  );
  r.register(fake("process", "terminal"));
  for (const n of ["read_file", "write_file", "patch", "search_files"]) r.register(fake(n, "file"));
  r.register(fake("todo", "todo"));
  r.register(fake("memory", "memory"));
  return r;
}

beforeEach(() => {
  webKey = true;
  webChecks = 0;
  reg = buildRegistry();
});
afterEach(() => resetToolsets());

async function names(sel: Parameters<typeof getToolDefinitions>[0]): Promise<string[]> {
  return toolNamesOf(await getToolDefinitions(sel, { registry: reg }));
}

function descriptionOf(defs: OpenAITool[], name: string): string {
  return defs.find((d) => d.function.name === name)!.function.description;
}

describe("getToolDefinitions: selection rules", () => {
  it("neither enabled nor disabled: every registered, available tool", async () => {
    expect(await names({})).toEqual([
      "memory",
      "patch",
      "process",
      "read_file",
      "search_files",
      "terminal",
      "todo",
      "web_extract",
      "web_search",
      "write_file",
    ]);
  });

  it("enabled only: just those toolsets (legacy names too)", async () => {
    expect(await names({ enabledToolsets: ["terminal"] })).toEqual(["process", "terminal"]);
    expect(await names({ enabledToolsets: ["web_tools", "file"] })).toEqual([
      "patch",
      "read_file",
      "search_files",
      "web_extract",
      "web_search",
      "write_file",
    ]);
    expect(await names({ enabledToolsets: ["debugging"] })).toHaveLength(8);
  });

  it("an explicitly empty enabled list gives no tools (not all of them)", async () => {
    expect(await names({ enabledToolsets: [] })).toEqual([]);
  });

  it("disabled only: all minus those, also where composites include them", async () => {
    const got = await names({ disabledToolsets: ["terminal", "web"] });
    expect(got).toEqual(["memory", "patch", "read_file", "search_files", "todo", "write_file"]);
  });

  it("both: the enabled tools minus the disabled ones", async () => {
    expect(await names({ enabledToolsets: ["debugging"], disabledToolsets: ["web"] })).toEqual([
      "patch",
      "process",
      "read_file",
      "search_files",
      "terminal",
      "write_file",
    ]);
  });

  it("keeps tools of not-provided toolsets out without error", async () => {
    expect(await names({ enabledToolsets: ["vision", "terminal"] })).toEqual(["process", "terminal"]);
  });

  it("drops tools whose checkFn fails", async () => {
    webKey = false;
    expect(await names({ enabledToolsets: ["web", "todo"] })).toEqual(["todo"]);
  });

  it("throws a ToolsetError naming an unknown toolset", async () => {
    await expect(getToolDefinitions({ enabledToolsets: ["web", "nope"] }, { registry: reg })).rejects.toThrow(
      ToolsetError,
    );
    await expect(getToolDefinitions({ disabledToolsets: ["nope"] }, { registry: reg })).rejects.toThrow(
      /Unknown toolset: nope/,
    );
  });

  it("selectToolNames gives the names before availability filtering", () => {
    expect(selectToolNames({ enabledToolsets: ["safe"], disabledToolsets: ["vision"] })).toEqual([
      "image_generate",
      "mixture_of_agents",
      "web_extract",
      "web_search",
    ]);
  });
});

describe("getToolDefinitions: memo", () => {
  it("computes once per toolset combination (order and legacy names do not matter)", async () => {
    await getToolDefinitions({ enabledToolsets: ["web", "terminal"] }, { registry: reg });
    expect(webChecks).toBe(1);
    await getToolDefinitions({ enabledToolsets: ["terminal", "web_tools", "web"] }, { registry: reg });
    expect(webChecks).toBe(1);
    await getToolDefinitions({ enabledToolsets: ["web"] }, { registry: reg });
    expect(webChecks).toBe(2);
  });

  it("recomputes after the registry or a toolset changes, or the cache is cleared", async () => {
    webKey = false;
    expect(await names({ enabledToolsets: ["web"] })).toEqual([]);
    webKey = true;
    expect(await names({ enabledToolsets: ["web"] })).toEqual([]); // memoized
    clearToolDefinitionCache(reg);
    expect(await names({ enabledToolsets: ["web"] })).toEqual(["web_extract", "web_search"]);
    reg.register(fake("web_search", "web")); // replaced: no checkFn now
    webKey = false;
    expect(await names({ enabledToolsets: ["web"] })).toEqual(["web_search"]);
    registerToolset("web", { description: "w", tools: ["web_extract"] }, { override: true });
    expect(await names({ enabledToolsets: ["web"] })).toEqual([]);
  });

  it("hands out one frozen array per combination, which no caller can change", async () => {
    const first = await getToolDefinitions({ enabledToolsets: ["todo"] }, { registry: reg });
    expect(() => {
      (first[0]!.function as { description: string }).description = "mutated";
    }).toThrow(TypeError);
    const second = await getToolDefinitions({ enabledToolsets: ["todo"] }, { registry: reg });
    expect(second).toBe(first);
    expect(second[0]!.function.description).toBe("The todo tool.");
  });
});

describe("schema patching", () => {
  it("keeps descriptions whole when every mentioned tool is offered", async () => {
    const defs = await getToolDefinitions({}, { registry: reg });
    expect(descriptionOf(defs, "terminal")).toBe(TERMINAL_DESCRIPTION);
  });

  it("removes advice about tools that were filtered out", async () => {
    const defs = await getToolDefinitions({ enabledToolsets: ["terminal"] }, { registry: reg });
    const d = descriptionOf(defs, "terminal");
    expect(d).not.toMatch(/read_file|search_files/);
    expect(d).toContain("Run a shell command in the task's environment.");
    expect(d).toContain("`process` tool"); // still offered
    expect(d).toContain("Apply a patch only after reading the file."); // prose "patch" is not the tool
  });

  it("removes mentions of tools whose checkFn failed, in parameter descriptions too", async () => {
    reg.register(fake("process", "terminal", { checkFn: () => false }));
    const defs = await getToolDefinitions({ enabledToolsets: ["terminal", "file"] }, { registry: reg });
    const term = defs.find((d) => d.function.name === "terminal")!.function;
    expect(term.description).not.toContain("process");
    expect(term.description).toContain("use read_file instead");
    const props = (term.parameters as { properties: Record<string, { description: string }> }).properties;
    expect(props.background!.description).toBe("Run in the background.");
    expect(props.command!.description).toBe("The command. Never pipe into a pager.");
  });

  it("removes mentions of known-but-not-provided tools and falls back when nothing is left", async () => {
    reg.register(
      fake("todo", "todo", {
        schema: {
          name: "todo",
          description: "Use vision_analyze to look at screenshots.",
          parameters: { type: "object" },
        },
      }),
    );
    const defs = await getToolDefinitions({ enabledToolsets: ["todo"] }, { registry: reg });
    expect(descriptionOf(defs, "todo")).toBe("The todo tool.");
  });

  it("removeToolMentions drops list lines and sentences, keeps the rest", () => {
    const text = "Edit files.\n\nTips:\n- use read_file first\n- keep edits small\nThen run search_files. Done.";
    expect(removeToolMentions(text, ["read_file", "search_files"])).toBe(
      "Edit files.\n\nTips:\n- keep edits small\nDone.",
    );
    expect(removeToolMentions("Prefer web_search_v2 here.", ["web_search"])).toBe("Prefer web_search_v2 here.");
    expect(removeToolMentions("Call 'memory' to save.", ["memory"])).toBe("");
    expect(removeToolMentions("Uses memory carefully.", ["memory"])).toBe("Uses memory carefully.");
    expect(removeToolMentions("Ask the memory tool.", ["memory"])).toBe("");
  });
});

describe("what the build provides", () => {
  it("counts a toolset as provided by its own tools, not by borrowed ones", () => {
    const r = new ToolRegistry();
    r.logger = silent;
    r.register(fake("web_search", "web"));
    const provided = providedToolsets(r);
    expect(provided.has("web")).toBe(true);
    expect(provided.has("browser")).toBe(false); // includes web_search, but its own browser_* are missing
    expect(provided.has("safe")).toBe(true); // a bundle with web in it
    expect(provided.has("hermes-cli")).toBe(true);
    expect(provided.has("vision")).toBe(false);
    expect(provided.has("terminal")).toBe(false);
  });

  it("reports registered and available tools per toolset", async () => {
    webKey = false;
    const status = await toolsetStatus(reg);
    const web = status.find((s) => s.name === "web")!;
    expect(web).toEqual({
      name: "web",
      tools: ["web_extract", "web_search"],
      registered: ["web_extract", "web_search"],
      available: [],
      provided: true,
    });
    const vision = status.find((s) => s.name === "vision")!;
    expect(vision.provided).toBe(false);
  });
});

describe("ensureToolsLoaded", () => {
  it("loads once and returns the same report", async () => {
    const first = ensureToolsLoaded({ dirs: [], plugins: false });
    const second = ensureToolsLoaded();
    expect(second).toBe(first);
    const report = await first;
    expect(Array.isArray(report.builtins.loaded)).toBe(true);
    expect(report.plugins).toEqual({ loaded: [], failed: [] });
  });
});
