/**
 * One invocation per run folder: two writers appending to the same files would duplicate tasks
 * (a double --resume, a requeued array task). A lock left by a dead process on this host is taken over. A lock of
 * another host (a shared file system: a Slurm node, a Kubernetes pod) cannot be checked by its pid: its holder
 * refreshes the file's mtime every HEARTBEAT_MS, and one not refreshed for OTHER_HOST_STALE_MS is taken over (a
 * pod killed for its memory, a node that died), so the retry of a killed shard is not refused forever. The same
 * holds on this host for a pid that is alive but no longer the holder's (reused).
 *
 * The lock file appears whole (written under a temporary name, then hard-linked into place), so a lock that does not
 * parse is a leftover of another version or a damaged file, taken over only once it is old. A `--resume` takes the
 * lock before it reads (and repairs) the folder (src/run/runner.ts): what it reads cannot change under it, nor can
 * it cut the torn tail of a line another live invocation is writing.
 */
import { closeSync, linkSync, openSync, readFileSync, rmSync, statSync, utimesSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { UserError } from "../core/errors.js";
import { pidAlive } from "../core/pid_alive.js";

interface LockInfo {
  pid: number;
  host: string;
  started: string;
  /** Its holder refreshes the file's mtime (older versions did not: their locks are never judged by age). */
  heartbeat?: boolean;
}

/** A lock file that does not parse is taken for a dead writer's only once it is this old. */
const UNREADABLE_LOCK_STALE_MS = 30_000;
/** How often a holder refreshes its lock's mtime. */
export const HEARTBEAT_MS = 60_000;
/** Another host's lock not refreshed for this long is a dead holder's (ten missed refreshes: clocks may differ). */
export const OTHER_HOST_STALE_MS = 10 * HEARTBEAT_MS;

/** Locks this process holds, by lock path: `users` counts the acquireRunLock calls not yet released. */
const held = new Map<string, { users: number; heartbeat: NodeJS.Timeout }>();
let exitHook = false;

function lockPath(runDir: string): string {
  return join(resolve(runDir), ".lock");
}

function readLock(path: string): LockInfo | undefined {
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as LockInfo;
    return typeof v?.pid === "number" && typeof v.host === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

function isMine(path: string): boolean {
  const l = readLock(path);
  return l !== undefined && l.pid === process.pid && l.host === hostname();
}

/** Creates the lock file whole, or returns false when one exists. */
function createWhole(path: string, me: LockInfo): boolean {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, JSON.stringify(me));
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return false;
  } finally {
    rmSync(tmp, { force: true });
  }
}

function take(runDir: string, path: string): void {
  const me: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString(), heartbeat: true };
  for (let attempt = 0; attempt < 2; attempt++) {
    if (createWhole(path, me)) return;
    const lock = readLock(path);
    if (lock === undefined) {
      let age = Infinity;
      try {
        age = Date.now() - statSync(path).mtimeMs;
      } catch {
        continue; // removed meanwhile: try again
      }
      if (age < UNREADABLE_LOCK_STALE_MS) {
        throw new UserError(
          `run folder ${runDir} is in use: its lock ${path} is being written by another invocation (or is damaged: if no run uses the folder, delete it)`,
        );
      }
    } else if (lock.host !== me.host) {
      const quiet = lock.heartbeat === true ? sinceRefreshed(path) : undefined;
      if (quiet === undefined || quiet < OTHER_HOST_STALE_MS) {
        const refreshed = quiet === undefined ? "" : `, refreshed ${Math.round(quiet / 1000)} s ago`;
        throw new UserError(
          `run folder ${runDir} is in use by pid ${lock.pid} on ${lock.host} (since ${lock.started}${refreshed}); if that run is gone, delete ${path}`,
        );
      }
      process.stderr.write(
        `note: run folder ${runDir}: taking over the lock of pid ${lock.pid} on ${lock.host}, not refreshed for ${Math.round(quiet / 60_000)} min (its run is gone)\n`,
      );
    } else if (lock.pid !== process.pid && pidAlive(lock.pid)) {
      // A live pid whose lock stopped being refreshed is another process that got the dead holder's pid (a new
      // container with the same hostname: a Kubernetes Indexed Job's retry pod is named as the one it replaces).
      const quiet = lock.heartbeat === true ? sinceRefreshed(path) : undefined;
      if (quiet === undefined || quiet < OTHER_HOST_STALE_MS)
        throw new UserError(
          `run folder ${runDir} is in use by another hermes-batch (pid ${lock.pid}, since ${lock.started})`,
        );
      process.stderr.write(
        `note: run folder ${runDir}: taking over the lock of pid ${lock.pid}, not refreshed for ${Math.round(quiet / 60_000)} min (that pid is another process now)\n`,
      );
    }
    rmSync(path, { force: true }); // stale: its process is gone
  }
  throw new UserError(`could not lock run folder ${runDir}`);
}

/** Milliseconds since the lock file's mtime was refreshed (undefined when it is gone). */
function sinceRefreshed(path: string): number | undefined {
  try {
    return Math.max(0, Date.now() - statSync(path).mtimeMs);
  } catch {
    return undefined;
  }
}

function releaseAtExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.on("exit", () => {
    for (const path of held.keys()) if (isMine(path)) rmSync(path, { force: true });
  });
}

/**
 * Takes the folder's lock, or one more use of it when this process holds it already (a run locks the folder before
 * it reads it, then again around the run): the lock file goes with the last release, or when the process exits.
 */
export function acquireRunLock(runDir: string): () => void {
  const path = lockPath(runDir);
  let entry = held.get(path);
  if (!entry || !isMine(path)) {
    if (entry) clearInterval(entry.heartbeat);
    take(runDir, path);
    const heartbeat = setInterval(() => {
      const now = new Date();
      try {
        if (isMine(path)) utimesSync(path, now, now);
      } catch {
        // Removed meanwhile (by hand): the next acquire takes it again.
      }
    }, HEARTBEAT_MS);
    heartbeat.unref();
    entry = { users: 0, heartbeat };
    held.set(path, entry);
    releaseAtExit();
  }
  entry.users++;
  const lock = entry;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--lock.users > 0) return;
    clearInterval(lock.heartbeat);
    if (held.get(path) === lock) held.delete(path);
    if (isMine(path)) rmSync(path, { force: true });
  };
}
