import { statSync } from "node:fs";
import { UserError } from "./errors.js";

/**
 * A file of a run folder that is there must be a file: a folder, a device (a link to /dev/zero), a FIFO or a socket in
 * its place would be an internal error, a crash of node or a read that never ends (a CI job held forever). Each is a
 * UserError naming the file. Missing files are the caller's.
 */
export function checkRunFiles(paths: string[]): void {
  for (const path of paths) {
    let st: ReturnType<typeof statSync> | undefined;
    try {
      st = statSync(path, { throwIfNoEntry: false });
    } catch (err) {
      throw new UserError(`${path}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    if (st === undefined || st.isFile()) continue;
    const what = st.isDirectory()
      ? "a folder"
      : st.isCharacterDevice() || st.isBlockDevice()
        ? "a device"
        : st.isFIFO()
          ? "a FIFO"
          : "a socket";
    throw new UserError(`${path}: is ${what}, not a file`);
  }
}
