/**
 * A task's score from its scorers, and a run's score metrics: pass rate over scored tasks with its
 * 95 % interval, pass@k and pass^k over epochs, and the same by group. Unscored tasks (infrastructure
 * failure, judge failure) are never counted as failures: they are counted apart.
 */
import { passAtK, passHatK, taskInterval, wilson, type TaskPasses } from "./metrics.js";

export interface ScorerResult {
  name: string;
  /** null: this scorer could not decide (its judge failed, its verify could not run). */
  passed: boolean | null;
  value: number | null;
  reason?: string;
  details?: Record<string, unknown>;
}

export interface Score {
  passed: boolean | null;
  value: number | null;
  scorers: ScorerResult[];
  /** What the row is graded against, as a digest (src/score/criteria.ts): compare refuses to pair other criteria. */
  criteria?: string;
}

/**
 * All scorers a row names must pass: one that failed fails the task, whatever another could not decide; else one
 * undecided scorer leaves the task unscored (its verdict depends on the one no one knows).
 */
export function combineScores(scorers: ScorerResult[]): Score {
  if (scorers.length === 0) return { passed: null, value: null, scorers };
  const failed = scorers.some((s) => s.passed === false);
  const undecided = scorers.some((s) => s.passed === null);
  const passed = failed ? false : undecided ? null : true;
  const values = scorers.map((s) => s.value ?? (s.passed === null ? null : s.passed ? 1 : 0));
  const value = values.some((v) => v === null) ? null : (values as number[]).reduce((a, b) => a + b, 0) / values.length;
  return { passed, value, scorers };
}

/** What the metrics need of one trajectory line. */
export interface ScoredSample {
  taskId: string;
  epoch: number;
  passed: boolean | null;
  /** Group labels of this sample: {"metadata.level": "easy", "toolsets": "file+terminal"}. */
  groups?: Record<string, string>;
}

export interface ScoreMetrics {
  scored: number;
  unscored: number;
  passed: number;
  pass_rate: number | null;
  ci95: [number, number] | null;
  /** k → mean over tasks of the unbiased pass@k (tasks with at least k scored epochs). */
  pass_at_k: Record<string, number>;
  pass_hat_k: Record<string, number>;
  /**
   * k → how many tasks pass@k and pass^k are means over (those with at least k scored epochs), for every k up to
   * the run's epochs: 0 where no task could be measured (that k is then absent from pass_at_k). A task with
   * unscored epochs drops out of the larger k, so pass@k of different k may be over different tasks.
   */
  pass_at_k_tasks: Record<string, number>;
}

export interface RunScoreMetrics extends ScoreMetrics {
  epochs: number;
  groups?: Record<string, Record<string, ScoreMetrics>>;
}

interface TaskTally extends TaskPasses {
  firstEpoch: number;
}

function perTask(samples: readonly ScoredSample[]): Map<string, TaskTally> {
  const tasks = new Map<string, TaskTally>();
  for (const s of samples) {
    if (s.passed === null) continue;
    const t = tasks.get(s.taskId) ?? { n: 0, c: 0, firstPassed: s.passed, firstEpoch: s.epoch };
    t.n++;
    if (s.passed) t.c++;
    if (s.epoch < t.firstEpoch) {
      t.firstEpoch = s.epoch;
      t.firstPassed = s.passed;
    }
    tasks.set(s.taskId, t);
  }
  return tasks;
}

/** Pass rate over scored samples; its 95 % interval takes the task as the unit (see taskInterval). */
export function scoreMetrics(samples: readonly ScoredSample[], epochs: number): ScoreMetrics {
  const scoredSamples = samples.filter((s) => s.passed !== null);
  const passed = scoredSamples.filter((s) => s.passed).length;
  const scored = scoredSamples.length;
  const tasks = [...perTask(samples).values()];
  const ci95 = tasks.every((t) => t.n === 1) ? wilson(passed, scored) : taskInterval(tasks);
  const pass_at_k: Record<string, number> = {};
  const pass_hat_k: Record<string, number> = {};
  const pass_at_k_tasks: Record<string, number> = {};
  // k up to the run's epochs, but never beyond the most results one task has: an epoch number far out (a hand edit's
  // 2e9) would have made this loop, and the keys below, count to it.
  const results = new Map<string, number>();
  let most = 1;
  for (const s of samples) {
    const n = (results.get(s.taskId) ?? 0) + 1;
    results.set(s.taskId, n);
    if (n > most) most = n;
  }
  const kMax = Math.min(Math.max(1, epochs), most);
  for (let k = 1; k <= kMax; k++) {
    const eligible = tasks.filter((t) => t.n >= k);
    pass_at_k_tasks[k] = eligible.length;
    if (eligible.length === 0) continue;
    pass_at_k[k] = eligible.reduce((sum, t) => sum + passAtK(t.n, t.c, k), 0) / eligible.length;
    pass_hat_k[k] = eligible.reduce((sum, t) => sum + passHatK(t.n, t.c, k), 0) / eligible.length;
  }
  return {
    scored,
    unscored: samples.length - scored,
    passed,
    // The task is the unit, as in the interval: the mean of the tasks' rates (each its share of its scored
    // epochs that passed). It is passed/scored whenever every task has as many scored epochs; with unscored
    // epochs spread unevenly, passed/scored would weigh tasks by how many epochs the infrastructure let through.
    pass_rate: tasks.length ? tasks.reduce((sum, t) => sum + t.c / t.n, 0) / tasks.length : null,
    ci95,
    pass_at_k,
    pass_hat_k,
    pass_at_k_tasks,
  };
}

/** Metrics for the whole run and, for each grouping key, for each of its values. */
export function runScoreMetrics(samples: readonly ScoredSample[], epochs: number): RunScoreMetrics {
  const overall: RunScoreMetrics = { epochs, ...scoreMetrics(samples, epochs) };
  const byKey = new Map<string, Map<string, ScoredSample[]>>();
  for (const s of samples) {
    for (const [key, value] of Object.entries(s.groups ?? {})) {
      const values = byKey.get(key) ?? new Map<string, ScoredSample[]>();
      const list = values.get(value) ?? [];
      list.push(s);
      values.set(value, list);
      byKey.set(key, values);
    }
  }
  if (byKey.size > 0) {
    overall.groups = {};
    for (const [key, values] of [...byKey].sort(([a], [b]) => a.localeCompare(b))) {
      overall.groups[key] = Object.fromEntries(
        [...values].sort(([a], [b]) => a.localeCompare(b)).map(([v, s]) => [v, scoreMetrics(s, epochs)]),
      );
    }
  }
  return overall;
}
