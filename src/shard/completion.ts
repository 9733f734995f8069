/**
 * A shard's proof of completion and its launch record, both in the shard's own folder:
 *
 *  - `shard-complete.json`, written once at the end of each invocation of the shard (atomically): the task
 *    ids the shard owns, its counts, the ids still failed or never run, started/ended/busy time, whether it
 *    stopped early and why. It is moved aside (`shard-complete.previous.json`) when an invocation starts, so a
 *    folder whose latest invocation was killed (kill -9, scancel, OOM) has no completion record: `merge` and
 *    `shards` then call it unfinished, whatever its checkpoint said.
 *  - `launch.json`, written when an invocation starts: how the shard was started (working folder, command
 *    line without secrets, shard count, output folder, the scheduler's job ids and submit options), from which
 *    `hermes-batch shards` prints the exact command that reruns it.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { lazy } from "../core/lazy.js";
import { buildIdentity } from "../store/build_identity.js";
import type { Shard } from "./assign.js";
import { resultKeys } from "./results.js";

export const COMPLETION_FILE = "shard-complete.json";
export const PREVIOUS_COMPLETION_FILE = "shard-complete.previous.json";
export const LAUNCH_FILE = "launch.json";

const ModelCallsSchema = lazy(() =>
  z.object({
    calls: z.number(),
    retries: z.number(),
    rate_limited: z.number(),
    failed_calls: z.number(),
    limit_decreases: z.number(),
    limit_increases: z.number(),
    endpoints: z.record(z.string(), z.unknown()),
  }),
);
export type ModelCalls = z.infer<ReturnType<typeof ModelCallsSchema>>;

const InvocationSchema = lazy(() =>
  z.object({
    started_at: z.string(),
    ended_at: z.string(),
    busy_seconds: z.number().nonnegative(),
    state: z.enum(["finished", "stopped_early", "interrupted"]),
    exit_code: z.number().int(),
    done: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative(),
    dropped: z.number().int().nonnegative(),
    model_calls: ModelCallsSchema().optional(),
    /** The hermes-batch that ran this invocation (src/store/build_identity.ts); absent in earlier versions' records. */
    hermes_batch_version: z.string().optional(),
    hermes_batch_build: z.string().optional(),
  }),
);
export type Invocation = z.infer<ReturnType<typeof InvocationSchema>>;

export const ShardCompletionSchema = lazy(() =>
  z.object({
    version: z.literal(1),
    shard: z.object({ index: z.number().int().nonnegative(), count: z.number().int().positive() }),
    run_name: z.string(),
    config_fingerprint: z.string(),
    /** The hermes-batch of the invocation that wrote the record (as its run.yaml); absent in earlier versions'. */
    hermes_batch_version: z.string().optional(),
    hermes_batch_build: z.string().optional(),
    /** finished: every owned task has a result (or was skipped as a bad row); else why not. */
    state: z.enum(["finished", "stopped_early", "interrupted"]),
    stopped_early: z
      .object({ reason: z.string(), after_failures: z.number().int(), what: z.string().optional() })
      .nullable(),
    epochs: z.number().int().positive(),
    /** Task ids of the dataset slice that hash to this shard, in dataset order. */
    owned_ids: z.array(z.string()),
    counts: z.object({
      owned: z.number().int().nonnegative(),
      done: z.number().int().nonnegative(),
      failed: z.number().int().nonnegative(),
      dropped: z.number().int().nonnegative(),
      missing: z.number().int().nonnegative(),
    }),
    /** Result keys (task id, `#epoch` after the first) whose latest attempt failed. */
    failed_ids: z.array(z.string()),
    /** Result keys with no result at all. */
    missing_ids: z.array(z.string()),
    /**
     * Of `missing_ids`, those the run refused as bad rows (`--on-bad-row skip`): an invocation that planned every
     * task it owns (not `--only`, `--retry-failed`, …) and ended neither interrupted nor stopped early left only
     * those without a result. Any other missing key is a task never run, so the shard is not finished. Absent in
     * records of earlier versions: then no key counts as skipped.
     */
    skipped_ids: z.array(z.string()).optional(),
    /** First invocation's start, this invocation's end, the summed wall time of every recorded invocation. */
    started_at: z.string(),
    ended_at: z.string(),
    busy_seconds: z.number().nonnegative(),
    invocations: z.array(InvocationSchema()),
  }),
);
export type ShardCompletion = z.infer<ReturnType<typeof ShardCompletionSchema>>;

