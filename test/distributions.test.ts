import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  DISTRIBUTIONS,
  DistributionError,
  distributionSource,
  getDistribution,
  hash128,
  listDistributions,
  loadDistributionFile,
  prepareDistribution,
  resetDistributionWarnings,
  resetExtraDistributions,
  sampleToolsets,
  taskRng,
  type Distribution,
} from "../toolset_distributions.js";
import { UserError } from "../src/core/errors.js";

const FIXTURES = join(import.meta.dirname, "fixtures", "distributions");

afterEach(() => {
  resetExtraDistributions();
  resetDistributionWarnings();
});

// Hermes' table (reference §3.1): web, vision, image_gen, terminal, file, moa, browser; null = absent.
const HERMES_TABLE: Record<string, (number | null)[]> = {
  default: [100, 100, 100, 100, 100, 100, 100],
  image_gen: [55, 90, 90, 45, null, 10, null],
  research: [90, 50, null, 10, null, 40, 70],
  science: [94, 65, 15, 94, 94, 10, 50],
  development: [30, 10, null, 80, 80, 60, null],
  safe: [80, 60, 60, null, null, 50, 70],
  balanced: [50, 50, 50, 50, 50, 50, 50],
  minimal: [100, null, null, null, null, null, null],
  terminal_only: [null, null, null, 100, 100, null, null],
  terminal_web: [100, null, null, 100, 100, null, null],
  creative: [30, 90, 90, null, null, null, null],
  reasoning: [30, null, null, 20, null, 90, null],
  browser_use: [80, 70, null, null, null, null, 100],
  browser_only: [null, null, null, null, null, null, 100],
  browser_tasks: [null, 12, null, 15, null, null, 97],
  terminal_tasks: [97, 50, 10, 97, 97, null, 75],
  mixed_tasks: [35, 15, 15, 92, 92, null, 92],
};
const COLUMNS = ["web", "vision", "image_gen", "terminal", "file", "moa", "browser"];

describe("the 17 Hermes distributions", () => {
  it("has exactly Hermes' names, in Hermes' order", () => {
    expect(Object.keys(DISTRIBUTIONS)).toEqual(Object.keys(HERMES_TABLE));
    expect(listDistributions()).toHaveLength(17);
  });

  it("has Hermes' numbers", () => {
    for (const [name, row] of Object.entries(HERMES_TABLE)) {
      const expected = Object.fromEntries(
        COLUMNS.map((c, i) => [c, row[i]] as const).filter((e): e is [string, number] => e[1] !== null),
      );
      expect(DISTRIBUTIONS[name]!.toolsets, name).toEqual(expected);
      expect(Object.keys(DISTRIBUTIONS[name]!.toolsets), `${name} key order`).toEqual(Object.keys(expected));
    }
  });

  it("has Hermes' descriptions and sane probabilities", () => {
    expect(DISTRIBUTIONS.default!.description).toBe("All available tools, all the time");
    expect(DISTRIBUTIONS.browser_tasks!.description).toBe(
      "Browser-focused (browser toolset includes web_search since Google blocks direct browser searches)",
    );
    for (const [name, dist] of Object.entries(DISTRIBUTIONS)) {
      expect(dist.description.length, name).toBeGreaterThan(5);
      for (const p of Object.values(dist.toolsets)) expect(p > 0 && p <= 100, name).toBe(true);
    }
  });

  it("getDistribution returns a copy and names the alternatives for an unknown name", () => {
    const copy = getDistribution("minimal");
    copy.toolsets.web = 1;
    expect(getDistribution("minimal").toolsets.web).toBe(100);
    let err: unknown;
    try {
      getDistribution("nope");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DistributionError);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toBe(`Unknown distribution: nope. Available: ${Object.keys(HERMES_TABLE).sort().join(", ")}`);
    expect(() => getDistribution("toString")).toThrow(/Unknown distribution: toString/);
  });
});

