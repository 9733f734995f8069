/**
 * Run-wide sandbox gates: live sandboxes (`--max-sandboxes`, warm ones included), the warm pool total
 * (`--prewarm`) and the sandbox start rate (slowed while the engine fails starts), held across every worker
 * thread together.
 *
 * The main thread creates one `SandboxGates` per run and hands `buffers` to each worker in `workerData`;
 * a worker opens them with `new SandboxGates(buffers)`. Every counter lives in a SharedArrayBuffer, so the
 * bounds are the run's, not one thread's. A backend takes a sandbox permit before it starts a sandbox and
 * releases it when the sandbox is removed; a warm sandbox also holds a warm permit until a task takes it.
 */
import { threadId as currentThreadId } from "node:worker_threads";
import { SharedRateGate, SharedSemaphore } from "../../src/core/shared_gate.js";

export interface SandboxGateBuffers {
  sandboxes: SharedArrayBuffer;
  warm: SharedArrayBuffer;
  starts: SharedArrayBuffer;
  /** [tasks waiting for a sandbox permit, --prewarm total, warm share per worker thread] */
  meta: SharedArrayBuffer;
  /** Per worker thread: [thread id (0 = free slot), sandbox permits held, warm permits held]. */
  ledger: SharedArrayBuffer;
}

export interface SandboxGateLimits {
  /** Live sandboxes run-wide, warm ones included (undefined or 0 = no bound). */
  maxSandboxes?: number;
  /** Warm sandboxes run-wide (0 = no warm pool). */
  prewarm?: number;
  /** Sandbox starts per second run-wide (0 = unbounded). */
  startsPerSecond?: number;
  /** Worker threads sharing the gates: each keeps its share of the warm pool ready. */
  workers?: number;
}

export const DEFAULT_STARTS_PER_SECOND = 10;
/** While the engine fails starts, the run-wide start interval doubles per failure, from at least this… */
export const ENGINE_TROUBLE_STEP_MS = 100;
/** …up to this (one start per 4 s), and halves back per successful start. */
export const ENGINE_TROUBLE_MAX_MS = 4000;
/** "No bound" for a semaphore, whose limit must be a positive integer. */
const UNBOUNDED = 2 ** 31 - 1;
const WAITING = 0;
const PREWARM = 1;
const WARM_SHARE = 2;
/** Worker threads a run's ledger can track at once (a crashed thread's slot is freed and reused). */
const LEDGER_SLOTS = 1024;
const OWNER = 0;
const HELD = 1;
const HELD_WARM = 2;

/** Names the worker thread that started a sandbox (a label on it), so its leftovers can be found when it dies. */
export function sandboxOwner(threadId: number = currentThreadId): string {
  return `${process.pid}-${threadId}`;
}

/** A permit released at most once, however often `release` is called. */
export interface SandboxPermit {
  release(): void;
}

