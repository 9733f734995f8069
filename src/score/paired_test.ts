/**
 * The paired comparison of two runs with the task as the unit (current − baseline per-task pass rate):
 * - the test: a sign-flip permutation test over the tasks' differences. Under "no change" the two runs are
 *   exchangeable within a task, so each difference is as likely to have either sign; the test enumerates
 *   (or samples, for many tasks) the 2^n sign patterns. With one epoch on both sides the differences are
 *   −1, 0 or +1 and its p is the exact McNemar test's, which is used then.
 * - the 95 % interval of the mean difference: Newcombe's score interval for paired rates (MOVER: each
 *   run's Wilson interval over its tasks' mean rates, combined with the correlation of the paired rates),
 *   then made to agree with the test: it holds 0 exactly when the two-sided p is at least 0.05.
 */
import { seededRandom, wilson } from "./metrics.js";

export interface PairedTest {
  /** Tasks paired. */
  n: number;
  /** Mean of the paired differences (a fraction, −1..1). */
  mean_delta: number;
  /** Two-sided p of "no change". */
  p_two_sided: number;
  /** One-sided p of "no drop": how likely a mean difference this low or lower is by chance. */
  p_drop: number;
  /** 95 % interval of the mean difference (fractions), agreeing with the two-sided test about 0. */
  ci95: [number, number];
  method: "exact" | "monte_carlo";
  /** Sign patterns used: 2^n when enumerated, the Monte-Carlo draws, 0 when the exact McNemar p was given. */
  patterns: number;
}

export interface PairedTestOptions {
  /** Enumerate every sign pattern up to this many tasks (2^16 = 65,536 patterns). */
  exactUpTo?: number;
  /** Monte-Carlo draws beyond that. */
  resamples?: number;
  seed?: number;
  /** Two-sided level of the test that the interval agrees with. */
  alpha?: number;
}

/** The sum Σ sᵢ·dᵢ of each sign pattern. */
interface SignPatterns {
  a: Float64Array;
  exact: boolean;
}

function enumeratePatterns(diffs: readonly number[]): SignPatterns {
  const n = diffs.length;
  const size = 2 ** n;
  const a = new Float64Array(size);
  a[0] = -diffs.reduce((s, d) => s + d, 0);
  // Pattern `mask` has sᵢ = +1 where bit i is set; it differs from mask without its lowest bit in one sign.
  for (let mask = 1; mask < size; mask++) {
    const low = mask & -mask;
    const i = 31 - Math.clz32(low);
    a[mask] = a[mask ^ low]! + 2 * diffs[i]!;
  }
  return { a, exact: true };
}

function samplePatterns(diffs: readonly number[], resamples: number, seed: number): SignPatterns {
  const rnd = seededRandom(seed);
  const a = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sa = 0;
    for (const d of diffs) sa += rnd() < 0.5 ? -d : d;
    a[r] = sa;
  }
  return { a, exact: false };
}

/** How often a sign pattern's sum is at least as extreme as the observed one: two-sided, and on the low side. */
function signFlipP(p: SignPatterns, sum: number): { twoSided: number; drop: number } {
  const tol = 1e-9 * (1 + Math.abs(sum));
  let both = 0;
  let low = 0;
  for (let r = 0; r < p.a.length; r++) {
    if (Math.abs(p.a[r]!) >= Math.abs(sum) - tol) both++;
    if (p.a[r]! <= sum + tol) low++;
  }
  const share = (count: number) => (p.exact ? count / p.a.length : (count + 1) / (p.a.length + 1));
  return { twoSided: Math.min(1, share(both)), drop: Math.min(1, share(low)) };
}

const meanOf = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Correlation of the paired rates with Newcombe's continuity correction: a positive covariance is reduced
 * by 1/(2n) (for 0/1 rates that is his φ* = max(AD − BC − N/2, 0) / √((A+B)(C+D)(A+C)(B+D))), so a
 * handful of agreeing tasks cannot make the interval collapse. 0 when either side does not vary.
 */
