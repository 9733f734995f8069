/**
 * Each shard's state, by proof: the task ids it owns (recomputed from the dataset, else taken from its
 * completion record), what its folder holds, and its completion record. A shard is finished only when its
 * own record says so and every task it owns has a result; `merge` and `shards` both read this.
 */
import { existsSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { pidAlive } from "../core/pid_alive.js";
import { COMPLETION_FILE, readCompletion, readLaunch, type Launch, type ShardCompletion } from "./completion.js";
import type { ShardInspection } from "./merge.js";
import { folderResults, resultKeys } from "./results.js";

export type ShardState = "finished" | "stopped_early" | "interrupted" | "running" | "killed" | "missing";

export interface ShardStatus {
  index: number;
  dir?: string;
  state: ShardState;
  /** Why it is not finished, in words. */
  why?: string;
  /** Result keys this shard owns (undefined: unknown, the dataset unreadable and no record). */
  owned?: string[];
  done: number;
  dropped: number;
  /** Owned keys whose latest attempt failed, with that attempt's outcome. */
  failed: { key: string; outcome: string; error: string }[];
  /** Owned keys with no result at all. */
  missing: string[];
  /** Owned keys its completion record says it refused as bad rows (`--on-bad-row skip`): no result, and no task. */
  skipped: string[];
  lastActivity?: number;
  record?: ShardCompletion;
  launch?: Launch;
  /** What the proof rested on, read before the folder's results: its completion record and lock, as text. */
  proof?: string;
}

/**
 * The shard folder's completion record and lock as they are now. A merge compares it with `ShardStatus.proof` after
 * copying the folder's files: a new invocation moves the record aside (and locks the folder) before it changes any
 * result, so an equal proof means the files copied are those proved.
 */
export function shardProof(dir: string): string {
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name), "utf8");
    } catch {
      return "\0none";
    }
  };
  return `${read(COMPLETION_FILE)}\0${read(".lock")}`;
}

function lockHolder(dir: string): { pid: number; host: string; started?: string; alive: boolean } | undefined {
  const path = join(dir, ".lock");
  if (!existsSync(path)) return undefined;
  try {
    const held = JSON.parse(readFileSync(path, "utf8")) as { pid: number; host: string; started?: string };
    // Another host's process cannot be checked from here: taken as alive.
    return { ...held, alive: held.host !== hostname() || pidAlive(held.pid) };
  } catch {
    return undefined;
  }
}

/**
 * `ownedIds`: task ids per shard index from the dataset, or undefined when the dataset cannot be read (then
 * each shard's recorded ids are used).
 */
