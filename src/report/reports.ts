/**
 * statistics.json, summary.csv and atif.jsonl, rebuilt from the run's output files at the end of every invocation,
 * so a resumed run reports exactly what an uninterrupted one would.
 */
import { RlTokenIndex } from "../store/rl_tokens.js";
import { closeSync, openSync, readSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { RunConfig } from "../config/run_config.js";
import { readJsonl } from "../store/jsonl_file.js";
import { RUN_FILES, recordKey } from "../store/checkpoint.js";
import { RunStatistics, statisticsJsonText } from "./statistics.js";
import { SummaryCsvWriter, summaryRowFromEntry, summaryRowFromFailure } from "./summary_csv.js";
import { writeFileSync } from "node:fs";
import { DROP_REASONS } from "../core/outcomes.js";
import type { DroppedRecord, StoredFailureRecord, TrajectoryEntry } from "../core/records.js";
import type { Usage } from "../core/chat.js";
import type { ModelCallCounts } from "../scheduler/run_models.js";
import { addUsage } from "../core/chat.js";
import { runScoreMetrics, type RunScoreMetrics, type ScoredSample } from "../score/summary.js";
import { packageVersion } from "../core/package_version.js";
import { AtifRunFile } from "./atif_file.js";
import { HarborMean } from "./harbor_mean.js";

/** A line's labels for the grouped pass rates: its toolset combination and the asked metadata keys. */
function groupLabels(
  line: { toolsets_used?: string[]; metadata?: Record<string, unknown> },
  groupBy: readonly string[],
): Record<string, string> {
  const labels: Record<string, string> = { toolsets: [...(line.toolsets_used ?? [])].sort().join("+") || "(none)" };
  const rowMetadata = (line.metadata?.dataset_metadata ?? {}) as Record<string, unknown>;
  for (const key of groupBy) {
    const v = rowMetadata[key.slice("metadata.".length)];
    labels[key] = v === undefined || v === null ? "(unset)" : typeof v === "string" ? v : JSON.stringify(v);
  }
  return labels;
}

export interface RunReport {
  done: number;
  failed: number;
  dropped: number;
  /** Of the failed: tasks whose latest attempt was an internal_error (a bug of hermes-batch). */
  internal: number;
  /** The run's score metrics, when any row names a scorer. */
  scores?: RunScoreMetrics;
  /** Finished results whose row names a scorer, and of them those the scorer could not decide (`passed: null`). */
  withScorer: number;
  undecided: number;
  /** Lines of trajectories.jsonl or dropped.jsonl left out as a repeat of a (task, epoch) already counted. */
  repeated: number;
  /** Why atif.jsonl could not be written (naming the task whose line failed); the file is then absent. */
  atifError?: string;
}

export interface ReportTiming {
  /** When this invocation started (started_at and duration_seconds are this invocation's). */
  startedAt?: Date;
  /** Tasks of the run's dataset slice (done earlier plus planned now). */
  totalPrompts?: number;
  /** This invocation's model calls, retries, 429s and connection-limit changes (from the run-wide limiters). */
  modelCalls?: ModelCallCounts;
  /** When the run ended (default now): a merge gives its shards' last end. */
  completedAt?: Date;
  /**
   * Where the lines this invocation wrote to trajectories.jsonl start (bytes). Those lines were built by the run
   * itself, so their atif.jsonl documents skip the schema checks; every line before (an earlier invocation's,
   * possibly edited by hand) is checked. Absent: every line is checked.
   */
  ownTrajectoriesFrom?: number;
}

/** The number of lines in the first `bytes` bytes of a file, split as node:readline splits (LF, CRLF or CR). */
function linesBefore(path: string, bytes: number): number {
  if (bytes <= 0) return 0;
  const fd = openSync(path, "r");
  try {
    const chunk = Buffer.alloc(Math.min(bytes, 1 << 20));
    let lines = 0;
    let lastCr = false;
    for (let at = 0; at < bytes; ) {
      const n = readSync(fd, chunk, 0, Math.min(chunk.length, bytes - at), at);
      if (n === 0) break;
      for (let i = 0; i < n; i++) {
        const b = chunk[i];
        // CRLF is one break (counted at its CR), a lone CR or LF one each.
        if (b === 0x0d || (b === 0x0a && !lastCr)) lines++;
        lastCr = b === 0x0d;
      }
      at += n;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}

export async function writeRunReports(
  runDir: string,
  config: RunConfig,
  timing: ReportTiming = {},
): Promise<RunReport> {
  const stats = new RunStatistics({
    run_name: config.run_name ?? "",
    distribution: config.toolsets ? null : config.distribution,
    model: config.model ?? null,
    started_at: timing.startedAt,
    total_prompts: timing.totalPrompts ?? null,
    batch_size: config.batch_size,
  });
  const csvPath = join(runDir, RUN_FILES.summary);
  const csvTmp = `${csvPath}.tmp`;
  writeFileSync(csvTmp, "");
  const csv = new SummaryCsvWriter(csvTmp);
  const atif = new AtifRunFile(join(runDir, RUN_FILES.atif), {
    runName: config.run_name,
    agentVersion: packageVersion(),
  });
  // --rl-capture: the engine's token ids join each call's ATIF step metrics.
  const rlTokens = RlTokenIndex.open(join(runDir, RUN_FILES.rl));
  const doneIds = new Set<string>();
  const report: RunReport = { done: 0, failed: 0, dropped: 0, internal: 0, withScorer: 0, undecided: 0, repeated: 0 };
  // Score samples: one per task; a failed task is unscored, never a failure; a dropped one keeps its decided score.
  const samples: ScoredSample[] = [];
  let anyScore = false;
  const judgeUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let costUsd = 0;
  const addCost = (line: { cost_usd?: number }) => {
    if (typeof line.cost_usd === "number" && Number.isFinite(line.cost_usd)) costUsd += line.cost_usd;
  };
  const groupBy = config.group_by ?? [];
  const harbor = new HarborMean();
  const sample = (
    line: { task_id: string; epoch?: number; toolsets_used?: string[]; metadata?: Record<string, unknown> },
    passed: boolean | null,
  ) => {
    harbor.add(line);
    samples.push({ taskId: line.task_id, epoch: line.epoch ?? 0, passed, groups: groupLabels(line, groupBy) });
  };

  const trajectoriesPath = join(runDir, RUN_FILES.trajectories);
  const ownLinesAfter =
    timing.ownTrajectoriesFrom === undefined ? Infinity : linesBefore(trajectoriesPath, timing.ownTrajectoriesFrom);
  for await (const l of readJsonl<TrajectoryEntry>(trajectoriesPath)) {
    if (!l.value) continue;
    // A result is counted once: a line present twice (a hand-merged file, a line written again after a crash) is
    // one task, as --resume and merge take it. The first line of a (task, epoch) wins, as it does for --resume.
    const key = recordKey(l.value.task_id, l.value.epoch);
    if (doneIds.has(key)) {
      report.repeated++;
      continue;
    }
    doneIds.add(key);
    stats.addEntry(l.value);
    // A verdict is true or false; anything else (a hand edit's "false" or 1) is none, as compare and the HTML
    // report read it, never a pass because it is truthy.
    const verdict = l.value.score?.passed;
    const passed = typeof verdict === "boolean" ? verdict : null;
    if (l.value.score) {
      anyScore = true;
      report.withScorer++;
      if (passed === null) report.undecided++;
    }
    addCost(l.value);
    if (l.value.judge_usage) {
      addUsage(judgeUsage, l.value.judge_usage);
    }
    sample(l.value, passed);
    csv.write(summaryRowFromEntry(l.value));
    atif.add(l.value, rlTokens?.tokensFor(l.value.task_id, l.value.epoch), { checked: l.line <= ownLinesAfter });
    report.done++;
  }
  for await (const l of readJsonl<Partial<DroppedRecord>>(join(runDir, RUN_FILES.dropped))) {
    if (!l.value) continue;
    if (l.value.task_id !== undefined) {
      const key = recordKey(l.value.task_id, (l.value as { epoch?: number }).epoch);
      if (doneIds.has(key)) {
        report.repeated++;
        continue;
      }
      doneIds.add(key);
    }
    addCost(l.value as { cost_usd?: number });
    const reason = DROP_REASONS.find((r) => r === l.value!.dropped) ?? "unknown_tools";
    stats.addDropped(reason, l.value as { usage?: Partial<Usage>; approval_usage?: Partial<Usage> });
    if (l.value.task_id !== undefined) {
      // Its score stands (the filters keep the line out of the training data, not out of the pass rate); a
      // verdict that is not a boolean is none, as for a trajectory line.
      const score = (l.value as { score?: { passed?: unknown } }).score;
      const verdict = typeof score?.passed === "boolean" ? score.passed : null;
      if (score) {
        anyScore = true;
        report.withScorer++;
        if (verdict === null) report.undecided++;
      }
      sample(l.value as { task_id: string }, verdict);
    }
    report.dropped++;
  }
  // failed.jsonl keeps every failed attempt; only the latest attempt of a task that is still not done counts.
  const latestFailure = new Map<string, StoredFailureRecord>();
  for await (const l of readJsonl<StoredFailureRecord>(join(runDir, RUN_FILES.failed))) {
    if (!l.value) continue;
    const key = recordKey(l.value.task_id, (l.value as { epoch?: number }).epoch);
    if (doneIds.has(key)) continue;
    latestFailure.set(key, l.value);
  }
  for (const rec of latestFailure.values()) {
    stats.addFailure(rec);
    addCost(rec as { cost_usd?: number });
    sample(rec, null);
    csv.write(summaryRowFromFailure(rec));
    report.failed++;
    if (rec.outcome === "internal_error") report.internal++;
  }
  csv.close();
  renameSync(csvTmp, csvPath);
  const atifError = atif.finish();
  if (atifError) report.atifError = atifError;
  const statsPath = join(runDir, RUN_FILES.statistics);
  const epochs = samples.reduce((k, x) => Math.max(k, x.epoch + 1), 1);
  // The default bootstrap seed, as the HTML report uses: one interval for one run wherever it is shown.
  if (anyScore) report.scores = runScoreMetrics(samples, epochs);
  const json = {
    ...stats.toJSON(timing.completedAt),
    ...(timing.modelCalls ? { model_calls: timing.modelCalls } : {}),
    // Present once any row names a scorer: pass rates over scored tasks, the unscored counted apart.
    ...(report.scores ? { scores: { ...report.scores, judge_usage: judgeUsage } } : {}),
    // Runs of Harbor tasks: Harbor's own mean (a trial without a reward counts 0), comparable with its leaderboard.
    ...(harbor.toJSON() ? { harbor: harbor.toJSON() } : {}),
    // With --price-input/--price-output: what the run cost, and per passed task when tasks are scored.
    ...(config.price_input !== undefined || config.price_output !== undefined
      ? {
          cost: {
            usd: round6(costUsd),
            per_task_usd: samples.length ? round6(costUsd / samples.length) : null,
            per_passed_task_usd: report.scores?.passed ? round6(costUsd / report.scores.passed) : null,
          },
        }
      : {}),
  };
  writeFileSync(`${statsPath}.tmp`, statisticsJsonText(json));
  renameSync(`${statsPath}.tmp`, statsPath);
  return report;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** One console line for a run's scores: pass rate over scored tasks, its interval, the unscored apart. */
export function scoresLine(m: RunScoreMetrics): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  const ci = m.ci95 ? `, 95 % CI ${pct(m.ci95[0])}–${pct(m.ci95[1])}` : "";
  // The rate is the mean of the tasks' rates; it differs from passed/scored only when tasks have unequal
  // numbers of scored epochs, and then the line says which it is.
  const byEpochs = m.scored > 0 && Math.abs((m.pass_rate ?? 0) - m.passed / m.scored) > 1e-9;
  const rate =
    m.pass_rate === null
      ? "no task scored"
      : byEpochs
        ? `${pct(m.pass_rate)} passed (mean of ${m.pass_at_k_tasks["1"] ?? 0} tasks' rates; ${m.passed}/${m.scored} scored epochs passed${ci})`
        : `${pct(m.pass_rate)} passed (${m.passed}/${m.scored} scored${ci})`;
  // pass@K of the run's K epochs, over the tasks with K scored epochs; said so when that is not every scored task,
  // and never a number when no task has K scored epochs.
  const K = String(m.epochs);
  const over = m.pass_at_k_tasks[K] ?? 0;
  const of = m.pass_at_k_tasks["1"] ?? 0;
  const k =
    m.epochs <= 1
      ? ""
      : m.pass_at_k[K] === undefined
        ? `, pass@${K} n/a (no task has ${K} scored epochs)`
        : `, pass@${K} ${pct(m.pass_at_k[K])}${over < of ? ` (over the ${over} of ${of} tasks with ${K} scored epochs)` : ""}`;
  return `scores: ${rate}${k}, ${m.unscored} unscored`;
}
