import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { discoverToolModules, moduleRegistersTools, registry, type Logger } from "../tools/registry.js";
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

describe("moduleRegistersTools", () => {
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

describe("discoverToolModules", () => {
  it("imports tool modules, skips helpers that only register inside a function, survives a broken module", async () => {
    const d = join(dir, "tools1");
    mkdirSync(d);
    writeFileSync(join(d, "a_tool.mjs"), toolModule("disc_alpha"));
    writeFileSync(
      join(d, "b_broken.mjs"),
      toolModule("disc_broken", "disc_test", "") + `throw new Error("missing optional dependency");\n`,
    );
    writeFileSync(join(d, "c_tool.mjs"), toolModule("disc_gamma"));
    writeFileSync(
      join(d, "helper.mjs"),
      `import { registry } from ${JSON.stringify(REGISTRY_URL)};
globalThis.__hbHelperImported = true;
export function registerLater() { registry.register({ name: "disc_helper" }); }
`,
    );
    writeFileSync(join(d, "notes.txt"), "registry.register({})");
    registered.push("disc_alpha", "disc_broken", "disc_gamma");

    const log = quietLogger();
    const report = await discoverToolModules(d, ".mjs", log);

    expect(report.loaded.map((f) => f.slice(d.length + 1))).toEqual(["a_tool.mjs", "c_tool.mjs"]);
    expect(report.failed).toHaveLength(1);
    expect(report.failed[0]!.file).toContain("b_broken.mjs");
    expect(report.failed[0]!.error).toContain("missing optional dependency");
    expect(log.warnings.some((w) => w.includes("b_broken.mjs"))).toBe(true);
    expect((globalThis as Record<string, unknown>).__hbHelperImported).toBeUndefined();
    // The fixture modules registered into the same registry instance the test imported.
    expect(registry.has("disc_alpha")).toBe(true);
    expect(registry.has("disc_gamma")).toBe(true);
    expect(registry.has("disc_helper")).toBe(false);
    const ctx = { taskId: "t", envKind: "local", getEnv: () => Promise.reject(new Error("none")), logger: log };
    expect(JSON.parse(await createToolPipeline().call("disc_gamma", {}, ctx))).toEqual({ from: "disc_gamma" });
  });

  it("returns an empty report for a missing folder", async () => {
    expect(await discoverToolModules(join(dir, "does-not-exist"), ".mjs")).toEqual({ loaded: [], failed: [] });
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
    writeFileSync(join(pluginDir, "bad_plugin.mjs"), `const { registry } = globalThis.hermesBatch;\nregistry.register(null);\n`);
    // An npm package, resolved from the given cwd's node_modules.
    const projectDir = join(dir, "project");
    const pkgDir = join(projectDir, "node_modules", "hb-test-plugin");
    mkdirSync(pkgDir, { recursive: true });
    writeFileSync(join(pkgDir, "package.json"), JSON.stringify({ name: "hb-test-plugin", type: "module", main: "index.js" }));
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
    expect(report.failed.map((f) => f.source.split("/").pop())).toEqual(["bad_plugin.mjs", "hb-no-such-plugin-package"]);
    expect(log.warnings.some((w) => w.includes("hb-no-such-plugin-package"))).toBe(true);
    expect(registry.toolsetOf("plug_echo")).toBe("plug_tools");
    expect(registry.has("plug_pkg")).toBe(true);
    expect(validateToolset("plug_bundle")).toBe(true);
    expect(resolveToolset("plug_bundle")).toEqual(["plug_echo", "web_extract", "web_search"]);
    expect(toolHooks().length).toBe(hooksBefore + 1);
  });
});
