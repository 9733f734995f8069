/**
 * Toolset distributions: for each task, which toolsets its agent gets.
 *
 * A distribution maps toolsets to independent inclusion chances in percent (they need not sum to 100).
 * Toolsets this build does not provide are drawn as in Hermes (so `toolsets_used` has the original's
 * frequencies); they simply offer no tool. Unlike Hermes, a draw is reproducible: it comes from a small PRNG seeded by (run seed, task id, epoch),
 * so a task gets the same toolsets whatever the worker count, the order, a resume or a shard.
 */
import * as z from "zod";
import { lazy } from "./src/core/lazy.js";
import { UserError } from "./src/core/errors.js";
import { parseSettingsYaml, readSettingsText } from "./src/core/settings_file.js";
import { canonicalToolsetName, listToolsets, validateToolset } from "./tools/toolsets.js";

export interface Distribution {
  description: string;
  /** toolset → inclusion chance in percent, in draw order. */
  toolsets: Record<string, number>;
}

export class DistributionError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = "DistributionError";
  }
}

const d = (description: string, toolsets: Record<string, number>): Distribution =>
  Object.freeze({
    description,
    toolsets: Object.freeze(toolsets),
  });

/**
 * Hermes' 17 distributions as upstream defines them (toolset_distributions.py @0134f6f4): names,
 * descriptions, numbers and, within each, the toolsets' order. That order is the draw order, the order
 * of `toolsets_used`, and it breaks fallback ties.
 */
export const DISTRIBUTIONS: Readonly<Record<string, Distribution>> = Object.freeze({
  default: d("All available tools, all the time", {
    web: 100,
    vision: 100,
    image_gen: 100,
    terminal: 100,
    file: 100,
    moa: 100,
    browser: 100,
  }),
  image_gen: d("Heavy focus on image generation with vision and web support", {
    image_gen: 90,
    vision: 90,
    web: 55,
    terminal: 45,
    moa: 10,
  }),
  research: d("Web research with vision analysis and reasoning", {
    web: 90,
    browser: 70,
    vision: 50,
    moa: 40,
    terminal: 10,
  }),
  science: d("Scientific research with web, terminal, file, and browser capabilities", {
    web: 94,
    terminal: 94,
    file: 94,
    vision: 65,
    browser: 50,
    image_gen: 15,
    moa: 10,
  }),
  development: d("Terminal, file tools, and reasoning with occasional web lookup", {
    terminal: 80,
    file: 80,
    moa: 60,
    web: 30,
    vision: 10,
  }),
  safe: d("All tools except terminal for safety", { web: 80, browser: 70, vision: 60, image_gen: 60, moa: 50 }),
  balanced: d("Equal probability of all toolsets", {
    web: 50,
    vision: 50,
    image_gen: 50,
    terminal: 50,
    file: 50,
    moa: 50,
    browser: 50,
  }),
  minimal: d("Only web tools for basic research", { web: 100 }),
  terminal_only: d("Terminal and file tools for code execution tasks", { terminal: 100, file: 100 }),
  terminal_web: d("Terminal and file tools with web search for documentation lookup", {
    terminal: 100,
    file: 100,
    web: 100,
  }),
  creative: d("Image generation and vision analysis focus", { image_gen: 90, vision: 90, web: 30 }),
  reasoning: d("Heavy mixture of agents usage with minimal other tools", { moa: 90, web: 30, terminal: 20 }),
  browser_use: d("Full browser-based web interaction with search, vision, and page control", {
    browser: 100,
    web: 80,
    vision: 70,
  }),
  browser_only: d("Only browser automation tools for pure web interaction tasks", { browser: 100 }),
  browser_tasks: d(
    "Browser-focused distribution (browser toolset includes web_search for finding URLs since Google blocks direct browser searches)",
    { browser: 97, vision: 12, terminal: 15 },
  ),
  terminal_tasks: d("Terminal-focused distribution with high terminal/file availability, occasional other tools", {
    terminal: 97,
    file: 97,
    web: 97,
    browser: 75,
    vision: 50,
    image_gen: 10,
  }),
  mixed_tasks: d("Mixed distribution with high browser, terminal, and file availability for complex tasks", {
    browser: 92,
    terminal: 92,
    file: 92,
    web: 35,
    vision: 15,
    image_gen: 15,
  }),
});

/** Distributions added at run time (`--distribution-file`); they shadow built-ins of the same name. */
const extraDistributions = new Map<string, Distribution & { source: string }>();

