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

const END_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** The end guards of the ledgers not yet finished. */
const guards = new WeakMap<ShardLedger, () => void>();

/**
 * From a shard's start to its completion record, a signal nobody else handles does not kill it. The run's own handlers
 * (src/run/run_control.ts) go once its tasks have ended; a SIGTERM after that (Slurm's time-limit warning, scancel, a
 * requeue, an eviction) took Node's default action and killed the shard between its last result and its record: every
 * task done, and yet no proof. Now the first such signal lets it finish recording its end (seconds); a second one
 * stops it at once, as before.
 */
function guardEnd(): () => void {
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (process.listenerCount(signal) > 1) return; // the run's own handlers are in place: they deal with it
    if (received !== undefined) {
      dispose();
      process.kill(process.pid, signal);
      return;
    }
    received = signal;
    process.stderr.write(
      `hermes-batch run: ${signal} while the shard records its end: writing its completion record first (${signal} again stops it at once, without one)\n`,
    );
  };
  const dispose = () => {
    for (const s of END_SIGNALS) process.off(s, onSignal);
  };
  for (const s of END_SIGNALS) process.on(s, onSignal);
  return dispose;
}

export function startShardLedger(config: RunConfig, runDir: string, shard: Shard, fingerprint: string): ShardLedger {
  const redact = createRedactor(secretValues(config));
  const { args, dropped } = publicArgs(process.argv.slice(2), redact);
  const ledger = new ShardLedger(runDir, shard, config.run_name!, fingerprint, {
    output_dir: resolve(config.output_dir),
    cwd: process.cwd(),
    node: process.execPath,
    cli: resolve(process.argv[1] ?? ""),
    args,
    dropped_secret_flags: dropped,
    scheduler: detectScheduler(process.env),
  });
  guards.set(ledger, guardEnd());
  return ledger;
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
  try {
    await recordEnd(ledger, config, runDir, shard, end);
  } finally {
    guards.get(ledger)?.();
    guards.delete(ledger);
  }
}

async function recordEnd(
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
