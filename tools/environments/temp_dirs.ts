/**
 * Temporary folders this process made for its sandboxes (spawn helper FIFOs, the unreadable shell copy, exchange
 * and verify folders): each is removed when it is no longer needed, and whatever is left when the process (or
 * worker thread) exits. The runner's signal handlers call removeAllTempDirs() before exiting.
 */
import { rmSync } from "node:fs";

const dirs = new Set<string>();
let hooked = false;

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

export function removeAllTempDirs(): void {
  for (const dir of dirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
  dirs.clear();
}
