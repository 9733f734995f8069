/**
 * Global setup of every project: the suite's temporary folders (the tests' own, the CLI runs' task folders, disk
 * slots, spawn helpers) go into one folder of this vitest process, removed at the end. Without it each suite run
 * left ~1,000 folders in /tmp, and the harness's stale-folder sweep, which lists the temporary folder at every
 * run's start and exit, got slower with each of them (10,000 entries cost a run ~70 ms of main-thread CPU).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

declare global {
  // One folder per vitest process, whichever project's setup runs first.
  var hermesSuiteTmp: string | undefined;
}

/** Mount points at or below `dir` (a disk slot a killed run left mounted), deepest first. */
function mountsBelow(dir: string): string[] {
  let table = "";
  try {
    table = readFileSync("/proc/self/mounts", "utf8");
  } catch {
    return [];
  }
  return table
    .split("\n")
    .map((line) => line.split(" ")[1]?.replace(/\\040/g, " "))
    .filter((point): point is string => point !== undefined && (point === dir || point.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
}

export function setup(): () => void {
  if (globalThis.hermesSuiteTmp) return () => undefined;
  const dir = mkdtempSync(join(tmpdir(), "hb-suite-"));
  globalThis.hermesSuiteTmp = dir;
  // As /tmp: tests that run the harness as another user (uid 1000) make their folders here too.
  chmodSync(dir, 0o1777);
  // Read by os.tmpdir() in this process and in every test worker and child process started after this.
  process.env.TMPDIR = dir;
  return () => {
    for (const point of mountsBelow(dir)) {
      try {
        execFileSync("umount", ["-l", point], { stdio: "ignore" });
      } catch {
        // not ours to unmount, or already gone: the removal below skips what it cannot remove
      }
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    } catch (err) {
      process.stderr.write(`test teardown: could not remove ${dir}: ${(err as Error).message}\n`);
    }
  };
}
