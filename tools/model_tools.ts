/**
 * Which tool schemas a task gets (`getToolDefinitions`), loading the tools, and what the build
 * provides. A tool call runs through the pipeline (pipeline.ts).
 */
import {
  discoverBuiltinTools,
  registry as defaultRegistry,
  type DiscoveryReport,
  type OpenAITool,
  type ToolRegistry,
} from "./registry.js";
import { addToolHook, loadPlugins, toolHooks, type PluginOptions, type PluginReport } from "./plugins.js";
import {
  allKnownToolNames,
  canonicalToolsetName,
  listToolsets,
  resolveToolset,
  resolveToolsets,
  syncToolsetsWithRegistry,
  TOOLSETS,
  toolsetsGeneration,
} from "./toolsets.js";

export { addToolHook };
export type { ToolHook, ToolCallInfo } from "./plugins.js";

export interface ToolSelection {
  /** Only these toolsets (legacy `*_tools` names accepted). `[]` means no tools. */
  enabledToolsets?: readonly string[];
  /** Every toolset except these. With `enabledToolsets` too: the enabled tools minus these. */
  disabledToolsets?: readonly string[];
}

/**
 * The tool names a selection stands for, before availability filtering (sorted).
 * Subtraction is by tool, so disabling `terminal` also removes it from composites like `debugging`.
 */
export function selectToolNames(sel: ToolSelection = {}): string[] {
  const base = sel.enabledToolsets ? resolveToolsets(sel.enabledToolsets) : resolveToolset("all");
  if (!sel.disabledToolsets || sel.disabledToolsets.length === 0) return base;
  const removed = new Set(resolveToolsets(sel.disabledToolsets));
  return base.filter((t) => !removed.has(t));
}

// ---------- schema patching ----------

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * How a tool name is recognised in prose. Compound names (`read_file`) count as a whole word anywhere;
 * plain-word names (`patch`, `process`, `memory`) only where they clearly name the tool: quoted
 * (`patch`, 'patch', "patch"), or followed by "tool"/"tools" or "(".
 */
function mentionPattern(name: string): RegExp {
  const n = escapeRegExp(name);
  if (/[^a-z]/i.test(name)) return new RegExp(`(?<![\\w-])${n}(?![\\w-])`);
  return new RegExp(`[\`'"]${n}[\`'"]|(?<![\\w-])${n}(?=\\s+tools?\\b|\\()`);
}

const patternCache = new Map<string, RegExp>();
function mentions(text: string, name: string): boolean {
  let re = patternCache.get(name);
  if (!re) {
    re = mentionPattern(name);
    patternCache.set(name, re);
  }
  return re.test(text);
}

/** Removes every sentence (or list line) of `text` that mentions one of `unavailable`. */
export function removeToolMentions(text: string, unavailable: Iterable<string>): string {
  const names = [...unavailable].filter((n) => text.includes(n));
  if (names.length === 0) return text;
  const keptLines: string[] = [];
  for (const line of text.split("\n")) {
    if (!names.some((n) => mentions(line, n))) {
      keptLines.push(line);
      continue;
    }
    const indent = /^\s*/.exec(line)![0];
    const sentences = line
      .trim()
      .split(/(?<=[.!?])\s+/)
      .filter((s) => !names.some((n) => mentions(s, n)));
    // A list item that names a missing tool goes as a whole; prose keeps its other sentences.
    if (sentences.length > 0 && !/^\s*([-*•]|\d+[.)])\s/.test(line)) keptLines.push(indent + sentences.join(" "));
  }
  return keptLines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function patchDescriptions(node: unknown, unavailable: ReadonlySet<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) patchDescriptions(item, unavailable);
    return;
  }
  if (!node || typeof node !== "object") return;
  const obj = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(obj)) {
    if (key === "description" && typeof value === "string") obj[key] = removeToolMentions(value, unavailable);
    else patchDescriptions(value, unavailable);
  }
}

/**
 * Rewrites the schemas so that no description names a tool outside `defs` (among `knownTools`): a
 * sentence that advises "use read_file" disappears when read_file is not offered. Returns new objects.
 */
