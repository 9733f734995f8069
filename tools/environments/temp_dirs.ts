/**
 * Temporary folders a run makes for its sandboxes, all in $TMPDIR and named `hermes-<kind>-<pid>-XXXXXX`: the
 * spawn helper's FIFOs (`spawn`, one per worker thread), the unreadable shell copy (`shell`, one per thread), a
 * local sandbox's exchange folder (`io`), the verify step's files (`verify`), the host environment's background
 * state (`bg`), the disk quota's ready-made file systems (`disk`, unmounted before removal). Each is removed by its owner when no longer needed; what is left is removed
 * - when the thread that made it exits (its `exit` event, when it gets one: a terminated worker thread does not),
 * - when the process exits (the main thread sweeps every folder carrying its own pid: worker threads share it),
 *   which is also how a run interrupted by SIGINT, SIGTERM or SIGHUP ends (the runner's handlers let it finish),
 * - and, for a process killed outright (SIGKILL), by the next run's start, which sweeps the folders of pids that
 *   are no longer alive.
 */
import type { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isMainThread } from "node:worker_threads";
import { pidAlive } from "../../src/core/pid_alive.js";

export type TempKind = "spawn" | "shell" | "io" | "verify" | "bg" | "disk";
const NAME = /^hermes-(?:spawn|shell|io|verify|bg|disk)-(\d+)-[A-Za-z0-9]{6}$/;

// node:child_process (and with it net and dgram) loads only to unmount a disk slot: every worker thread imports
// this module, few of them ever unmount.
const require = createRequire(import.meta.url);
const loadSpawnSync = (): typeof spawnSync =>
  (require("node:child_process") as typeof import("node:child_process")).spawnSync;

const dirs = new Set<string>();
let hooked = false;

function prefix(kind: TempKind): string {
  return join(tmpdir(), `hermes-${kind}-${process.pid}-`);
}

/** A new temporary folder of this kind (mode 0700), removed at the latest when this thread or process exits. */
export function makeTempDirSync(kind: TempKind): string {
  const dir = mkdtempSync(prefix(kind));
  removeOnExit(dir);
  return dir;
}

export async function makeTempDir(kind: TempKind): Promise<string> {
  const dir = await mkdtemp(prefix(kind));
  removeOnExit(dir);
  return dir;
}

export function removeOnExit(dir: string): void {
  dirs.add(dir);
  if (!hooked) {
    hooked = true;
    process.once("exit", removeAllTempDirs);
  }
}

/** The folder was removed by its owner: forget it. */
export function forgetTempDir(dir: string): void {
  dirs.delete(dir);
}

/** Removes every folder this thread made and still holds. */
export function removeAllTempDirs(): void {
  removeQuietly([...dirs]);
  dirs.clear();
}

/**
 * Removes the temporary folders in $TMPDIR of this process (`own`, at its exit) or of processes no longer alive
 * (`stale`). Returns how many it removed.
 */
export function sweepTempDirs(which: "own" | "stale", root = tmpdir()): number {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return 0;
  }
  const chosen: string[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (which === "own" ? pid !== process.pid : pid === process.pid || pidAlive(pid)) continue;
    chosen.push(join(root, name));
  }
  return removeQuietly(chosen);
}

let sweeper = false;

/** In the main thread, once: sweeps what dead runs left, and sweeps this process's folders when it exits. */
export function installTempSweeper(): void {
  if (sweeper || !isMainThread) return;
  sweeper = true;
  sweepTempDirs("stale");
  process.once("exit", () => sweepTempDirs("own"));
}

/** Mount points at or below any of `dirs` (deepest first), from this process's mount table. */
function mountsBelow(dirs: string[]): string[] {
  let table: string;
  try {
    table = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  const points = table
    .split("\n")
    .map((line) => line.split(" ")[4]?.replace(/\\(\d{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p): p is string => p !== undefined && dirs.some((dir) => p === dir || p.startsWith(`${dir}/`)));
  return points.sort((a, b) => b.length - a.length);
}

/** Removes the folders; returns how many are gone. */
function removeQuietly(dirs: string[]): number {
  if (dirs.length === 0) return 0;
  // A file system mounted below (a disk slot) is unmounted first: rm would empty it and then fail on its folder.
  // One umount for all of them: each process costs 10–20 ms of waiting, more on a loaded machine.
  const points = mountsBelow(dirs);
  if (points.length > 0) loadSpawnSync()("umount", ["-l", ...points], { stdio: "ignore" });
  let removed = 0;
  for (const dir of dirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
      removed++;
    } catch {
      // left for the next sweep
    }
  }
  return removed;
}
