/**
 * File systems made ahead of the tasks that will need them, so that a task's start pays no process for its disk
 * quota instead of a mke2fs and a loop mount (30–40 ms here). Each worker thread keeps its own small pool per size:
 * a slot is a sparse ext4 image mounted (nosuid,nodev) at a folder of the thread's `hermes-disk-*` temporary
 * folder. Taking a slot starts making the next one in the background; a pool that is empty makes one on the spot.
 *
 * Slots left at exit are unmounted by the temporary-folder sweep (temp_dirs.ts unmounts what it finds mounted
 * below a folder before removing it), the images go with their folder.
 */
import { chownSync, closeSync, ftruncateSync, mkdirSync, openSync, rmSync } from "node:fs";
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
    "^has_journal",
    "-E",
    "lazy_itable_init=1,nodiscard",
    image,
  ];
  const mount = ["mount", "-o", "loop,nosuid,nodev", image, mountPoint];
  // Empty, as a task folder starts (and as Docker wants a volume it fills from the image's folder).
  const rmdir = ["rmdir", join(mountPoint, "lost+found")];
  try {
    await SpawnHelper.forThread().runCommand(
      [mke2fs, mount, rmdir].map((w) => w.map(shellQuote).join(" ")).join(" && "),
    );
  } catch (err) {
    await runTool("umount", ["-l", mountPoint]).catch(() => undefined);
    rmSync(image, { force: true });
    throw err;
  }
}

class DiskPool {
  private readonly ready: DiskSlot[] = [];
  private making = 0;
  private next = 0;
  private dir: string | undefined;

  constructor(private readonly bytes: number) {}

  /** A mounted, empty file system for one task, its root owned by uid:gid (made now when none is ready). */
  async take(uid: number, gid: number): Promise<DiskSlot> {
    const slot = this.ready.shift() ?? (await this.make());
    this.refill();
    chownSync(slot.mountPoint, uid, gid);
    return slot;
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

  private async make(): Promise<DiskSlot> {
    this.dir ??= makeTempDirSync("disk");
    const n = this.next++;
    const slot = { image: join(this.dir, `${n}.img`), mountPoint: join(this.dir, String(n)) };
    await makeDisk(slot.image, slot.mountPoint, this.bytes);
    return slot;
  }
}

const pools = new Map<number, DiskPool>();

/** This thread's pool of file systems of `bytes` (each sandbox has a uid of its own: the owner is set when taken). */
export function diskPool(bytes: number): { take(uid: number, gid: number): Promise<DiskSlot> } {
  let pool = pools.get(bytes);
  if (!pool) pools.set(bytes, (pool = new DiskPool(bytes)));
  return pool;
}
