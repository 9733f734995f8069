/**
 * Where a run's task folders live: `<output_dir>/.workspaces/<run folder relative to output_dir>/<task>`, apart
 * from the run's result files (trajectories, lock, run.yaml), so no task reaches them through `..`, and a
 * sandbox binds only its own folder. `--keep-workspaces` keeps them there.
 */
import { rmdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const TASK_FOLDERS = ".workspaces";

export function taskFoldersDir(outputDir: string, runDir: string): string {
  const rel = relative(resolve(outputDir), resolve(runDir));
  const inside = rel !== "" && !rel.startsWith("..") && !rel.startsWith("/");
  return inside ? join(resolve(outputDir), TASK_FOLDERS, rel) : `${resolve(runDir)}.workspaces`;
}

/** After a run: removes its task-folders folder and the empty folders above it up to `.workspaces` (kept task folders stay). */
export function removeEmptyTaskFolders(outputDir: string, runDir: string): void {
  const top = join(resolve(outputDir), TASK_FOLDERS);
  let dir = taskFoldersDir(outputDir, runDir);
  for (;;) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty, or never created
    }
    if (dir === top || !dir.startsWith(`${top}/`)) return;
    dir = dirname(dir);
  }
}
