/**
 * One invocation per run folder: two writers appending to the same files would duplicate tasks
 * (a double --resume, a requeued array task). A lock left by a dead process on this host is taken over.
 *
 * The lock file appears whole (written under a temporary name, then hard-linked into place), so a lock that does not
 * parse is a leftover of another version or a damaged file, taken over only once it is old. A `--resume` takes the
 * lock before it reads (and repairs) the folder (src/run/runner.ts): what it reads cannot change under it, nor can
 * it cut the torn tail of a line another live invocation is writing.
 */
import { closeSync, linkSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { UserError } from "../core/errors.js";
import { pidAlive } from "../core/pid_alive.js";

interface LockInfo {
  pid: number;
  host: string;
  started: string;
}

/** A lock file that does not parse is taken for a dead writer's only once it is this old. */
const UNREADABLE_LOCK_STALE_MS = 30_000;

/** Locks this process holds, by lock path: `users` counts the acquireRunLock calls not yet released. */
const held = new Map<string, { users: number }>();
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
  const me: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
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
      throw new UserError(
        `run folder ${runDir} is in use by pid ${lock.pid} on ${lock.host} (since ${lock.started}); if that run is gone, delete ${path}`,
      );
    } else if (lock.pid !== process.pid && pidAlive(lock.pid)) {
      throw new UserError(
        `run folder ${runDir} is in use by another hermes-batch (pid ${lock.pid}, since ${lock.started})`,
      );
    }
    rmSync(path, { force: true }); // stale: its process is gone
  }
  throw new UserError(`could not lock run folder ${runDir}`);
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
    take(runDir, path);
    entry = { users: 0 };
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
    if (held.get(path) === lock) held.delete(path);
    if (isMine(path)) rmSync(path, { force: true });
  };
}
