/**
 * Across tool calls: what this task's earlier (allowed) calls wrote, and the classes a later command
 * falls in by running those files (a script, Makefile, package.json script, conftest.py, git hook),
 * judged from the files' text as read where the command runs (next/cross_call.ts).
 */
import { crossCallMatches, writtenPaths } from "./next/cross_call.js";
import type { DetectOptions, PatternMatch } from "./detect.js";

/** Files run by a runner (make, npm, pytest, git) without being named on the command line. */
const RUN_BY_ROLE = /(^|\/)(Makefile|makefile|GNUmakefile|package\.json|conftest\.py|\.git\/hooks\/[\w-]+)$/;
const MAX_REMEMBERED = 64;
const MAX_FILE_CHARS = 256 * 1024;

export type ReadFile = (path: string) => Promise<string | undefined>;
export type WrittenFiles = ReturnType<typeof writtenFilesTracker>;

/** `where`: the directory the command starts in (`cwd`) and the task's working directory (`defaultCwd`). */
export function writtenFilesTracker() {
  /** Absolute paths, oldest first (a path written again moves to the end). */
  const written = new Set<string>();
  return {
    remember(command: string, where: DetectOptions): void {
      for (const p of writtenPaths(command, where)) {
        written.delete(p);
        written.add(p);
        if (written.size > MAX_REMEMBERED) written.delete(written.values().next().value!);
      }
    },
    async matches(command: string, where: DetectOptions, read: ReadFile): Promise<PatternMatch[]> {
      const paths = [...written];
      const runs = (p: string) => command.includes(p.slice(p.lastIndexOf("/") + 1)) || RUN_BY_ROLE.test(p);
      if (!paths.some(runs)) return [];
      const files = new Map<string, string>();
      for (const p of paths) {
        const text = await read(p).catch(() => undefined);
        if (text !== undefined) files.set(p, text.slice(0, MAX_FILE_CHARS));
      }
      return crossCallMatches(command, where, files);
    },
  };
}