export const LaunchSchema = lazy(() =>
  z.object({
    version: z.literal(1),
    at: z.string(),
    shard: z.object({ index: z.number().int().nonnegative(), count: z.number().int().positive() }),
    run_name: z.string(),
    /** Absolute --output-dir. */
    output_dir: z.string(),
    cwd: z.string(),
    /** The node binary and the CLI script that ran. */
    node: z.string(),
    cli: z.string(),
    /** `run …` arguments as given, secret flags and their values removed, other secret values redacted. */
    args: z.array(z.string()),
    /** Secret flags that were given on the command line (their values are never recorded). */
    dropped_secret_flags: z.array(z.string()),
    scheduler: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("shell") }),
      z.object({
        kind: z.literal("slurm"),
        job_id: z.string().optional(),
        array_job_id: z.string().optional(),
        array_task_id: z.string().optional(),
        restart_count: z.string().optional(),
        /** From scripts/slurm/submit.sh: itself, the sbatch options and the arguments it was given. */
        submit_script: z.string().optional(),
        sbatch_options: z.string().optional(),
        script_args: z.string().optional(),
      }),
      z.object({
        kind: z.literal("kubernetes"),
        job_name: z.string().optional(),
        pod_name: z.string().optional(),
        namespace: z.string().optional(),
      }),
    ]),
  }),
);
export type Launch = z.infer<ReturnType<typeof LaunchSchema>>;

function writeJsonAtomic(path: string, value: unknown): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(value, null, 2) + "\n");
  renameSync(`${path}.tmp`, path);
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/** The shard folder's completion record: the record, or why there is none usable. */
export function readCompletion(dir: string): { record?: ShardCompletion; problem?: string } {
  const path = join(dir, COMPLETION_FILE);
  if (!existsSync(path)) return { problem: `no ${COMPLETION_FILE} (killed, or still running)` };
  const parsed = ShardCompletionSchema().safeParse(readJson(path));
  if (!parsed.success)
    return { problem: `unreadable ${COMPLETION_FILE}: ${parsed.error.issues[0]?.message ?? "invalid"}` };
  return { record: parsed.data };
}

export function readLaunch(dir: string): Launch | undefined {
  const parsed = LaunchSchema().safeParse(readJson(join(dir, LAUNCH_FILE)));
  return parsed.success ? parsed.data : undefined;
}

