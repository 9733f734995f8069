/**
 * A disk quota on a local task folder (`--disk SIZE`, root only): the folder is the mount point of a file system
 * of that size of its own, an ext4 image (sparse: it takes on the host only what the task writes) mounted through
 * a loop device with nosuid,nodev. A task that fills it gets ENOSPC, and the sandbox reports `disk_limit`. Not a
 * watcher: the kernel refuses the write. Costs a mke2fs and a mount per task (tens of ms), which is why it is
 * asked for rather than on by default.
 *
 * The image lives beside the folder (`<folder>.disk`) and is removed with it; a folder kept by
 * `--keep-workspaces` gets its files copied out of the image before the image goes.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, rmdirSync, statfsSync } from "node:fs";

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

/** Why a quota cannot be made here, or undefined when it can (root, mke2fs, loop devices). */
export function diskQuotaUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "a disk quota needs a root harness (it mounts a file system per task)";
  if (!existsSync("/dev/loop-control")) return "no loop devices (/dev/loop-control)";
  if (spawnSync("sh", ["-c", "command -v mke2fs && command -v mount"], { stdio: "ignore" }).status !== 0) return "mke2fs or mount is missing";
  return undefined;
}

function run(file: string, args: string[]): void {
  const r = spawnSync(file, args, { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${file} ${args.join(" ")}: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim().split("\n")[0]}`);
}

export class DiskQuota {
  private mounted = false;

  private constructor(
    readonly dir: string,
    readonly image: string,
    readonly bytes: number,
  ) {}

  /** Makes `dir` (empty or new) the mount point of a `bytes`-sized file system owned by uid:gid. */
  static create(dir: string, bytes: number, uid: number, gid: number): DiskQuota {
    const image = `${dir}.disk`;
    mkdirSync(dir, { recursive: true });
    const carried = readdirSync(dir).length > 0;
    rmSync(image, { force: true });
    run("truncate", ["-s", String(bytes), image]);
    const q = new DiskQuota(dir, image, bytes);
    try {
      run("mke2fs", ["-q", "-t", "ext4", "-F", "-m", "0", "-O", "^has_journal", "-E", `lazy_itable_init=1,nodiscard,root_owner=${uid}:${gid}`, image]);
      if (carried) {
        // A folder kept from an earlier attempt: its files move into the new file system.
        const staging = `${dir}.mnt`;
        mkdirSync(staging, { recursive: true });
        run("mount", ["-o", "loop,nosuid,nodev", image, staging]);
        try {
          run("cp", ["-a", "--", `${dir}/.`, `${staging}/`]);
        } finally {
          run("umount", [staging]);
          rmdirSync(staging);
        }
        for (const e of readdirSync(dir)) rmSync(`${dir}/${e}`, { recursive: true, force: true });
      }
      run("mount", ["-o", "loop,nosuid,nodev", image, dir]);
      q.mounted = true;
    } catch (err) {
      rmSync(image, { force: true });
      throw err;
    }
    return q;
  }

  /** True when the file system is (nearly) full: a write that failed with ENOSPC met the quota. */
  full(): boolean {
    try {
      const s = statfsSync(this.dir);
      // ENOSPC comes before the last block is used (metadata, allocation granularity): near full is full.
      return s.bavail * s.bsize < Math.max(4 * 2 ** 20, this.bytes * 0.01);
    } catch {
      return false;
    }
  }

  /** Unmounts (copying the files out first when `keep`), then removes the image. */
  remove(keep: boolean): void {
    if (!this.mounted) return;
    this.mounted = false;
    try {
      if (keep) {
        const out = `${this.dir}.kept`;
        mkdirSync(out, { recursive: true });
        spawnSync("cp", ["-a", "--", `${this.dir}/.`, `${out}/`], { stdio: "ignore", timeout: 600_000 });
        spawnSync("umount", [this.dir], { stdio: "ignore" });
        spawnSync("sh", ["-c", 'rmdir -- "$1" && mv -- "$2" "$1"', "sh", this.dir, out], { stdio: "ignore" });
      } else if (spawnSync("umount", [this.dir], { stdio: "ignore" }).status !== 0) {
        spawnSync("umount", ["-l", this.dir], { stdio: "ignore" });
      }
    } finally {
      rmSync(this.image, { force: true });
    }
  }
}
