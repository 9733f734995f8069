/**
 * Compares two runs with the task as the unit: epochs are repeated measures of a task, so each task's
 * pass rate (over its scored epochs) is paired with the same task's rate in the other run. The change is
 * tested by a sign-flip permutation test over the tasks' differences (exact McNemar when both runs have one
 * epoch; over each task's first epochs, as many as both runs scored, when their counts differ) and its 95 % interval agrees with that test (see score/paired_test.ts); the CI verdict applies one
 * of two gates:
 * - default: a significant drop (one-sided, alpha 0.05), or a task that passed every epoch of the
 *   baseline and failed every epoch of the current run;
 * - --max-drop P: a drop of more than P points (with --significant-only, and significant).
 * Too many unscored or missing tasks make the runs not comparable.
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { mcnemar } from "../score/metrics.js";
import { scoreMetrics } from "../score/summary.js";
import { pairedTest, type PairedTest } from "../score/paired_test.js";
import type { RunSample, RunSamples } from "./run_samples.js";
import { DONE_OUTCOMES, type Outcome } from "../core/outcomes.js";
import { recordedIdentity } from "../store/build_identity.js";

/** A limit on unscored tasks: a count, or a percentage of the tasks compared. */
export type UnscoredLimit = { count: number } | { percent: number };

export const DEFAULT_MAX_UNSCORED: UnscoredLimit = { percent: 10 };

export interface CompareOptions {
  /** Replaces the default gate: a regression when the pass rate drops by more than this many points. */
  maxDropPp?: number;
  /** With maxDropPp: only a drop that is also significant (one-sided p < alpha). */
  significantOnly?: boolean;
  alpha?: number;
  /** Unscored or missing tasks beyond this make the runs not comparable (default 10 %). */
  maxUnscored?: UnscoredLimit;
  allowDifferentDataset?: boolean;
  seed?: number;
}

export interface SideSummary {
  run: string;
  tasks: number;
  epochs: number;
  samples: number;
  scored: number;
  unscored: number;
  passed: number;
  pass_rate: number | null;
  /** 95 % interval of the pass rate, the task as the unit (as in statistics.json). */
  ci95: [number, number] | null;
  /** Token totals: the agent's, the approver's, the judge's, and all three. */
  tokens: { agent: number; approver: number; judge: number; total: number };
  duration_ms: number;
  cost_usd: number | null;
  /** The hermes-batch that wrote the run (run.yaml, else checkpoint.json); null: not recorded (an earlier version). */
  hermes_batch_version: string | null;
  hermes_batch_build: string | null;
}

export interface TaskChange {
  task_id: string;
  /** The first epoch of the current run that shows the change (for links). */
  epoch: number;
  /** Passed/scored epochs, e.g. "3/3". */
  baseline: string;
  current: string;
  baseline_rate: number;
  current_rate: number;
  reason: string;
}

export type Gate = "default" | "max_drop" | "max_drop_significant";

export interface Comparison {
  baseline: SideSummary;
  current: SideSummary;
  /** Tasks in both runs; tasks scored in both (the paired sample). */
  common: number;
  paired: number;
  only_in_baseline: string[];
  only_in_current: string[];
  /** Tasks of the baseline that are unscored in either run or absent from the current run. */
  unscored_tasks: number;
  unscored_limit: number;
  unscored_reasons: Record<string, number>;
  newly_failing: TaskChange[];
  newly_passing: TaskChange[];
  /** Tasks that passed every scored epoch of the baseline and failed every scored epoch of the current run. */
  lost: string[];
  /** Mean per-task pass rates over the paired tasks, and the change in percentage points. */
  paired_baseline_rate: number | null;
  paired_current_rate: number | null;
  delta_pp: number | null;
  delta_ci95_pp: [number, number] | null;
  /** Two-sided p of "no change"; the one-sided p of "no drop" that the default gate uses. */
  p_value: number | null;
  p_value_drop: number | null;
  test: "mcnemar_exact" | "sign_flip_exact" | "sign_flip_monte_carlo" | null;
  /**
   * The test's rates are each task's first epochs, as many as both runs scored (a task has more scored epochs in
   * one run than in the other); the change and its interval are over all of them.
   */
  test_on_common_epochs: boolean;
  /** The change on the epochs the test took (points): delta_pp, unless test_on_common_epochs. */
  test_delta_pp: number | null;
  alpha: number;
  significant: boolean;
  significant_drop: boolean;
  gate: Gate;
  /** The gate's finding in one line, whatever the verdict. */
  gate_note: string;
  mean_tokens_delta: number | null;
  mean_duration_ms_delta: number | null;
  cost_usd_delta: number | null;
  /** Why the runs cannot be compared (exit 3). */
  not_comparable: string[];
  /** Why this is a regression (exit 1). */
  regressions: string[];
  verdict: "ok" | "regression" | "not_comparable";
}

