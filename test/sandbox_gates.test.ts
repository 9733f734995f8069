/**
 * The run-wide sandbox gates and the warm pool, in process: permits shared by worker threads, the warm total
 * bounded run-wide and never taken ahead of a waiting task, starved tasks served by eviction, hand-over of a
 * sandbox that existed before the task asked. No container engine: the pool starts fake sandboxes.
 */
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { SandboxGates, gatesFor, type WarmPermit } from "../tools/environments/sandbox_gates.js";
import { WarmPool } from "../tools/environments/docker/docker_warm.js";
import { waitUntil } from "./helpers/wait.js";

function runWorker(gates: SandboxGates, tasks: number, holdMs: number): Promise<{ done: number; overLimit: number }> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL("./helpers/ts_worker.mjs", import.meta.url), {
      workerData: {
        entry: new URL("./helpers/sandbox_gate_worker.ts", import.meta.url).href,
        buffers: gates.buffers,
        tasks,
        holdMs,
      },
    });
    w.once("message", resolve);
    w.once("error", reject);
    // After its message this is a no-op; before it, a thread gone without an answer fails the test at once.
    w.once("exit", (code) => reject(new Error(`worker thread exited (${code}) without its result`)));
  });
}

/** A fake sandbox: numbered in creation order, holding its permits until cleanup. */
class FakeSandbox {
  cleaned = false;
  constructor(
    readonly id: number,
    readonly permit: WarmPermit,
  ) {}
  async cleanup(): Promise<void> {
    this.cleaned = true;
    this.permit.release();
  }
}

/** One worker thread's pool over shared gates; starts complete when the test says so. */
function fakePool(gates: SandboxGates, counter: { n: number }, opts: { now?: () => number; maxIdleMs?: number } = {}) {
  const pending: Array<() => void> = [];
  const started: FakeSandbox[] = [];
  const pool = new WarmPool<FakeSandbox, WarmPermit>({
    size: gates.warmShare,
    maxIdleMs: opts.maxIdleMs ?? 600_000,
    tickMs: 3_600_000, // ticks are driven by the test
    now: opts.now,
    tryAcquire: () => gates.tryAcquireWarm(),
    handOver: (s) => s.permit.handOver(),
    starved: () => gates.waiting > 0 && gates.full,
    start: (permit) =>
      new Promise<FakeSandbox>((resolve) => {
        const s = new FakeSandbox(++counter.n, permit);
        started.push(s);
        pending.push(() => resolve(s));
      }),
  });
  const finishStarts = async () => {
    for (const f of pending.splice(0)) f();
    await new Promise((r) => setImmediate(r));
  };
  /** Drains the pool; sandboxes still starting are removed as soon as they are up. */
  const stop = async () => {
    const drained = pool.drain();
    await finishStarts();
    await drained;
  };
  return { pool, started, finishStarts, stop };
}

