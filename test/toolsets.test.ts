import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../src/core/errors.js";
import {
  HERMES_CORE_TOOLS,
  LEGACY_TOOLSET_MAP,
  TOOLSETS,
  ToolsetError,
  listToolsets,
  registerToolset,
  resetToolsets,
  resolveToolset,
  resolveToolsets,
  syncToolsetsWithRegistry,
  toolsetInfo,
  toolsetsGeneration,
  validateToolset,
} from "../tools/toolsets.js";

afterEach(() => resetToolsets());

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected an error");
}

describe("built-in toolsets", () => {
  it("resolve to Hermes' tool names", () => {
    expect(resolveToolset("web")).toEqual(["web_extract", "web_search"]);
    expect(resolveToolset("terminal")).toEqual(["process", "terminal"]);
    expect(resolveToolset("file")).toEqual(["patch", "read_file", "search_files", "write_file"]);
    expect(resolveToolset("todo")).toEqual(["todo"]);
    expect(resolveToolset("memory")).toEqual(["memory"]);
    expect(resolveToolset("vision")).toEqual(["vision_analyze"]);
    expect(resolveToolset("image_gen")).toEqual(["image_generate"]);
    expect(resolveToolset("moa")).toEqual(["mixture_of_agents"]);
    // The original's current browser toolset: browser_close gone, console/cdp/dialog added, no web_search.
    expect(resolveToolset("browser")).toEqual([
      "browser_back",
      "browser_cdp",
      "browser_click",
      "browser_console",
      "browser_dialog",
      "browser_get_images",
      "browser_navigate",
      "browser_press",
      "browser_scroll",
      "browser_snapshot",
      "browser_type",
      "browser_vision",
    ]);
  });

  it("composes scenario sets through includes, sorted and deduplicated", () => {
    expect(resolveToolset("debugging")).toEqual([
      "patch",
      "process",
      "read_file",
      "search_files",
      "terminal",
      "web_extract",
      "web_search",
      "write_file",
    ]);
    expect(resolveToolset("safe")).toEqual([
      "image_generate",
      "mixture_of_agents",
      "vision_analyze",
      "web_extract",
      "web_search",
    ]);
    expect(resolveToolset("safe")).not.toContain("terminal");
    expect(resolveToolset("hermes-cli")).toEqual([...HERMES_CORE_TOOLS].sort());
  });

  it("treats all and * as every toolset", () => {
    const every = new Set(listToolsets().flatMap((n) => resolveToolset(n)));
    expect(resolveToolset("all")).toEqual([...every].sort());
    expect(resolveToolset("*")).toEqual(resolveToolset("all"));
    expect(validateToolset("all")).toBe(true);
    expect(validateToolset("*")).toBe(true);
  });

  it("maps legacy *_tools names", () => {
    expect(LEGACY_TOOLSET_MAP.web_tools).toBe("web");
    expect(resolveToolset("web_tools")).toEqual(resolveToolset("web"));
    expect(resolveToolset("terminal_tools")).toEqual(resolveToolset("terminal"));
    expect(resolveToolset("file_tools")).toEqual(resolveToolset("file"));
    expect(resolveToolset("image_tools")).toEqual(["image_generate"]);
    expect(validateToolset("browser_tools")).toBe(true);
    expect(toolsetInfo("moa_tools").name).toBe("moa");
  });

  it("reports an unknown name with the known ones, as a UserError", () => {
    expect(validateToolset("nope")).toBe(false);
    const err = errorOf(() => resolveToolset("nope"));
    expect(err).toBeInstanceOf(ToolsetError);
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).toMatch(/^Unknown toolset: nope\. Known toolsets: .*\bdebugging\b.*\bweb\b/);
    expect(() => resolveToolsets(["web", "nope"])).toThrow(/Unknown toolset: nope/);
    expect(validateToolset("constructor")).toBe(false);
    expect(() => resolveToolset("constructor")).toThrow(ToolsetError);
  });

  it("gives toolset info", () => {
    expect(toolsetInfo("debugging")).toEqual({
      name: "debugging",
      description: TOOLSETS.debugging!.description,
      directTools: ["terminal", "process"],
      includes: ["web", "file"],
      resolvedTools: resolveToolset("debugging"),
      toolCount: 8,
      isComposite: true,
    });
    expect(toolsetInfo("web").isComposite).toBe(false);
  });

  it("returns fresh arrays: a caller's change does not reach the memo", () => {
    const first = resolveToolset("web");
    first.push("hacked");
    expect(resolveToolset("web")).toEqual(["web_extract", "web_search"]);
  });
});

