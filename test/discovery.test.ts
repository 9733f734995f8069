import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { discoverBuiltinTools, importToolModules, registry, type Logger } from "../tools/registry.js";
import { BUILTIN_TOOL_MODULES } from "../tools/builtin_tools.js";
import { moduleRegistersTools } from "./helpers/registers_tools.js";
import { loadPlugins, toolHooks } from "../tools/plugins.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { resetToolsets, resolveToolset, validateToolset } from "../tools/toolsets.js";

const REGISTRY_URL = pathToFileURL(join(import.meta.dirname, "..", "tools", "registry.ts")).href;

function quietLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug: () => {}, info: () => {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
}

/** A tool module source registering `name`, importing the registry by absolute file URL. */
function toolModule(name: string, toolset = "disc_test", extraTop = ""): string {
  return `import { registry } from ${JSON.stringify(REGISTRY_URL)};
${extraTop}
registry.register({
  name: ${JSON.stringify(name)},
  toolset: ${JSON.stringify(toolset)},
  schema: { name: ${JSON.stringify(name)}, description: "fixture", parameters: { type: "object", properties: {} } },
  handler: () => JSON.stringify({ from: ${JSON.stringify(name)} }),
});
`;
}

let dir: string;
const registered: string[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hb-discovery-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  for (const n of registered.splice(0)) registry.deregister(n);
  resetToolsets();
});

describe("moduleRegistersTools (the check behind the built-in list)", () => {
  it("accepts top-level calls, including inside a top-level loop or block", () => {
    expect(moduleRegistersTools(`registry.register({ name: "a" });`)).toBe(true);
    expect(moduleRegistersTools(`for (const n of ["a", "b"]) { registry.register({ name: n }); }`)).toBe(true);
    expect(moduleRegistersTools(`if (process.env.X) registry.register({});`)).toBe(true);
  });

  it("rejects calls inside functions, arrows, classes, comments and strings", () => {
    expect(moduleRegistersTools(`export function setup() { registry.register({}); }`)).toBe(false);
    expect(moduleRegistersTools(`export const setup = () => registry.register({});`)).toBe(false);
    expect(moduleRegistersTools(`class A { m() { registry.register({}); } }`)).toBe(false);
    expect(moduleRegistersTools(`// registry.register({})\nconst s = "registry.register(";`)).toBe(false);
    expect(moduleRegistersTools(`other.register({});`)).toBe(false);
  });
});

describe("the built-in tool list", () => {
  it("names exactly the modules of tools/ that register tools at their top level", () => {
    const toolsDir = join(import.meta.dirname, "..", "tools");
    const registering = readdirSync(toolsDir)
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
      .filter((f) => moduleRegistersTools(readFileSync(join(toolsDir, f), "utf8"), f))
      .map((f) => f.replace(/\.ts$/, ""))
      .sort();
    expect(registering.length).toBeGreaterThan(3);
    expect(BUILTIN_TOOL_MODULES.map((m) => m.name).sort()).toEqual(registering);
  });

  it("registers the tools of every listed module", async () => {
    const report = await discoverBuiltinTools();
    expect(report.failed).toEqual([]);
    expect(report.loaded).toEqual(BUILTIN_TOOL_MODULES.map((m) => m.name));
    for (const name of ["read_file", "memory", "terminal", "todo", "web_search"])
      expect(registry.has(name), name).toBe(true);
  });
});

describe("importToolModules", () => {
  it("imports each module; a broken one is logged and reported, the others still register", async () => {
    const d = join(dir, "tools1");
    mkdirSync(d);
    writeFileSync(join(d, "a_tool.mjs"), toolModule("disc_alpha"));
    writeFileSync(
      join(d, "b_broken.mjs"),
      toolModule("disc_broken") + `throw new Error("missing optional dependency");\n`,
    );
    writeFileSync(join(d, "c_tool.mjs"), toolModule("disc_gamma"));
    registered.push("disc_alpha", "disc_broken", "disc_gamma");
    const load = (f: string) => () => import(pathToFileURL(join(d, f)).href);

    const log = quietLogger();
    const report = await importToolModules(
      [
        { name: "a_tool", load: load("a_tool.mjs") },
        { name: "b_broken", load: load("b_broken.mjs") },
        { name: "c_tool", load: load("c_tool.mjs") },
      ],
      log,
    );

    expect(report.loaded).toEqual(["a_tool", "c_tool"]);
    expect(report.failed).toEqual([{ file: "b_broken", error: "Error: missing optional dependency" }]);
    expect(log.warnings.some((w) => w.includes("b_broken"))).toBe(true);
    // The fixture modules registered into the same registry instance the test imported.
    expect(registry.has("disc_alpha")).toBe(true);
    expect(registry.has("disc_gamma")).toBe(true);
    const ctx = { taskId: "t", envKind: "local", getEnv: () => Promise.reject(new Error("none")), logger: log };
    expect(JSON.parse(await createToolPipeline().call("disc_gamma", {}, ctx))).toEqual({ from: "disc_gamma" });
  });
});

