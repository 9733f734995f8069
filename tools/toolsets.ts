/**
 * Toolsets: named bundles of tools, composed through `includes`.
 *
 * The names follow Hermes so that distributions, configs and dataset rows written for Hermes keep working.
 * Some toolsets (vision, image_gen, moa, browser) are known but not provided by this build: their names
 * validate, but no module registers their tools, so they resolve to names the registry filters out.
 */
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { UserError } from "../src/core/errors.js";
import { BROWSER_TOOLS, HERMES_TOOL_NAMES } from "../src/core/hermes_tool_names.js";

export interface ToolsetDef {
  description: string;
  tools: string[];
  includes: string[];
}

export interface ToolsetInfo {
  name: string;
  description: string;
  directTools: string[];
  includes: string[];
  resolvedTools: string[];
  toolCount: number;
  isComposite: boolean;
}

/** Bad toolset name or definition; a UserError, so the CLI prints one line and exits 2. */
export class ToolsetError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = "ToolsetError";
  }
}

/** The tools this build provides, and the `hermes-cli` preset. */
export const HERMES_CORE_TOOLS: readonly string[] = Object.freeze([
  "web_search",
  "web_extract",
  "terminal",
  "process",
  "read_file",
  "write_file",
  "patch",
  "search_files",
  "todo",
  "memory",
]);

export { BROWSER_TOOLS, HERMES_TOOL_NAMES };

/** Toolsets whose tools no module of this build registers (names kept so Hermes recipes validate). */
export const NOT_PROVIDED_TOOLSETS: ReadonlySet<string> = new Set(["vision", "image_gen", "moa", "browser"]);

const ts = (description: string, tools: readonly string[], includes: string[] = []): ToolsetDef => ({
  description,
  tools: [...tools],
  includes,
});

const BUILTIN_TOOLSETS: Record<string, ToolsetDef> = {
  web: ts("Web research: search the web and extract page content", ["web_search", "web_extract"]),
  terminal: ts("Shell commands and background processes in the task's environment", ["terminal", "process"]),
  file: ts("Read, write, patch and search files in the task's environment", [
    "read_file",
    "write_file",
    "patch",
    "search_files",
  ]),
  todo: ts("A task list the agent keeps for itself (handled by the agent loop)", ["todo"]),
  memory: ts("Persistent memory notes (handled by the agent loop)", ["memory"]),
  vision: ts("Image analysis (not provided by this build)", ["vision_analyze"]),
  image_gen: ts("Image generation (not provided by this build)", ["image_generate"]),
  moa: ts("Mixture of agents: several models and an aggregator (not provided by this build)", ["mixture_of_agents"]),
  browser: ts("Browser automation (not provided by this build)", BROWSER_TOOLS),
  // Scenario sets.
  debugging: ts("Debugging: terminal and processes, with web and file tools", ["terminal", "process"], ["web", "file"]),
  coding: ts("Coding: terminal, file tools and a task list", [], ["terminal", "file", "todo"]),
  safe: ts(
    "Everything except the terminal: web, vision, image generation, mixture of agents",
    ["mixture_of_agents"],
    ["web", "vision", "image_gen"],
  ),
  // Presets.
  "hermes-cli": ts("The core tools of this build", HERMES_CORE_TOOLS),
};

/** Hermes' pre-toolset `*_tools` names, mapped to the toolsets that replaced them. */
export const LEGACY_TOOLSET_MAP: Readonly<Record<string, string>> = Object.freeze({
  web_tools: "web",
  terminal_tools: "terminal",
  file_tools: "file",
  vision_tools: "vision",
  moa_tools: "moa",
  image_tools: "image_gen",
  browser_tools: "browser",
  todo_tools: "todo",
  memory_tools: "memory",
});

const ALL_ALIASES = new Set(["all", "*"]);

/** Every toolset definition, built-in and registered (by plugins or tool modules). */
export const TOOLSETS: Record<string, ToolsetDef> = structuredClone(BUILTIN_TOOLSETS);

let memo = new Map<string, readonly string[]>();
let generation = 0;

function invalidate(): void {
  memo = new Map();
  generation++;
}

/** Toolset names, sorted (legacy aliases and `all` not included). */
export function listToolsets(): string[] {
  return Object.keys(TOOLSETS).sort();
}

/** The modern name for a legacy `*_tools` name; other names unchanged. */
export function canonicalToolsetName(name: string): string {
  return LEGACY_TOOLSET_MAP[name] ?? name;
}

export function validateToolset(name: string): boolean {
  return ALL_ALIASES.has(name) || Object.hasOwn(TOOLSETS, canonicalToolsetName(name));
}

function unknownToolset(name: string, via?: string): ToolsetError {
  const where = via ? ` (included by '${via}')` : "";
  return new ToolsetError(`Unknown toolset: ${name}${where}. Known toolsets: ${listToolsets().join(", ")}, all`);
}

/**
 * The sorted tool names of a toolset, its includes resolved recursively. `all` / `*` is every toolset.
 * Throws ToolsetError for an unknown name or an include cycle (the message names the cycle).
 */
export function resolveToolset(name: string): string[] {
  if (ALL_ALIASES.has(name)) {
    const union = new Set<string>();
    for (const n of listToolsets()) for (const t of resolveInner(n, [])) union.add(t);
    return [...union].sort();
  }
  if (!validateToolset(name)) throw unknownToolset(name);
  return [...resolveInner(canonicalToolsetName(name), [])];
}

