/**
 * A disk quota on a task folder (`--disk SIZE`, default 10g; root only): the folder is a file system of that size
 * of its own, an ext4 image (sparse: it takes on the host only what the task writes) mounted through
 * a loop device with nosuid,nodev. A task that fills it gets ENOSPC, and the sandbox reports `disk_limit`. Not a
 * watcher: the kernel refuses the write. The file systems are made ahead in a pool (disk_pool.ts), and a task's
 * folder becomes a link to a ready one, so a task's start pays no process for it.
 *
 * The image and its mount point live in the thread's `hermes-disk-*` temporary folder and are removed after the
 * task; a folder kept by `--keep-workspaces` gets its files copied out of the image before the image goes.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statfsSync, symlinkSync } from "node:fs";
import { dirname } from "node:path";
import { diskPool, runTool } from "./disk_pool.js";
import { executableOnPath } from "./executable_on_path.js";

const SIZE = /^(\d+(?:\.\d+)?)\s*([kmgt]i?b?)?$/i;

/** Bytes of a size such as `10g`, `512m`, `1.5G`, `2048` (bytes); undefined when it does not parse. */
export function parseSize(text: string): number | undefined {
  const m = SIZE.exec(text.trim());
  if (!m) return undefined;
  const unit = (m[2] ?? "").toLowerCase()[0];
  const mult = unit === "k" ? 2 ** 10 : unit === "m" ? 2 ** 20 : unit === "g" ? 2 ** 30 : unit === "t" ? 2 ** 40 : 1;
  const bytes = Math.floor(Number(m[1]) * mult);
  return bytes > 0 ? bytes : undefined;
}

let unavailable: { why: string | undefined } | undefined;

/** Why a quota cannot be made here, or undefined when it can (root, mke2fs, loop devices). Asked once a thread. */
export function diskQuotaUnavailable(): string | undefined {
  unavailable ??= { why: probeDiskQuota() };
  return unavailable.why;
}

function probeDiskQuota(): string | undefined {
  if (process.getuid?.() !== 0) return "a disk quota needs a root harness (it mounts a file system per task)";
  if (!existsSync("/dev/loop-control")) return "no loop devices (/dev/loop-control)";
  // Looked up with fs calls: a `sh -c 'command -v …'` process cost each thread 10–250 ms of waiting at start.
  if (!executableOnPath("mke2fs", process.env.PATH) || !executableOnPath("mount", process.env.PATH))
    return "mke2fs or mount is missing";
  return undefined;
}

export class DiskQuota {
  private mounted = true;

  private constructor(
    /** Where the file system is mounted (a folder of the thread's pool). */
    readonly mountPoint: string,
    readonly image: string,
    readonly bytes: number,
    /** The task folder, a link to the mount point (none for a container's volume). */
    readonly link?: string,
  ) {}

  /** A file system of `bytes` owned by uid:gid that stays at its pool folder (a container binds it as a volume). */
  static async forContainer(bytes: number, uid: number, gid: number): Promise<DiskQuota> {
    const slot = await diskPool(bytes).take(uid, gid);
    return new DiskQuota(slot.mountPoint, slot.image, bytes);
  }

  /**
   * Makes the task folder `dir` a link to a ready-made `bytes`-sized file system of this thread's pool, owned by
   * uid:gid; the sandbox binds what the link names, so the task's whole folder is that file system. Files already
   * in `dir` (a folder kept from an earlier attempt, or files put there before the sandbox) are copied into it.
   */
  static async create(dir: string, bytes: number, uid: number, gid: number): Promise<DiskQuota> {
    const slot = await diskPool(bytes).take(uid, gid);
    try {
      const st = lstatSync(dir, { throwIfNoEntry: false });
      if (st?.isDirectory() && readdirSync(dir).length > 0)
        await runTool("cp", ["-a", "--", `${dir}/.`, `${slot.mountPoint}/`], 600);
      if (st) rmSync(dir, { recursive: true, force: true });
      mkdirSync(dirname(dir), { recursive: true });
      symlinkSync(slot.mountPoint, dir);
    } catch (err) {
      await unmount(slot.mountPoint);
      rmSync(slot.image, { force: true });
      throw err;
    }
    return new DiskQuota(slot.mountPoint, slot.image, bytes, dir);
  }

  /** True when the file system is (nearly) full: a write that failed with ENOSPC met the quota. */
  full(): boolean {
    try {
      const s = statfsSync(this.mountPoint);
      // ENOSPC comes before the last block is used (metadata, allocation granularity): near full is full.
      return s.bavail * s.bsize < Math.max(4 * 2 ** 20, this.bytes * 0.01);
    } catch {
      return false;
    }
  }

  /** Unmounts (copying the files out to the task folder first when `keep`), then removes the image. */
  async remove(keep: boolean): Promise<void> {
    if (!this.mounted) return;
    this.mounted = false;
    try {
      if (keep && this.link) {
        const out = `${this.link}.kept`;
        mkdirSync(out, { recursive: true });
        await runTool("cp", ["-a", "--", `${this.mountPoint}/.`, `${out}/`], 600).catch(() => undefined);
        rmSync(this.link, { force: true });
        renameSync(out, this.link);
      } else if (this.link) {
        rmSync(this.link, { force: true });
      }
      await unmount(this.mountPoint);
    } catch {
      // A folder that could not be put back stays as `<folder>.kept`.
    } finally {
      rmSync(this.image, { force: true });
      rmSync(this.mountPoint, { recursive: true, force: true });
    }
  }
}

/** Unmounts, lazily when something still holds a file of it. */
async function unmount(point: string): Promise<void> {
  await runTool("umount", [point]).catch(() => runTool("umount", ["-l", point]).catch(() => undefined));
}
