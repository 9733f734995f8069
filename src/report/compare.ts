/**
 * Compares two runs task by task (paired by task id and epoch): what newly fails and newly passes,
 * the pass-rate change with its 95 % interval and a paired significance test (exact McNemar for one
 * epoch, a paired bootstrap over tasks for several), token/duration/cost changes, and the CI verdict.
 */
import { bootstrapInterval, mcnemarExact, seededRandom } from "../score/metrics.js";
import type { RunSample, RunSamples } from "./run_samples.js";

export interface CompareOptions {
  /** Regression when the pass rate drops by more than this many percentage points. */
  maxDropPp?: number;
  /** Gate only on a drop that is also significant (p < alpha). */
  significantOnly?: boolean;
  alpha?: number;
  /** Pairs unscored on either side beyond this make the runs not comparable. */
  maxUnscored?: number;
  allowDifferentDataset?: boolean;
  seed?: number;
}

export interface SideSummary {
  run: string;
  samples: number;
  scored: number;
  unscored: number;
  passed: number;
  pass_rate: number | null;
  tokens: number;
  duration_ms: number;
  cost_usd: number | null;
}

export interface TaskChange {
  task_id: string;
  epoch: number;
  baseline: boolean | null;
  current: boolean | null;
  reason: string;
}

export interface Comparison {
  baseline: SideSummary;
  current: SideSummary;
  epochs: number;
  /** Pairs present in both runs / scored in both runs. */
  common: number;
  paired: number;
  only_in_baseline: string[];
  only_in_current: string[];
  unscored_pairs: number;
  newly_failing: TaskChange[];
  newly_passing: TaskChange[];
  /** Pass rates over the pairs scored in both runs, and the change in percentage points. */
  paired_baseline_rate: number | null;
  paired_current_rate: number | null;
  delta_pp: number | null;
  delta_ci95_pp: [number, number] | null;
  p_value: number | null;
  test: "mcnemar_exact" | "paired_bootstrap" | null;
  significant: boolean;
  mean_tokens_delta: number | null;
  mean_duration_ms_delta: number | null;
  cost_usd_delta: number | null;
  /** Why the runs cannot be compared (exit 3). */
  not_comparable: string[];
  /** Why this is a regression (exit 1). */
  regressions: string[];
  verdict: "ok" | "regression" | "not_comparable";
}