export function patchToolSchemas(defs: OpenAITool[], knownTools: Iterable<string>): OpenAITool[] {
  const offered = new Set(defs.map((d) => d.function.name));
  const unavailable = new Set([...knownTools].filter((n) => !offered.has(n)));
  return defs.map((def) => {
    const copy = structuredClone(def);
    if (unavailable.size === 0) return copy;
    const original = copy.function.description;
    copy.function.description = removeToolMentions(original, unavailable) || `The ${copy.function.name} tool.`;
    patchDescriptions(copy.function.parameters, unavailable);
    return copy;
  });
}

// ---------- definitions, memoized per toolset combination ----------

const entryIds = new WeakMap<object, number>();
let nextEntryId = 1;

/** Changes whenever a tool is registered, replaced or removed. */
function registrySignature(reg: ToolRegistry): string {
  return reg
    .entries()
    .map((e) => {
      let id = entryIds.get(e);
      if (id === undefined) {
        id = nextEntryId++;
        entryIds.set(e, id);
      }
      return id;
    })
    .join(",");
}

function selectionKey(sel: ToolSelection): string {
  const norm = (xs: readonly string[] | undefined) =>
    xs === undefined ? null : [...new Set(xs.map(canonicalToolsetName))].sort();
  return JSON.stringify([norm(sel.enabledToolsets), norm(sel.disabledToolsets)]);
}

const definitionCache = new WeakMap<ToolRegistry, Map<string, Promise<OpenAITool[]>>>();

const namesCache = new WeakMap<ToolRegistry, Map<string, Promise<readonly string[]>>>();

/** Forgets memoized definitions (e.g. after an API key was set, so a checkFn may now pass). */
export function clearToolDefinitionCache(reg: ToolRegistry = defaultRegistry): void {
  definitionCache.delete(reg);
  namesCache.delete(reg);
}

/**
 * OpenAI tool schemas for a selection: resolve toolsets (seeds' rules), keep registered tools whose
 * checkFn passes, patch descriptions. Memoized per (sorted) toolset combination, registry state and
 * toolset generation; availability is therefore decided once per combination until
 * `clearToolDefinitionCache()`. Unknown toolset names throw ToolsetError (a UserError).
 */
export async function getToolDefinitions(
  sel: ToolSelection = {},
  opts: { registry?: ToolRegistry } = {},
): Promise<readonly OpenAITool[]> {
  const reg = opts.registry ?? defaultRegistry;
  const names = selectToolNames(sel); // throws for unknown names, before anything is cached
  return memoized(definitionCache, reg, sel, async () => {
    const defs = await reg.getDefinitions(names);
    return deepFreeze(patchToolSchemas(defs, new Set([...reg.names(), ...allKnownToolNames()])));
  });
}

/**
 * The names of the tools `getToolDefinitions` would give for a selection, in its order, without building their
 * JSON Schemas (the main thread only asks which tools a combination offers; the schemas are the worker's).
 * Memoized and throwing like it.
 */
export async function getOfferedToolNames(
  sel: ToolSelection = {},
  opts: { registry?: ToolRegistry } = {},
): Promise<readonly string[]> {
  const reg = opts.registry ?? defaultRegistry;
  const names = selectToolNames(sel);
  return memoized(namesCache, reg, sel, async () => Object.freeze(await reg.availableNames(names)));
}

/**
 * One promise per registry, toolset combination, registry state and toolset generation, made once: every task of a
 * combination gets the same frozen value (no copy per task, and per-array caches such as the Hermes system prompt
 * hit). A failed promise is forgotten, so the next call tries again.
 */