function correlation(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  const mx = meanOf(xs);
  const my = meanOf(ys);
  let cov = 0;
  let vx = 0;
  let vy = 0;
  for (let i = 0; i < n; i++) {
    cov += (xs[i]! - mx) * (ys[i]! - my);
    vx += (xs[i]! - mx) ** 2;
    vy += (ys[i]! - my) ** 2;
  }
  if (vx === 0 || vy === 0) return 0;
  cov /= n;
  if (cov > 0) cov = Math.max(cov - 1 / (2 * n), 0);
  return cov / Math.sqrt((vx / n) * (vy / n));
}

/**
 * Newcombe's hybrid score interval for the difference of paired rates, by MOVER: from each run's Wilson
 * interval [l, u] around its mean θ and the (corrected) correlation r of the paired rates,
 *   lower = δ − √((θ₂ − l₂)² + (u₁ − θ₁)² − 2r(θ₂ − l₂)(u₁ − θ₁)),
 *   upper = δ + √((u₂ − θ₂)² + (θ₁ − l₁)² − 2r(u₂ − θ₂)(θ₁ − l₁)),   δ = θ₂ − θ₁.
 */
export function pairedRateInterval(baseline: readonly number[], current: readonly number[]): [number, number] {
  const n = baseline.length;
  const t1 = meanOf(baseline);
  const t2 = meanOf(current);
  const [l1, u1] = wilson(t1 * n, n)!;
  const [l2, u2] = wilson(t2 * n, n)!;
  const r = correlation(baseline, current);
  const delta = t2 - t1;
  const lower = delta - Math.sqrt(Math.max(0, (t2 - l2) ** 2 + (u1 - t1) ** 2 - 2 * r * (t2 - l2) * (u1 - t1)));
  const upper = delta + Math.sqrt(Math.max(0, (u2 - t2) ** 2 + (t1 - l1) ** 2 - 2 * r * (u2 - t2) * (t1 - l1)));
  return [Math.max(-1, lower), Math.min(1, upper)];
}

/**
 * The paired comparison of per-task rates (baseline[i] and current[i] belong to task i). `exactP`, when
 * given, is the test's p (exact McNemar for one epoch on both sides, which the enumeration equals).
 */
export function pairedTest(
  baseline: readonly number[],
  current: readonly number[],
  opts: PairedTestOptions & { exactP?: { twoSided: number; drop: number } } = {},
): PairedTest | null {
  const n = baseline.length;
  if (n === 0) return null;
  const alpha = opts.alpha ?? 0.05;
  const diffs = current.map((c, i) => c - baseline[i]!);
  const patterns = opts.exactP
    ? null
    : n <= (opts.exactUpTo ?? 16)
      ? enumeratePatterns(diffs)
      : samplePatterns(diffs, opts.resamples ?? 20_000, opts.seed ?? 1);
  // Rates are fractions of small epoch counts: a sum of their differences within 1e-9 of 0 is 0 (three tasks whose
  // rates 1/3, 2/3, 1/10 trade places sum to −9e-18 in floating point, which --max-drop 0 took for a drop).
  const raw = diffs.reduce((s, d) => s + d, 0);
  const sum = Math.abs(raw) < 1e-9 ? 0 : raw;
  const p = opts.exactP ?? signFlipP(patterns!, sum);
  let [lo, hi] = pairedRateInterval(baseline, current);
  // The interval agrees with the test about 0: widened to 0 when the test does not reject, cut short of 0 when it does.
  const eps = 1e-9;
  if (p.twoSided >= alpha) {
    lo = Math.min(lo, 0);
    hi = Math.max(hi, 0);
  } else if (sum < 0) {
    hi = Math.min(hi, -eps);
  } else {
    lo = Math.max(lo, eps);
  }
  return {
    n,
    mean_delta: sum / n,
    p_two_sided: p.twoSided,
    p_drop: p.drop,
    ci95: [lo, hi],
    method: opts.exactP ? "exact" : patterns!.exact ? "exact" : "monte_carlo",
    patterns: patterns ? patterns.a.length : 0,
  };
}