export async function shardStatuses(
  inspection: ShardInspection,
  ownedIds: string[][] | undefined,
  epochs: number,
): Promise<ShardStatus[]> {
  const byIndex = new Map(inspection.folders.map((f) => [f.shard.index, f]));
  const out: ShardStatus[] = [];
  for (let index = 0; index < inspection.count; index++) {
    const folder = byIndex.get(index);
    const status: ShardStatus = {
      index,
      state: "missing",
      done: 0,
      dropped: 0,
      failed: [],
      missing: [],
      skipped: [],
    };
    const ids = ownedIds?.[index];
    if (!folder || folder.unusable) {
      status.dir = folder?.dir;
      status.why = folder ? folder.unusable : "no folder (never started)";
      status.owned = ids ? ids.flatMap((id) => resultKeys(id, epochs)) : undefined;
      status.missing = status.owned ?? [];
      out.push(status);
      continue;
    }
    status.dir = folder.dir;
    status.proof = shardProof(folder.dir);
    const { record, problem } = readCompletion(folder.dir);
    status.record = record;
    status.launch = readLaunch(folder.dir);
    const owned = ids ?? record?.owned_ids;
    const shardEpochs = ids ? epochs : (record?.epochs ?? epochs);
    status.owned = owned?.flatMap((id) => resultKeys(id, shardEpochs));
    const results = await folderResults(folder.dir);
    status.lastActivity = results.lastActivity;
    for (const key of status.owned ?? []) {
      if (results.trajectories.has(key)) status.done++;
      else if (results.dropped.has(key)) status.dropped++;
      else if (results.failed.has(key)) status.failed.push({ key, ...results.failed.get(key)! });
      else status.missing.push(key);
    }
    const lock = lockHolder(folder.dir);
    // A live lock taken after the record was written is a new invocation of the shard (a rerun, --retry-failed,
    // --only), still counting the dataset or asking the endpoint before it moves the record aside: its results are
    // about to change. An older lock is the recording invocation's own, held until it exits.
    const relocked =
      record !== undefined &&
      lock?.alive === true &&
      typeof lock.started === "string" &&
      Date.parse(lock.started) > Date.parse(record.ended_at);
    if (relocked) {
      status.state = "running";
      const elsewhere =
        lock.host !== hostname() ? `; if ${lock.host} is gone, delete ${join(folder.dir, ".lock")} and rerun` : "";
      status.why = `running again (pid ${lock.pid} on ${lock.host}, since ${lock.started})${elsewhere}: its completion record of ${record.ended_at} is about to be replaced`;
    } else if (!record) {
      status.state = lock?.alive ? "running" : "killed";
      // Another host's process cannot be checked from here: a node lost mid-run leaves its lock, and the rerun
      // printed below stops on it until it is deleted.
      const elsewhere =
        lock && lock.host !== hostname()
          ? `; if ${lock.host} is gone, delete ${join(folder.dir, ".lock")} and rerun`
          : "";
      status.why = lock?.alive
        ? `still running (pid ${lock.pid} on ${lock.host})${elsewhere}; ${problem}`
        : `${problem}: its last invocation ended without writing it (killed: kill -9, scancel, out of memory, node lost)`;
    } else if (record.config_fingerprint !== folder.fingerprint) {
      status.state = "interrupted";
      status.why = `its ${"shard-complete.json"} belongs to another configuration than its run.yaml`;
    } else if (record.state === "interrupted") {
      status.state = "interrupted";
      status.why = `interrupted (its last invocation ended ${record.ended_at} on a signal)`;
    } else if (record.state === "stopped_early") {
      status.state = "stopped_early";
      status.why = `stopped early: ${record.stopped_early?.what ?? `the first ${record.stopped_early?.after_failures ?? "?"} tasks`} all failed with: ${record.stopped_early?.reason ?? "?"}`;
    } else {
      status.state = "finished";
      // Rows the shard skipped as bad rows (--on-bad-row skip) have no result, and an unsharded run has none either.
      // Only keys the record says were refused as bad rows: a key an `--only` or `--retry-failed` invocation never
      // ran is missing too, and a finished record must not hide it.
      const skipped = new Set(record.skipped_ids ?? []);
      const reallyMissing = status.missing.filter((k) => !skipped.has(k));
      status.skipped = status.missing.filter((k) => skipped.has(k));
      if (ids && record.owned_ids.join("\n") !== ids.join("\n")) {
        status.state = "interrupted";
        status.why = "its completion record lists other task ids than the dataset gives it now (the dataset changed?)";
      } else if (reallyMissing.length) {
        status.state = "interrupted";
        status.why = `its completion record says finished, but ${reallyMissing.length} task(s) it owns have no result in its folder`;
      }
      status.missing = reallyMissing;
    }
    out.push(status);
  }
  return out;
}

/** Shards that must be rerun before a merge is complete. */
export function unfinishedShards(statuses: ShardStatus[]): ShardStatus[] {
  return statuses.filter((s) => s.state !== "finished");
}

export function listKeys(keys: string[], max = 20): string {
  const shown = keys.slice(0, max).join(", ");
  return keys.length > max ? `${shown}, … (${keys.length} in all)` : shown;
}
