/**
 * A task's host folder, made before its sandbox. With the disk quota the folder is a link to a file system of the
 * worker's pool (disk_quota.ts); an attempt that ended cleanly put a real folder back or removed it, so a link
 * found here was left by a run that was killed, and names a file system that is gone (swept at start-up) or
 * belongs to nobody. It is dropped: the task starts afresh, as a killed attempt's task does. A real folder found
 * here is kept (`score` runs verify again in a kept one) unless the spec asks for a fresh one (freshTaskDir).
 */
import { lstat, mkdir, rm, unlink } from "node:fs/promises";

/** `fresh`: a folder already there (an earlier attempt's) is removed first, links in it not followed. */
export async function makeTaskDir(dir: string, fresh = false): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (st?.isSymbolicLink()) await unlink(dir);
  else if (st && fresh) await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
}
