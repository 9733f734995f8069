/**
 * A disk quota on a task folder (`--disk SIZE`, default 10g; root only): the folder is a file system of that size
 * of its own, an ext4 image (sparse: it takes on the host only what the task writes) mounted through
 * a loop device with nosuid,nodev. A task that fills it gets ENOSPC, and the sandbox reports `disk_limit`. Not a
 * watcher: the kernel refuses the write. The file systems are made ahead in a pool (disk_pool.ts), and a task's
 * folder becomes a link to a ready one, so a task's start pays no process for it.
 *
 * The image and its mount point live in the thread's `hermes-disk-*` temporary folder. A sandbox's task folder is a
 * folder inside the file system (disk_pool.ts): after the task it is removed and the file system goes back to the
 * pool when the caller says nothing of the task can run any more, else the image is unmounted and removed. A folder
 * kept by `--keep-workspaces` gets its files copied out first.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, statfsSync, symlinkSync } from "node:fs";
import { dirname } from "node:path";
import { diskPool, discardSlot, runTool, type DiskSlot } from "./disk_pool.js";
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
    private readonly slot: DiskSlot,
    readonly bytes: number,
    /** The task's folder inside the file system (none for a container's volume: the whole file system). */
    private readonly folder?: string,
    /** The task folder, a link to `folder`. */
    readonly link?: string,
  ) {}

  /** Where the file system is mounted (a folder of the thread's pool). */
  get mountPoint(): string {
    return this.slot.mountPoint;
  }

  /** A file system of `bytes` owned by uid:gid that stays at its pool folder (a container binds it as a volume). */
  static async forContainer(bytes: number, uid: number, gid: number): Promise<DiskQuota> {
    const slot = await diskPool(bytes).take(uid, gid);
    return new DiskQuota(slot, bytes);
  }

  /**
   * Makes the task folder `dir` a link to a new folder owned by uid:gid in a ready-made `bytes`-sized file system
   * of this thread's pool; the sandbox binds what the link names, so the task's folder holds that file system's
   * whole space. Files already in `dir` (a folder kept from an earlier attempt, or files put there before the
   * sandbox) are copied into it, unless `fresh` (a new attempt: they are removed).
   */
  static async create(dir: string, bytes: number, uid: number, gid: number, fresh = false): Promise<DiskQuota> {
    const { slot, folder } = await diskPool(bytes).takeFolder(uid, gid);
    try {
      const st = lstatSync(dir, { throwIfNoEntry: false });
      if (!fresh && st?.isDirectory() && readdirSync(dir).length > 0)
        await runTool("cp", ["-a", "--", `${dir}/.`, `${folder}/`], 600);
      if (st) rmSync(dir, { recursive: true, force: true });
      mkdirSync(dirname(dir), { recursive: true });
      symlinkSync(folder, dir);
    } catch (err) {
      await discardSlot(slot);
      throw err;
    }
    return new DiskQuota(slot, bytes, folder, dir);
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

  /**
   * Copies the files out to the task folder first when `keep`; then gives the file system back to the pool when
   * `reuse` (the caller knows that no process of the task is left, nor can start) and it can be reused, else
   * unmounts it and removes its image.
   */
  async remove(keep: boolean, reuse = false): Promise<void> {
    if (!this.mounted) return;
    this.mounted = false;
    try {
      if (keep && this.link) {
        const out = `${this.link}.kept`;
        mkdirSync(out, { recursive: true });
        await runTool("cp", ["-a", "--", `${this.folder}/.`, `${out}/`], 600).catch(() => undefined);
        rmSync(this.link, { force: true });
        renameSync(out, this.link);
      } else if (this.link) {
        rmSync(this.link, { force: true });
      }
    } catch {
      // A folder that could not be put back stays as `<folder>.kept`.
    }
    if (reuse && this.folder) await diskPool(this.bytes).giveBack(this.slot, this.folder);
    else await discardSlot(this.slot);
  }
}
