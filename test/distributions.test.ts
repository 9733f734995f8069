import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

// Upstream's table (toolset_distributions.py @0134f6f4), each distribution's toolsets in upstream's order.
const HERMES_TABLE: Record<string, Record<string, number>> = {
  default: { web: 100, vision: 100, image_gen: 100, terminal: 100, file: 100, moa: 100, browser: 100 },
  image_gen: { image_gen: 90, vision: 90, web: 55, terminal: 45, moa: 10 },
  research: { web: 90, browser: 70, vision: 50, moa: 40, terminal: 10 },
  science: { web: 94, terminal: 94, file: 94, vision: 65, browser: 50, image_gen: 15, moa: 10 },
  development: { terminal: 80, file: 80, moa: 60, web: 30, vision: 10 },
  safe: { web: 80, browser: 70, vision: 60, image_gen: 60, moa: 50 },
  balanced: { web: 50, vision: 50, image_gen: 50, terminal: 50, file: 50, moa: 50, browser: 50 },
  minimal: { web: 100 },
  terminal_only: { terminal: 100, file: 100 },
  terminal_web: { terminal: 100, file: 100, web: 100 },
  creative: { image_gen: 90, vision: 90, web: 30 },
  reasoning: { moa: 90, web: 30, terminal: 20 },
  browser_use: { browser: 100, web: 80, vision: 70 },
  browser_only: { browser: 100 },
  browser_tasks: { browser: 97, vision: 12, terminal: 15 },
  terminal_tasks: { terminal: 97, file: 97, web: 97, browser: 75, vision: 50, image_gen: 10 },
  mixed_tasks: { browser: 92, terminal: 92, file: 92, web: 35, vision: 15, image_gen: 15 },
};

