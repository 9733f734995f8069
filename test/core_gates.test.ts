import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { UserError } from "../src/core/errors.js";
import { createRegistry } from "../src/core/registry.js";
import { SharedRateGate, SharedSemaphore } from "../src/core/shared_gate.js";

function runWorker(
  buffer: SharedArrayBuffer,
  tasks: number,
  holdMs: number,
): Promise<{ done: number; overLimit: number }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL("./helpers/ts_worker.mjs", import.meta.url), {
      workerData: { entry: new URL("./helpers/gate_worker.ts", import.meta.url).href, buffer, tasks, holdMs },
    });
    w.once("message", resolve);
    w.once("error", reject);
    // After its message this is a no-op; before it, a thread gone without an answer fails the test at once.
    w.once("exit", (code) => reject(new Error(`worker thread exited (${code}) without its result`)));
  });
}

describe("SharedSemaphore", () => {
  it("holds one limit across worker threads together (4 threads x 8 holders, limit 3)", async () => {
    const gate = SharedSemaphore.create(3);
    const results = await Promise.all([0, 1, 2, 3].map(() => runWorker(gate.buffer, 8, 15)));
    expect(results.reduce((n, r) => n + r.done, 0)).toBe(32);
    expect(results.every((r) => r.overLimit === 0)).toBe(true);
    expect(gate.peak).toBe(3);
    expect(gate.inUse).toBe(0);
  });

  it("wakes a waiter on release, and a lowered limit takes effect for new permits", async () => {
    const gate = SharedSemaphore.create(2);
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.tryAcquire()).toBe(true);
    expect(gate.tryAcquire()).toBe(false);
    let got = false;
    const waiting = gate.acquire().then(() => (got = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toBe(false);
    gate.release();
    await waiting;
    expect(got).toBe(true);
    gate.setLimit(1);
    gate.release();
    expect(gate.tryAcquire()).toBe(false);
    gate.release();
    expect(gate.tryAcquire()).toBe(true);
  });

  it("an aborted wait rejects with the reason and holds no permit", async () => {
    const gate = SharedSemaphore.create(1);
    gate.tryAcquire();
    const ctl = new AbortController();
    const waiting = gate.acquire(ctl.signal);
    ctl.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    gate.release();
    expect(gate.inUse).toBe(0);
    expect(() => gate.release()).toThrow(/released more often/);
  });
});

describe("SharedRateGate", () => {
  it("hands out one slot per interval run-wide (fake clock)", () => {
    let now = 1_000;
    const gate = SharedRateGate.create(100, () => now);
    const other = new SharedRateGate(gate.buffer, () => now);
    expect(gate.reserve()).toBe(0);
    expect(other.reserve()).toBe(100);
    expect(gate.reserve()).toBe(200);
    now = 5_000;
    expect(other.reserve()).toBe(0);
  });

  it("slows down run-wide while what it guards fails, and recovers to the created interval (fake clock)", () => {
    let now = 1_000;
    const gate = SharedRateGate.create(100, () => now);
    const other = new SharedRateGate(gate.buffer, () => now);
    expect(other.slowDown(50, 1_000)).toBe(200);
    expect(gate.slowDown(50, 1_000)).toBe(400);
    expect(gate.reserve()).toBe(0);
    expect(other.reserve()).toBe(400);
    expect(gate.slowDown(50, 1_000)).toBe(800);
    expect(gate.slowDown(50, 1_000)).toBe(1_000);
    expect(other.recover()).toBe(500);
    expect(gate.recover()).toBe(250);
    expect(gate.recover()).toBe(125);
    expect(gate.recover()).toBe(100);
    expect(gate.recover()).toBe(100);
    now = 10_000;
    expect(gate.reserve()).toBe(0);
    expect(other.reserve()).toBe(100);
  });

  it("an unbounded gate slows down from the step and recovers to unbounded", () => {
    const gate = SharedRateGate.create(0);
    expect(gate.slowDown(100, 4_000)).toBe(100);
    expect(gate.slowDown(100, 4_000)).toBe(200);
    let interval = gate.intervalMs;
    for (let i = 0; i < 20 && interval > 0; i++) interval = gate.recover();
    expect(interval).toBe(0);
  });
});

describe("createRegistry", () => {
  it("loads an entry once, lazily, and names the known entries for an unknown one", async () => {
    const reg = createRegistry<{ id: string }>("environment");
    let loads = 0;
    reg.register("local", async () => ({ id: `local-${++loads}` }));
    reg.register("docker", () => ({ id: "docker" }));
    expect(loads).toBe(0);
    expect((await reg.load("local")).id).toBe("local-1");
    expect((await reg.load("local")).id).toBe("local-1");
    expect(reg.names()).toEqual(["docker", "local"]);
    const err = await reg.load("x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toBe("unknown environment 'x'; known: docker, local");
  });

  it("a loader that fails is tried again on the next load", async () => {
    const reg = createRegistry<number>("model provider");
    let calls = 0;
    reg.register("flaky", async () => {
      if (++calls === 1) throw new Error("boom");
      return 7;
    });
    await expect(reg.load("flaky")).rejects.toThrow("boom");
    expect(await reg.load("flaky")).toBe(7);
  });
});