/** One task's epochs in one run. */
interface TaskRecord {
  taskId: string;
  samples: RunSample[];
  scored: number;
  passed: number;
}

function byTask(run: RunSamples): Map<string, TaskRecord> {
  const tasks = new Map<string, TaskRecord>();
  for (const s of run.samples.values()) {
    const t = tasks.get(s.taskId) ?? { taskId: s.taskId, samples: [], scored: 0, passed: 0 };
    t.samples.push(s);
    if (s.passed !== null) t.scored++;
    if (s.passed) t.passed++;
    tasks.set(s.taskId, t);
  }
  for (const t of tasks.values()) t.samples.sort((a, b) => a.epoch - b.epoch);
  return tasks;
}

function summarize(run: RunSamples, tasks: Map<string, TaskRecord>): SideSummary {
  const all = [...run.samples.values()];
  const scored = all.filter((s) => s.passed !== null);
  const passed = scored.filter((s) => s.passed).length;
  const costs = all.map((s) => s.costUsd).filter((c): c is number => c !== undefined);
  const sum = (f: (s: RunSample) => number) => all.reduce((n, s) => n + f(s), 0);
  const agent = sum((s) => s.tokens);
  const approver = sum((s) => s.approverTokens);
  const judge = sum((s) => s.judgeTokens);
  const metrics = scoreMetrics(all, run.epochs);
  return {
    run: run.dir,
    tasks: tasks.size,
    epochs: run.epochs,
    samples: all.length,
    scored: scored.length,
    unscored: all.length - scored.length,
    passed,
    // The task as the unit, as statistics.json: the mean of the tasks' rates, with its interval.
    pass_rate: metrics.pass_rate,
    ci95: metrics.ci95,
    tokens: { agent, approver, judge, total: agent + approver + judge },
    duration_ms: sum((s) => s.durationMs),
    cost_usd: costs.length ? costs.reduce((a, b) => a + b, 0) : null,
    ...versionOf(run.dir),
  };
}

/** Which hermes-batch wrote a run folder: said beside the numbers when the two runs' differ, never a failure. */
function versionOf(dir: string): Pick<SideSummary, "hermes_batch_version" | "hermes_batch_build"> {
  const id = recordedIdentity(dir);
  return { hermes_batch_version: id.version, hermes_batch_build: id.build };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const rate = (t: TaskRecord) => t.passed / t.scored;

/** The limit as a number of tasks out of `of`. */
export function unscoredLimitOf(limit: UnscoredLimit, of: number): number {
  if ("count" in limit) return limit.count;
  // percent × of first: (29 / 100) × 100 is 28.999999999999996, which made 29 of 100 tasks "more than 29 %".
  const share = (limit.percent * of) / 100;
  const whole = Math.round(share);
  return Math.abs(share - whole) < 1e-9 ? whole : share;
}

/** "5" (tasks) or "10%" (of the tasks compared); null when it is neither. */
export function parseUnscoredLimit(value: string): UnscoredLimit | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(value);
  if (!m) return null;
  const n = Number(m[1]);
  if (m[2]) return n <= 100 ? { percent: n } : null;
  return Number.isInteger(n) ? { count: n } : null;
}

export function describeUnscoredLimit(limit: UnscoredLimit): string {
  return "count" in limit ? `${limit.count}` : `${limit.percent} %`;
}

/** What makes a sample unscored, as a short label: its outcome, or why a finished task has no score. */
function unscoredLabel(s: RunSample): string {
  if (!DONE_OUTCOMES.has(s.outcome as Outcome)) return s.outcome;
  return s.reason.length > 80 ? `${s.reason.slice(0, 79)}…` : s.reason || "unscored";
}