/** Every distribution name: built-ins in their order, then added ones. */
export function listDistributions(): string[] {
  const names = Object.keys(DISTRIBUTIONS);
  for (const n of extraDistributions.keys()) if (!names.includes(n)) names.push(n);
  return names;
}

export function getDistribution(name: string): Distribution {
  const found = extraDistributions.get(name) ?? (Object.hasOwn(DISTRIBUTIONS, name) ? DISTRIBUTIONS[name] : undefined);
  if (!found) {
    throw new DistributionError(
      `Unknown distribution: ${name}. Available: ${[...listDistributions()].sort().join(", ")}`,
    );
  }
  return { description: found.description, toolsets: { ...found.toolsets } };
}

/** Where a distribution comes from: "built-in" or the file that defined it. */
export function distributionSource(name: string): string {
  return extraDistributions.get(name)?.source ?? (Object.hasOwn(DISTRIBUTIONS, name) ? "built-in" : "unknown");
}

/** Adds (or replaces) a distribution after checking it; toolset names are made canonical. */
export function registerDistribution(name: string, dist: Distribution, source = "runtime"): void {
  const toolsets: Record<string, number> = {};
  for (const [ts, p] of Object.entries(dist.toolsets)) {
    if (!validateToolset(ts)) {
      throw new DistributionError(
        `distribution '${name}': unknown toolset '${ts}' (known: ${listToolsets().join(", ")})`,
      );
    }
    if (!(Number.isFinite(p) && p >= 0 && p <= 100)) {
      throw new DistributionError(`distribution '${name}': toolsets.${ts} must be a percentage 0..100, got ${p}`);
    }
    toolsets[canonicalToolsetName(ts)] = p;
  }
  if (Object.keys(toolsets).length === 0) throw new DistributionError(`distribution '${name}': no toolsets`);
  extraDistributions.set(name, { description: dist.description, toolsets, source });
}

/** Forgets distributions added at run time (tests). */
export function resetExtraDistributions(): void {
  extraDistributions.clear();
}

const fileSchema = lazy(() =>
  z.record(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "a distribution name is letters, digits, '_', '.', '-'"),
    z.strictObject({
      description: z.string().min(1).optional(),
      toolsets: z.record(z.string(), z.number().min(0).max(100)),
    }),
  ),
);

/**
 * Reads extra distributions from YAML: `{name: {description, toolsets: {toolset: percent}}}`.
 * Registers them and returns their names. Errors name the file and the key.
 */
export function loadDistributionFile(path: string): string[] {
  // Bounded, UTF-8, one YAML document without unknown tags, repeated keys or self-containing aliases.
  let raw: unknown;
  try {
    raw = parseSettingsYaml(readSettingsText(path, "--distribution-file"), path, "YAML").value;
  } catch (err) {
    const message = (err as Error).message;
    throw new DistributionError(
      message.startsWith("--distribution-file") ? `${path}: cannot read distribution file: ${message}` : message,
    );
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new DistributionError(`${path}: expected a mapping of distribution names to {description, toolsets}`);
  }
  const parsed = fileSchema().safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [name, ...rest] = issue.path.map(String);
    const where = rest.length ? `${rest.join(".")}: ` : "";
    const what = issue.code === "invalid_key" ? "invalid name" : issue.message;
    throw new DistributionError(`${path}: distribution '${name}': ${where}${what}`);
  }
  // Check everything before registering anything, so a bad file adds nothing.
  for (const [name, def] of Object.entries(parsed.data)) {
    const unknown = Object.keys(def.toolsets).filter((ts) => !validateToolset(ts));
    if (unknown.length > 0) {
      throw new DistributionError(
        `${path}: distribution '${name}': unknown toolset${unknown.length > 1 ? "s" : ""} ${unknown
          .map((u) => `'${u}'`)
          .join(", ")} (known: ${listToolsets().join(", ")})`,
      );
    }
    if (Object.keys(def.toolsets).length === 0)
      throw new DistributionError(`${path}: distribution '${name}': no toolsets`);
  }
  for (const [name, def] of Object.entries(parsed.data)) {
    registerDistribution(name, { description: def.description ?? `From ${path}`, toolsets: def.toolsets }, path);
  }
  return Object.keys(parsed.data);
}

// ---------- seeded randomness ----------

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 128-bit hash of a string as four 32-bit words (four multiplicative lanes, cross-mixed). */
export function hash128(text: string): [number, number, number, number] {
  const bytes = new TextEncoder().encode(text);
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  let c = 0x632be5ab;
  let e = 0x2545f491;
  for (const byte of bytes) {
    a = Math.imul(a ^ byte, 0x01000193);
    b = Math.imul(b ^ byte, 0x5bd1e995);
    c = Math.imul(c ^ byte, 0x1b873593);
    e = Math.imul(e ^ byte, 0xcc9e2d51);
  }
  const n = bytes.length;
  a = fmix32(a ^ n);
  b = fmix32(b ^ a);
  c = fmix32(c ^ b);
  e = fmix32(e ^ c);
  return [fmix32(a ^ e), b, c, e];
}