describe("includes: diamonds and cycles", () => {
  it("resolves a diamond once per tool", () => {
    registerToolset("d_base", { description: "base", tools: ["t_base"] });
    registerToolset("d_left", { description: "left", tools: ["t_left"], includes: ["d_base"] });
    registerToolset("d_right", { description: "right", tools: ["t_right"], includes: ["d_base", "web_tools"] });
    registerToolset("d_top", { description: "top", includes: ["d_left", "d_right"] });
    expect(resolveToolset("d_top")).toEqual(["t_base", "t_left", "t_right", "web_extract", "web_search"]);
  });

  it("names the cycle when resolving", () => {
    TOOLSETS.c_a = { description: "a", tools: ["x"], includes: ["c_b"] };
    TOOLSETS.c_b = { description: "b", tools: [], includes: ["c_c"] };
    TOOLSETS.c_c = { description: "c", tools: [], includes: ["c_a"] };
    const err = errorOf(() => resolveToolset("c_b"));
    expect(err).toBeInstanceOf(ToolsetError);
    expect(err.message).toBe("Toolset include cycle: c_b → c_c → c_a → c_b");
  });

  it("names a self-include", () => {
    TOOLSETS.selfish = { description: "s", tools: [], includes: ["selfish"] };
    expect(() => resolveToolset("selfish")).toThrow("Toolset include cycle: selfish → selfish");
  });

  it("rejects a registration that closes a cycle and keeps the old definition", () => {
    registerToolset("r_b", { description: "b", tools: ["tb"] });
    registerToolset("r_a", { description: "a", tools: ["ta"], includes: ["r_b"] });
    expect(() => registerToolset("r_b", { description: "b2", includes: ["r_a"] }, { override: true })).toThrow(
      "Toolset include cycle: r_b → r_a → r_b",
    );
    expect(resolveToolset("r_a")).toEqual(["ta", "tb"]);
    expect(TOOLSETS.r_b!.description).toBe("b");
  });

  it("names the including toolset of an unknown include", () => {
    TOOLSETS.dangling = { description: "d", tools: [], includes: ["ghost"] };
    expect(() => resolveToolset("dangling")).toThrow(/Unknown toolset: ghost \(included by 'dangling'\)/);
  });
});

describe("registerToolset", () => {
  it("validates names and definitions, refuses duplicates without override", () => {
    expect(() => registerToolset("all", { description: "x" })).toThrow(/Invalid toolset name 'all'/);
    expect(() => registerToolset("web_tools", { description: "x" })).toThrow(/reserved/);
    expect(() => registerToolset("has space", { description: "x" })).toThrow(/Invalid toolset name/);
    expect(() => registerToolset("ok", { description: "" })).toThrow(/Invalid toolset 'ok': description/);
    expect(() => registerToolset("web", { description: "mine" })).toThrow(/already exists/);
    expect(() => registerToolset("bad_inc", { description: "x", includes: ["ghost"] })).toThrow(
      /Unknown toolset: ghost/,
    );
    expect(validateToolset("bad_inc")).toBe(false);
  });

  it("invalidates memoized resolutions that depend on a replaced toolset", () => {
    const gen = toolsetsGeneration();
    expect(resolveToolset("debugging")).toContain("web_search");
    registerToolset("web", { description: "smaller web", tools: ["web_search"] }, { override: true });
    expect(toolsetsGeneration()).toBeGreaterThan(gen);
    expect(resolveToolset("debugging")).toContain("web_search");
    expect(resolveToolset("debugging")).not.toContain("web_extract");
  });
});

describe("syncToolsetsWithRegistry", () => {
  it("creates toolsets for unknown ones and adds unlisted tools to known ones", () => {
    const changed = syncToolsetsWithRegistry([
      { name: "terminal", toolset: "terminal" },
      { name: "kanban_add", toolset: "kanban" },
      { name: "web_fetch_pdf", toolset: "web" },
      { name: "legacy_thing", toolset: "file_tools" },
    ]);
    expect(changed).toEqual(["file", "kanban", "web"]);
    expect(resolveToolset("kanban")).toEqual(["kanban_add"]);
    expect(resolveToolset("web")).toEqual(["web_extract", "web_fetch_pdf", "web_search"]);
    expect(resolveToolset("debugging")).toContain("web_fetch_pdf");
    expect(resolveToolset("file")).toContain("legacy_thing");
  });
});
