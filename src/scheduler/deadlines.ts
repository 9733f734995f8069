/**
 * The deadlines of model attempts that share a clock and a timeout: a list in start order, so in deadline order,
 * with one timer for its head. A timer per attempt (a Timeout, its closure, an insertion and a removal in node's
 * timer lists) was made for every model call and kept for the whole wait for the answer.
 */
import type { Clock } from "./retry.js";

/** An attempt with a deadline: linked into one list at a time, told when its deadline passes. */
export interface DeadlineEntry {
  deadline: number;
  prevDeadline: DeadlineEntry | undefined;
  nextDeadline: DeadlineEntry | undefined;
  /** Whether it is in a list now. */
  linked: boolean;
  /** Its deadline passed: `timeoutMs` after it was added. */
  expire(timeoutMs: number): void;
}

export class Deadlines {
  private head: DeadlineEntry | undefined;
  private tail: DeadlineEntry | undefined;
  private cancelTimer: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    readonly timeoutMs: number,
  ) {}

  /** `entry` expires `timeoutMs` from now unless removed first. */
  add(entry: DeadlineEntry): void {
    entry.deadline = this.now() + this.timeoutMs;
    entry.prevDeadline = this.tail;
    entry.nextDeadline = undefined;
    entry.linked = true;
    if (this.tail) this.tail.nextDeadline = entry;
    else this.head = entry;
    this.tail = entry;
    if (!this.cancelTimer) this.arm();
  }

  /** `entry` no longer expires; the timer goes when nothing is left (a ref'd timer keeps the process up). */
  remove(entry: DeadlineEntry): void {
    if (!entry.linked) return;
    this.unlink(entry);
    if (!this.head) {
      this.cancelTimer?.();
      this.cancelTimer = undefined;
    }
  }

  private unlink(entry: DeadlineEntry): void {
    const { prevDeadline: prev, nextDeadline: next } = entry;
    if (prev) prev.nextDeadline = next;
    else this.head = next;
    if (next) next.prevDeadline = prev;
    else this.tail = prev;
    entry.prevDeadline = entry.nextDeadline = undefined;
    entry.linked = false;
  }

  /** A monotonic reading when the clock has one (wall-clock steps must not move deadlines). */
  private now(): number {
    return this.clock.monotonicNow?.() ?? this.clock.now();
  }

  private arm(): void {
    this.cancelTimer = this.clock.setTimer(this.head!.deadline - this.now(), this.fire);
  }

  private readonly fire = (): void => {
    this.cancelTimer = undefined;
    const now = this.now();
    let entry = this.head;
    while (entry && entry.deadline <= now) {
      this.unlink(entry);
      entry.expire(this.timeoutMs);
      entry = this.head;
    }
    if (this.head && !this.cancelTimer) this.arm();
  };
}

const byClock = new WeakMap<Clock, Map<number, Deadlines>>();

/** The one deadline list of `clock` and `timeoutMs` (every scheduled model of a thread with that policy shares it). */
export function deadlinesFor(clock: Clock, timeoutMs: number): Deadlines {
  let lists = byClock.get(clock);
  if (!lists) byClock.set(clock, (lists = new Map()));
  let list = lists.get(timeoutMs);
  if (!list) lists.set(timeoutMs, (list = new Deadlines(clock, timeoutMs)));
  return list;
}