/** The latest earlier record, carried over into the next completion record (timing, model calls, skipped rows). */
function previousRecord(dir: string): ShardCompletion | undefined {
  for (const name of [COMPLETION_FILE, PREVIOUS_COMPLETION_FILE]) {
    const parsed = ShardCompletionSchema().safeParse(readJson(join(dir, name)));
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

const SECRET_FLAGS = new Set(["--api-key", "--approval-api-key", "--judge-api-key"]);

/** `run` arguments without secret flags (and their values); every other argument through `redact`. */
export function publicArgs(argv: string[], redact: (s: string) => string): { args: string[]; dropped: string[] } {
  const args: string[] = [];
  const dropped: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf("=");
    const flag = a.startsWith("--") && eq > 0 ? a.slice(0, eq) : a;
    if (SECRET_FLAGS.has(flag)) {
      dropped.push(flag);
      if (eq < 0) i++; // its value is the next argument
      continue;
    }
    args.push(redact(a));
  }
  return { args, dropped };
}

export function detectScheduler(env: NodeJS.ProcessEnv): Launch["scheduler"] {
  const v = (k: string) => (env[k] !== undefined && env[k] !== "" ? env[k] : undefined);
  if (v("SLURM_ARRAY_TASK_ID") !== undefined || v("SLURM_JOB_ID") !== undefined) {
    return {
      kind: "slurm",
      job_id: v("SLURM_JOB_ID"),
      array_job_id: v("SLURM_ARRAY_JOB_ID"),
      array_task_id: v("SLURM_ARRAY_TASK_ID"),
      restart_count: v("SLURM_RESTART_COUNT"),
      submit_script: v("HERMES_BATCH_SUBMIT"),
      sbatch_options: v("HERMES_BATCH_SBATCH_OPTIONS"),
      script_args: v("HERMES_BATCH_SCRIPT_ARGS"),
    };
  }
  if (v("JOB_COMPLETION_INDEX") !== undefined) {
    return {
      kind: "kubernetes",
      job_name: v("HERMES_BATCH_K8S_JOB"),
      pod_name: v("HOSTNAME"),
      namespace: v("HERMES_BATCH_K8S_NAMESPACE"),
    };
  }
  return { kind: "shell" };
}

export interface ShardEnd {
  state: ShardCompletion["state"];
  stoppedEarly: ShardCompletion["stopped_early"];
  exitCode: number;
  ownedIds: string[];
  epochs: number;
  /** Result keys with a trajectory, dropped by a filter, or whose latest attempt failed (not done), over the whole shard folder. */
  trajectories: Set<string>;
  dropped: Set<string>;
  failed: Set<string>;
  /**
   * Whether this invocation planned every task the shard owns that had no result (a first start or `--resume`,
   * not `--only`, `--retry-failed`, `--retry-internal` or `--retry-unscored` alone). Only then, and only when it
   * ran to its end, are the keys still without a result rows the run refused (skipped bad rows).
   */
  plannedAll: boolean;
  thisTime: { done: number; failed: number; dropped: number };
  modelCalls?: ModelCalls;
}

/** One invocation of a shard: started when the run folder is locked, finished once its reports are written. */
export class ShardLedger {
  private readonly earlier: Invocation[];
  /** Keys an earlier invocation recorded as refused bad rows. */
  private readonly earlierSkipped: ReadonlySet<string>;
  private readonly startedAt = new Date();

  constructor(
    private readonly dir: string,
    private readonly shard: Shard,
    private readonly runName: string,
    private readonly fingerprint: string,
    launch: Omit<Launch, "version" | "at" | "shard" | "run_name">,
  ) {
    const previous = previousRecord(dir);
    this.earlier = previous?.invocations ?? [];
    this.earlierSkipped = new Set(previous?.skipped_ids ?? []);
    // From now on the folder is unfinished until this invocation's end proves otherwise.
    if (existsSync(join(dir, COMPLETION_FILE)))
      renameSync(join(dir, COMPLETION_FILE), join(dir, PREVIOUS_COMPLETION_FILE));
    writeJsonAtomic(join(dir, LAUNCH_FILE), {
      version: 1,
      at: this.startedAt.toISOString(),
      shard: this.shard,
      run_name: runName,
      ...launch,
    } satisfies Launch);
  }

  finish(end: ShardEnd): ShardCompletion {
    const endedAt = new Date();
    const identity = buildIdentity();
    const failedIds: string[] = [];
    const missingIds: string[] = [];
    let done = 0;
    let dropped = 0;
    for (const id of end.ownedIds) {
      for (const key of resultKeys(id, end.epochs)) {
        if (end.trajectories.has(key)) done++;
        else if (end.dropped.has(key)) dropped++;
        else if (end.failed.has(key)) failedIds.push(key);
        else missingIds.push(key);
      }
    }
    // Keys without a result after an invocation that planned them all and ran to its end were refused as bad rows;
    // after any other invocation only those an earlier one recorded so are (the rest were never run).
    const skippedIds =
      end.plannedAll && end.state === "finished" ? missingIds : missingIds.filter((k) => this.earlierSkipped.has(k));
    const invocation: Invocation = {
      started_at: this.startedAt.toISOString(),
      ended_at: endedAt.toISOString(),
      busy_seconds: Math.round((endedAt.getTime() - this.startedAt.getTime()) / 10) / 100,
      state: end.state,
      exit_code: end.exitCode,
      ...end.thisTime,
      ...(end.modelCalls ? { model_calls: end.modelCalls } : {}),
      ...identity,
    };
    const invocations = [...this.earlier, invocation];
    const record: ShardCompletion = {
      version: 1,
      shard: this.shard,
      run_name: this.runName,
      config_fingerprint: this.fingerprint,
      ...identity,
      state: end.state,
      stopped_early: end.stoppedEarly,
      epochs: end.epochs,
      owned_ids: end.ownedIds,
      counts: {
        owned: end.ownedIds.length * end.epochs,
        done,
        failed: failedIds.length,
        dropped,
        missing: missingIds.length,
      },
      failed_ids: failedIds,
      missing_ids: missingIds,
      skipped_ids: skippedIds,
      started_at: invocations[0]!.started_at,
      ended_at: invocation.ended_at,
      busy_seconds: Math.round(invocations.reduce((s, i) => s + i.busy_seconds, 0) * 100) / 100,
      invocations,
    };
    writeJsonAtomic(join(this.dir, COMPLETION_FILE), record);
    rmSync(join(this.dir, PREVIOUS_COMPLETION_FILE), { force: true });
    return record;
  }
}
