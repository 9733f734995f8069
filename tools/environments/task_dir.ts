/**
 * A task's host folder, made before its sandbox. With the disk quota the folder is a link to a file system of the
 * worker's pool (disk_quota.ts); an attempt that ended cleanly put a real folder back or removed it, so a link
 * found here was left by a run that was killed, and names a file system that is gone (swept at start-up) or
 * belongs to nobody. It is dropped: the task starts afresh, as a killed attempt's task does. A real folder found
 * here is kept (`score` runs verify again in a kept one) unless the spec asks for a fresh one (freshTaskDir).
 */
import { chmod, lstat, mkdir, readdir, rm, unlink } from "node:fs/promises";
import { join } from "node:path";

/** `fresh`: a folder already there (an earlier attempt's) is removed first, links in it not followed. */
export async function makeTaskDir(dir: string, fresh = false): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (st?.isSymbolicLink()) await unlink(dir);
  else if (st && fresh) await removeTaskDir(dir);
  await mkdir(dir, { recursive: true });
}

/**
 * Removes a task folder and everything in it, links not followed. Under a harness that is not root the sandbox's
 * files are the harness's own, and a folder the agent left without write or search permission (`chmod 555 d`,
 * `chmod 000 d`) would make `rm` fail: the folder would stay in the output dir and a retry could not start afresh.
 * Such folders (this process's own, never through a link) are given their owner's rights back, then removed.
 */
export async function removeTaskDir(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EACCES" && code !== "EPERM") throw err;
    await ownRights(dir);
    await rm(dir, { recursive: true, force: true });
  }
}

async function ownRights(dir: string): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (!st?.isDirectory() || st.uid !== process.getuid?.()) return;
  if ((st.mode & 0o700) !== 0o700) await chmod(dir, (st.mode & 0o7777) | 0o700).catch(() => undefined);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await ownRights(join(dir, e.name));
}
