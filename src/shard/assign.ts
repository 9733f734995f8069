/**
 * Sharding a run across an existing scheduler (Slurm job arrays, Kubernetes Indexed Jobs): which shard
 * this process is, which tasks belong to it, where it writes, and the config fingerprint that `merge`
 * compares across shards.
 *
 * Tasks go to shards by a stable hash of their task id, not by line number. Trade-off:
 *  + inserting, removing or reordering rows moves only those rows; every other task keeps its shard, so a
 *    shard folder resumed after the dataset changed still holds its own tasks;
 *  + the assignment depends on nothing but (task id, shard count): no coordination, no shared state;
 *  - every shard streams the whole dataset (cheap next to the model calls) and runs a scattered subset;
 *  - balance is statistical (about n/N ± √(n/N) tasks each), not exact; tiny datasets can leave a shard empty;
 *  - changing N reassigns almost every task, so a run keeps one shard count from start to merge.
 */
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { UserError } from "../core/errors.js";

export interface Shard {
  /** 0-based. */
  index: number;
  count: number;
}

export interface ResolveShardOptions {
  /** `--shard i/N` (0-based i); "none" or "off" disables auto-detection. */
  shard?: string;
  /** `--shard-count N`: the count for Kubernetes (or to pin it for Slurm reruns). */
  shardCount?: string | number;
  env: NodeJS.ProcessEnv;
}

/** More shards than this is a typo, not a plan. */
export const MAX_SHARDS = 100_000;

const COUNT_ENV = "HERMES_BATCH_SHARD_COUNT";

function parseWhole(value: string, what: string): number {
  const text = value.trim();
  if (!/^\d+$/.test(text)) throw new UserError(`${what} must be a whole number ≥ 0, got '${value}'`);
  const n = Number.parseInt(text, 10);
  if (!Number.isSafeInteger(n)) throw new UserError(`${what} is too large: '${value}'`);
  return n;
}

function checkCount(count: number, what: string): number {
  if (count < 1) throw new UserError(`${what} must be at least 1, got ${count}`);
  if (count > MAX_SHARDS) throw new UserError(`${what} must be at most ${MAX_SHARDS}, got ${count}`);
  return count;
}

function checkIndex(shard: Shard, what: string): Shard {
  if (shard.index >= shard.count) {
    throw new UserError(
      `${what}: shard index ${shard.index} is out of range; indexes are 0-based, so with ${shard.count} shard(s) they run 0..${shard.count - 1}`,
    );
  }
  return shard;
}

function parseShardFlag(value: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  if (!m) throw new UserError(`--shard must look like i/N (0-based index i of N shards, e.g. 0/16), got '${value}'`);
  const index = parseWhole(m[1]!, "--shard index");
  const count = checkCount(parseWhole(m[2]!, "--shard count"), "--shard count N");
  return checkIndex({ index, count }, `--shard ${value.trim()}`);
}

function envInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v.trim() === "") return undefined;
  return parseWhole(v, name);
}

/** The count given by `--shard-count` or HERMES_BATCH_SHARD_COUNT, the flag winning. */
function explicitCount(opts: ResolveShardOptions): { count: number; source: string } | undefined {
  if (opts.shardCount !== undefined) {
    const n = typeof opts.shardCount === "number" ? opts.shardCount : parseWhole(opts.shardCount, "--shard-count");
    return { count: checkCount(n, "--shard-count"), source: "--shard-count" };
  }
  const fromEnv = envInt(opts.env, COUNT_ENV);
  if (fromEnv !== undefined) return { count: checkCount(fromEnv, COUNT_ENV), source: COUNT_ENV };
  return undefined;
}

/**
 * Slurm job array. With an explicit count, array ids are the 0-based shard indexes (so a rerun of a few
 * ids, `sbatch --array=3,7`, still knows N). Without one, the array itself gives the shards:
 * index = (id - min) / step and N = (max - min) / step + 1, cross-checked with SLURM_ARRAY_TASK_COUNT.
 */
function fromSlurm(env: NodeJS.ProcessEnv, pinned: { count: number; source: string } | undefined): Shard | undefined {
  const id = envInt(env, "SLURM_ARRAY_TASK_ID");
  if (id === undefined) return undefined;
  if (pinned) {
    if (id >= pinned.count) {
      throw new UserError(
        `SLURM_ARRAY_TASK_ID=${id} is not below the shard count ${pinned.count} (${pinned.source}): with an explicit count, ` +
          `array ids are the 0-based shard indexes, so submit --array=0-${pinned.count - 1}`,
      );
    }
    return { index: id, count: pinned.count };
  }
  const min = envInt(env, "SLURM_ARRAY_TASK_MIN") ?? 0;
  const max = envInt(env, "SLURM_ARRAY_TASK_MAX");
  const step = envInt(env, "SLURM_ARRAY_TASK_STEP") ?? 1;
  const reported = envInt(env, "SLURM_ARRAY_TASK_COUNT");
  if (step < 1) throw new UserError(`SLURM_ARRAY_TASK_STEP must be at least 1, got ${step}`);
  let count: number;
  if (max !== undefined) {
    if (max < min || (max - min) % step !== 0) {
      throw new UserError(
        `inconsistent Slurm array: SLURM_ARRAY_TASK_MIN=${min}, SLURM_ARRAY_TASK_MAX=${max}, SLURM_ARRAY_TASK_STEP=${step}`,
      );
    }
    count = (max - min) / step + 1;
    if (reported !== undefined && reported !== count) {
      throw new UserError(
        `the Slurm array is not a plain range (SLURM_ARRAY_TASK_COUNT=${reported}, but ${min}-${max}:${step} spans ${count}): ` +
          `set ${COUNT_ENV} (then array ids are the 0-based shard indexes) or pass --shard i/N`,
      );
    }
  } else if (reported !== undefined) {
    count = reported;
  } else {
    throw new UserError(
      `SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_MAX nor SLURM_ARRAY_TASK_COUNT: pass --shard i/N`,
    );
  }
  checkCount(count, "the Slurm array size");
  if (id < min || (id - min) % step !== 0) {
    throw new UserError(`SLURM_ARRAY_TASK_ID=${id} is not in the array ${min}-${max ?? "?"}:${step}`);
  }
  return checkIndex({ index: (id - min) / step, count }, `SLURM_ARRAY_TASK_ID=${id}`);
}