function memoized<T>(
  cache: WeakMap<ToolRegistry, Map<string, Promise<T>>>,
  reg: ToolRegistry,
  sel: ToolSelection,
  make: () => Promise<T>,
): Promise<T> {
  const key = `${selectionKey(sel)}|${toolsetsGeneration()}|${registrySignature(reg)}`;
  let perRegistry = cache.get(reg);
  if (!perRegistry) {
    perRegistry = new Map();
    cache.set(reg, perRegistry);
  }
  const entries = perRegistry;
  let pending = entries.get(key);
  if (!pending) {
    pending = make();
    entries.set(key, pending);
    pending.catch(() => entries.delete(key));
  }
  return pending;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Names of the tools a definitions list offers. */
export function toolNamesOf(defs: readonly OpenAITool[]): string[] {
  return defs.map((d) => d.function.name);
}

// ---------- loading ----------

export interface ToolsLoadReport {
  builtins: DiscoveryReport;
  plugins: PluginReport;
  /** Toolsets created or extended for registered tools that no toolset listed. */
  toolsetsSynced: string[];
}

let loading: Promise<ToolsLoadReport> | undefined;

/**
 * Imports the built-in tool modules, then plugins, once per process (later calls get the first
 * result whatever their options). Then makes every registered tool reachable through its toolset.
 */
export function ensureToolsLoaded(opts: PluginOptions & { plugins?: boolean } = {}): Promise<ToolsLoadReport> {
  if (!loading) {
    loading = (async () => {
      const builtins = await discoverBuiltinTools();
      const plugins = opts.plugins === false ? { loaded: [], failed: [] } : await loadPlugins(opts);
      const toolsetsSynced = syncToolsetsWithRegistry(defaultRegistry.entries());
      return { builtins, plugins, toolsetsSynced };
    })();
  }
  return loading;
}

// ---------- what the build provides ----------

export interface ToolsetStatus {
  name: string;
  tools: string[];
  /** Tools of the toolset that some module registered. */
  registered: string[];
  /** Registered tools whose checkFn passes now. */
  available: string[];
  /** Whether this build provides the toolset (see `providedToolsets`). */
  provided: boolean;
}

/**
 * Toolsets this build can provide. A toolset that owns tools (registered under its name, or listed by
 * no other toolset) is provided when one of those is registered or one of its includes is provided;
 * a pure bundle (a preset) when any of its tools is registered. So `browser`, which borrows web_search,
 * is not provided just because web_search is.
 */
export function providedToolsets(reg: ToolRegistry = defaultRegistry): Set<string> {
  const listedBy = new Map<string, number>();
  for (const def of Object.values(TOOLSETS))
    for (const t of new Set(def.tools)) listedBy.set(t, (listedBy.get(t) ?? 0) + 1);
  const decided = new Map<string, boolean>();
  const isProvided = (name: string, path: Set<string>): boolean => {
    const known = decided.get(name);
    if (known !== undefined) return known;
    if (path.has(name)) return false;
    const def = TOOLSETS[name]!;
    const own = new Set(def.tools.filter((t) => listedBy.get(t) === 1));
    for (const e of reg.entries()) if (canonicalToolsetName(e.toolset) === name) own.add(e.name);
    let result: boolean;
    if (own.size > 0) {
      const next = new Set(path).add(name);
      result = [...own].some((t) => reg.has(t)) || def.includes.some((i) => isProvided(canonicalToolsetName(i), next));
    } else {
      result = resolveToolset(name).some((t) => reg.has(t));
    }
    decided.set(name, result);
    return result;
  };
  return new Set(listToolsets().filter((n) => isProvided(n, new Set())));
}

/** Per toolset: its tools, which are registered, which are available now, and whether it is provided. */
export async function toolsetStatus(reg: ToolRegistry = defaultRegistry): Promise<ToolsetStatus[]> {
  const avail = await reg.availability(reg.names());
  const provided = providedToolsets(reg);
  return listToolsets().map((name) => {
    const tools = resolveToolset(name);
    const registered = tools.filter((t) => reg.has(t));
    return {
      name,
      tools,
      registered,
      available: registered.filter((t) => avail.get(t)?.available),
      provided: provided.has(name),
    };
  });
}

/** tool name → toolset, for every registered tool (Hermes' TOOL_TO_TOOLSET_MAP). */
export function toolToToolsetMap(reg: ToolRegistry = defaultRegistry): Record<string, string> {
  return Object.fromEntries(reg.entries().map((e) => [e.name, e.toolset]));
}