describe("SandboxGates", () => {
  it("hold --max-sandboxes across real worker threads together (3 threads x 4 tasks, limit 2)", async () => {
    const gates = SandboxGates.create({ maxSandboxes: 2, startsPerSecond: 0 });
    const results = await Promise.all([0, 1, 2].map(() => runWorker(gates, 4, 20)));
    expect(results.reduce((n, r) => n + r.done, 0)).toBe(12);
    expect(results.every((r) => r.overLimit === 0)).toBe(true);
    expect(gates.peak).toBe(2);
    expect(gates.live).toBe(0);
  });

  it("the main thread gives back the permits of a worker thread that died holding them", async () => {
    const gates = SandboxGates.create({ maxSandboxes: 4, prewarm: 1, startsPerSecond: 0 });
    const w = new Worker(new URL("./helpers/ts_worker.mjs", import.meta.url), {
      workerData: {
        entry: new URL("./helpers/sandbox_gate_worker.ts", import.meta.url).href,
        buffers: gates.buffers,
        dieHolding: 2,
      },
    });
    const id = w.threadId; // (-1 once the thread has exited)
    // Both listeners before any await: a worker that posts and exits at once can deliver 'message' and 'exit'
    // in the same tick, and an 'exit' listener added after the message would wait forever.
    const message = new Promise((resolve) => w.once("message", resolve));
    const exited = new Promise((resolve) => w.once("exit", resolve));
    const held = await message;
    const exitCode = await exited;
    expect(held).toEqual({ held: 3 });
    expect(exitCode).toBe(3);
    expect(gates.live).toBe(3);
    expect(gates.warmInUse).toBe(1);
    expect(gates.releaseThread(id)).toEqual({ sandboxes: 3, warm: 1 });
    expect(gates.live).toBe(0);
    expect(gates.warmInUse).toBe(0);
    expect(gates.releaseThread(id)).toEqual({ sandboxes: 0, warm: 0 });
  });

  it("a task waiting for a permit is counted, and releasing twice frees one permit", async () => {
    const gates = SandboxGates.create({ maxSandboxes: 1, startsPerSecond: 0 });
    const first = await gates.acquireSandbox();
    let second: { release(): void } | undefined;
    const waiting = gates.acquireSandbox().then((p) => (second = p));
    expect(await waitUntil(() => gates.waiting === 1, 5000, 10), "one start waiting").toBe(true);
    expect(second).toBeUndefined();
    first.release();
    first.release();
    await waiting;
    expect(gates.waiting).toBe(0);
    expect(gates.live).toBe(1);
    second!.release();
    expect(gates.live).toBe(0);
  });

  it("an aborted wait holds nothing and is no longer counted as waiting", async () => {
    const gates = SandboxGates.create({ maxSandboxes: 1, startsPerSecond: 0 });
    const held = await gates.acquireSandbox();
    const ctl = new AbortController();
    const waiting = gates.acquireSandbox(ctl.signal);
    expect(await waitUntil(() => gates.waiting === 1, 5000, 10), "one start waiting").toBe(true);
    ctl.abort(new Error("task cancelled"));
    await expect(waiting).rejects.toThrow("task cancelled");
    expect(gates.waiting).toBe(0);
    held.release();
    expect(gates.live).toBe(0);
  });

  it("space sandbox starts run-wide by the start rate (fake clock, two threads' views)", () => {
    let now = 10_000;
    const gates = SandboxGates.create({ startsPerSecond: 5 }, () => now);
    const otherThread = new SandboxGates(gates.buffers, () => now);
    expect(gates.starts.reserve()).toBe(0);
    expect(otherThread.starts.reserve()).toBe(200);
    expect(gates.starts.reserve()).toBe(400);
    now = 20_000;
    expect(otherThread.starts.reserve()).toBe(0);
  });

  it("an engine error in one thread spaces every thread's starts further apart; successes bring the rate back", () => {
    let now = 10_000;
    const gates = SandboxGates.create({ startsPerSecond: 10 }, () => now);
    const otherThread = new SandboxGates(gates.buffers, () => now);
    expect(gates.engineFailed()).toBe(200);
    expect(gates.engineFailed()).toBe(400);
    expect(otherThread.starts.reserve()).toBe(0);
    expect(gates.starts.reserve()).toBe(400);
    for (let i = 0; i < 40; i++) gates.engineFailed();
    expect(otherThread.starts.intervalMs).toBe(4000);
    for (let i = 0; i < 10; i++) otherThread.engineRecovered();
    expect(gates.starts.intervalMs).toBe(100);
    now = 30_000;
    expect(gates.starts.reserve()).toBe(0);
    expect(otherThread.starts.reserve()).toBe(100);
  });
  it("warm permits: bounded by --prewarm run-wide, counted in --max-sandboxes, never while a task waits", async () => {
    const gates = SandboxGates.create({ maxSandboxes: 3, prewarm: 2, workers: 2, startsPerSecond: 0 });
    expect(gates.warmShare).toBe(1);
    const otherThread = new SandboxGates(gates.buffers);
    const w1 = gates.tryAcquireWarm()!;
    const w2 = otherThread.tryAcquireWarm()!;
    expect(w1 && w2).toBeTruthy();
    expect(gates.tryAcquireWarm()).toBeUndefined(); // the warm total is 2, whichever thread asks
    expect(gates.live).toBe(2);
    expect(gates.warmInUse).toBe(2);

    // A task takes w1: the warm part goes back, the sandbox permit stays with the task.
    w1.handOver();
    expect(gates.warmInUse).toBe(1);
    expect(gates.live).toBe(2);

    // A task waits (the third permit is taken): no warm start ahead of it, even with warm room.
    const task = await gates.acquireSandbox();
    const queued = otherThread.acquireSandbox();
    expect(await waitUntil(() => gates.waiting === 1, 5000, 10), "one start waiting").toBe(true);
    expect(gates.tryAcquireWarm()).toBeUndefined();
    w2.release();
    const served = await queued;
    expect(gates.waiting).toBe(0);
    expect(gates.warmInUse).toBe(0);

    for (const p of [w1, task, served]) p.release();
    expect(gates.live).toBe(0);
    expect(SandboxGates.create({ prewarm: 0 }).tryAcquireWarm()).toBeUndefined();
  });

  it("without run gates, a backend gets per-process ones from its options", () => {
    const a = gatesFor({ maxSandboxes: 4, prewarm: 1 });
    expect(gatesFor({ maxSandboxes: 4, prewarm: 1 })).toBe(a);
    expect(a.maxSandboxes).toBe(4);
    expect(a.prewarm).toBe(1);
    const run = SandboxGates.create({ maxSandboxes: 9 });
    expect(gatesFor({ gates: run, maxSandboxes: 4 })).toBe(run);
    expect(gatesFor({}).maxSandboxes).toBe(0); // 0 = no bound
  });
});