describe("seeded sampling", () => {
  it("is deterministic per (seed, task id, epoch), whatever the order or sharding", () => {
    const ids = Array.from({ length: 200 }, (_, i) => `task_${i}`);
    const forward = ids.map((taskId) => sampleToolsets("balanced", { seed: 42, taskId }));
    const reversed = [...ids].reverse().map((taskId) => sampleToolsets("balanced", { seed: 42, taskId })).reverse();
    const shardA = ids.filter((_, i) => i % 2 === 0).map((taskId) => [taskId, sampleToolsets("balanced", { seed: 42, taskId })] as const);
    const shardB = ids.filter((_, i) => i % 2 === 1).map((taskId) => [taskId, sampleToolsets("balanced", { seed: 42, taskId })] as const);
    const sharded = new Map([...shardA, ...shardB]);
    expect(reversed).toEqual(forward);
    expect(ids.map((id) => sharded.get(id))).toEqual(forward);
    expect(sampleToolsets("balanced", { seed: "42", taskId: "task_3", epoch: 0 })).toEqual(forward[3]);
  });

  it("differs between seeds, task ids and epochs", () => {
    const ids = Array.from({ length: 50 }, (_, i) => `task_${i}`);
    const draw = (seed: number, epoch = 0) => ids.map((taskId) => sampleToolsets("balanced", { seed, taskId, epoch }).join(","));
    expect(draw(1)).not.toEqual(draw(2));
    expect(draw(1, 0)).not.toEqual(draw(1, 1));
    expect(new Set(draw(1)).size).toBeGreaterThan(20); // tasks get different draws
    expect(hash128("a")).not.toEqual(hash128("b"));
  });

  it("returns toolsets in the distribution's order", () => {
    for (let i = 0; i < 50; i++) {
      const got = sampleToolsets("science", { seed: 5, taskId: `t${i}` });
      const order = Object.keys(DISTRIBUTIONS.science!.toolsets);
      expect(got).toEqual(order.filter((t) => got.includes(t)));
    }
  });

  it("matches every distribution's probabilities within 3 points over 10,000 draws", () => {
    for (const name of listDistributions()) {
      const dist = DISTRIBUTIONS[name]!;
      const entries = Object.entries(dist.toolsets);
      const pNone = entries.reduce((acc, [, p]) => acc * (1 - p / 100), 1);
      const fallback = entries.reduce((best, e) => (e[1] > best[1] ? e : best))[0];
      const counts = new Map<string, number>();
      const N = 10_000;
      for (let i = 0; i < N; i++) {
        for (const ts of sampleToolsets(name, { seed: 2024, taskId: `task_${i}` })) counts.set(ts, (counts.get(ts) ?? 0) + 1);
      }
      for (const [ts, p] of entries) {
        const expected = p + (ts === fallback ? pNone * 100 : 0);
        const observed = ((counts.get(ts) ?? 0) / N) * 100;
        expect(Math.abs(observed - expected), `${name}.${ts}: observed ${observed}, expected ${expected}`).toBeLessThan(3);
      }
    }
  });

  it("falls back to the most likely toolset (the first on ties) when nothing is drawn", () => {
    const allZero: Distribution = { description: "never", toolsets: { web: 0, terminal: 0, file: 0 } };
    const lowFirst: Distribution = { description: "low", toolsets: { web: 0, terminal: 0.0001, file: 0.0001 } };
    for (let i = 0; i < 100; i++) {
      expect(sampleToolsets(allZero, { seed: 1, taskId: `t${i}` })).toEqual(["web"]);
      expect(sampleToolsets(lowFirst, { seed: 1, taskId: `t${i}` })).toEqual(["terminal"]);
    }
    // reasoning: moa 90, web 30, terminal 20 — never empty.
    for (let i = 0; i < 500; i++) expect(sampleToolsets("reasoning", { seed: 9, taskId: `t${i}` }).length).toBeGreaterThan(0);
  });

  it("taskRng gives floats in [0, 1)", () => {
    const rng = taskRng({ seed: 0, taskId: "x" });
    for (let i = 0; i < 1000; i++) {
      const r = rng();
      expect(r >= 0 && r < 1).toBe(true);
    }
  });
});