describe("the 17 Hermes distributions", () => {
  it("has exactly Hermes' names, in Hermes' order", () => {
    expect(Object.keys(DISTRIBUTIONS)).toEqual(Object.keys(HERMES_TABLE));
    expect(listDistributions()).toHaveLength(17);
  });

  it("has Hermes' numbers, in upstream's order (the draw order and the order of toolsets_used)", () => {
    for (const [name, expected] of Object.entries(HERMES_TABLE)) {
      expect(DISTRIBUTIONS[name]!.toolsets, name).toEqual(expected);
      expect(Object.keys(DISTRIBUTIONS[name]!.toolsets), `${name} key order`).toEqual(Object.keys(expected));
    }
  });

  it("has Hermes' descriptions and sane probabilities", () => {
    expect(DISTRIBUTIONS.default!.description).toBe("All available tools, all the time");
    expect(DISTRIBUTIONS.browser_tasks!.description).toBe(
      "Browser-focused distribution (browser toolset includes web_search for finding URLs since Google blocks direct browser searches)",
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
    expect((err as Error).message).toBe(
      `Unknown distribution: nope. Available: ${Object.keys(HERMES_TABLE).sort().join(", ")}`,
    );
    expect(() => getDistribution("toString")).toThrow(/Unknown distribution: toString/);
  });
});

describe("seeded sampling", () => {
  it("is deterministic per (seed, task id, epoch), whatever the order or sharding", () => {
    const ids = Array.from({ length: 200 }, (_, i) => `task_${i}`);
    const forward = ids.map((taskId) => sampleToolsets("balanced", { seed: 42, taskId }));
    const reversed = [...ids]
      .reverse()
      .map((taskId) => sampleToolsets("balanced", { seed: 42, taskId }))
      .reverse();
    const shardA = ids
      .filter((_, i) => i % 2 === 0)
      .map((taskId) => [taskId, sampleToolsets("balanced", { seed: 42, taskId })] as const);
    const shardB = ids
      .filter((_, i) => i % 2 === 1)
      .map((taskId) => [taskId, sampleToolsets("balanced", { seed: 42, taskId })] as const);
    const sharded = new Map([...shardA, ...shardB]);
    expect(reversed).toEqual(forward);
    expect(ids.map((id) => sharded.get(id))).toEqual(forward);
    expect(sampleToolsets("balanced", { seed: "42", taskId: "task_3", epoch: 0 })).toEqual(forward[3]);
  });

  it("differs between seeds, task ids and epochs", () => {
    const ids = Array.from({ length: 50 }, (_, i) => `task_${i}`);
    const draw = (seed: number, epoch = 0) =>
      ids.map((taskId) => sampleToolsets("balanced", { seed, taskId, epoch }).join(","));
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
        for (const ts of sampleToolsets(name, { seed: 2024, taskId: `task_${i}` }))
          counts.set(ts, (counts.get(ts) ?? 0) + 1);
      }
      for (const [ts, p] of entries) {
        const expected = p + (ts === fallback ? pNone * 100 : 0);
        const observed = ((counts.get(ts) ?? 0) / N) * 100;
        expect(Math.abs(observed - expected), `${name}.${ts}: observed ${observed}, expected ${expected}`).toBeLessThan(
          3,
        );
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
    for (let i = 0; i < 500; i++)
      expect(sampleToolsets("reasoning", { seed: 9, taskId: `t${i}` }).length).toBeGreaterThan(0);
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

  it("draws them as the original does, with one warning per process, not per task", () => {
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    const sampler = prepareDistribution("terminal_tasks", { available: provided, warn });
    prepareDistribution("terminal_tasks", { available: provided, warn });
    expect(sampler.unprovided).toEqual(["browser", "vision", "image_gen"]);
    expect(sampler.provided).toEqual(["terminal", "file", "web"]);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const key = { seed: 3, taskId: `task_${i}` };
      const drawn = sampler.sample(key);
      expect(drawn).toEqual(sampleToolsets("terminal_tasks", key));
      for (const ts of drawn) seen.add(ts);
    }
    expect([...seen].sort()).toEqual(["browser", "file", "image_gen", "terminal", "vision", "web"]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("terminal_tasks");
    expect(warnings[0]).toContain("includes browser, vision, image_gen, which this build does not provide");
  });

  it("keeps the original's frequencies: reasoning draws moa (unprovided) about 90 % of the time", () => {
    const sampler = prepareDistribution("reasoning", { available: provided });
    let moa = 0;
    let onlyMoa = 0;
    const N = 5000;
    for (let i = 0; i < N; i++) {
      const d = sampler.sample({ seed: 8, taskId: `t${i}` });
      if (d.includes("moa")) moa++;
      if (d.length === 1 && d[0] === "moa") onlyMoa++;
    }
    // moa 90 % plus the fallback when nothing is drawn (0.1 * 0.7 * 0.8 = 5.6 %): the original's 95.6 %.
    expect(Math.abs((moa / N) * 100 - 95.6)).toBeLessThan(2);
    expect(onlyMoa).toBeGreaterThan(0); // such a task offers the model no tool at all, as in the original
  });

  it("runs a distribution with nothing provided without tools (drawn and recorded as in the original), saying so once", () => {
    const notes: string[] = [];
    const sampler = prepareDistribution("browser_only", { available: provided, warn: (m) => notes.push(m) });
    expect(sampler.provided).toEqual([]);
    expect(sampler.unprovided).toEqual(["browser"]);
    expect(sampler.sample({ seed: 1, taskId: "t" })).toEqual(["browser"]);
    expect(notes).toEqual([
      "distribution 'browser_only' has no toolset this build provides (browser): they are drawn and recorded in toolsets_used as in Hermes, and every task runs without tools",
    ]);
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
    expect(() => loadDistributionFile(f("bad_yaml.yaml"))).toThrow(
      new RegExp(`^${f("bad_yaml.yaml")}:4: invalid YAML: `),
    );
    expect(() => loadDistributionFile(f("unknown_toolset.yaml"))).toThrow(
      new RegExp(`^${f("unknown_toolset.yaml")}: distribution 'typo': unknown toolset 'termnial' \\(known: `),
    );
    expect(listDistributions()).not.toContain("fine");
    expect(() => loadDistributionFile(f("bad_probability.yaml"))).toThrow(
      new RegExp(`^${f("bad_probability.yaml")}: distribution 'too_sure': toolsets\\.web: `),
    );
    expect(() => loadDistributionFile(f("bad_key.yaml"))).toThrow(
      new RegExp(`^${f("bad_key.yaml")}: distribution 'misspelled': `),
    );
    expect(() => loadDistributionFile(f("missing.yaml"))).toThrow(/missing\.yaml: cannot read distribution file/);
    expect(() => loadDistributionFile(f("bad_key.yaml"))).toThrow(DistributionError);
  });

  it("refuses a hostile file in one line naming it: an alias inside itself, an unknown tag, a key twice", () => {
    const dir = mkdtempSync(join(tmpdir(), "hb-dist-hostile-"));
    try {
      const cases: [string, string, RegExp][] = [
        ["alias.yaml", "loop: &a\n  description: x\n  toolsets: {terminal: 50}\n  self: *a\n", /alias|nested/],
        ["tag.yaml", 'x:\n  description: !!js/function "f"\n  toolsets: {terminal: 50}\n', /tag/i],
        ["twice.yaml", "x:\n  description: a\n  description: b\n  toolsets: {terminal: 50}\n", /unique|twice|dupl/i],
      ];
      for (const [name, text, why] of cases) {
        const file = join(dir, name);
        writeFileSync(file, text);
        let message = "";
        try {
          loadDistributionFile(file);
        } catch (err) {
          expect(err, name).toBeInstanceOf(DistributionError);
          message = (err as Error).message;
        }
        expect(message, name).toMatch(why);
        expect(message.startsWith(file), name).toBe(true);
        expect(message.split("\n"), name).toHaveLength(1);
      }
      expect(listDistributions()).not.toContain("loop");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
