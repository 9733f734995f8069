/**
 * Plugins: extra tools, toolsets and tool-call hooks, loaded after the built-in tools.
 *
 * Sources, in order:
 *  - `~/.hermes-batch/plugins/` and `./.hermes-batch/plugins/`: every `.js` / `.mjs` file directly in the folder
 *    is a plugin and is imported (a plugin's helper modules belong in a subfolder, which is not read);
 *  - npm packages named in the config (`plugins: [...]`), resolved from the working directory first.
 *
 * A plugin gets the registry from `globalThis.hermesBatch.registry` (set before any plugin is imported), or
 * exports `setup(api)` / a default function that is called with the same API. A plugin that fails to load
 * is logged and skipped; the others still load.
 */
import { readdirSync, type Dirent } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { registry, type Logger, type ToolContext, type ToolRegistry } from "./registry.js";
import { registerToolset } from "./toolsets.js";

/** One tool call as hooks see it. */
export interface ToolCallInfo {
  name: string;
  args: Record<string, unknown>;
  ctx: ToolContext;
}

export interface ToolHook {
  /** Runs before dispatch; returning a string skips the tool and uses that string as its result. */
  pre?: (call: ToolCallInfo) => string | void | undefined | Promise<string | void | undefined>;
  /** Runs after dispatch; returning a string replaces the result. */
  post?: (call: ToolCallInfo, result: string) => string | void | undefined | Promise<string | void | undefined>;
}

const hooks: ToolHook[] = [];

/** Adds a pre/post tool-call hook; returns a function that removes it. */
export function addToolHook(hook: ToolHook): () => void {
  hooks.push(hook);
  return () => {
    const i = hooks.indexOf(hook);
    if (i >= 0) hooks.splice(i, 1);
  };
}

/** The hooks in registration order (a copy). */
export function toolHooks(): readonly ToolHook[] {
  return [...hooks];
}

export interface PluginApi {
  registry: ToolRegistry;
  addToolHook: typeof addToolHook;
  registerToolset: typeof registerToolset;
  logger: Logger;
}

export interface PluginReport {
  loaded: string[];
  failed: { source: string; error: string }[];
}

export interface PluginOptions {
  /** Plugin folders; default: `~/.hermes-batch/plugins` then `./.hermes-batch/plugins`. */
  dirs?: string[];
  /** npm package names (the config's `plugins`). */
  packages?: string[];
  /** Where packages are resolved from first (default: the working directory). */
  cwd?: string;
  logger?: Logger;
}

export function defaultPluginDirs(cwd: string = process.cwd(), home: string = homedir()): string[] {
  const dirs = [join(home, ".hermes-batch", "plugins"), join(resolve(cwd), ".hermes-batch", "plugins")];
  return [...new Set(dirs.map((d) => resolve(d)))];
}

function pluginApi(logger: Logger): PluginApi {
  return { registry, addToolHook, registerToolset, logger };
}

declare global {
  // eslint-disable-next-line no-var
  var hermesBatch: PluginApi | undefined;
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

async function runSetup(mod: Record<string, unknown>, api: PluginApi): Promise<void> {
  const setup =
    typeof mod.setup === "function" ? mod.setup : typeof mod.default === "function" ? mod.default : undefined;
  if (setup) await (setup as (api: PluginApi) => unknown)(api);
}

async function importPackage(name: string, cwd: string): Promise<Record<string, unknown>> {
  // Resolve from the user's project first: a plugin installed next to the config, not next to hermes-batch.
  try {
    const fromCwd = createRequire(join(resolve(cwd), "package.json")).resolve(name);
    return (await import(pathToFileURL(fromCwd).href)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== "MODULE_NOT_FOUND" && code !== "ERR_PACKAGE_PATH_NOT_EXPORTED") throw err;
  }
  return (await import(name)) as Record<string, unknown>;
}

/** The plugin files of a folder, sorted: its `.js` and `.mjs` files (none when the folder does not exist). */
export function pluginFiles(dir: string): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile() && (e.name.endsWith(".js") || e.name.endsWith(".mjs")))
    .map((e) => join(dir, e.name))
    .sort();
}

/** Loads plugin folders, then plugin packages. Never throws for a bad plugin. */
export async function loadPlugins(opts: PluginOptions = {}): Promise<PluginReport> {
  const logger = opts.logger ?? registry.logger;
  const api = pluginApi(logger);
  globalThis.hermesBatch = api;
  const report: PluginReport = { loaded: [], failed: [] };
  const dirs = opts.dirs ?? defaultPluginDirs(opts.cwd);
  for (const file of dirs.flatMap(pluginFiles)) {
    try {
      const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      await runSetup(mod, api);
      report.loaded.push(file);
    } catch (err) {
      logger.warn(`could not load plugin ${file}: ${describe(err)}`);
      report.failed.push({ source: file, error: describe(err) });
    }
  }
  for (const name of opts.packages ?? []) {
    try {
      const mod = await importPackage(name, opts.cwd ?? process.cwd());
      await runSetup(mod, api);
      report.loaded.push(name);
    } catch (err) {
      logger.warn(`could not load plugin package '${name}': ${describe(err)}`);
      report.failed.push({ source: name, error: describe(err) });
    }
  }
  return report;
}