describe("loadPlugins", () => {
  it("loads folder plugins (global API and setup export) and npm packages; a bad one does not stop the rest", async () => {
    const pluginDir = join(dir, "plugins");
    mkdirSync(pluginDir);
    // Uses the API the loader puts on globalThis before importing plugins.
    writeFileSync(
      join(pluginDir, "echo_plugin.js"),
      `const { registry } = globalThis.hermesBatch;
registry.register({
  name: "plug_echo", toolset: "plug_tools",
  schema: { name: "plug_echo", description: "Echo.", parameters: { type: "object", properties: {} } },
  handler: (args) => JSON.stringify({ echo: args }),
});
export function setup(api) {
  api.registerToolset("plug_bundle", { description: "A plugin bundle", tools: ["plug_echo"], includes: ["web"] });
  api.addToolHook({ post: (call, result) => call.name === "plug_echo" ? result.replace("echo", "ECHO") : undefined });
}
`,
    );
    writeFileSync(
      join(pluginDir, "bad_plugin.mjs"),
      `const { registry } = globalThis.hermesBatch;\nregistry.register(null);\n`,
    );
    // Only files directly in the folder are plugins: a helper in a subfolder and other files are not imported.
    mkdirSync(join(pluginDir, "lib"));
    writeFileSync(join(pluginDir, "lib", "helper.js"), `globalThis.__hbHelperImported = true;\n`);
    writeFileSync(join(pluginDir, "notes.txt"), "registry.register({})");
    // An npm package, resolved from the given cwd's node_modules.
    const projectDir = join(dir, "project");
    const pkgDir = join(projectDir, "node_modules", "hb-test-plugin");
    mkdirSync(pkgDir, { recursive: true });
    writeFileSync(
      join(pkgDir, "package.json"),
      JSON.stringify({ name: "hb-test-plugin", type: "module", main: "index.js" }),
    );
    writeFileSync(
      join(pkgDir, "index.js"),
      `export default function (api) {
  api.registry.register({
    name: "plug_pkg", toolset: "plug_tools",
    schema: { name: "plug_pkg", description: "From a package.", parameters: { type: "object" } },
    handler: () => "{}",
  });
}
`,
    );
    registered.push("plug_echo", "plug_pkg");
    const hooksBefore = toolHooks().length;

    const log = quietLogger();
    const report = await loadPlugins({
      dirs: [pluginDir, join(dir, "no-such-dir")],
      packages: ["hb-no-such-plugin-package", "hb-test-plugin"],
      cwd: projectDir,
      logger: log,
    });

    expect(report.loaded.map((s) => s.split("/").pop())).toEqual(["echo_plugin.js", "hb-test-plugin"]);
    expect(report.failed.map((f) => f.source.split("/").pop())).toEqual([
      "bad_plugin.mjs",
      "hb-no-such-plugin-package",
    ]);
    expect(log.warnings.some((w) => w.includes("hb-no-such-plugin-package"))).toBe(true);
    expect(registry.toolsetOf("plug_echo")).toBe("plug_tools");
    expect(registry.has("plug_pkg")).toBe(true);
    expect(validateToolset("plug_bundle")).toBe(true);
    expect(resolveToolset("plug_bundle")).toEqual(["plug_echo", "web_extract", "web_search"]);
    expect(toolHooks().length).toBe(hooksBefore + 1);
    expect((globalThis as Record<string, unknown>).__hbHelperImported).toBeUndefined();
  });
});