describe("warm pool over run-wide gates", () => {
  it("two threads' pools keep --prewarm in total, and a take hands over a sandbox started before the ask", async () => {
    const gates = SandboxGates.create({ maxSandboxes: 10, prewarm: 3, workers: 2, startsPerSecond: 0 });
    const counter = { n: 0 };
    const t1 = fakePool(gates, counter);
    const t2 = fakePool(new SandboxGates(gates.buffers), counter);
    try {
      // Share per thread: ceil(3/2) = 2; the run-wide total stops the second thread at one.
      expect(t1.started.map((s) => s.id)).toEqual([1, 2]);
      expect(t2.started.map((s) => s.id)).toEqual([3]);
      expect(gates.warmInUse).toBe(3);
      await t1.finishStarts();
      await t2.finishStarts();
      expect(t1.pool.stats()).toMatchObject({ ready: 2, starting: 0 });

      const askedAfter = counter.n;
      const got = await t1.pool.take();
      expect(got!.id).toBeLessThanOrEqual(askedAfter); // it existed before the task asked
      expect(got!.cleaned).toBe(false);
      expect(t1.pool.stats().taken).toBe(1);
      // The warm part of its permit went back, so this thread refills; its sandbox permit stays held.
      expect(t1.started.map((s) => s.id)).toEqual([1, 2, 4]);
      expect(gates.warmInUse).toBe(3);
      expect(gates.live).toBe(4);
      await got!.cleanup();
      expect(gates.live).toBe(3);
    } finally {
      await t1.stop();
      await t2.stop();
    }
    expect(gates.live).toBe(0);
    expect(gates.warmInUse).toBe(0);
  });

  it("gives up a warm sandbox for a task of another thread that waits while every permit is taken", async () => {
    const gates = SandboxGates.create({ maxSandboxes: 2, prewarm: 2, workers: 1, startsPerSecond: 0 });
    const counter = { n: 0 };
    const warmThread = fakePool(gates, counter);
    await warmThread.finishStarts();
    expect(gates.full).toBe(true);

    const otherThread = new SandboxGates(gates.buffers);
    const queued = otherThread.acquireSandbox();
    expect(await waitUntil(() => gates.waiting === 1, 5000, 10), "one start waiting").toBe(true);
    warmThread.pool.tick(); // the pool hears of the waiting task on its tick
    const permit = await queued;
    expect(warmThread.pool.stats()).toMatchObject({ evicted: 1, ready: 1 });
    expect(warmThread.started.filter((s) => s.cleaned)).toHaveLength(1);
    // No refill while every permit is in use; the task's permit is its own.
    warmThread.pool.tick();
    expect(counter.n).toBe(2);
    permit.release();
    warmThread.pool.tick(); // room again, nobody waiting: warm up to the share again
    expect(counter.n).toBe(3);
    await warmThread.stop();
    expect(gates.live).toBe(0);
  });

  it("retires a sandbox idle longer than maxIdleMs instead of handing it out (fake clock)", async () => {
    let now = 0;
    const gates = SandboxGates.create({ prewarm: 1, startsPerSecond: 0 });
    const counter = { n: 0 };
    const t = fakePool(gates, counter, { now: () => now, maxIdleMs: 60_000 });
    await t.finishStarts();
    now = 61_000;
    const pending = t.pool.take(); // the stale one is retired; a fresh one is starting and handed out
    await t.finishStarts();
    const got = await pending;
    expect(t.started[0]!.cleaned).toBe(true);
    expect(got!.id).toBe(2);
    await got!.cleanup();
    await t.stop();
    expect(gates.live).toBe(0);
  });
});