function resolveInner(name: string, path: string[]): readonly string[] {
  const cached = memo.get(name);
  if (cached) return cached;
  const cycleStart = path.indexOf(name);
  if (cycleStart >= 0) {
    throw new ToolsetError(`Toolset include cycle: ${[...path.slice(cycleStart), name].join(" → ")}`);
  }
  const def = Object.hasOwn(TOOLSETS, name) ? TOOLSETS[name] : undefined;
  if (!def) throw unknownToolset(name, path.at(-1));
  const tools = new Set(def.tools);
  for (const inc of def.includes) {
    const target = canonicalToolsetName(inc);
    if (ALL_ALIASES.has(target)) throw new ToolsetError(`Toolset '${name}' may not include '${inc}'`);
    for (const t of resolveInner(target, [...path, name])) tools.add(t);
  }
  const resolved = Object.freeze([...tools].sort());
  memo.set(name, resolved);
  return resolved;
}

/** Resolves several toolsets and returns the sorted union of their tools. */
export function resolveToolsets(names: Iterable<string>): string[] {
  const union = new Set<string>();
  for (const n of names) for (const t of resolveToolset(n)) union.add(t);
  return [...union].sort();
}

export function toolsetInfo(name: string): ToolsetInfo {
  if (!validateToolset(name)) throw unknownToolset(name);
  const resolvedTools = resolveToolset(name);
  if (ALL_ALIASES.has(name)) {
    return {
      name,
      description: "Every toolset",
      directTools: [],
      includes: listToolsets(),
      resolvedTools,
      toolCount: resolvedTools.length,
      isComposite: true,
    };
  }
  const canonical = canonicalToolsetName(name);
  const def = TOOLSETS[canonical]!;
  return {
    name: canonical,
    description: def.description,
    directTools: [...def.tools],
    includes: [...def.includes],
    resolvedTools,
    toolCount: resolvedTools.length,
    isComposite: def.includes.length > 0,
  };
}

const toolsetNameSchema = lazy(() =>
  z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "a toolset name is letters, digits, '_', '.', '-'")
    .refine((n) => !ALL_ALIASES.has(n) && !Object.hasOwn(LEGACY_TOOLSET_MAP, n), "reserved toolset name"),
);

const toolsetDefSchema = lazy(() =>
  z.object({
    description: z.string().min(1),
    tools: z.array(z.string().min(1)).default([]),
    includes: z.array(z.string().min(1)).default([]),
  }),
);

/**
 * Adds a toolset at run time (plugins). Replacing an existing one needs `override`. Includes are checked
 * now, so a cycle or an unknown include is reported at registration, and the old definition is kept.
 */
export function registerToolset(
  name: string,
  def: { description: string; tools?: string[]; includes?: string[] },
  opts: { override?: boolean } = {},
): void {
  const nameCheck = toolsetNameSchema().safeParse(name);
  if (!nameCheck.success)
    throw new ToolsetError(`Invalid toolset name '${name}': ${nameCheck.error.issues[0]?.message}`);
  const parsed = toolsetDefSchema().safeParse(def);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ToolsetError(`Invalid toolset '${name}': ${issue?.path.join(".") || "definition"}: ${issue?.message}`);
  }
  if (Object.hasOwn(TOOLSETS, name) && !opts.override) {
    throw new ToolsetError(`Toolset '${name}' already exists (pass override to replace it)`);
  }
  const previous = TOOLSETS[name];
  TOOLSETS[name] = {
    description: parsed.data.description,
    tools: [...parsed.data.tools],
    includes: [...parsed.data.includes],
  };
  invalidate();
  try {
    resolveInner(name, []);
  } catch (err) {
    if (previous) TOOLSETS[name] = previous;
    else delete TOOLSETS[name];
    invalidate();
    throw err;
  }
}

/**
 * Makes every registered tool reachable through its toolset: a tool whose toolset is unknown gets a new
 * toolset; a tool missing from its (known) toolset's list is added to it. Returns the toolsets changed.
 */
export function syncToolsetsWithRegistry(entries: Iterable<{ name: string; toolset: string }>): string[] {
  const changed = new Set<string>();
  for (const { name, toolset } of entries) {
    const key = canonicalToolsetName(toolset);
    if (ALL_ALIASES.has(key)) continue;
    const def = Object.hasOwn(TOOLSETS, key) ? TOOLSETS[key] : undefined;
    if (!def) {
      TOOLSETS[key] = { description: `Tools registered in toolset '${key}'`, tools: [name], includes: [] };
      changed.add(key);
    } else if (!def.tools.includes(name)) {
      def.tools.push(name);
      changed.add(key);
    }
  }
  if (changed.size > 0) invalidate();
  return [...changed].sort();
}

/** Every tool name any toolset mentions (registered or not). */
export function allKnownToolNames(): string[] {
  return resolveToolset("all");
}

/** Back to the built-in definitions (tests). */
export function resetToolsets(): void {
  for (const k of Object.keys(TOOLSETS)) delete TOOLSETS[k];
  Object.assign(TOOLSETS, structuredClone(BUILTIN_TOOLSETS));
  invalidate();
}

/** A number that changes whenever a toolset definition changes (cache keys). */
export function toolsetsGeneration(): number {
  return generation;
}
