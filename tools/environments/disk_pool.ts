/**
 * File systems made ahead of the tasks that will need them, so that a task's start pays no process for its disk
 * quota instead of a mke2fs and a loop mount (30–40 ms here). Each worker thread keeps its own small pool per size:
 * a slot is a sparse ext4 image mounted (nosuid,nodev) at a folder of the thread's `hermes-disk-*` temporary
 * folder. Taking a slot starts making the next one in the background; a pool that is empty makes one on the spot.
 *
 * A sandbox's task folder is a fresh folder inside a slot (takeFolder), never the slot's root: the root stays
 * root's, out of every sandbox's reach (no sandbox can set a mode, a flag, an ACL or an extended attribute on it).
 * When the task is over and none of its processes is left (local_sandbox.ts checks its cgroup), the slot comes
 * back (giveBack): its folder is removed by this process (no link followed) and the slot is taken again only if
 * the file system is then exactly as it was made: no file of the task left anywhere (the free inode count is
 * back to the fresh one, so not even a file held open is left) and every block free again; it is the next one
 * taken, and as many slots are kept ready as were ever out at once (tasks of a worker end and start in waves: the
 * oldest ready slot goes beyond that), until no slot is out (then all but READY go). Otherwise it is unmounted and
 * its image removed. Making, mounting, unmounting and removing an
 * image cost 15–20 ms of CPU per task (mke2fs, mount, umount, and the unlink of a written sparse image blocks
 * its thread for 20–80 ms); a slot given back costs an rmdir.
 *
 * Slots left at exit are unmounted by the temporary-folder sweep (temp_dirs.ts unmounts what it finds mounted
 * below a folder before removing it), the images go with their folder.
 */
import { chownSync, closeSync, ftruncateSync, mkdirSync, openSync, statfsSync } from "node:fs";
import { mkdir, readdir, rm, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDirSync } from "./temp_dirs.js";
import { SpawnHelper } from "./shell/spawn_helper.js";
import { shellQuote } from "./base.js";

/** A ready file system: its image and where it is mounted now. */
export interface DiskSlot {
  readonly image: string;
  readonly mountPoint: string;
}

/** How many made slots a pool keeps ready (a worker runs several tasks at once). */
const READY = 2;

/**
 * Runs a system tool from this thread's spawn helper (a fork of a small bash, not of the harness), as its
 * background job; rejects with the last line of its stderr.
 */
export function runTool(file: string, args: string[], timeoutSec?: number): Promise<void> {
  const words = [...(timeoutSec !== undefined ? ["timeout", String(timeoutSec)] : []), file, ...args];
  return SpawnHelper.forThread().runCommand(words.map(shellQuote).join(" "));
}