/** The permits of a warm sandbox: `handOver` gives back the warm part when a task takes it. */
export interface WarmPermit extends SandboxPermit {
  handOver(): void;
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

function count(value: number | undefined, name: string): number {
  const n = value ?? 0;
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name} must be an integer >= 0, got ${String(value)}`);
  return n;
}

export class SandboxGates {
  readonly sandboxes: SharedSemaphore;
  private readonly warm: SharedSemaphore;
  readonly starts: SharedRateGate;
  private readonly meta: Int32Array;
  private readonly ledger: Int32Array;
  private slot: number | undefined;

  constructor(
    readonly buffers: SandboxGateBuffers,
    now?: () => number,
    /** The thread whose permits this instance records (for the main thread to release when it dies). */
    private readonly threadId: number = currentThreadId,
  ) {
    this.sandboxes = new SharedSemaphore(buffers.sandboxes);
    this.warm = new SharedSemaphore(buffers.warm);
    this.starts = new SharedRateGate(buffers.starts, now);
    this.meta = new Int32Array(buffers.meta);
    this.ledger = new Int32Array(buffers.ledger);
  }

  /** This thread's ledger slot, claimed on first use (the main thread, id 0, keeps no ledger). */
  private record(cell: number, delta: number): void {
    if (this.threadId === 0) return;
    if (this.slot === undefined) {
      for (let i = 0; i < LEDGER_SLOTS && this.slot === undefined; i++) {
        if (Atomics.load(this.ledger, i * 3 + OWNER) === this.threadId) this.slot = i;
      }
      for (let i = 0; i < LEDGER_SLOTS && this.slot === undefined; i++) {
        if (Atomics.compareExchange(this.ledger, i * 3 + OWNER, 0, this.threadId) === 0) this.slot = i;
      }
      if (this.slot === undefined) return; // more live threads than slots: those permits cannot be reclaimed
    }
    Atomics.add(this.ledger, this.slot * 3 + cell, delta);
  }

  /**
   * For the main thread, when a worker thread died: gives back the permits it held (a dead thread never
   * releases them; its sandboxes must be removed first). Returns how many it gave back.
   */
  releaseThread(threadId: number): { sandboxes: number; warm: number } {
    for (let i = 0; i < LEDGER_SLOTS; i++) {
      if (Atomics.load(this.ledger, i * 3 + OWNER) !== threadId) continue;
      const sandboxes = Atomics.exchange(this.ledger, i * 3 + HELD, 0);
      const warm = Atomics.exchange(this.ledger, i * 3 + HELD_WARM, 0);
      for (let n = 0; n < warm; n++) this.warm.release();
      for (let n = 0; n < sandboxes; n++) this.sandboxes.release();
      Atomics.store(this.ledger, i * 3 + OWNER, 0);
      return { sandboxes, warm };
    }
    return { sandboxes: 0, warm: 0 };
  }

  static create(limits: SandboxGateLimits = {}, now?: () => number): SandboxGates {
    const max = count(limits.maxSandboxes, "maxSandboxes");
    const prewarm = count(limits.prewarm, "prewarm");
    const workers = Math.max(1, count(limits.workers ?? 1, "workers"));
    const rate = limits.startsPerSecond ?? DEFAULT_STARTS_PER_SECOND;
    if (!(rate >= 0) || !Number.isFinite(rate))
      throw new RangeError(`startsPerSecond must be a number >= 0, got ${String(rate)}`);
    const buffers: SandboxGateBuffers = {
      sandboxes: SharedSemaphore.create(max === 0 ? UNBOUNDED : max).buffer,
      warm: SharedSemaphore.create(Math.max(1, prewarm)).buffer,
      starts: SharedRateGate.create(rate === 0 ? 0 : 1000 / rate).buffer,
      meta: new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT),
      ledger: new SharedArrayBuffer(LEDGER_SLOTS * 3 * Int32Array.BYTES_PER_ELEMENT),
    };
    const gates = new SandboxGates(buffers, now);
    Atomics.store(gates.meta, PREWARM, prewarm);
    Atomics.store(gates.meta, WARM_SHARE, Math.ceil(prewarm / workers));
    return gates;
  }

  /** Live sandboxes run-wide (warm ones included). */
  get live(): number {
    return this.sandboxes.inUse;
  }

  /** Most sandboxes ever alive at once in this run. */
  get peak(): number {
    return this.sandboxes.peak;
  }

  get maxSandboxes(): number {
    const limit = this.sandboxes.limit;
    return limit === UNBOUNDED ? 0 : limit;
  }

  /** Tasks waiting for a sandbox permit right now, run-wide. */
  get waiting(): number {
    return Atomics.load(this.meta, WAITING);
  }

  /** Warm sandboxes run-wide (the --prewarm total). */
  get prewarm(): number {
    return Atomics.load(this.meta, PREWARM);
  }

  /** Warm sandboxes one worker thread keeps ready (its share of the total). */
  get warmShare(): number {
    return Atomics.load(this.meta, WARM_SHARE);
  }

  /** Warm sandboxes alive or starting right now, run-wide. */
  get warmInUse(): number {
    return this.prewarm === 0 ? 0 : this.warm.inUse;
  }

  /** True when no sandbox permit is free now. */
  get full(): boolean {
    return this.sandboxes.inUse >= this.sandboxes.limit;
  }

  /**
   * Waits for a sandbox permit. Meanwhile the task counts as waiting, so no warm pool takes a permit ahead
   * of it and warm pools give theirs up (see WarmPool).
   */
  async acquireSandbox(signal?: AbortSignal): Promise<SandboxPermit> {
    if (!this.sandboxes.tryAcquire()) {
      Atomics.add(this.meta, WAITING, 1);
      try {
        await this.sandboxes.acquire(signal);
      } finally {
        Atomics.sub(this.meta, WAITING, 1);
      }
    }
    this.record(HELD, 1);
    return {
      release: once(() => {
        this.record(HELD, -1);
        this.sandboxes.release();
      }),
    };
  }

  /** Permits for one warm sandbox, only if the warm total has room, no task waits, and a sandbox permit is free now. */
  tryAcquireWarm(): WarmPermit | undefined {
    if (this.prewarm === 0 || this.waiting > 0) return undefined;
    if (!this.warm.tryAcquire()) return undefined;
    if (this.waiting > 0 || !this.sandboxes.tryAcquire()) {
      this.warm.release();
      return undefined;
    }
    this.record(HELD, 1);
    this.record(HELD_WARM, 1);
    const releaseWarm = once(() => {
      this.record(HELD_WARM, -1);
      this.warm.release();
    });
    const releaseSandbox = once(() => {
      this.record(HELD, -1);
      this.sandboxes.release();
    });
    return {
      handOver: releaseWarm,
      release: () => {
        releaseWarm();
        releaseSandbox();
      },
    };
  }

  /** Waits for this caller's turn to start a sandbox (the run-wide start rate). */
  startTurn(signal?: AbortSignal): Promise<void> {
    return this.starts.wait(signal);
  }

  /** A start met a transient engine error: every thread's starts are spaced further apart. Returns the new interval. */
  engineFailed(): number {
    return this.starts.slowDown(ENGINE_TROUBLE_STEP_MS, ENGINE_TROUBLE_MAX_MS);
  }

  /** A start succeeded: the start interval moves back toward the run's rate. */
  engineRecovered(): void {
    if (this.starts.intervalMs !== this.starts.baseIntervalMs) this.starts.recover();
  }
}

let processGates: { key: string; gates: SandboxGates } | undefined;

/**
 * The gates for a backend call: the run's (handed in with the options by the task runner), else one set per
 * process built from the options' limits (direct use, tests), kept while those limits stay the same.
 */
export function gatesFor(options: {
  gates?: unknown;
  maxSandboxes?: unknown;
  prewarm?: unknown;
  startsPerSecond?: unknown;
}): SandboxGates {
  if (options.gates instanceof SandboxGates) return options.gates;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
  const limits: SandboxGateLimits = {
    maxSandboxes: num(options.maxSandboxes),
    prewarm: num(options.prewarm),
    startsPerSecond: num(options.startsPerSecond),
  };
  const key = JSON.stringify(limits);
  if (processGates?.key !== key) processGates = { key, gates: SandboxGates.create(limits) };
  return processGates.gates;
}
