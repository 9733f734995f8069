/**
 * Per-sandbox resource limits of the local backend through the kernel's cgroups (v1 or v2): memory (swap
 * included), CPU (a CFS quota) and processes, one cgroup per sandbox under the harness's own cgroup. The sandbox's
 * first process enters it before it runs anything (spawn_helper's `enter`), so everything the task starts is
 * counted. Where the harness may not make cgroups (not root, v2 without a delegated subtree), none is enforced and
 * the run says so in one line at start-up (`limitsNotEnforced`; `--require-limits` makes that exit 2).
 *
 * A disk quota is disk_quota.ts's (`--disk`); the tmpfs folders of a sandbox are bounded by their size.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, rmdirSync, writeFileSync } from "node:fs";
import { mkdir, rmdir } from "node:fs/promises";
import { join } from "node:path";

export interface SandboxLimits {
  memoryMb: number;
  cpus: number;
  pids: number;
}

export const DEFAULT_LIMITS: SandboxLimits = { memoryMb: 2048, cpus: 1, pids: 512 };

const CGROUP_ROOT = "/sys/fs/cgroup";
const CFS_PERIOD_US = 100_000;

type Layout = { version: 1; dirs: { memory: string; cpu: string; pids: string } } | { version: 2; dir: string };

let layout: Layout | null | undefined;
let why = "";
let seq = 0;

/** This process's cgroup per controller, as /proc/self/cgroup says. */
function ownPaths(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === "") out.set("", m[2]!);
    for (const c of m[1]!.split(",")) if (c) out.set(c, m[2]!);
  }
  return out;
}