/** Makes one sparse ext4 image of `bytes`, mounted at `mountPoint` (its root belongs to root until taken). */
export async function makeDisk(image: string, mountPoint: string, bytes: number): Promise<void> {
  const fd = openSync(image, "w", 0o600);
  try {
    ftruncateSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
  mkdirSync(mountPoint, { recursive: true });
  const mke2fs = [
    "mke2fs",
    "-q",
    "-t",
    "ext4",
    "-F",
    "-m",
    "0",
    "-O",
    "^has_journal,^resize_inode",
    "-E",
    "lazy_itable_init=1,nodiscard",
    image,
  ];
  const mount = ["mount", "-o", "loop,nosuid,nodev", image, mountPoint];
  try {
    await SpawnHelper.forThread().runCommand([mke2fs, mount].map((w) => w.map(shellQuote).join(" ")).join(" && "));
    // Empty, as a task folder starts (and as Docker wants a volume it fills from the image's folder): removed by
    // this process, a fresh file system of root's own (no process for it), off the event loop (its blocks are
    // read through the loop device: milliseconds of waiting).
    await rmdir(join(mountPoint, "lost+found"));
  } catch (err) {
    await runTool("umount", ["-l", mountPoint]).catch(() => undefined);
    await rm(image, { force: true }).catch(() => undefined);
    throw err;
  }
}

/**
 * Unmounts, lazily when something still holds a file of one (then the rest are retried lazily too: umount of a
 * point no longer mounted fails alone). One umount for many: 0.4 ms of CPU a file system instead of 1.5–2.
 */
export async function unmount(points: string[]): Promise<void> {
  await runTool("umount", points).catch(() => runTool("umount", ["-l", ...points]).catch(() => undefined));
}

/** Unmounts slots and removes their images and folders (off this thread: unlinking a written image takes a while). */
export async function discardSlots(slots: DiskSlot[]): Promise<void> {
  if (slots.length === 0) return;
  await unmount(slots.map((s) => s.mountPoint));
  await Promise.all(
    slots.map(async (slot) => {
      await rm(slot.image, { force: true }).catch(() => undefined);
      await rm(slot.mountPoint, { recursive: true, force: true }).catch(() => undefined);
    }),
  );
}

export function discardSlot(slot: DiskSlot): Promise<void> {
  return discardSlots([slot]);
}

/** What a file system looks like when made: its free inodes and blocks. */
interface Fresh {
  files: number;
  blocks: number;
}

function usage(mountPoint: string): Fresh {
  const s = statfsSync(mountPoint);
  return { files: s.ffree, blocks: s.bfree };
}

interface ReadySlot {
  slot: DiskSlot;
  fresh: Fresh;
}

class DiskPool {
  private readonly ready: ReadySlot[] = [];
  /** The fresh usage of each slot handed out, by mount point. */
  private readonly out = new Map<string, Fresh>();
  /** The most slots out at once: as many given back are kept (tasks end and start in waves); more are unmounted. */
  private peakOut = 0;
  private making = 0;
  private next = 0;
  private dir: string | undefined;

  constructor(private readonly bytes: number) {}

  /** A mounted, empty file system for one task, its root owned by uid:gid (made now when none is ready). */
  async take(uid: number, gid: number): Promise<DiskSlot> {
    const { slot } = await this.takeReady();
    chownSync(slot.mountPoint, uid, gid);
    return slot;
  }

  /** A mounted file system with one new, empty folder in it owned by uid:gid (mode 0755): a task's folder. */
  async takeFolder(uid: number, gid: number): Promise<{ slot: DiskSlot; folder: string }> {
    const { slot, fresh } = await this.takeReady();
    const folder = join(slot.mountPoint, `t${this.next++}`);
    try {
      await mkdir(folder, { mode: 0o755 });
      chownSync(folder, uid, gid);
    } catch (err) {
      await discardSlot(slot);
      throw err;
    }
    this.out.set(slot.mountPoint, fresh);
    this.peakOut = Math.max(this.peakOut, this.out.size);
    return { slot, folder };
  }

  /**
   * Takes back a slot of takeFolder once nothing of its task can run any more: removes its folder and keeps the
   * slot when the file system is as made again, else unmounts it and removes its image.
   */
  async giveBack(slot: DiskSlot, folder: string): Promise<void> {
    const fresh = this.out.get(slot.mountPoint);
    this.out.delete(slot.mountPoint);
    try {
      if (!fresh) throw new Error("not of takeFolder");
      await rm(folder, { recursive: true, force: true });
      const now = usage(slot.mountPoint);
      if ((await readdir(slot.mountPoint)).length > 0 || now.files !== fresh.files || now.blocks !== fresh.blocks)
        throw new Error("not as made");
      // Taken next (the last pushed); beyond what is kept, the oldest ready slot goes instead: either costs one
      // unmount, and whether a slot comes back no longer depends on whether the refill ended first.
      this.ready.push({ slot, fresh });
      const beyond = this.ready.length - Math.max(READY, this.peakOut);
      if (beyond > 0) await discardSlots(this.ready.splice(0, beyond).map((r) => r.slot));
    } catch {
      await discardSlot(slot);
    }
    if (this.out.size === 0) await this.trim();
  }

  /**
   * No task of this thread holds a slot (its last task ended, often the run's end): the slots beyond READY are
   * unmounted now, while the run writes its reports, and not by the exit's sweep (unlinking a written image takes
   * 20–80 ms each).
   */
  private async trim(): Promise<void> {
    // The oldest go: the last given back are taken first.
    const extra = this.ready.splice(0, Math.max(0, this.ready.length - READY));
    await discardSlots(extra.map((r) => r.slot));
  }

  private async takeReady(): Promise<ReadySlot> {
    // The slot given back last first (its pages are the warmest).
    const ready = this.ready.pop() ?? (await this.make());
    this.refill();
    return ready;
  }

  private refill(): void {
    while (this.ready.length + this.making < READY) {
      this.making++;
      this.make()
        .then((slot) => this.ready.push(slot))
        .catch(() => undefined)
        .finally(() => this.making--);
    }
  }

  private async make(): Promise<ReadySlot> {
    this.dir ??= makeTempDirSync("disk");
    const n = this.next++;
    const slot = { image: join(this.dir, `${n}.img`), mountPoint: join(this.dir, String(n)) };
    await makeDisk(slot.image, slot.mountPoint, this.bytes);
    return { slot, fresh: usage(slot.mountPoint) };
  }
}

const pools = new Map<number, DiskPool>();

/** This thread's pool of file systems of `bytes` (each sandbox has a uid of its own: the owner is set when taken). */
export function diskPool(bytes: number): DiskPool {
  let pool = pools.get(bytes);
  if (!pool) pools.set(bytes, (pool = new DiskPool(bytes)));
  return pool;
}
