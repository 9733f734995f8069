/**
 * The runner's side of a shard's completion record (src/shard/completion.ts): started once the shard's
 * folder is locked, finished once its reports are written. A shard killed in between leaves no record.
 */
import { resolve } from "node:path";
import type { RunConfig } from "../config/run_config.js";
import { createRedactor, secretValues } from "../store/redact.js";
import type { Shard } from "../shard/assign.js";
import { ShardLedger, detectScheduler, publicArgs, type ModelCalls } from "../shard/completion.js";
import { folderResults, ownershipByShard } from "../shard/results.js";
import { readDataset, type DatasetSource } from "./dataset.js";

export function startShardLedger(config: RunConfig, runDir: string, shard: Shard, fingerprint: string): ShardLedger {
  const redact = createRedactor(secretValues(config));
  const { args, dropped } = publicArgs(process.argv.slice(2), redact);
  return new ShardLedger(runDir, shard, config.run_name!, fingerprint, {
    output_dir: resolve(config.output_dir),
    cwd: process.cwd(),
    node: process.execPath,
    cli: resolve(process.argv[1] ?? ""),
    args,
    dropped_secret_flags: dropped,
    scheduler: detectScheduler(process.env),
  });
}

/**
 * Whether an invocation planned every task without a result (as src/run/runner.ts `resumeSelection` selects):
 * a first start or `--resume` (with `--retry-failed` too); not `--only`, nor `--retry-failed`, `--retry-internal`
 * or `--retry-unscored` without `--resume`, which run only those.
 */
export function plannedEveryTask(
  config: Pick<RunConfig, "only" | "resume" | "retry_failed" | "retry_internal" | "retry_unscored">,
): boolean {
  if (config.only || (config.retry_failed && !config.resume)) return false;
  return config.resume || (!config.retry_internal && !config.retry_unscored);
}

export interface ShardInvocationEnd {
  /** The run's dataset as it read it (a copy of stdin included): the shard's ids are computed from it. */
  dataset: string | DatasetSource;
  interrupted: boolean;
  /** The early-stop rule's model error, when it stopped the shard. */
  earlyStop?: string;
  /** "the first 5 tasks" or "5 tasks in a row". */
  earlyStopWhat?: string;
  thisTime: { done: number; failed: number; dropped: number };
  modelCalls?: ModelCalls;
  redact: (s: string) => string;
}

export async function finishShardLedger(
  ledger: ShardLedger,
  config: RunConfig,
  runDir: string,
  shard: Shard,
  end: ShardInvocationEnd,
): Promise<void> {
  const owned = (await ownershipByShard(readDataset(end.dataset), shard.count, config))[shard.index]!;
  const results = await folderResults(runDir);
  const state = end.interrupted ? "interrupted" : end.earlyStop !== undefined ? "stopped_early" : "finished";
  ledger.finish({
    state,
    stoppedEarly:
      end.earlyStop !== undefined
        ? { reason: end.redact(end.earlyStop), after_failures: config.stop_after_failures, what: end.earlyStopWhat }
        : null,
    exitCode: end.interrupted ? 130 : end.earlyStop !== undefined || results.failed.size > 0 ? 1 : 0,
    ownedIds: owned,
    epochs: config.epochs,
    trajectories: results.trajectories,
    dropped: results.dropped,
    failed: new Set(results.failed.keys()),
    plannedAll: plannedEveryTask(config),
    thisTime: end.thisTime,
    modelCalls: end.modelCalls,
  });
}