function change(base: TaskRecord, cur: TaskRecord, failing: boolean): TaskChange {
  const shown = cur.samples.find((s) => s.passed === !failing) ?? cur.samples[0]!;
  const reason = failing ? (cur.samples.find((s) => s.passed === false)?.reason ?? "") : shown.reason;
  return {
    task_id: cur.taskId,
    epoch: shown.epoch,
    baseline: `${base.passed}/${base.scored}`,
    current: `${cur.passed}/${cur.scored}`,
    baseline_rate: rate(base),
    current_rate: rate(cur),
    reason,
  };
}

interface Stats {
  delta: number | null;
  ci: [number, number] | null;
  pTwo: number | null;
  pDrop: number | null;
  test: Comparison["test"];
  /** The test took each task's first epochs, as many as both runs scored (their counts differ). */
  commonEpochs: boolean;
  /** The change on the epochs the test took (points): `delta` unless commonEpochs. */
  testDelta: number | null;
}

/** A task's rate over its first `n` scored epochs (by epoch number). */
function rateOverFirst(t: TaskRecord, n: number): number {
  const scored = t.samples.filter((s) => s.passed !== null).sort((a, b) => a.epoch - b.epoch);
  return scored.slice(0, n).filter((s) => s.passed).length / n;
}

function pairedStats(pairs: [TaskRecord, TaskRecord][], oneEpoch: boolean, seed: number, alpha: number): Stats {
  const baseRates = pairs.map(([b]) => rate(b));
  const curRates = pairs.map(([, c]) => rate(c));
  const lost = pairs.filter(([b, c]) => rate(c) < rate(b)).length;
  const gained = pairs.filter(([b, c]) => rate(c) > rate(b)).length;
  // The sign-flip test needs each task's difference to be symmetric about 0 under "no change", which holds when
  // the task has as many scored epochs in both runs. Otherwise (1 epoch against 10, unscored epochs) it rejected a
  // true "no change" about twice as often as alpha says: the test then takes each task's first epochs, as many
  // as both runs scored; the change and its interval are still over every scored epoch.
  const commonEpochs = !oneEpoch && pairs.some(([b, c]) => b.scored !== c.scored);
  let exactP = oneEpoch ? mcnemar(lost, gained) : undefined;
  let method: PairedTest["method"] | undefined;
  let testDelta: number | undefined;
  if (commonEpochs) {
    const n = pairs.map(([b, c]) => Math.min(b.scored, c.scored));
    const common = pairedTest(
      pairs.map(([b], i) => rateOverFirst(b, n[i]!)),
      pairs.map(([, c], i) => rateOverFirst(c, n[i]!)),
      { seed, alpha },
    );
    if (common) {
      exactP = { twoSided: common.p_two_sided, drop: common.p_drop };
      method = common.method;
      testDelta = common.mean_delta * 100;
    }
  }
  const t = pairedTest(baseRates, curRates, { seed, alpha, exactP });
  if (!t) return { delta: null, ci: null, pTwo: null, pDrop: null, test: null, commonEpochs: false, testDelta: null };
  method ??= t.method;
  return {
    delta: t.mean_delta * 100,
    ci: [t.ci95[0] * 100, t.ci95[1] * 100],
    pTwo: t.p_two_sided,
    pDrop: t.p_drop,
    test: oneEpoch ? "mcnemar_exact" : method === "exact" ? "sign_flip_exact" : "sign_flip_monte_carlo",
    commonEpochs,
    testDelta: testDelta ?? t.mean_delta * 100,
  };
}

/**
 * "= 0.031", or "< 0.001" (never "p = < 0.001"), after a "p". Rounded to 3 places, unless that would put it on the
 * other side of alpha: 0.04992 is "= 0.0499", never "= 0.050" beside a verdict that it is under 0.05.
 */
export function pIs(p: number | null, alpha = 0.05): string {
  if (p === null) return "= n/a";
  if (p < 0.001 && alpha > 0.001) return "< 0.001";
  for (let digits = 3; digits <= 15; digits++) {
    const text = p.toFixed(digits);
    if (Number(text) < alpha === p < alpha) return `= ${text}`;
  }
  return `= ${p}`;
}
const fmtPp = (d: number) => `${d > 0 ? "+" : d < 0 ? "−" : "±"}${Math.abs(d).toFixed(1)} pp`;

