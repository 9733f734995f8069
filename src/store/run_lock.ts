/**
 * One invocation per run folder: two writers appending to the same files would duplicate tasks
 * (a double --resume, a requeued array task). A lock left by a dead process on this host is taken over.
 */
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { UserError } from "../core/errors.js";
import { pidAlive } from "../core/pid_alive.js";

interface LockInfo {
  pid: number;
  host: string;
  started: string;
}

export function acquireRunLock(runDir: string): () => void {
  const path = join(runDir, ".lock");
  const me: LockInfo = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      let held: LockInfo | undefined;
      try {
        held = JSON.parse(readFileSync(path, "utf8")) as LockInfo;
      } catch {
        held = undefined; // torn or empty: its writer died mid-write
      }
      if (held && held.host !== me.host) {
        throw new UserError(
          `run folder ${runDir} is in use by pid ${held.pid} on ${held.host} (since ${held.started}); if that run is gone, delete ${path}`,
        );
      }
      if (held && held.pid !== process.pid && pidAlive(held.pid)) {
        throw new UserError(
          `run folder ${runDir} is in use by another hermes-batch (pid ${held.pid}, since ${held.started})`,
        );
      }
      rmSync(path, { force: true }); // stale: its process is gone
      continue;
    }
    writeSync(fd, JSON.stringify(me));
    closeSync(fd);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      rmSync(path, { force: true });
    };
  }
  throw new UserError(`could not lock run folder ${runDir}`);
}
