/**
 * The statistics a CI gate stands on, against values computed by hand and an independent brute-force
 * permutation test: tasks are the unit, epochs repeated measures.
 */
import { describe, expect, it } from "vitest";
import { mcnemar, seededRandom, taskInterval, wilson } from "../src/score/metrics.js";
import { pairedRateInterval, pairedTest } from "../src/score/paired_test.js";
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
  Array.from({ length: tasks }, (_, t) =>
    Array.from({ length: epochs }, (_, e) => ({ taskId: `t${t}`, epoch: e, passed: passed(t, e) })),
  ).flat();

describe("one run's interval: the task is the unit", () => {
  it("Wilson 6/6 is 61.0–100 % (1 / (1 + z²/6) by hand)", () => {
    const [lo, hi] = wilson(6, 6)!;
    expect(lo).toBeCloseTo(1 / (1 + 1.959963984540054 ** 2 / 6), 12);
    expect((lo * 100).toFixed(1)).toBe("61.0");
    expect(hi).toBe(1);
  });

  it("6 tasks × 2 epochs all passing is not zero-width: the 1-epoch 61.0–100 %", () => {
    const m = scoreMetrics(
      samples(6, 2, () => true),
      2,
    );
    expect(m.pass_rate).toBe(1);
    expect((m.ci95![0] * 100).toFixed(1)).toBe("61.0");
    expect(m.ci95![1]).toBe(1);
  });

  it("one task × 3 epochs (1 of 3 passed) is wide, not [0.333, 0.333]", () => {
    const m = scoreMetrics(
      samples(1, 3, (_, e) => e === 0),
      3,
    );
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

describe("two runs: the test over tasks, and an interval that agrees with it", () => {
  const rates = (diffs: number[]) => ({
    base: diffs.map((d) => (d < 0 ? 1 : d > 0 ? 0 : 0.5)),
    cur: diffs.map((d) => (d < 0 ? 1 + d : d > 0 ? d : 0.5)),
  });

  it("McNemar exact by hand: 4 vs 0 discordant → p = 0.125, 5 vs 0 → 0.0625 two-sided (one-sided half)", () => {
    expect(mcnemar(4, 0).twoSided).toBe(0.125);
    expect(mcnemar(5, 0).twoSided).toBe(0.0625);
    expect(mcnemar(5, 0)).toEqual({ twoSided: 0.0625, drop: 1 / 32 });
    expect(mcnemar(0, 5).drop).toBeCloseTo(1, 12);
    expect(mcnemar(2, 1).twoSided).toBe(1);
  });

  it("with one epoch the sign-flip enumeration gives McNemar's p: 4 lost, 0 gained, 2 unchanged", () => {
    const t = pairedTest([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 1, 0])!;
    expect(t.method).toBe("exact");
    expect(t.patterns).toBe(64);
    expect(t.p_two_sided).toBe(0.125);
    expect(t.p_two_sided).toBe(mcnemar(4, 0).twoSided);
    expect(t.p_drop).toBe(0.0625);
    expect(t.mean_delta).toBeCloseTo(-4 / 6, 12);
    // Not significant, so the interval holds 0; and it is not the zero-width [−100, −100] seen before.
    expect(t.ci95[0]).toBeLessThan(-4 / 6);
    expect(t.ci95[1]).toBeGreaterThanOrEqual(0);
  });

  it("the p of per-task rates over several epochs matches an independent brute force", () => {
    const diffs = [-1, -2 / 3, -1 / 3, 0, 1 / 3, -1, -2 / 3, -1];
    const { base, cur } = rates(diffs);
    const t = pairedTest(base, cur)!;
    expect(t.p_two_sided).toBeCloseTo(bruteP(diffs), 12);
    expect(t.p_two_sided).toBeLessThan(0.05);
    expect(t.ci95[1]).toBeLessThan(0);
    expect(t.ci95[0]).toBeLessThan(t.mean_delta);
  });

  it("Monte-Carlo beyond 16 tasks is seeded and close to the exact value", () => {
    const diffs = Array.from({ length: 18 }, (_, i) => (i < 6 ? -1 : i < 8 ? 1 : 0));
    const { base, cur } = rates(diffs);
    const mc = pairedTest(base, cur, { resamples: 40_000 })!;
    expect(mc.method).toBe("monte_carlo");
    expect(pairedTest(base, cur, { resamples: 40_000 })!.p_two_sided).toBe(mc.p_two_sided);
    // 6 lost, 2 gained: the exact value is McNemar's 2 · P(X ≤ 2), X ~ Bin(8, ½) = 0.2890625.
    expect(Math.abs(mc.p_two_sided - 0.2890625)).toBeLessThan(0.015);
    expect(pairedTest(base, cur, { exactUpTo: 18 })!.p_two_sided).toBeCloseTo(0.2890625, 12);
  });

  it("the interval is Newcombe's hybrid score interval (his method 10) computed by hand", () => {
    // 20 tasks, one epoch: A = 10 passed in both, B = 4 only in the baseline, C = 0 only now, D = 6 in neither.
    const base = Array.from({ length: 20 }, (_, i) => (i < 14 ? 1 : 0));
    const cur = Array.from({ length: 20 }, (_, i) => (i < 10 ? 1 : 0));
    const [l1, u1] = wilson(14, 20)!;
    const [l2, u2] = wilson(10, 20)!;
    const phi = Math.max(10 * 6 - 4 * 0 - 20 / 2, 0) / Math.sqrt(14 * 6 * 10 * 10);
    const d = 0.5 - 0.7;
    const lower = d - Math.sqrt((0.5 - l2) ** 2 + (u1 - 0.7) ** 2 - 2 * phi * (0.5 - l2) * (u1 - 0.7));
    const upper = d + Math.sqrt((u2 - 0.5) ** 2 + (0.7 - l1) ** 2 - 2 * phi * (u2 - 0.5) * (0.7 - l1));
    expect(pairedRateInterval(base, cur)[0]).toBeCloseTo(lower, 12);
    expect(pairedRateInterval(base, cur)[1]).toBeCloseTo(upper, 12);
    expect(upper).toBeGreaterThan(0);
    const t = pairedTest(base, cur, { exactP: mcnemar(4, 0) })!;
    expect(t.p_two_sided).toBe(0.125);
    expect(t.ci95[0]).toBeCloseTo(lower, 12);
    expect(t.ci95[1]).toBeCloseTo(upper, 12);
  });

  it("the interval holds 0 exactly when p ≥ 0.05, and is never zero-width, over many shapes", () => {
    let rejected = 0;
    for (let seed = 1; seed <= 80; seed++) {
      const n = 1 + (seed % 23);
      const epochs = 1 + (seed % 3);
      const base = Array.from({ length: n }, (_, i) => ((i * 7 + seed) % (epochs + 1)) / epochs);
      const cur = base.map((b, i) =>
        Math.max(0, Math.min(1, b + (((i * 13 + seed * 5) % 5) - 2 - (seed % 4 === 0 ? 1 : 0)) / epochs / 2)),
      );
      const t = pairedTest(base, cur)!;
      const holdsZero = t.ci95[0] <= 0 && t.ci95[1] >= 0;
      expect(holdsZero, `seed ${seed}`).toBe(t.p_two_sided >= 0.05);
      expect(t.ci95[1] - t.ci95[0], `seed ${seed}`).toBeGreaterThan(0);
      expect(t.ci95[0]).toBeLessThanOrEqual(t.mean_delta);
      expect(t.ci95[1]).toBeGreaterThanOrEqual(t.mean_delta);
      if (!holdsZero) rejected++;
    }
    expect(rejected).toBeGreaterThanOrEqual(3);
  });

  it("no change on 7 tasks is not a certainty: a wide interval around 0, p = 1", () => {
    const t = pairedTest([1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1])!;
    expect(t.p_two_sided).toBe(1);
    expect(t.ci95[0]).toBeLessThan(-0.3);
    expect(t.ci95[1]).toBeGreaterThan(0.3);
    expect(pairedTest([1], [0])!.ci95[0]).toBeLessThan(-0.9);
    expect(pairedTest([], [])).toBeNull();
  });
});

describe("two runs with unequal epochs per task: the test takes the epochs both runs have", () => {
  /** Bernoulli outcomes of `n` epochs at rate p, from `rnd`. */
  const outcomes = (rnd: () => number, p: number, n: number) => Array.from({ length: n }, () => rnd() < p);
  const rateOf = (xs: boolean[]) => xs.filter(Boolean).length / xs.length;

  it("keeps its level under 'no change' (1 epoch against 10, tasks that mostly pass); all epochs would not", () => {
    // The sign-flip test assumes each task's difference is symmetric about 0 under no change; a 0/1 rate against
    // a tenth-step one is not, and over every epoch the test rejected about twice as often as alpha. Over each
    // task's first epoch in both runs it is McNemar's situation again.
    const rnd = seededRandom(7);
    const trials = 200;
    let common = 0;
    let all = 0;
    for (let t = 0; t < trials; t++) {
      const tasks = Array.from({ length: 30 }, () => {
        const p = 0.85 + 0.15 * rnd();
        return { base: outcomes(rnd, p, 1), cur: outcomes(rnd, p, 10) };
      });
      const opts = { resamples: 2000, seed: t + 1 };
      const first = pairedTest(
        tasks.map((x) => rateOf(x.base)),
        tasks.map((x) => rateOf(x.cur.slice(0, 1))),
        opts,
      )!;
      const every = pairedTest(
        tasks.map((x) => rateOf(x.base)),
        tasks.map((x) => rateOf(x.cur)),
        opts,
      )!;
      if (first.p_drop < 0.05) common++;
      if (every.p_drop < 0.05) all++;
    }
    expect(common / trials).toBeLessThan(0.075);
    expect(all / trials).toBeGreaterThan(0.09);
  });
});