interface GateResult {
  gate: Gate;
  regressions: string[];
  note: string;
}

function applyGate(opts: CompareOptions, alpha: number, s: Stats, lost: string[], oneEpoch: boolean): GateResult {
  const drop = s.delta !== null && s.delta < 0;
  const significantDrop = drop && s.pDrop !== null && s.pDrop < alpha;
  const pText = pIs(s.pDrop, alpha);
  // A p-value about other epochs than the change shown (1 epoch against 5: the test on each task's first) reads as
  // a contradiction when the two changes differ ("−80.0 pp … p = 1"): the note says what the test compared.
  const seen =
    s.commonEpochs && s.delta !== null && s.testDelta !== null && Math.abs(s.testDelta - s.delta) >= 0.05
      ? `; the test compares each task's first epochs, as many as both runs scored: ${fmtPp(s.testDelta)} on those, ${fmtPp(s.delta)} over every epoch`
      : "";
  if (opts.maxDropPp !== undefined) {
    const gate: Gate = opts.significantOnly ? "max_drop_significant" : "max_drop";
    const limit = `--max-drop ${opts.maxDropPp}${opts.significantOnly ? " --significant-only" : ""}`;
    const over = s.delta !== null && -s.delta > opts.maxDropPp;
    if (over && (!opts.significantOnly || significantDrop)) {
      const why = `pass rate dropped by ${(-s.delta!).toFixed(1)} points (more than --max-drop ${opts.maxDropPp})`;
      return {
        gate,
        regressions: [opts.significantOnly ? `${why}, significant (one-sided p ${pText} < ${alpha})` : why],
        note: `gate ${limit}: failed`,
      };
    }
    if (s.delta === null) return { gate, regressions: [], note: `gate ${limit}: nothing to compare` };
    if (!drop) return { gate, regressions: [], note: `no regression: ${fmtPp(s.delta)} (gate ${limit})` };
    const within = over
      ? `more than --max-drop ${opts.maxDropPp} but not significant (one-sided p ${pText} ≥ ${alpha}${seen})`
      : `within --max-drop ${opts.maxDropPp}`;
    return { gate, regressions: [], note: `${fmtPp(s.delta)}, ${within}` };
  }
  const regressions: string[] = [];
  if (significantDrop)
    regressions.push(`significant drop of ${(-s.delta!).toFixed(1)} points (one-sided p ${pText} < ${alpha})`);
  if (lost.length > 0) {
    const names = lost.slice(0, 5).join(", ") + (lost.length > 5 ? ", …" : "");
    // With one epoch a task is lost by a single flip: a regression for a deterministic model, but a sampling
    // model flips that way by chance; said so when the drop itself is not significant.
    const oneFlip =
      oneEpoch && !significantDrop
        ? "; with one epoch per task one flip is a loss: for a model that samples, run --epochs K or gate with --max-drop P --significant-only"
        : "";
    regressions.push(
      `${lost.length} task(s) passed every epoch of the baseline and failed every epoch of the current run (${names})${oneFlip}`,
    );
  }
  const gateName =
    "default gate (a significant drop, or a task that passed every baseline epoch failing every current epoch; --max-drop P replaces it)";
  if (regressions.length) return { gate: "default", regressions, note: `${gateName}: failed` };
  if (s.delta === null) return { gate: "default", regressions, note: `${gateName}: nothing to compare` };
  if (!drop) return { gate: "default", regressions, note: `no regression: ${fmtPp(s.delta)} (${gateName})` };
  return {
    gate: "default",
    regressions,
    note: `${fmtPp(s.delta)}, within the ${gateName}: not significant (one-sided p ${pText} ≥ ${alpha}${seen}) and no task lost in every epoch`,
  };
}

/** A task's recorded value of `field` in one run: its first epoch's that has one. */
function valueOf(t: TaskRecord, field: "prompt" | "criteria" | "judgeModel"): string | undefined {
  return t.samples.find((s) => s[field] !== undefined)?.[field];
}

