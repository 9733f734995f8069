/**
 * The run folder's lock across hosts (src/store/run_lock.ts): a shared file system (Slurm nodes, Kubernetes pods)
 * shows another host's lock, whose pid cannot be checked. Its holder refreshes the mtime; a lock not refreshed for
 * OTHER_HOST_STALE_MS is a dead holder's and is taken over (a pod killed for its memory would otherwise leave its
 * shard refused for good); a fresh one, or one of a version without the refresh, still refuses.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HEARTBEAT_MS, OTHER_HOST_STALE_MS, acquireRunLock } from "../src/store/run_lock.js";

const dirs: string[] = [];
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function runDir(): string {
  const d = mkdtempSync(join(tmpdir(), "hb-lock-"));
  dirs.push(d);
  return d;
}

function foreignLock(dir: string, ageMs: number, heartbeat: boolean): void {
  const path = join(dir, ".lock");
  const lock = {
    pid: 1,
    host: "pod-shard-3-x7k2p",
    started: "2026-12-01T00:00:00.000Z",
    ...(heartbeat ? { heartbeat } : {}),
  };
  writeFileSync(path, JSON.stringify(lock));
  const at = new Date(Date.now() - ageMs);
  utimesSync(path, at, at);
}

describe("the run folder's lock of another host", () => {
  it("is taken over once its holder stopped refreshing it, with a note naming it", () => {
    const dir = runDir();
    foreignLock(dir, OTHER_HOST_STALE_MS + 60_000, true);
    const notes: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((t) => (notes.push(String(t)), true));
    const release = acquireRunLock(dir);
    expect(JSON.parse(readFileSync(join(dir, ".lock"), "utf8"))).toMatchObject({ pid: process.pid, heartbeat: true });
    expect(notes.join("")).toMatch(/taking over the lock of pid 1 on pod-shard-3-x7k2p, not refreshed for 11 min/);
    release();
  });

  it("refuses while it is refreshed, and when its version never refreshed it", () => {
    const fresh = runDir();
    foreignLock(fresh, 30_000, true);
    expect(() => acquireRunLock(fresh)).toThrow(/in use by pid 1 on pod-shard-3-x7k2p .*refreshed 30 s ago/);
    const old = runDir();
    foreignLock(old, 24 * 3600_000, false);
    expect(() => acquireRunLock(old)).toThrow(/in use by pid 1 on pod-shard-3-x7k2p/);
  });

  it("of this host, naming a live pid that stopped refreshing it (a reused pid), is taken over", () => {
    const dir = runDir();
    const path = join(dir, ".lock");
    const lock = { pid: process.ppid, host: hostname(), started: "2026-12-01T00:00:00.000Z", heartbeat: true };
    writeFileSync(path, JSON.stringify(lock));
    const at = new Date(Date.now() - OTHER_HOST_STALE_MS - 60_000);
    utimesSync(path, at, at);
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const release = acquireRunLock(dir);
    expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(process.pid);
    release();
    writeFileSync(path, JSON.stringify(lock));
    expect(() => acquireRunLock(dir)).toThrow(/in use by another hermes-batch \(pid/);
  });

  it("is refreshed by its holder while held, and no longer after the release", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    const dir = runDir();
    const release = acquireRunLock(dir);
    const path = join(dir, ".lock");
    const before = statSync(path).mtimeMs;
    vi.setSystemTime(Date.now() + HEARTBEAT_MS + 5_000);
    vi.advanceTimersByTime(HEARTBEAT_MS);
    const after = statSync(path).mtimeMs;
    expect(after - before).toBeGreaterThanOrEqual(HEARTBEAT_MS);
    release();
    expect(() => statSync(path)).toThrow();
  });
});
