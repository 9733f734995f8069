/**
 * A per-process (per worker thread) pool of sandboxes started ahead of the tasks that will use them, so a
 * task's first tool call does not wait for a container start (≈0.5 s here).
 *
 * The pool never waits for a sandbox slot: it only starts a container when the limiter has room right now
 * and no task is queued for one, so warming never delays a task. It refills when one is taken, when a slot
 * frees up, and (after a failed start) after a back-off. Sandboxes idle longer than `maxIdleMs` are retired,
 * which bounds how long the dead-man's switch of a warm container must be (see docker.ts).
 */

export interface WarmItem {
  cleanup(): Promise<void>;
}

export interface WarmPoolOptions<T extends WarmItem> {
  /** Sandboxes to keep ready or starting. */
  size: number;
  /** A ready sandbox older than this is removed instead of handed out. */
  maxIdleMs: number;
  /** Starts one sandbox holding the given slot (it releases the slot itself on failure). */
  start: (release: () => void) => Promise<T>;
  /** A slot if one is free right now, else undefined. */
  tryAcquireSlot: () => (() => void) | undefined;
  /** Calls the listener once, the next time a slot is released. Returns an unsubscribe function. */
  onSlotReleased: (listener: () => void) => () => void;
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
}

export class WarmPool<T extends WarmItem> {
  private entries: Entry<T>[] = [];
  private draining = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly staleTimer: NodeJS.Timeout;
  private taken = 0;

  constructor(private readonly o: WarmPoolOptions<T>) {
    this.staleTimer = setInterval(() => this.retireStale(), Math.max(1000, Math.min(60_000, o.maxIdleMs / 4)));
    this.staleTimer.unref();
    this.fill();
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  stats(): WarmPoolStats {
    const ready = this.entries.filter((e) => e.value !== undefined).length;
    return { size: this.o.size, ready, starting: this.entries.length - ready, taken: this.taken };
  }

  /** Starts sandboxes until `size` are ready or starting (as far as the limiter has room). */
  fill(): void {
    while (!this.draining && this.retryTimer === undefined && this.entries.length < this.o.size) {
      const release = this.o.tryAcquireSlot();
      if (!release) {
        this.unsubscribe ??= this.o.onSlotReleased(() => {
          this.unsubscribe = undefined;
          this.fill();
        });
        return;
      }
      this.startOne(release);
    }
  }

  private startOne(release: () => void): void {
    const entry: Entry<T> = { startedAt: this.now(), promise: Promise.resolve(undefined) };
    entry.promise = this.o.start(release).then(
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
        if (!this.draining) {
          this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined;
            this.fill();
          }, this.o.retryDelayMs ?? 5000);
          this.retryTimer.unref();
        }
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
    const cutoff = this.now() - this.o.maxIdleMs;
    for (const e of [...this.entries]) {
      if (e.value !== undefined && e.startedAt < cutoff && this.remove(e)) void e.value.cleanup().catch(() => undefined);
    }
    this.fill();
  }

  /**
   * A ready sandbox, else one still starting (it is further along than a new one would be), else undefined.
   * Whatever is handed out belongs to the caller, who cleans it up.
   */
  async take(): Promise<T | undefined> {
    if (this.draining) return undefined;
    this.retireStale();
    const entry = this.entries.find((e) => e.value !== undefined) ?? this.entries[0];
    if (!entry) return undefined;
    this.remove(entry);
    this.fill();
    const value = await entry.promise;
    if (value) this.taken++;
    return value;
  }

  /**
   * Gives one sandbox's slot back (a ready one first, else the newest starting one), for a task that cannot
   * use the pool and is queued for a slot: otherwise a full pool could hold every slot while that task waits.
   */
  evictOne(): boolean {
    const entry = this.entries.find((e) => e.value !== undefined) ?? this.entries[this.entries.length - 1];
    if (!entry) return false;
    this.remove(entry);
    void entry.promise.then((v) => v?.cleanup()).catch(() => undefined);
    // Waits (as a slot listener) for room to warm up again once the queued task is served.
    this.fill();
    return true;
  }

  /** Stops refilling and removes every sandbox not handed out (starting ones as soon as they are up). */
  async drain(): Promise<void> {
    this.draining = true;
    clearInterval(this.staleTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
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