/** sfc32: a small fast PRNG; returns floats in [0, 1). */
export function sfc32(seedWords: readonly [number, number, number, number]): () => number {
  let [a, b, c, counter] = seedWords.map((w) => w >>> 0) as [number, number, number, number];
  const next = (): number => {
    const t = (((a + b) >>> 0) + counter) >>> 0;
    counter = (counter + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4294967296;
  };
  for (let i = 0; i < 12; i++) next(); // let the seed diffuse
  return next;
}

export interface DrawKey {
  /** The run seed. */
  seed: number | string;
  /** The task's stable id (the dataset row id). */
  taskId: string;
  /** Repeat index when a dataset is run several times (default 0). */
  epoch?: number;
}

/** The generator for one task's draw: depends only on (seed, taskId, epoch). */
export function taskRng(key: DrawKey): () => number {
  // v2: the draw order became upstream's per-distribution order, so the same seed draws differently than v1.
  return sfc32(hash128(JSON.stringify(["hermes-batch/toolsets/v2", String(key.seed), key.taskId, key.epoch ?? 0])));
}

/**
 * One task's toolsets from a distribution, in the distribution's order: each toolset independently with
 * its chance (a number in [0, 1) times 100 below the percentage); if none is drawn, the most likely one
 * (the first on ties). As in the original, toolsets this build does not provide are drawn too.
 */
export function sampleToolsets(distribution: string | Distribution, key: DrawKey): string[] {
  const { toolsets } = typeof distribution === "string" ? getDistribution(distribution) : distribution;
  const rng = taskRng(key);
  const picked: string[] = [];
  for (const [ts, p] of Object.entries(toolsets)) if (rng() * 100 < p) picked.push(ts);
  if (picked.length > 0) return picked;
  let best: string | undefined;
  for (const [ts, p] of Object.entries(toolsets)) if (best === undefined || p > toolsets[best]!) best = ts;
  return best === undefined ? [] : [best];
}

export interface DistributionSampler {
  name: string;
  description: string;
  /** All toolsets of the distribution with their chances, in draw order. */
  toolsets: Record<string, number>;
  /** Toolsets this build provides (they give the model tools when drawn). */
  provided: string[];
  /** Toolsets this build cannot provide: still drawn and recorded in toolsets_used, but they offer no tool. */
  unprovided: string[];
  sample(key: DrawKey): string[];
}

export interface PrepareOptions {
  /** Toolsets this build can provide (e.g. `providedToolsets()` from model_tools); default: all. */
  available?: ReadonlySet<string>;
  /** Called at most once per process for each distribution and set of unprovided toolsets. */
  warn?: (message: string) => void;
}

const warned = new Set<string>();

/**
 * A sampler for a run: validates the distribution once and says once which of its toolsets offer no tool
 * here. A distribution of which none is provided (browser_only) still runs, every task without tools, as
 * the original runs it when the tools' requirements are missing.
 */
export function prepareDistribution(name: string, opts: PrepareOptions = {}): DistributionSampler {
  const dist = getDistribution(name);
  const all = Object.keys(dist.toolsets);
  const provided = opts.available ? all.filter((ts) => opts.available!.has(ts)) : all;
  const unprovided = all.filter((ts) => !provided.includes(ts));
  if (unprovided.length > 0 && opts.warn) {
    const key = `${name}\u0000${unprovided.join(",")}`;
    if (!warned.has(key)) {
      warned.add(key);
      opts.warn(
        provided.length === 0
          ? `distribution '${name}' has no toolset this build provides (${unprovided.join(", ")}): they are drawn and recorded in toolsets_used as in Hermes, and every task runs without tools`
          : `distribution '${name}' includes ${unprovided.join(", ")}, which this build does not provide: they are drawn and recorded in toolsets_used as in Hermes, and offer no tool (toolsets_offered lists what a task got)`,
      );
    }
  }
  return {
    name,
    description: dist.description,
    toolsets: dist.toolsets,
    provided,
    unprovided,
    sample: (key) => sampleToolsets(dist, key),
  };
}

/** Forgets which warnings were given (tests). */
export function resetDistributionWarnings(): void {
  warned.clear();
}