/** The paired tasks whose runs recorded different values of `field` (a run that recorded none is not compared). */
function differing(
  common: [TaskRecord, TaskRecord][],
  field: "prompt" | "criteria" | "judgeModel",
): [TaskRecord, TaskRecord][] {
  return common.filter(([b, c]) => {
    const [bv, cv] = [valueOf(b, field), valueOf(c, field)];
    return bv !== undefined && cv !== undefined && bv !== cv;
  });
}

/** The folder itself, whatever the path (a symlink, a trailing slash); the path as given when it cannot be resolved. */
function folderIdentity(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
}

/** Why a task both runs have is not fully compared: an unscored result, unrun epochs, a result copied from the baseline. */
function notComparedLabel(
  b: TaskRecord,
  c: TaskRecord,
  planned: { base?: number; cur?: number },
  allowRegraded: boolean,
): string | undefined {
  const missing = [...c.samples, ...b.samples].find((s) => s.passed === null);
  if (missing) return unscoredLabel(missing);
  // A run stopped before its epochs were done (killed at a CI time limit, still running): the epochs it has not
  // run are missing as a task absent from it is, and the ones a time limit cuts are the slow ones.
  if (planned.cur !== undefined && c.samples.length < planned.cur) return "with epochs not run in the current run";
  if (planned.base !== undefined && b.samples.length < planned.base) return "with epochs not run in the baseline";
  // The baseline's own result in the current run (its folder copied, a line copied): no measurement of the current
  // run. A copy graded again (`score COPY --dataset FILE`) is compared on purpose, with --allow-different-dataset.
  if (allowRegraded) return undefined;
  const stamps = new Map(b.samples.map((s) => [s.epoch, s.stamp]));
  if (c.samples.some((s) => s.stamp !== undefined && stamps.get(s.epoch) === s.stamp))
    return "the baseline's own result (a copied line: same task, epoch and time; a re-graded copy compares with --allow-different-dataset)";
  return undefined;
}

function comparability(
  opts: CompareOptions,
  common: [TaskRecord, TaskRecord][],
  paired: number,
  onlyBase: TaskRecord[],
  sameFolder: boolean,
  planned: { base?: number; cur?: number },
  harborThreshold: { base?: number; cur?: number },
): {
  reasons: string[];
  unscored: number;
  limit: number;
  byReason: Record<string, number>;
  /** The baseline's tasks the limit is a share of: those that name a scorer in a run. */
  compared: number;
  withoutScorer: number;
  /** Of the unscored tasks, those still in the paired sample on the epochs each run scored. */
  inPart: number;
} {
  const reasons: string[] = [];
  // A run compared with itself passes any gate: a CI job whose current run reused the baseline's folder.
  if (sameFolder) reasons.push("the baseline and the current run are the same folder");
  if (common.length === 0) reasons.push("no task in common (tasks are paired by id)");
  else if (paired === 0) reasons.push("no task is scored in both runs");
  if (!opts.allowDifferentDataset) {
    const changed = differing(common, "prompt");
    if (changed.length > 0) {
      reasons.push(
        `the dataset differs: ${changed.length} task(s) have another prompt (first: ${changed[0]![1].taskId}); --allow-different-dataset compares anyway`,
      );
    }
    // The same prompt graded against another answer key, verify command, hidden test or rubric.
    const regraded = differing(common, "criteria");
    if (regraded.length > 0) {
      reasons.push(
        `the scoring differs: ${regraded.length} task(s) are graded against other criteria (expected, verify, verify_files or rubric; first: ${regraded[0]![1].taskId}); --allow-different-dataset compares anyway`,
      );
    }
    // The same answers graded by another grader: a rubric judged by another model (a lenient judge passes a worse
    // run), a Harbor reward held to another pass threshold.
    const rejudged = differing(common, "judgeModel");
    if (rejudged.length > 0) {
      const [b, c] = rejudged[0]!;
      reasons.push(
        `the grader differs: ${rejudged.length} task(s) are judged by another model (first: ${c.taskId}, ${valueOf(b, "judgeModel")} in the baseline, ${valueOf(c, "judgeModel")} in the current run); --allow-different-dataset compares anyway (or grade the baseline again: hermes-batch score BASELINE_RUN --judge-model M)`,
      );
    }
    const harborBoth = common.some(([b, c]) => b.samples.some((s) => s.harbor) && c.samples.some((s) => s.harbor));
    const { base: tb, cur: tc } = harborThreshold;
    if (harborBoth && tb !== undefined && tc !== undefined && tb !== tc) {
      reasons.push(
        `the grader differs: Harbor rewards pass at --harbor-pass-threshold ${tb} in the baseline, ${tc} in the current run; --allow-different-dataset compares anyway`,
      );
    }
  }
  const byReason: Record<string, number> = {};
  let unscored = 0;
  // Tasks whose row names no scorer in either run (rows kept for their trajectories, not graded) measure nothing:
  // they are neither unscored nor part of the tasks the limit is a share of, as for --fail-under.
  const unmeasured = (t: TaskRecord) => t.samples.every((s) => s.noScorer);
  let withoutScorer = 0;
  let inPart = 0;
  for (const [b, c] of common) {
    if (unmeasured(b) && unmeasured(c)) {
      withoutScorer++;
      continue;
    }
    const label = notComparedLabel(b, c, planned, opts.allowDifferentDataset === true);
    if (label === undefined) continue;
    unscored++;
    byReason[label] = (byReason[label] ?? 0) + 1;
    if (b.scored > 0 && c.scored > 0) inPart++;
  }
  const absent = onlyBase.filter((t) => !unmeasured(t));
  withoutScorer += onlyBase.length - absent.length;
  if (absent.length) byReason["absent from the current run"] = absent.length;
  unscored += absent.length;
  const compared = common.length + onlyBase.length - withoutScorer;
  const limitSpec = opts.maxUnscored ?? DEFAULT_MAX_UNSCORED;
  const limit = unscoredLimitOf(limitSpec, compared);
  if (compared > 0 && unscored > limit) {
    const detail = Object.entries(byReason)
      .sort((a, b) => b[1] - a[1])
      .map(([r, n]) => `${n} ${r}`)
      .join(", ");
    reasons.push(
      `${unscored} of ${compared} task(s) are unscored in a run or missing from the current run (${detail}), more than --max-unscored ${describeUnscoredLimit(limitSpec)}`,
    );
  }
  return { reasons, unscored, limit, byReason, compared, withoutScorer, inPart };
}