/** Where this process can make sandbox cgroups, found (and tried) once; null when it cannot. */
function probe(): Layout | null {
  if (layout !== undefined) return layout;
  try {
    const own = ownPaths();
    if (existsSync(join(CGROUP_ROOT, "cgroup.controllers"))) {
      // v2: a parent of our own, with the controllers handed down to its children.
      const dir = join(CGROUP_ROOT, own.get("") ?? "/", `hermes-batch-${process.pid}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "cgroup.subtree_control"), "+memory +cpu +pids");
      layout = { version: 2, dir };
    } else {
      const dirs = { memory: "", cpu: "", pids: "" };
      for (const c of ["memory", "cpu", "pids"] as const) {
        const base = join(CGROUP_ROOT, c);
        if (!existsSync(join(base, "cgroup.procs"))) throw new Error(`no cgroup v1 ${c} controller at ${base}`);
        dirs[c] = join(base, own.get(c) ?? "/");
      }
      // Can we make one? (root, or a delegated hierarchy)
      const test = join(dirs.pids, `hermes-probe-${process.pid}`);
      mkdirSync(test);
      rmdirSync(test);
      layout = { version: 1, dirs };
    }
  } catch (err) {
    why =
      (err as NodeJS.ErrnoException).code === "EACCES" || (err as NodeJS.ErrnoException).code === "EROFS"
        ? "no permission to make cgroups"
        : (err as Error).message;
    layout = null;
  }
  return layout;
}

/** Which limits the local backend cannot enforce here, with why (empty: memory, CPU and processes are). */
export function limitsNotEnforced(disk: { asked: boolean; unavailable?: string }): { limits: string[]; why: string } {
  const l = probe();
  const limits = l ? [] : ["memory", "cpu", "pids"];
  const reasons = l ? [] : [why];
  if (!disk.asked || disk.unavailable) {
    limits.push("disk");
    reasons.push(disk.unavailable ?? "--disk none");
  }
  return { limits, why: reasons.join("; ") };
}

function write(path: string, value: string): void {
  writeFileSync(path, value);
}

/** memory.events (v2), memory.oom_control (v1), pids.events or pids.current: a few short lines. */
const counterBuffer = Buffer.alloc(1024);

export class SandboxCgroup {
  private removed = false;
  /** The counters read after every command, kept open (one pread each instead of open, read, close). */
  private readonly fds = new Map<string, number>();

  private constructor(
    private readonly version: 1 | 2,
    private readonly dirs: string[],
    /** Files a process writes its pid to, to enter the cgroup(s). */
    readonly procsFiles: string[],
    readonly limits: SandboxLimits,
  ) {}

  /**
   * A cgroup with these limits for one sandbox; undefined where cgroups cannot be made. Its folders are made off the
   * event loop: a mkdir in a cgroup file system takes the kernel's cgroup lock, which every cgroup made or removed
   * on the machine takes too (45 µs alone here, 1.6 ms per task on a worker's loop in a 64-task run). The limits
   * are written on this thread: a synchronous write costs a fifth of a thread pool round trip's CPU.
   */
  static async create(limits: SandboxLimits): Promise<SandboxCgroup | undefined> {
    const l = probe();
    if (!l) return undefined;
    const name = `hermes-${process.pid}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;
    const bytes = String(limits.memoryMb * 1024 * 1024);
    const quota = String(Math.max(1000, Math.round(limits.cpus * CFS_PERIOD_US)));
    const made: string[] = [];
    const make = async (dir: string) => {
      await mkdir(dir);
      made.push(dir);
    };
    try {
      if (l.version === 2) {
        const dir = join(l.dir, name);
        await make(dir);
        write(join(dir, "memory.max"), bytes);
        if (existsSync(join(dir, "memory.swap.max"))) write(join(dir, "memory.swap.max"), "0");
        write(join(dir, "cpu.max"), `${quota} ${CFS_PERIOD_US}`);
        write(join(dir, "pids.max"), String(limits.pids));
        return new SandboxCgroup(2, made, [join(dir, "cgroup.procs")], limits);
      }
      const mem = join(l.dirs.memory, name);
      const cpu = join(l.dirs.cpu, name);
      const pids = join(l.dirs.pids, name);
      const results = await Promise.allSettled([mem, cpu, pids].map(make));
      const failed = results.find((r) => r.status === "rejected");
      if (failed) throw failed.reason;
      write(join(mem, "memory.limit_in_bytes"), bytes);
      // Swap included: memory + swap may not pass the same bound (only where swap accounting is on).
      if (existsSync(join(mem, "memory.memsw.limit_in_bytes"))) write(join(mem, "memory.memsw.limit_in_bytes"), bytes);
      write(join(cpu, "cpu.cfs_period_us"), String(CFS_PERIOD_US));
      write(join(cpu, "cpu.cfs_quota_us"), quota);
      write(join(pids, "pids.max"), String(limits.pids));
      // In this order whatever order the folders were made in (made lists them as their mkdir finished): the
      // memory folder first (the OOM counter), the pids folder third (its events).
      return new SandboxCgroup(
        1,
        [mem, cpu, pids],
        [mem, cpu, pids].map((d) => join(d, "cgroup.procs")),
        limits,
      );
    } catch {
      for (const d of made.reverse()) await rmdir(d).catch(() => undefined);
      return undefined;
    }
  }

  /** A counter file of the memory (index 0) or pids (index 2 in v1) folder, read through a kept descriptor. */
  private read(dir: 0 | 2, file: string): string | undefined {
    if (this.removed) return undefined;
    const path = join(this.version === 2 ? this.dirs[0]! : this.dirs[dir]!, file);
    try {
      let fd = this.fds.get(path);
      if (fd === undefined) {
        fd = openSync(path, "r");
        this.fds.set(path, fd);
      }
      const n = readSync(fd, counterBuffer, 0, counterBuffer.length, 0);
      return counterBuffer.toString("latin1", 0, n);
    } catch {
      return undefined;
    }
  }

  /** How many times the kernel's OOM killer killed a process of this cgroup. */
  oomKills(): number {
    const text = this.read(0, this.version === 2 ? "memory.events" : "memory.oom_control");
    return Number(/^oom_kill (\d+)$/m.exec(text ?? "")?.[1] ?? 0);
  }

  /** How many forks failed at the process limit. */
  pidsLimitHits(): number {
    return Number(/^max (\d+)$/m.exec(this.read(2, "pids.events") ?? "")?.[1] ?? 0);
  }

  /** How many processes the cgroup holds now (NaN when it cannot be read). */
  pidsCurrent(): number {
    return Number.parseInt(this.read(2, "pids.current") ?? "", 10);
  }

  /** True when no process is left in the cgroup (every process the sandbox started, wherever it went, is gone). */
  empty(): boolean {
    try {
      return this.procsFiles.every((f) => readFileSync(f, "utf8").trim() === "");
    } catch {
      return false;
    }
  }

  /** Removes the cgroup once its processes are gone (retried for a moment while they die). */
  async remove(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
    for (const d of [...this.dirs].reverse()) {
      for (let i = 0; i < 50; i++) {
        try {
          // Off the event loop: removing a memory cgroup (v1) can take milliseconds of the kernel's work.
          await rmdir(d);
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT") break;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    }
  }
}