describe("prepareDistribution: toolsets the build cannot provide", () => {
  const provided = new Set(["web", "terminal", "file", "todo", "memory"]);

  it("drops them with one warning per process, not per task", () => {
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    const sampler = prepareDistribution("terminal_tasks", { available: provided, warn });
    prepareDistribution("terminal_tasks", { available: provided, warn });
    expect(sampler.dropped).toEqual(["vision", "image_gen", "browser"]);
    expect(sampler.usable).toEqual(["web", "terminal", "file"]);
    for (let i = 0; i < 100; i++) {
      for (const ts of sampler.sample({ seed: 3, taskId: `task_${i}` })) expect(provided.has(ts)).toBe(true);
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("terminal_tasks");
    expect(warnings[0]).toContain("vision, image_gen, browser");
  });

  it("keeps the other toolsets' draws unchanged (draws stay aligned)", () => {
    const sampler = prepareDistribution("science", { available: provided });
    let compared = 0;
    for (let i = 0; i < 300; i++) {
      const key = { seed: 11, taskId: `task_${i}` };
      const full = sampleToolsets("science", key).filter((t) => provided.has(t));
      if (full.length === 0) continue; // the fallback may differ
      expect(sampler.sample(key)).toEqual(full);
      compared++;
    }
    expect(compared).toBeGreaterThan(250);
  });

  it("uses the fallback among usable toolsets only", () => {
    const sampler = prepareDistribution("research", { available: provided }); // web 90, terminal 10 usable
    for (let i = 0; i < 300; i++) expect(sampler.sample({ seed: 1, taskId: `t${i}` }).length).toBeGreaterThan(0);
  });

  it("refuses a distribution with nothing usable", () => {
    expect(() => prepareDistribution("browser_only", { available: provided })).toThrow(
      "Distribution 'browser_only' has no toolset this build can provide (unavailable: browser)",
    );
    expect(() => prepareDistribution("nope")).toThrow(/Unknown distribution: nope/);
  });
});

describe("loadDistributionFile", () => {
  it("adds distributions from YAML, canonicalising legacy names", () => {
    const file = join(FIXTURES, "extra.yaml");
    expect(loadDistributionFile(file)).toEqual(["coding_heavy", "web_tools_legacy"]);
    expect(getDistribution("coding_heavy")).toEqual({
      description: "Mostly terminal and file tools, sometimes web",
      toolsets: { terminal: 90, file: 85, web: 20 },
    });
    expect(getDistribution("web_tools_legacy").toolsets).toEqual({ web: 60 });
    expect(distributionSource("coding_heavy")).toBe(file);
    expect(distributionSource("default")).toBe("built-in");
    expect(listDistributions().slice(17)).toEqual(["coding_heavy", "web_tools_legacy"]);
  });

  it("names the file and the key in every error, and adds nothing from a bad file", () => {
    const f = (n: string) => join(FIXTURES, n);
    expect(() => loadDistributionFile(f("bad_yaml.yaml"))).toThrow(new RegExp(`^${f("bad_yaml.yaml")}: invalid YAML: `));
    expect(() => loadDistributionFile(f("unknown_toolset.yaml"))).toThrow(
      new RegExp(`^${f("unknown_toolset.yaml")}: distribution 'typo': unknown toolset 'termnial' \\(known: `),
    );
    expect(listDistributions()).not.toContain("fine");
    expect(() => loadDistributionFile(f("bad_probability.yaml"))).toThrow(
      new RegExp(`^${f("bad_probability.yaml")}: distribution 'too_sure': toolsets\\.web: `),
    );
    expect(() => loadDistributionFile(f("bad_key.yaml"))).toThrow(new RegExp(`^${f("bad_key.yaml")}: distribution 'misspelled': `));
    expect(() => loadDistributionFile(f("missing.yaml"))).toThrow(/missing\.yaml: cannot read distribution file/);
    expect(() => loadDistributionFile(f("bad_key.yaml"))).toThrow(DistributionError);
  });
});
