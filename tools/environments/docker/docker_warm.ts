/**
 * A worker thread's pool of sandboxes started ahead of the tasks that will use them, so a task's first tool
 * call does not wait for a container start (≈0.5 s here).
 *
 * The pool never waits for a permit: it starts a sandbox only when the run-wide gates have room right now
 * (the warm total under --prewarm, a free sandbox permit, and no task of any thread waiting for one), so
 * warming never delays a task. While a task waits for a sandbox permit and every permit is taken, the pool
 * gives one of its sandboxes up. It re-checks on every take and on a short tick (the gates are shared with
 * other threads, whose releases it cannot hear). Sandboxes idle longer than `maxIdleMs` are retired, which
 * bounds how long the dead-man's switch of a warm container must be (see docker.ts).
 */

export interface WarmItem {
  cleanup(): Promise<void>;
}

export interface WarmPoolOptions<T extends WarmItem, P> {
  /** Sandboxes this pool keeps ready or starting. */
  size: number;
  /** A ready sandbox older than this is removed instead of handed out. */
  maxIdleMs: number;
  /** Starts one sandbox holding the given permit (it releases the permit itself on failure or cleanup). */
  start: (permit: P) => Promise<T>;
  /** A permit if the gates have room right now, else undefined. */
  tryAcquire: () => P | undefined;
  /** Called with a sandbox the pool hands to a task (the warm part of its permit goes back). */
  handOver: (item: T) => void;
  /** True while some task waits for a sandbox permit and none is free: the pool then gives one up. */
  starved: () => boolean;
  /** Re-check interval for room and starvation (default 200 ms). */
  tickMs?: number;
  /** Wait after a failed start before trying again. */
  retryDelayMs?: number;
  now?: () => number;
}

interface Entry<T> {
  startedAt: number;
  promise: Promise<T | undefined>;
  value?: T;
}

export interface WarmPoolStats {
  size: number;
  ready: number;
  starting: number;
  /** Sandboxes handed to tasks so far. */
  taken: number;
  /** Sandboxes given up for a waiting task. */
  evicted: number;
}

export class WarmPool<T extends WarmItem, P = unknown> {
  private entries: Entry<T>[] = [];
  private draining = false;
  private retryUntil = 0;
  private readonly ticker: NodeJS.Timeout;
  private lastStaleCheck = 0;
  private taken = 0;
  private evicted = 0;

  constructor(private readonly o: WarmPoolOptions<T, P>) {
    this.ticker = setInterval(() => this.tick(), o.tickMs ?? 200);
    this.ticker.unref();
    this.fill();
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  stats(): WarmPoolStats {
    const ready = this.entries.filter((e) => e.value !== undefined).length;
    return {
      size: this.o.size,
      ready,
      starting: this.entries.length - ready,
      taken: this.taken,
      evicted: this.evicted,
    };
  }

  /** One re-check: give a sandbox up to a starved task, retire stale ones, refill. */
  tick(): void {
    if (this.draining) return;
    if (this.o.starved()) this.evictOne();
    if (this.now() - this.lastStaleCheck >= Math.min(60_000, this.o.maxIdleMs / 4)) this.retireStale();
    this.fill();
  }

  /** Starts sandboxes until `size` are ready or starting (as far as the gates have room now). */
  fill(): void {
    while (!this.draining && this.now() >= this.retryUntil && this.entries.length < this.o.size) {
      const permit = this.o.tryAcquire();
      if (permit === undefined) return;
      this.startOne(permit);
    }
  }

  private startOne(permit: P): void {
    const entry: Entry<T> = { startedAt: this.now(), promise: Promise.resolve(undefined) };
    entry.promise = this.o.start(permit).then(
      async (value) => {
        if (this.draining) {
          this.remove(entry);
          await value.cleanup().catch(() => undefined);
          return undefined;
        }
        entry.value = value;
        return value;
      },
      () => {
        this.remove(entry);
        this.retryUntil = this.now() + (this.o.retryDelayMs ?? 5000);
        return undefined;
      },
    );
    this.entries.push(entry);
  }

  private remove(entry: Entry<T>): boolean {
    const i = this.entries.indexOf(entry);
    if (i < 0) return false;
    this.entries.splice(i, 1);
    return true;
  }

  private retireStale(): void {
    this.lastStaleCheck = this.now();
    const cutoff = this.now() - this.o.maxIdleMs;
    for (const e of [...this.entries]) {
      if (e.value !== undefined && e.startedAt < cutoff && this.remove(e))
        void e.value.cleanup().catch(() => undefined);
    }
  }

  /**
   * A ready sandbox, else one still starting (it is further along than a new one would be), else undefined.
   * Whatever is handed out belongs to the caller, who cleans it up.
   */
  async take(): Promise<T | undefined> {
    if (this.draining) return undefined;
    this.retireStale();
    this.fill();
    const entry = this.entries.find((e) => e.value !== undefined) ?? this.entries[0];
    if (!entry) return undefined;
    this.remove(entry);
    const value = await entry.promise;
    if (value) {
      this.taken++;
      this.o.handOver(value);
    }
    this.fill();
    return value;
  }

  /**
   * Gives one sandbox's permit back (a ready one first, else the newest starting one) for a task that cannot
   * use the pool and waits for a permit: otherwise full pools could hold every permit while that task waits.
   */
  evictOne(): boolean {
    const entry = this.entries.find((e) => e.value !== undefined) ?? this.entries[this.entries.length - 1];
    if (!entry) return false;
    this.remove(entry);
    this.evicted++;
    void entry.promise.then((v) => v?.cleanup()).catch(() => undefined);
    return true;
  }

  /** Stops refilling and removes every sandbox not handed out (starting ones as soon as they are up). */
  async drain(): Promise<void> {
    this.draining = true;
    clearInterval(this.ticker);
    const entries = this.entries;
    this.entries = [];
    await Promise.all(
      entries.map(async (e) => {
        const v = await e.promise;
        await v?.cleanup().catch(() => undefined);
      }),
    );
  }
}
