/**
 * Run-wide gates that hold across every worker thread together. Their state lives in a
 * SharedArrayBuffer that the main thread creates and hands to each worker (in `workerData`), so
 * `--max-connections 3` means three requests in flight for the whole run, whatever the thread count.
 */
import { abortReason, raceAbort, sleep as abortableSleep } from "./abort.js";

const IN_USE = 0;
const LIMIT = 1;
const GENERATION = 2;
const PEAK = 3;
const SLOTS = 4;
/** A waiter re-checks at least this often, so a wake-up lost to a race costs a delay, never a hang. */
const RECHECK_MS = 250;

type WaitResult =
  | { async: false; value: "not-equal" | "timed-out" }
  | { async: true; value: Promise<"ok" | "timed-out"> };
/** Node 20 has Atomics.waitAsync; the ES2023 lib this project compiles against does not declare it. */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t: number): WaitResult })
  .waitAsync;

/** A counting semaphore whose permits are shared by every thread that holds its buffer. */
export class SharedSemaphore {
  private readonly cells: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer) {
    this.cells = new Int32Array(buffer);
    if (this.cells.length < SLOTS) throw new RangeError("SharedSemaphore buffer too small");
  }

  static create(limit: number): SharedSemaphore {
    const gate = new SharedSemaphore(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
    gate.setLimit(limit);
    return gate;
  }

  get limit(): number {
    return Atomics.load(this.cells, LIMIT);
  }

  get inUse(): number {
    return Atomics.load(this.cells, IN_USE);
  }

  /** Most permits ever held at once (for statistics and tests). */
  get peak(): number {
    return Atomics.load(this.cells, PEAK);
  }

  /** Changes the limit (an adaptive limiter lowers it on 429s); permits already held stay held. */
  setLimit(limit: number): void {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`gate limit must be an integer >= 1, got ${limit}`);
    Atomics.store(this.cells, LIMIT, limit);
    this.wake();
  }

  tryAcquire(): boolean {
    for (;;) {
      const held = Atomics.load(this.cells, IN_USE);
      if (held >= Atomics.load(this.cells, LIMIT)) return false;
      if (Atomics.compareExchange(this.cells, IN_USE, held, held + 1) === held) {
        this.notePeak(held + 1);
        return true;
      }
    }
  }

  /** Waits for a permit; rejects with the signal's reason if it aborts first (no permit is then held). */
  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const generation = Atomics.load(this.cells, GENERATION);
      if (this.tryAcquire()) return;
      const waited = waitAsync(this.cells, GENERATION, generation, RECHECK_MS);
      if (!waited.async) continue;
      // A pending waitAsync does not keep Node's event loop alive: a ref'd timer does, for as long as we wait.
      let keepAlive: NodeJS.Timeout | undefined;
      try {
        await raceAbort(
          Promise.race([waited.value, new Promise((r) => (keepAlive = setTimeout(r, RECHECK_MS)))]),
          signal,
        );
      } finally {
        clearTimeout(keepAlive);
      }
    }
  }

  release(): void {
    const before = Atomics.sub(this.cells, IN_USE, 1);
    if (before <= 0) {
      Atomics.add(this.cells, IN_USE, 1);
      throw new Error("SharedSemaphore released more often than acquired");
    }
    this.wake();
  }

  /** Runs `fn` holding one permit. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private wake(): void {
    Atomics.add(this.cells, GENERATION, 1);
    Atomics.notify(this.cells, GENERATION);
  }

  private notePeak(held: number): void {
    for (;;) {
      const peak = Atomics.load(this.cells, PEAK);
      if (held <= peak || Atomics.compareExchange(this.cells, PEAK, peak, held) === peak) return;
    }
  }
}

/**
 * Spaces events run-wide: at most one start every `intervalMs` across all threads (the sandbox start
 * rate). Each caller reserves the next free instant atomically, then sleeps until it. The interval can be
 * widened while what the gate protects is failing (`slowDown`) and narrowed back to the one it was created
 * with (`recover`). Cells: [next free instant, current interval, created interval].
 */
export class SharedRateGate {
  private readonly cells: BigInt64Array;

  constructor(
    readonly buffer: SharedArrayBuffer,
    private readonly now: () => number = Date.now,
  ) {
    this.cells = new BigInt64Array(buffer);
  }

  static create(intervalMs: number, now?: () => number): SharedRateGate {
    const gate = new SharedRateGate(new SharedArrayBuffer(3 * BigInt64Array.BYTES_PER_ELEMENT), now);
    const interval = BigInt(Math.max(0, Math.round(intervalMs)));
    Atomics.store(gate.cells, 1, interval);
    Atomics.store(gate.cells, 2, interval);
    return gate;
  }

  get intervalMs(): number {
    return Number(Atomics.load(this.cells, 1));
  }

  /** The interval the gate was created with (what `recover` returns to). */
  get baseIntervalMs(): number {
    return Number(Atomics.load(this.cells, 2));
  }

  /** Doubles the interval, to at least `stepMs` and at most `maxMs` (never below the created one). Returns the new one. */
  slowDown(stepMs: number, maxMs: number): number {
    return this.updateInterval((current, base) => {
      const wider = current * 2n > BigInt(stepMs) ? current * 2n : BigInt(stepMs);
      const capped = wider < BigInt(maxMs) ? wider : BigInt(maxMs);
      return capped > base ? capped : base;
    });
  }

  /** Halves the interval, not below the created one. Returns the new one. */
  recover(): number {
    return this.updateInterval((current, base) => (current / 2n > base ? current / 2n : base));
  }

  private updateInterval(next: (current: bigint, base: bigint) => bigint): number {
    const base = Atomics.load(this.cells, 2);
    for (;;) {
      const current = Atomics.load(this.cells, 1);
      const value = next(current, base);
      if (value === current || Atomics.compareExchange(this.cells, 1, current, value) === current) return Number(value);
    }
  }

  /** Reserves the next slot and returns how long the caller must wait for it (0 when free now). */
  reserve(): number {
    const interval = Atomics.load(this.cells, 1);
    for (;;) {
      const next = Atomics.load(this.cells, 0);
      const now = BigInt(this.now());
      const at = next > now ? next : now;
      if (Atomics.compareExchange(this.cells, 0, next, at + interval) === next) return Number(at - now);
    }
  }

  /** Waits for this caller's slot. */
  async wait(
    signal?: AbortSignal,
    sleep: (ms: number, signal?: AbortSignal) => Promise<void> = abortableSleep,
  ): Promise<void> {
    const delay = this.reserve();
    if (delay > 0) await sleep(delay, signal);
  }
}