function summarize(run: RunSamples): SideSummary {
  const all = [...run.samples.values()];
  const scored = all.filter((s) => s.passed !== null);
  const passed = scored.filter((s) => s.passed).length;
  const costs = all.map((s) => s.costUsd).filter((c): c is number => c !== undefined);
  return {
    run: run.dir,
    samples: all.length,
    scored: scored.length,
    unscored: all.length - scored.length,
    passed,
    pass_rate: scored.length ? passed / scored.length : null,
    tokens: all.reduce((n, s) => n + s.tokens, 0),
    duration_ms: all.reduce((n, s) => n + s.durationMs, 0),
    cost_usd: costs.length ? costs.reduce((a, b) => a + b, 0) : null,
  };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

export function compareRuns(base: RunSamples, cur: RunSamples, opts: CompareOptions = {}): Comparison {
  const alpha = opts.alpha ?? 0.05;
  const pairs: [RunSample, RunSample][] = [];
  const onlyBase: string[] = [];
  for (const [key, b] of base.samples) {
    const c = cur.samples.get(key);
    if (c) pairs.push([b, c]);
    else onlyBase.push(key);
  }
  const onlyCur = [...cur.samples.keys()].filter((k) => !base.samples.has(k));
  const paired = pairs.filter(([b, c]) => b.passed !== null && c.passed !== null);
  const epochs = Math.max(base.epochs, cur.epochs);

  const change = ([b, c]: [RunSample, RunSample]): TaskChange => ({ task_id: c.taskId, epoch: c.epoch, baseline: b.passed, current: c.passed, reason: c.reason });
  const newlyFailing = paired.filter(([b, c]) => b.passed && !c.passed).map(change);
  const newlyPassing = paired.filter(([b, c]) => !b.passed && c.passed).map(change);

  const baseRate = paired.length ? paired.filter(([b]) => b.passed).length / paired.length : null;
  const curRate = paired.length ? paired.filter(([, c]) => c.passed).length / paired.length : null;
  const deltaPp = baseRate !== null && curRate !== null ? (curRate - baseRate) * 100 : null;

  // Paired resampling unit: a task with all its epochs.
  const byTask = new Map<string, { b: number; c: number; n: number }>();
  for (const [b, c] of paired) {
    const t = byTask.get(c.taskId) ?? { b: 0, c: 0, n: 0 };
    t.n++;
    if (b.passed) t.b++;
    if (c.passed) t.c++;
    byTask.set(c.taskId, t);
  }
  const tasks = [...byTask.values()];
  const deltaOf = (sample: readonly { b: number; c: number; n: number }[]) => {
    let n = 0;
    let d = 0;
    for (const t of sample) {
      n += t.n;
      d += t.c - t.b;
    }
    return n ? (d / n) * 100 : 0;
  };
  let pValue: number | null = null;
  let test: Comparison["test"] = null;
  let ci: [number, number] | null = null;
  if (paired.length > 0) {
    ci = bootstrapInterval(tasks, deltaOf, { seed: opts.seed ?? 1 });
    if (epochs <= 1) {
      test = "mcnemar_exact";
      pValue = mcnemarExact(newlyFailing.length, newlyPassing.length);
    } else {
      test = "paired_bootstrap";
      pValue = bootstrapPValue(tasks, deltaOf, opts.seed ?? 1);
    }
  }
  const significant = pValue !== null && pValue < alpha;

  const notComparable: string[] = [];
  if (pairs.length === 0) notComparable.push("no task in common (tasks are paired by id and epoch)");
  else if (paired.length === 0) notComparable.push("no task is scored in both runs");
  if (!opts.allowDifferentDataset) {
    const changed = pairs.filter(([b, c]) => b.prompt !== undefined && c.prompt !== undefined && b.prompt !== c.prompt);
    if (changed.length > 0) {
      notComparable.push(`the dataset differs: ${changed.length} task(s) have another prompt (first: ${changed[0]![1].taskId}); --allow-different-dataset compares anyway`);
    }
  }
  const unscoredPairs = pairs.length - paired.length;
  if (opts.maxUnscored !== undefined && unscoredPairs > opts.maxUnscored) {
    notComparable.push(`${unscoredPairs} paired task(s) are unscored in one run or both, more than --max-unscored ${opts.maxUnscored}`);
  }

  const regressions: string[] = [];
  if (opts.maxDropPp !== undefined && deltaPp !== null && -deltaPp > opts.maxDropPp) {
    const drop = `pass rate dropped by ${(-deltaPp).toFixed(1)} points (more than --max-drop ${opts.maxDropPp})`;
    if (!opts.significantOnly) regressions.push(drop);
    else if (significant) regressions.push(`${drop}, significant (p = ${pValue!.toPrecision(3)})`);
  }

  const tokenDeltas = pairs.map(([b, c]) => c.tokens - b.tokens);
  const durationDeltas = pairs.map(([b, c]) => c.durationMs - b.durationMs);
  const baseSummary = summarize(base);
  const curSummary = summarize(cur);
  return {
    baseline: baseSummary,
    current: curSummary,
    epochs,
    common: pairs.length,
    paired: paired.length,
    only_in_baseline: onlyBase.sort(),
    only_in_current: onlyCur.sort(),
    unscored_pairs: unscoredPairs,
    newly_failing: newlyFailing,
    newly_passing: newlyPassing,
    paired_baseline_rate: baseRate,
    paired_current_rate: curRate,
    delta_pp: deltaPp,
    delta_ci95_pp: ci,
    p_value: pValue,
    test,
    significant,
    mean_tokens_delta: mean(tokenDeltas),
    mean_duration_ms_delta: mean(durationDeltas),
    cost_usd_delta: baseSummary.cost_usd !== null && curSummary.cost_usd !== null ? curSummary.cost_usd - baseSummary.cost_usd : null,
    not_comparable: notComparable,
    regressions,
    verdict: notComparable.length ? "not_comparable" : regressions.length ? "regression" : "ok",
  };
}

/** Two-sided p-value of "no change" from the bootstrap distribution of the paired delta. */
function bootstrapPValue<T>(items: readonly T[], statistic: (s: readonly T[]) => number, seed: number, resamples = 2000): number {
  const observed = statistic(items);
  if (observed === 0) return 1;
  // Re-centre the resampled deltas on zero (the null hypothesis) and count those at least as extreme.
  const bounds: number[] = [];
  const rnd = seededRandom(seed);
  const sample: T[] = new Array(items.length);
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < items.length; i++) sample[i] = items[Math.floor(rnd() * items.length)]!;
    bounds.push(statistic(sample) - observed);
  }
  const extreme = bounds.filter((d) => Math.abs(d) >= Math.abs(observed)).length;
  return Math.min(1, (extreme + 1) / (resamples + 1));
}