/**
 * A passing verdict says which baseline tasks it could not judge (unscored in a run, or absent from the current
 * run) when the limit allowed them: a task that passed in the baseline and crashes now is not compared.
 */
function notComparedNote(
  comparable: {
    unscored: number;
    byReason: Record<string, number>;
    compared: number;
    withoutScorer: number;
    inPart: number;
  },
  onlyCurrent: number,
  opts: CompareOptions,
): string {
  const compared = comparable.compared;
  const notes: string[] = [];
  if (comparable.unscored > 0) {
    const reasons = Object.entries(comparable.byReason)
      .sort((a, b) => b[1] - a[1])
      .map(([r, n]) => `${n} ${r}`)
      .join(", ");
    // A task with some epochs unscored is still in the paired sample, on the epochs each run scored: said so, or
    // "paired over 10 tasks" beside "1 of 10 not compared" reads as a contradiction.
    const inPart =
      comparable.inPart > 0
        ? `, ${comparable.inPart} of them compared on ${comparable.inPart === 1 ? "its" : "their"} scored epochs alone`
        : "";
    notes.push(
      `${comparable.unscored} of ${compared} baseline task(s) not compared (${reasons})${inPart}, within --max-unscored ${describeUnscoredLimit(opts.maxUnscored ?? DEFAULT_MAX_UNSCORED)}`,
    );
  }
  // Tasks the baseline lacks (a baseline that stopped short, or new rows) are judged by nothing.
  if (onlyCurrent > 0) notes.push(`${onlyCurrent} task(s) only in the current run, not compared`);
  if (comparable.withoutScorer > 0)
    notes.push(`${comparable.withoutScorer} task(s) without a scorer in either run, not compared`);
  return notes.map((n) => `; ${n}`).join("");
}

