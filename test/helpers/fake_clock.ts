/**
 * A fake clock for the scheduler's retry layer: virtual time that moves only when the test says so, so
 * back-offs, Retry-After waits and request deadlines are checked without a real sleep.
 */
import type { Clock } from "../../src/scheduler/retry.js";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  private t = 0;
  private seq = 0;
  private timers: Timer[] = [];
  /** Every sleep asked for, in ms, in order. */
  readonly sleeps: number[] = [];

  constructor(private readonly jitter = 0.5) {}

  now(): number {
    return this.t;
  }

  random(): number {
    return this.jitter;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        cancel();
        reject(signal!.reason);
      };
      const cancel = this.setTimer(ms, () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Lets every pending callback and promise job run (a macrotask turn; no time passes). */
  async settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  }

  /** Moves time to the next timer and fires every timer due then; false when there is none. */
  async fireNext(): Promise<boolean> {
    await this.settle();
    if (this.timers.length === 0) return false;
    this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const at = this.timers[0]!.at;
    const due = this.timers.filter((x) => x.at === at);
    this.timers = this.timers.filter((x) => x.at !== at);
    this.t = Math.max(this.t, at);
    for (const timer of due) timer.fn();
    await this.settle();
    return true;
  }

  /** Runs virtual time forward, timer by timer, until `p` settles. */
  async run<T>(p: Promise<T>): Promise<T> {
    let settled = false;
    const watched = p.finally(() => {
      settled = true;
    });
    watched.catch(() => {});
    await this.settle();
    while (!settled) {
      if (!(await this.fireNext())) break;
    }
    return watched;
  }
}