/** Kubernetes Indexed Job: JOB_COMPLETION_INDEX is 0-based; the count is not in the pod's env. */
function fromKubernetes(
  env: NodeJS.ProcessEnv,
  pinned: { count: number; source: string } | undefined,
): Shard | undefined {
  const index = envInt(env, "JOB_COMPLETION_INDEX");
  if (index === undefined) return undefined;
  if (!pinned) {
    throw new UserError(
      `JOB_COMPLETION_INDEX=${index} is set (Kubernetes Indexed Job) but the shard count is unknown: ` +
        `set ${COUNT_ENV} to the Job's completions, or pass --shard-count N`,
    );
  }
  return checkIndex({ index, count: pinned.count }, `JOB_COMPLETION_INDEX=${index}`);
}

/**
 * Which shard this process runs: `--shard i/N` first, else a Slurm job array, else a Kubernetes Indexed
 * Job; undefined for an ordinary, unsharded run.
 */
export function resolveShard(opts: ResolveShardOptions): Shard | undefined {
  const flag = opts.shard?.trim();
  if (flag === "none" || flag === "off") {
    if (opts.shardCount !== undefined) throw new UserError(`--shard ${flag} and --shard-count contradict each other`);
    return undefined;
  }
  const pinned = explicitCount(opts);
  if (flag !== undefined) {
    const shard = parseShardFlag(flag);
    if (opts.shardCount !== undefined && pinned && pinned.count !== shard.count) {
      throw new UserError(`--shard ${flag} says ${shard.count} shards but --shard-count says ${pinned.count}`);
    }
    return shard;
  }
  const detected = fromSlurm(opts.env, pinned) ?? fromKubernetes(opts.env, pinned);
  if (detected) return detected;
  if (pinned) {
    // Without an index every pod or array task would run the whole dataset into one folder.
    throw new UserError(
      `${pinned.source} gives a shard count (${pinned.count}) but no shard index was found: pass --shard i/N, or run it as a ` +
        `Slurm job array (SLURM_ARRAY_TASK_ID) or a Kubernetes Job with completionMode: Indexed (JOB_COMPLETION_INDEX)`,
    );
  }
  return undefined;
}

/** A 64-bit slice of the task id's sha256, reduced mod N (the bias is below 2^-40 for any N ≤ MAX_SHARDS). */
export function shardOfTask(taskId: string, count: number): number {
  const digest = createHash("sha256").update(taskId, "utf8").digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(count));
}

export function taskInShard(taskId: string, shard: Shard): boolean {
  return shardOfTask(taskId, shard.count) === shard.index;
}

export function formatShard(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** `0003-of-0016`: zero-padded so a listing sorts; `merge` accepts any padding. */
export function shardDirName(shard: Shard): string {
  const width = Math.max(4, String(shard.count).length);
  return `${String(shard.index).padStart(width, "0")}-of-${String(shard.count).padStart(width, "0")}`;
}

export const SHARDS_DIR = "shards";

/** The shard's folder relative to the output dir: `<run>/shards/0003-of-0016`. */
export function shardRunName(runName: string, shard: Shard): string {
  return `${runName}/${SHARDS_DIR}/${shardDirName(shard)}`;
}

/** The shard's run folder: `<output-dir>/<run-name>/shards/<i>-of-<N>/`, a normal run folder. */
export function shardRunDir(outputDir: string, runName: string, shard: Shard): string {
  return resolve(join(outputDir, runName, SHARDS_DIR, shardDirName(shard)));
}

export function parseShardDirName(name: string): Shard | undefined {
  const m = /^(\d+)-of-(\d+)$/.exec(name);
  if (!m) return undefined;
  const index = Number.parseInt(m[1]!, 10);
  const count = Number.parseInt(m[2]!, 10);
  if (count < 1 || index >= count) return undefined;
  return { index, count };
}

/**
 * The --offset/--max-samples slice as a counter over the rows that parse, called once per such row in dataset order:
 * whether that row is in the slice. A row the run refuses counts too (a refusal can depend on the node, the slice
 * must not), so the planner, merge's shard ownership and a resume's drift check agree on every slice.
 */
export function sliceCounter(slice: { offset?: number; max_samples?: number }): () => boolean {
  const offset = slice.offset ?? 0;
  const end = slice.max_samples !== undefined ? offset + slice.max_samples : Infinity;
  let next = 0;
  return () => {
    const i = next++;
    return i >= offset && i < end;
  };
}
