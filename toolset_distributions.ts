/**
 * Toolset distributions: for each task, which toolsets its agent gets.
 *
 * A distribution maps toolsets to independent inclusion chances in percent (they need not sum to 100).
 * Unlike Hermes, a draw is reproducible: it comes from a small PRNG seeded by (run seed, task id, epoch),
 * so a task gets the same toolsets whatever the worker count, the order, a resume or a shard.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { UserError } from "./src/core/errors.js";
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

const d = (description: string, toolsets: Record<string, number>): Distribution => Object.freeze({
  description,
  toolsets: Object.freeze(toolsets),
});

/**
 * Hermes' 17 distributions, names, descriptions and numbers unchanged, in Hermes' order. Within each, the
 * toolsets follow one fixed order (web, vision, image_gen, terminal, file, moa, browser): it is the draw
 * order, and it breaks fallback ties.
 */
export const DISTRIBUTIONS: Readonly<Record<string, Distribution>> = Object.freeze({
  default: d(
    "All available tools, all the time",
    { web: 100, vision: 100, image_gen: 100, terminal: 100, file: 100, moa: 100, browser: 100 },
  ),
  image_gen: d(
    "Heavy focus on image generation with vision and web support",
    { web: 55, vision: 90, image_gen: 90, terminal: 45, moa: 10 },
  ),
  research: d(
    "Web research with vision analysis and reasoning",
    { web: 90, vision: 50, terminal: 10, moa: 40, browser: 70 },
  ),
  science: d(
    "Scientific research with web, terminal, file, and browser capabilities",
    { web: 94, vision: 65, image_gen: 15, terminal: 94, file: 94, moa: 10, browser: 50 },
  ),
  development: d(
    "Terminal, file tools, and reasoning with occasional web lookup",
    { web: 30, vision: 10, terminal: 80, file: 80, moa: 60 },
  ),
  safe: d("All tools except terminal for safety", { web: 80, vision: 60, image_gen: 60, moa: 50, browser: 70 }),
  balanced: d(
    "Equal probability of all toolsets",
    { web: 50, vision: 50, image_gen: 50, terminal: 50, file: 50, moa: 50, browser: 50 },
  ),
  minimal: d("Only web tools for basic research", { web: 100 }),
  terminal_only: d("Terminal and file tools for code execution tasks", { terminal: 100, file: 100 }),
  terminal_web: d(
    "Terminal and file tools with web search for documentation lookup",
    { web: 100, terminal: 100, file: 100 },
  ),
  creative: d("Image generation and vision analysis focus", { web: 30, vision: 90, image_gen: 90 }),
  reasoning: d("Heavy mixture of agents usage with minimal other tools", { web: 30, terminal: 20, moa: 90 }),
  browser_use: d(
    "Full browser-based web interaction with search, vision, and page control",
    { web: 80, vision: 70, browser: 100 },
  ),
  browser_only: d("Only browser automation tools for pure web interaction tasks", { browser: 100 }),
  browser_tasks: d(
    "Browser-focused (browser toolset includes web_search since Google blocks direct browser searches)",
    { vision: 12, terminal: 15, browser: 97 },
  ),
  terminal_tasks: d(
    "Terminal-focused with high terminal/file availability, occasional other tools",
    { web: 97, vision: 50, image_gen: 10, terminal: 97, file: 97, browser: 75 },
  ),
  mixed_tasks: d(
    "Mixed with high browser, terminal, and file availability for complex tasks",
    { web: 35, vision: 15, image_gen: 15, terminal: 92, file: 92, browser: 92 },
  ),
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
    throw new DistributionError(`Unknown distribution: ${name}. Available: ${[...listDistributions()].sort().join(", ")}`);
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

const fileSchema = z.record(
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, "a distribution name is letters, digits, '_', '.', '-'"),
  z.strictObject({
    description: z.string().min(1).optional(),
    toolsets: z.record(z.string(), z.number().min(0).max(100)),
  }),
);

/**
 * Reads extra distributions from YAML: `{name: {description, toolsets: {toolset: percent}}}`.
 * Registers them and returns their names. Errors name the file and the key.
 */
export function loadDistributionFile(path: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new DistributionError(`${path}: cannot read distribution file: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new DistributionError(`${path}: invalid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new DistributionError(`${path}: expected a mapping of distribution names to {description, toolsets}`);
  }
  const parsed = fileSchema.safeParse(raw);
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
    if (Object.keys(def.toolsets).length === 0) throw new DistributionError(`${path}: distribution '${name}': no toolsets`);
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
  return sfc32(hash128(JSON.stringify(["hermes-batch/toolsets/v1", String(key.seed), key.taskId, key.epoch ?? 0])));
}

function drawFrom(toolsets: Record<string, number>, usable: ReadonlySet<string>, key: DrawKey): string[] {
  const rng = taskRng(key);
  const picked: string[] = [];
  // One number per toolset, dropped ones included, so the other draws do not shift when the set of
  // provided toolsets changes between builds.
  for (const [ts, p] of Object.entries(toolsets)) {
    const r = rng();
    if (usable.has(ts) && r * 100 < p) picked.push(ts);
  }
  if (picked.length > 0) return picked;
  let best: string | undefined;
  for (const [ts, p] of Object.entries(toolsets)) {
    if (usable.has(ts) && (best === undefined || p > toolsets[best]!)) best = ts;
  }
  return best === undefined ? [] : [best];
}

/**
 * One task's toolsets from a distribution, in the distribution's order: each toolset independently with
 * its chance; if none is drawn, the most likely one (the first on ties). Every toolset counts as usable;
 * use `prepareDistribution` to leave out toolsets the build cannot provide.
 */
export function sampleToolsets(distribution: string | Distribution, key: DrawKey): string[] {
  const dist = typeof distribution === "string" ? getDistribution(distribution) : distribution;
  return drawFrom(dist.toolsets, new Set(Object.keys(dist.toolsets)), key);
}

export interface DistributionSampler {
  name: string;
  description: string;
  /** All toolsets of the distribution with their chances. */
  toolsets: Record<string, number>;
  /** Toolsets that can be drawn. */
  usable: string[];
  /** Toolsets left out because this build cannot provide them. */
  dropped: string[];
  sample(key: DrawKey): string[];
}

export interface PrepareOptions {
  /** Toolsets this build can provide (e.g. `providedToolsets()` from model_tools); default: all. */
  available?: ReadonlySet<string>;
  /** Called at most once per process for each distribution and set of dropped toolsets. */
  warn?: (message: string) => void;
}

const warned = new Set<string>();

/**
 * A sampler for a run: validates the distribution once, drops toolsets that are not available (one
 * warning, not one per task), and throws DistributionError if nothing would be left to draw.
 */
export function prepareDistribution(name: string, opts: PrepareOptions = {}): DistributionSampler {
  const dist = getDistribution(name);
  const all = Object.keys(dist.toolsets);
  const usable = opts.available ? all.filter((ts) => opts.available!.has(ts)) : all;
  const dropped = all.filter((ts) => !usable.includes(ts));
  if (usable.length === 0) {
    throw new DistributionError(
      `Distribution '${name}' has no toolset this build can provide (unavailable: ${dropped.join(", ")})`,
    );
  }
  if (dropped.length > 0 && opts.warn) {
    const key = `${name}\u0000${dropped.join(",")}`;
    if (!warned.has(key)) {
      warned.add(key);
      opts.warn(`distribution '${name}': toolsets not provided by this build are never drawn: ${dropped.join(", ")}`);
    }
  }
  const usableSet = new Set(usable);
  return {
    name,
    description: dist.description,
    toolsets: dist.toolsets,
    usable,
    dropped,
    sample: (key) => drawFrom(dist.toolsets, usableSet, key),
  };
}

/** Forgets which warnings were given (tests). */
export function resetDistributionWarnings(): void {
  warned.clear();
}
