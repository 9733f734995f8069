/**
 * The statistics a CI gate stands on, against values computed by hand and an independent brute-force
 * permutation test: tasks are the unit, epochs repeated measures.
 */
import { describe, expect, it } from "vitest";
import { mcnemar, mcnemarExact, taskInterval, wilson } from "../src/score/metrics.js";
import { signFlipTest } from "../src/score/paired_test.js";
import { scoreMetrics, type ScoredSample } from "../src/score/summary.js";

/** Brute force, written apart from the module: every sign pattern, |Σ sᵢ(dᵢ − δ)| ≥ |Σ(dᵢ − δ)|. */
function bruteP(diffs: number[], delta = 0): number {
  const shifted = diffs.map((d) => d - delta);
  const observed = Math.abs(shifted.reduce((a, b) => a + b, 0));
  let extreme = 0;
  let total = 0;
  const walk = (i: number, sum: number) => {
    if (i === shifted.length) {
      total++;
      if (Math.abs(sum) >= observed - 1e-9) extreme++;
      return;
    }
    walk(i + 1, sum + shifted[i]!);
    walk(i + 1, sum - shifted[i]!);
  };
  walk(0, 0);
  return extreme / total;
}

const samples = (tasks: number, epochs: number, passed: (task: number, epoch: number) => boolean): ScoredSample[] =>
  Array.from({ length: tasks }, (_, t) => Array.from({ length: epochs }, (_, e) => ({ taskId: `t${t}`, epoch: e, passed: passed(t, e) }))).flat();

describe("one run's interval: the task is the unit", () => {
  it("Wilson 6/6 is 61.0–100 % (1 / (1 + z²/6) by hand)", () => {
    const [lo, hi] = wilson(6, 6)!;
    expect(lo).toBeCloseTo(1 / (1 + 1.959963984540054 ** 2 / 6), 12);
    expect((lo * 100).toFixed(1)).toBe("61.0");
    expect(hi).toBe(1);
  });

  it("6 tasks × 2 epochs all passing is not zero-width: the 1-epoch 61.0–100 %", () => {
    const m = scoreMetrics(samples(6, 2, () => true), 2);
    expect(m.pass_rate).toBe(1);
    expect((m.ci95![0] * 100).toFixed(1)).toBe("61.0");
    expect(m.ci95![1]).toBe(1);
  });

  it("one task × 3 epochs (1 of 3 passed) is wide, not [0.333, 0.333]", () => {
    const m = scoreMetrics(samples(1, 3, (_, e) => e === 0), 3);
    expect(m.ci95![1] - m.ci95![0]).toBeGreaterThan(0.5);
    expect(m.ci95![0]).toBeLessThanOrEqual(1 / 3);
    expect(m.ci95![1]).toBeGreaterThanOrEqual(1 / 3);
  });

  it("never narrower than the first epoch's Wilson interval, never zero-width, over many shapes", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const tasks = 1 + (seed % 9);
      const epochs = 2 + (seed % 4);
      const rate = (seed % 11) / 10;
      const passed = (t: number, e: number) => ((t * 7 + e * 3 + seed) % 10) / 10 < rate;
      const m = scoreMetrics(samples(tasks, epochs, passed), epochs);
      const first = wilson(Array.from({ length: tasks }, (_, t) => passed(t, 0)).filter(Boolean).length, tasks)!;
      expect(m.ci95![0]).toBeLessThanOrEqual(first[0] + 1e-12);
      expect(m.ci95![1]).toBeGreaterThanOrEqual(first[1] - 1e-12);
      expect(m.ci95![1] - m.ci95![0]).toBeGreaterThan(0);
    }
  });

  it("task means: 3 tasks at 2/2, 1/2, 0/2 give Wilson of 1.5 successes in 3, joined with the first epoch's", () => {
    const tasks = [
      { n: 2, c: 2, firstPassed: true },
      { n: 2, c: 1, firstPassed: false },
      { n: 2, c: 0, firstPassed: false },
    ];
    const byMean = wilson(1.5, 3)!;
    const byFirst = wilson(1, 3)!;
    expect(taskInterval(tasks)).toEqual([Math.min(byMean[0], byFirst[0]), Math.max(byMean[1], byFirst[1])]);
  });
});

describe("two runs: exact McNemar and the sign-flip test agree, and their interval agrees with p", () => {
  it("McNemar exact by hand: 4 vs 0 discordant → p = 0.125, 5 vs 0 → 0.0625 two-sided (one-sided half)", () => {
    expect(mcnemarExact(4, 0)).toBe(0.125);
    expect(mcnemarExact(5, 0)).toBe(0.0625);
    expect(mcnemar(5, 0)).toEqual({ twoSided: 0.0625, drop: 1 / 32 });
    expect(mcnemar(0, 5).drop).toBeCloseTo(1, 12);
    expect(mcnemar(2, 1).twoSided).toBe(1);
  });

  it("with one epoch the enumeration gives McNemar's p: 4 lost, 0 gained, 2 unchanged", () => {
    const t = signFlipTest([-1, -1, -1, -1, 0, 0])!;
    expect(t.method).toBe("exact");
    expect(t.p_two_sided).toBe(0.125);
    expect(t.p_drop).toBe(0.0625);
    expect(t.mean_delta).toBeCloseTo(-4 / 6, 12);
    // Not significant, so the interval holds 0; and it is not the zero-width [−100, −100] seen before.
    expect(t.ci95[0]).toBeLessThan(-4 / 6);
    expect(t.ci95[1]).toBeGreaterThanOrEqual(0);
  });

  it("matches an independent brute force on per-task rates of several epochs, p and the interval's ends", () => {
    const diffs = [-1, -2 / 3, -1 / 3, 0, 1 / 3, -1, -2 / 3, -1];
    const t = signFlipTest(diffs)!;
    expect(t.p_two_sided).toBeCloseTo(bruteP(diffs), 12);
    expect(t.p_two_sided).toBeLessThan(0.05);
    expect(t.ci95[1]).toBeLessThan(0);
    // Inverting the test: just inside an end the brute force does not reject, just outside it does.
    for (const [edge, dir] of [[t.ci95[0], -1], [t.ci95[1], 1]] as const) {
      expect(bruteP(diffs, edge - dir * 1e-6)).toBeGreaterThan(0.05);
      expect(bruteP(diffs, edge + dir * 0.02)).toBeLessThanOrEqual(0.05);
    }
  });

  it("the interval excludes 0 exactly when p < 0.05, over many random shapes (exact and Monte-Carlo)", () => {
    let rejected = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const n = seed % 2 ? 5 + (seed % 11) : 20 + seed;
      const diffs = Array.from({ length: n }, (_, i) => (((i * 31 + seed * 17) % 7) - 3 - (seed % 3 === 0 ? 1 : 0)) / 4).map((d) => Math.max(-1, Math.min(1, d)));
      const t = signFlipTest(diffs)!;
      const holdsZero = t.ci95[0] <= 0 && t.ci95[1] >= 0;
      expect(holdsZero).toBe(t.p_two_sided > 0.05);
      expect(t.ci95[1]).toBeGreaterThan(t.ci95[0]);
      if (!holdsZero) rejected++;
    }
    expect(rejected).toBeGreaterThan(5);
  });

  it("one task is never a certainty: the interval spans the whole range", () => {
    expect(signFlipTest([-1])!.ci95).toEqual([-1, 1]);
    expect(signFlipTest([])).toBeNull();
  });
});