export function compareRuns(base: RunSamples, cur: RunSamples, opts: CompareOptions = {}): Comparison {
  const alpha = opts.alpha ?? 0.05;
  const baseTasks = byTask(base);
  const curTasks = byTask(cur);
  const common: [TaskRecord, TaskRecord][] = [];
  const onlyBase: string[] = [];
  // By task id, not by line order: the Monte-Carlo test draws its sign patterns task by task, so the same runs
  // written in another order (a resume, shards merged in another order) would give another p-value.
  for (const [id, b] of [...baseTasks].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    const c = curTasks.get(id);
    if (c) common.push([b, c]);
    else onlyBase.push(id);
  }
  const onlyCur = [...curTasks.keys()].filter((id) => !baseTasks.has(id));
  const pairs = common.filter(([b, c]) => b.scored > 0 && c.scored > 0);
  const oneEpoch = pairs.every(
    ([b, c]) => b.scored === 1 && c.scored === 1 && b.samples.length === 1 && c.samples.length === 1,
  );

  const stats = pairedStats(pairs, oneEpoch, opts.seed ?? 1, alpha);
  const byDelta = (a: [TaskRecord, TaskRecord], b: [TaskRecord, TaskRecord]) =>
    rate(a[1]) - rate(a[0]) - (rate(b[1]) - rate(b[0])) || (a[1].taskId < b[1].taskId ? -1 : 1);
  const newlyFailing = pairs
    .filter(([b, c]) => rate(c) < rate(b))
    .sort(byDelta)
    .map(([b, c]) => change(b, c, true));
  const newlyPassing = pairs
    .filter(([b, c]) => rate(c) > rate(b))
    .sort((x, y) => byDelta(y, x))
    .map(([b, c]) => change(b, c, false));
  const lost = pairs
    .filter(([b, c]) => rate(b) === 1 && rate(c) === 0)
    .map(([, c]) => c.taskId)
    .sort();

  const sameFolder = folderIdentity(base.dir) === folderIdentity(cur.dir);
  const comparable = comparability(
    opts,
    common,
    pairs.length,
    onlyBase.map((id) => baseTasks.get(id)!),
    sameFolder,
    {
      base: base.plannedEpochs,
      cur: cur.plannedEpochs,
    },
    { base: base.harborThreshold, cur: cur.harborThreshold },
  );
  const gate = applyGate(opts, alpha, stats, lost, oneEpoch);
  // Per task, the mean over its epochs in each run: tasks with more epochs do not weigh more.
  const perTaskDelta = (f: (s: RunSample) => number) =>
    mean(common.map(([b, c]) => mean(c.samples.map(f))! - mean(b.samples.map(f))!));
  const baseSummary = summarize(base, baseTasks);
  const curSummary = summarize(cur, curTasks);
  const verdict = comparable.reasons.length ? "not_comparable" : gate.regressions.length ? "regression" : "ok";
  return {
    baseline: baseSummary,
    current: curSummary,
    common: common.length,
    paired: pairs.length,
    only_in_baseline: onlyBase.sort(),
    only_in_current: onlyCur.sort(),
    unscored_tasks: comparable.unscored,
    unscored_limit: comparable.limit,
    unscored_reasons: comparable.byReason,
    newly_failing: newlyFailing,
    newly_passing: newlyPassing,
    lost,
    paired_baseline_rate: mean(pairs.map(([b]) => rate(b))),
    paired_current_rate: mean(pairs.map(([, c]) => rate(c))),
    delta_pp: stats.delta,
    delta_ci95_pp: stats.ci,
    p_value: stats.pTwo,
    p_value_drop: stats.pDrop,
    test: stats.test,
    test_on_common_epochs: stats.commonEpochs,
    test_delta_pp: stats.testDelta,
    alpha,
    significant: stats.pTwo !== null && stats.pTwo < alpha,
    significant_drop: stats.delta !== null && stats.delta < 0 && stats.pDrop !== null && stats.pDrop < alpha,
    gate: gate.gate,
    gate_note:
      verdict === "not_comparable"
        ? `not comparable: ${comparable.reasons.join("; ")}`
        : gate.note + (verdict === "ok" ? notComparedNote(comparable, onlyCur.length, opts) : ""),
    mean_tokens_delta: perTaskDelta((s) => s.tokens + s.approverTokens + s.judgeTokens),
    mean_duration_ms_delta: perTaskDelta((s) => s.durationMs),
    cost_usd_delta:
      baseSummary.cost_usd !== null && curSummary.cost_usd !== null ? curSummary.cost_usd - baseSummary.cost_usd : null,
    not_comparable: comparable.reasons,
    regressions: gate.regressions,
    verdict,
  };
}
