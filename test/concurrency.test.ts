import { describe, expect, it } from "vitest";
import { AdaptiveLimiter, limiterKey, sharedLimiter } from "../src/scheduler/concurrency.js";

function clock(start = 0) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("AdaptiveLimiter", () => {
  it("halves on 429 at most once per window, never below 1", () => {
    const c = clock();
    const l = new AdaptiveLimiter({ max: 16, decreaseWindowMs: 1000, now: c.now });
    expect(l.limit).toBe(16);
    l.recordRateLimit();
    l.recordRateLimit();
    l.recordRateLimit();
    expect(l.limit).toBe(8);
    c.advance(999);
    l.recordRateLimit();
    expect(l.limit).toBe(8);
    c.advance(1);
    l.recordRateLimit();
    expect(l.limit).toBe(4);
    for (let i = 0; i < 10; i++) {
      c.advance(1000);
      l.recordRateLimit();
    }
    expect(l.limit).toBe(1);
    expect(l.rateLimited).toBe(15);
  });

  it("recovers +1 per N successes and never exceeds max", () => {
    const c = clock();
    const l = new AdaptiveLimiter({ max: 4, recoverAfterSuccesses: 3, recoverIntervalMs: 1e9, now: c.now });
    l.recordRateLimit();
    expect(l.limit).toBe(2);
    l.recordSuccess();
    l.recordSuccess();
    expect(l.limit).toBe(2);
    l.recordSuccess();
    expect(l.limit).toBe(3);
    for (let i = 0; i < 3; i++) l.recordSuccess();
    expect(l.limit).toBe(4);
    for (let i = 0; i < 30; i++) l.recordSuccess();
    expect(l.limit).toBe(4);
  });

  it("recovers +1 on a success once the interval has passed", () => {
    const c = clock();
    const l = new AdaptiveLimiter({ max: 10, recoverAfterSuccesses: 1000, recoverIntervalMs: 500, now: c.now });
    l.recordRateLimit();
    expect(l.limit).toBe(5);
    c.advance(400);
    l.recordSuccess();
    expect(l.limit).toBe(5);
    c.advance(100);
    l.recordSuccess();
    expect(l.limit).toBe(6);
    l.recordSuccess(); // interval restarts at each change
    expect(l.limit).toBe(6);
  });

  it("a 429 resets the recovery count", () => {
    const c = clock();
    const l = new AdaptiveLimiter({ max: 8, decreaseWindowMs: 1000, recoverAfterSuccesses: 2, recoverIntervalMs: 1e9, now: c.now });
    l.recordRateLimit(); // 4
    l.recordSuccess();
    l.recordRateLimit(); // inside the window: no decrease, but the success streak is gone
    l.recordSuccess();
    expect(l.limit).toBe(4);
    l.recordSuccess();
    expect(l.limit).toBe(5);
  });

  it("caps concurrent holders and hands slots over in FIFO order", async () => {
    const l = new AdaptiveLimiter({ max: 2 });
    await l.acquire();
    await l.acquire();
    const order: number[] = [];
    const third = l.acquire().then(() => order.push(3));
    const fourth = l.acquire().then(() => order.push(4));
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]);
    expect(l.inFlight).toBe(2);
    expect(l.waiting).toBe(2);
    l.release();
    await third;
    expect(order).toEqual([3]);
    l.release();
    await fourth;
    expect(order).toEqual([3, 4]);
    expect(l.inFlight).toBe(2);
    l.release();
    l.release();
    expect(l.inFlight).toBe(0);
    expect(() => l.release()).toThrow(/without a matching acquire/);
  });

  it("a lowered limit admits new holders only below it; a raised one lets waiters in", async () => {
    const c = clock();
    const l = new AdaptiveLimiter({ max: 4, recoverAfterSuccesses: 1, now: c.now });
    for (let i = 0; i < 4; i++) await l.acquire();
    l.recordRateLimit(); // limit 2, 4 in flight
    let admitted = false;
    const waiter = l.acquire().then(() => (admitted = true));
    l.release();
    l.release();
    await new Promise((r) => setTimeout(r, 5));
    expect(admitted).toBe(false); // 2 in flight = limit
    l.recordSuccess(); // limit 3
    await waiter;
    expect(admitted).toBe(true);
    expect(l.inFlight).toBe(3);
  });

  it("rejects a waiting acquire with an AbortError when its signal aborts, and forgets it", async () => {
    const l = new AdaptiveLimiter({ max: 1 });
    await l.acquire();
    const ac = new AbortController();
    const p = l.acquire(ac.signal);
    ac.abort();
    const err = await p.catch((e) => e);
    expect(err.name).toBe("AbortError");
    expect(l.waiting).toBe(0);
    l.release();
    expect(l.inFlight).toBe(0);
    await expect(l.acquire(AbortSignal.abort())).rejects.toMatchObject({ name: "AbortError" });
  });

  it("validates max and clamps the initial limit", () => {
    expect(() => new AdaptiveLimiter({ max: 0 })).toThrow(RangeError);
    expect(new AdaptiveLimiter({ max: 3, initial: 10 }).limit).toBe(3);
    expect(new AdaptiveLimiter({ max: 3, initial: 0 }).limit).toBe(1);
  });
});

describe("sharedLimiter", () => {
  it("returns one limiter per key", () => {
    const key = limiterKey("http://127.0.0.1:1/v1/", "m1");
    expect(key).toBe(limiterKey("http://127.0.0.1:1/v1", "m1"));
    const a = sharedLimiter(key, 5);
    expect(sharedLimiter(key, 99)).toBe(a);
    expect(a.max).toBe(5);
    expect(sharedLimiter(limiterKey("http://127.0.0.1:1/v1", "m2"), 5)).not.toBe(a);
  });
});
