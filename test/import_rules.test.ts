/**
 * The one-way import rule: `src/core` is a leaf; `tools/` and `toolset_distributions.ts` import nothing
 * of `src/` but `src/core`; extension layers never import the layers that use them.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** Project-relative targets of every static, dynamic and re-export specifier that starts with a dot. */
export function projectImports(file: string, source = readFileSync(file, "utf8")): string[] {
  const found: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
  for (const m of source.matchAll(re)) found.push(relative(ROOT, resolve(dirname(file), m[1]!)));
  return found;
}

function violations(files: string[], allowed: (target: string) => boolean): string[] {
  return files.flatMap((f) =>
    projectImports(f)
      .filter((t) => !allowed(t))
      .map((t) => `${relative(ROOT, f)} imports ${t}`),
  );
}

const under = (prefix: string) => (t: string) => t === prefix || t.startsWith(prefix + "/");

/** The folders that must form no cycle among themselves: one way through the batch code. */
const BATCH_FOLDERS = ["src/run", "src/store", "src/report", "src/shard", "src/formats"];

/** Folder → folders it imports, from every file under each folder. */
function folderGraph(folders: string[], importsOf: (folder: string) => string[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const folder of folders) {
    const targets = importsOf(folder)
      .map((t) => folders.find((f) => under(f)(t)))
      .filter((f): f is string => f !== undefined && f !== folder);
    graph.set(folder, new Set(targets));
  }
  return graph;
}

/** Every cycle of the graph, each as `a → b → a`, found by depth-first search from each node. */
export function folderCycles(graph: Map<string, Set<string>>): string[] {
  const cycles = new Set<string>();
  const walk = (start: string, node: string, path: string[]) => {
    for (const next of graph.get(node) ?? []) {
      if (next === start) cycles.add([...path, start].join(" → "));
      else if (!path.includes(next) && next > start) walk(start, next, [...path, next]);
    }
  };
  for (const start of [...graph.keys()].sort()) walk(start, start, [start]);
  return [...cycles];
}

describe("import rules", () => {
  it("src/core imports nothing of the project outside src/core", () => {
    expect(violations(tsFiles(join(ROOT, "src/core")), under("src/core"))).toEqual([]);
  });

  it("tools/ and toolset_distributions.ts import only tools/ and src/core", () => {
    const files = [...tsFiles(join(ROOT, "tools")), join(ROOT, "toolset_distributions.ts")];
    const ok = (t: string) => under("tools")(t) || under("src/core")(t);
    expect(violations(files, ok)).toEqual([]);
  });

  it("models, scheduler, store and report never import the runner, the commands or the CLI", () => {
    const files = ["src/models", "src/scheduler", "src/store", "src/report"].flatMap((d) => tsFiles(join(ROOT, d)));
    const banned = [
      under("src/run"),
      under("src/commands"),
      (t: string) => t === "src/cli.js" || t === "src/cli_main.js",
    ];
    expect(violations(files, (t) => !banned.some((b) => b(t)))).toEqual([]);
  });

  it("src/formats converts records: it imports only src/core (and itself)", () => {
    const ok = (t: string) => under("src/formats")(t) || under("src/core")(t);
    expect(violations(tsFiles(join(ROOT, "src/formats")), ok)).toEqual([]);
  });

  it("src/run, src/store, src/report, src/shard and src/formats import each other one way only (no folder cycle)", () => {
    const graph = folderGraph(BATCH_FOLDERS, (folder) => tsFiles(join(ROOT, folder)).flatMap((f) => projectImports(f)));
    expect(folderCycles(graph)).toEqual([]);
  });

  it("the cycle check finds a cycle through three folders (a rule that cannot fail is no rule)", () => {
    const graph = new Map([
      ["src/run", new Set(["src/shard"])],
      ["src/shard", new Set(["src/store"])],
      ["src/store", new Set(["src/run"])],
      ["src/report", new Set(["src/store"])],
    ]);
    expect(folderCycles(graph)).toEqual(["src/run → src/shard → src/store → src/run"]);
  });

  it("the scanner sees static, dynamic and re-export imports (a rule that cannot fail is no rule)", () => {
    const probe = join(ROOT, "tools", "probe.ts");
    const src = [
      'import { a } from "../src/run/runner.js";',
      'export { b } from "../src/store/jsonl_file.js";',
      'const m = await import("../src/models/factory.js");',
      'import "./side_effect.js";',
    ].join("\n");
    expect(projectImports(probe, src)).toEqual([
      "src/run/runner.js",
      "src/store/jsonl_file.js",
      "src/models/factory.js",
      "tools/side_effect.js",
    ]);
  });
});
