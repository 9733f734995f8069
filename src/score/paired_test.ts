/**
 * The paired comparison of two runs with the task as the unit: a sign-flip permutation test over the
 * tasks' paired differences (current − baseline per-task pass rate), and the 95 % interval of the mean
 * difference obtained by inverting that same test, so the interval excludes 0 exactly when p < 0.05.
 *
 * Under "no change" each task's difference is as likely to have either sign; the test enumerates (or
 * samples, for many tasks) the 2^n sign patterns. With one epoch on both sides the differences are −1, 0
 * or +1 and the two-sided p is the exact McNemar test's.
 */
import { seededRandom } from "./metrics.js";

export interface PairedTest {
  /** Tasks paired. */
  n: number;
  /** Mean of the paired differences (a fraction, −1..1). */
  mean_delta: number;
  /** Two-sided p of "no change". */
  p_two_sided: number;
  /** One-sided p of "no drop": how likely a mean difference this low or lower is by chance. */
  p_drop: number;
  /** 95 % interval of the mean difference (fractions), from inverting the two-sided test. */
  ci95: [number, number];
  method: "exact" | "monte_carlo";
  /** Sign patterns used: 2^n when exact, the Monte-Carlo draws otherwise. */
  patterns: number;
}

export interface PairedTestOptions {
  /** Enumerate every sign pattern up to this many tasks (2^16 = 65,536 patterns). */
  exactUpTo?: number;
  /** Monte-Carlo draws beyond that. */
  resamples?: number;
  seed?: number;
  /** Two-sided level of the interval. */
  alpha?: number;
}

/** The sums Σ sᵢ·dᵢ and Σ sᵢ for each sign pattern: the statistic at any shift δ is A − δ·B. */
interface SignPatterns {
  a: Float64Array;
  b: Float64Array;
  exact: boolean;
}

function enumeratePatterns(diffs: readonly number[]): SignPatterns {
  const n = diffs.length;
  const size = 2 ** n;
  const a = new Float64Array(size);
  const b = new Float64Array(size);
  a[0] = -diffs.reduce((s, d) => s + d, 0);
  b[0] = -n;
  // Pattern `mask` has sᵢ = +1 where bit i is set; it differs from mask without its lowest bit in one sign.
  for (let mask = 1; mask < size; mask++) {
    const low = mask & -mask;
    const i = 31 - Math.clz32(low);
    a[mask] = a[mask ^ low]! + 2 * diffs[i]!;
    b[mask] = b[mask ^ low]! + 2;
  }
  return { a, b, exact: true };
}

function samplePatterns(diffs: readonly number[], resamples: number, seed: number): SignPatterns {
  const rnd = seededRandom(seed);
  const a = new Float64Array(resamples);
  const b = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sa = 0;
    let sb = 0;
    for (const d of diffs) {
      const s = rnd() < 0.5 ? -1 : 1;
      sa += s * d;
      sb += s;
    }
    a[r] = sa;
    b[r] = sb;
  }
  return { a, b, exact: false };
}

const tolerance = (x: number) => 1e-9 * (1 + Math.abs(x));

/** p-value of the shift δ: how often |Σ sᵢ(dᵢ − δ)| is at least the observed |Σ(dᵢ − δ)|. */
function twoSidedP(p: SignPatterns, sum: number, n: number, delta: number): number {
  const observed = Math.abs(sum - n * delta);
  const edge = observed - tolerance(observed);
  let count = 0;
  for (let r = 0; r < p.a.length; r++) if (Math.abs(p.a[r]! - delta * p.b[r]!) >= edge) count++;
  return p.exact ? count / p.a.length : (count + 1) / (p.a.length + 1);
}

function dropP(p: SignPatterns, sum: number): number {
  const edge = sum + tolerance(sum);
  let count = 0;
  for (let r = 0; r < p.a.length; r++) if (p.a[r]! <= edge) count++;
  return p.exact ? count / p.a.length : (count + 1) / (p.a.length + 1);
}

/** The shift where p crosses alpha, between `inside` (p > alpha) and `outside` (p ≤ alpha). */
function boundary(pOf: (delta: number) => number, alpha: number, inside: number, outside: number): number {
  let lo = inside;
  let hi = outside;
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if (pOf(mid) > alpha) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * Sign-flip permutation test of paired differences dᵢ ∈ [−1, 1] (one per task), with its inverted
 * interval. `exactP`, when given, replaces the two-sided and one-sided p at δ = 0 (the exact McNemar
 * values for one epoch on both sides, which the enumeration equals); the interval is then made to agree
 * with it: 0 lies inside exactly when the two-sided p is above alpha.
 */
export function signFlipTest(diffs: readonly number[], opts: PairedTestOptions & { exactP?: { twoSided: number; drop: number } } = {}): PairedTest | null {
  const n = diffs.length;
  if (n === 0) return null;
  const alpha = opts.alpha ?? 0.05;
  const patterns = n <= (opts.exactUpTo ?? 16) ? enumeratePatterns(diffs) : samplePatterns(diffs, opts.resamples ?? 20_000, opts.seed ?? 1);
  const sum = diffs.reduce((s, d) => s + d, 0);
  const mean = sum / n;
  const pOf = (delta: number) => twoSidedP(patterns, sum, n, delta);
  const pTwo = opts.exactP?.twoSided ?? pOf(0);
  const pDrop = opts.exactP?.drop ?? dropP(patterns, sum);
  // The mean difference can only lie in [−1, 1]: where the test cannot reject that far out, the bound is the limit.
  let lo = pOf(-1) > alpha ? -1 : boundary(pOf, alpha, mean, -1);
  let hi = pOf(1) > alpha ? 1 : boundary(pOf, alpha, mean, 1);
  // The interval and the test are one procedure: make them agree at 0 whatever the bisection's rounding.
  const eps = 1e-12;
  if (pTwo > alpha) {
    lo = Math.min(lo, 0);
    hi = Math.max(hi, 0);
  } else if (mean < 0) {
    hi = Math.min(hi, -eps);
  } else if (mean > 0) {
    lo = Math.max(lo, eps);
  }
  return { n, mean_delta: mean, p_two_sided: pTwo, p_drop: pDrop, ci95: [lo, hi], method: patterns.exact ? "exact" : "monte_carlo", patterns: patterns.a.length };
}
