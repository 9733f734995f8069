/**
 * statistics.json and summary.csv, rebuilt from the run's output files at the end of every invocation,
 * so a resumed run reports exactly what an uninterrupted one would.
 */
import { renameSync } from "node:fs";
import { join } from "node:path";
import type { RunConfig } from "../config/run_config.js";
import { registry } from "../../tools/registry.js";
import { readJsonl } from "../store/jsonl_file.js";
import { RUN_FILES } from "../store/checkpoint.js";
import { RunStatistics } from "./statistics.js";
import { SummaryCsvWriter, summaryRowFromEntry, summaryRowFromFailure } from "./summary_csv.js";
import { writeFileSync } from "node:fs";
import type { DroppedRecord, StoredFailureRecord, TrajectoryEntry } from "../core/records.js";
import type { ModelCallCounts } from "../scheduler/run_models.js";

export interface RunReport {
  done: number;
  failed: number;
  dropped: number;
  /** Of the failed: tasks whose latest attempt was an internal_error (a bug of hermes-batch). */
  internal: number;
}

export interface ReportTiming {
  /** When this invocation started (started_at and duration_seconds are this invocation's). */
  startedAt?: Date;
  /** Tasks of the run's dataset slice (done earlier plus planned now). */
  totalPrompts?: number;
  /** This invocation's model calls, retries, 429s and connection-limit changes (from the run-wide limiters). */
  modelCalls?: ModelCallCounts;
}

export async function writeRunReports(runDir: string, config: RunConfig, timing: ReportTiming = {}): Promise<RunReport> {
  const stats = new RunStatistics({
    run_name: config.run_name ?? "",
    distribution: config.toolsets ? null : config.distribution,
    model: config.model ?? null,
    knownTools: registry.names(),
    started_at: timing.startedAt,
    total_prompts: timing.totalPrompts ?? null,
  });
  const csvPath = join(runDir, RUN_FILES.summary);
  const csvTmp = `${csvPath}.tmp`;
  writeFileSync(csvTmp, "");
  const csv = new SummaryCsvWriter(csvTmp);
  const doneIds = new Set<string>();
  const report: RunReport = { done: 0, failed: 0, dropped: 0, internal: 0 };

  for await (const l of readJsonl<TrajectoryEntry>(join(runDir, RUN_FILES.trajectories))) {
    if (!l.value) continue;
    doneIds.add(l.value.task_id);
    stats.addEntry(l.value);
    csv.write(summaryRowFromEntry(l.value));
    report.done++;
  }
  for await (const l of readJsonl<Partial<DroppedRecord>>(join(runDir, RUN_FILES.dropped))) {
    if (!l.value) continue;
    if (l.value.task_id !== undefined) doneIds.add(l.value.task_id);
    const reason = l.value.dropped === "no_reasoning" ? "no_reasoning" : "unknown_tools";
    stats.addDropped(reason);
    report.dropped++;
  }
  // failed.jsonl keeps every failed attempt; only the latest attempt of a task that is still not done counts.
  const latestFailure = new Map<string, StoredFailureRecord>();
  for await (const l of readJsonl<StoredFailureRecord>(join(runDir, RUN_FILES.failed))) {
    if (!l.value || doneIds.has(l.value.task_id)) continue;
    latestFailure.set(l.value.task_id, l.value);
  }
  for (const rec of latestFailure.values()) {
    stats.addFailure(rec);
    csv.write(summaryRowFromFailure(rec));
    report.failed++;
    if (rec.outcome === "internal_error") report.internal++;
  }
  csv.close();
  renameSync(csvTmp, csvPath);
  const statsPath = join(runDir, RUN_FILES.statistics);
  const json = timing.modelCalls ? { ...stats.toJSON(), model_calls: timing.modelCalls } : stats.toJSON();
  writeFileSync(`${statsPath}.tmp`, JSON.stringify(json, null, 2) + "\n");
  renameSync(`${statsPath}.tmp`, statsPath);
  return report;
}
