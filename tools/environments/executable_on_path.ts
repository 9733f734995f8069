/** Finds a program the way a shell's `command -v` does, with file system calls instead of a process. */
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";

/** The first executable file called `name` in the folders of `pathEnv` (a PATH value), or undefined. */
export function executableOnPath(name: string, pathEnv: string | undefined): string | undefined {
  for (const dir of (pathEnv ?? "").split(":").filter(Boolean)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
