/**
 * Pass-rate statistics: Wilson intervals (of a pass rate, and with the task as the unit), the unbiased
 * pass@k and pass^k estimators, a seeded PRNG, and the exact McNemar test for paired runs.
 */

/** 95 % Wilson score interval for `passed` successes out of `n` (null when n = 0). */
export function wilson(passed: number, n: number, z = 1.959963984540054): [number, number] | null {
  if (n <= 0) return null;
  const p = passed / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** C(a, k) / C(b, k) for a ≤ b, as a product (no overflow for large counts). */
function binomialRatio(a: number, b: number, k: number): number {
  if (k > a) return 0;
  let r = 1;
  for (let i = 0; i < k; i++) r *= (a - i) / (b - i);
  return r;
}

/** Unbiased pass@k for one task with n samples of which c passed: 1 − C(n−c, k)/C(n, k). */
export function passAtK(n: number, c: number, k: number): number {
  if (k < 1 || k > n) throw new RangeError(`pass@k needs 1 <= k <= n (k=${k}, n=${n})`);
  return 1 - binomialRatio(n - c, n, k);
}

/** pass^k (all k samples right) for one task: C(c, k)/C(n, k). */
export function passHatK(n: number, c: number, k: number): number {
  if (k < 1 || k > n) throw new RangeError(`pass^k needs 1 <= k <= n (k=${k}, n=${n})`);
  return binomialRatio(c, n, k);
}

/** Small, fast, seeded PRNG (mulberry32) so Monte-Carlo p-values are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Exact McNemar test on the discordant pairs: `lost` tasks passed only in the baseline, `gained` only in
 * the current run. Two-sided p = min(1, 2·P(X ≤ min(lost, gained))) and the one-sided p of a drop
 * P(X ≥ lost), with X ~ Binomial(lost + gained, 1/2).
 */
export function mcnemar(lost: number, gained: number): { twoSided: number; drop: number } {
  const n = lost + gained;
  if (n === 0) return { twoSided: 1, drop: 1 };
  const cdf = (k: number) => {
    // Sum in log space: C(n, i) / 2^n for i = 0..k.
    let logC = 0;
    let total = 0;
    for (let i = 0; i <= k; i++) {
      if (i > 0) logC += Math.log((n - i + 1) / i);
      total += Math.exp(logC - n * Math.LN2);
    }
    return Math.min(1, total);
  };
  // P(X ≥ lost) = P(n − X ≤ gained) by symmetry.
  return { twoSided: Math.min(1, 2 * cdf(Math.min(lost, gained))), drop: cdf(gained) };
}

/** What the one-run interval needs of a task: its scored epochs, how many passed, and its first scored epoch. */
export interface TaskPasses {
  n: number;
  c: number;
  firstPassed: boolean;
}

/**
 * 95 % interval of a run's pass rate with the task as the unit. One epoch per task: the Wilson interval.
 * Several: the Wilson interval of the mean of per-task pass rates over n tasks (a rate in [0, 1] with
 * mean μ has variance at most μ(1 − μ), so this is the widest a task-level interval needs to be), joined
 * with the Wilson interval of each task's first scored epoch alone, so repeated epochs never claim more
 * certainty than one epoch on the same tasks would. Null without a scored task.
 */
export function taskInterval(tasks: readonly TaskPasses[]): [number, number] | null {
  if (tasks.length === 0) return null;
  const meanSum = tasks.reduce((s, t) => s + t.c / t.n, 0);
  const first = tasks.filter((t) => t.firstPassed).length;
  const byMean = wilson(meanSum, tasks.length)!;
  const byFirst = wilson(first, tasks.length)!;
  return [Math.min(byMean[0], byFirst[0]), Math.max(byMean[1], byFirst[1])];
}
