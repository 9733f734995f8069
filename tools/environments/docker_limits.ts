/**
 * Per-process bounds on Docker sandboxes: how many may be alive at once, and how fast they may be started,
 * so a run of thousands of tasks does not flood the engine at start-up. (Each Piscina worker thread has
 * its own module instance, so with W workers the engine-wide bound is W times these numbers.)
 */

export interface DockerLimits {
  /** Live sandboxes at once (0 = unbounded). */
  maxSandboxes: number;
  /** Container starts per second (0 = unbounded). */
  startsPerSecond: number;
}

const DEFAULT_LIMITS: DockerLimits = { maxSandboxes: 64, startsPerSecond: 10 };

let limits: DockerLimits = { ...DEFAULT_LIMITS };
let live = 0;
const waiters: Array<() => void> = [];
const releaseListeners = new Set<() => void>();
let nextStartAt = 0;

export function configureDockerLimits(next: Partial<DockerLimits>): DockerLimits {
  for (const [key, value] of Object.entries(next)) {
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw new Error(`configureDockerLimits: ${key} must be a number >= 0, got ${String(value)}`);
    }
  }
  limits = { ...limits, ...Object.fromEntries(Object.entries(next).filter(([, v]) => v !== undefined)) };
  // A raised bound may admit waiters right away.
  drain();
  return { ...limits };
}

export function dockerLimits(): DockerLimits & { live: number; waiting: number } {
  return { ...limits, live, waiting: waiters.length };
}

function hasRoom(): boolean {
  return limits.maxSandboxes === 0 || live < limits.maxSandboxes;
}

function drain(): void {
  while (waiters.length > 0 && hasRoom()) {
    live++;
    waiters.shift()!();
  }
}

/** Waits for a sandbox slot. The returned function releases it (idempotent). */
export async function acquireSandboxSlot(signal?: AbortSignal): Promise<() => void> {
  if (hasRoom() && waiters.length === 0) {
    live++;
  } else {
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = waiters.indexOf(grant);
        if (i >= 0) waiters.splice(i, 1);
        reject(new Error("aborted while waiting for a sandbox slot"));
      };
      waiters.push(grant);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
  return releaser();
}

function releaser(): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    live--;
    drain();
    // Queued tasks were served first; listeners (the warm pool) get what is left.
    for (const listener of [...releaseListeners]) {
      releaseListeners.delete(listener);
      listener();
    }
  };
}

/** A slot only if one is free now and no one is queued for it (warming must never delay a task). */
export function tryAcquireSandboxSlot(): (() => void) | undefined {
  if (waiters.length > 0 || !hasRoom()) return undefined;
  live++;
  return releaser();
}

/** Calls the listener once, at the next slot release. Returns an unsubscribe function. */
export function onSandboxSlotReleased(listener: () => void): () => void {
  const once = () => listener();
  releaseListeners.add(once);
  return () => releaseListeners.delete(once);
}

/** Spaces container starts at least 1/startsPerSecond apart (a reservation, so concurrent callers queue). */
export async function waitForStartTurn(): Promise<void> {
  if (limits.startsPerSecond === 0) return;
  const interval = 1000 / limits.startsPerSecond;
  const now = Date.now();
  const at = Math.max(now, nextStartAt);
  nextStartAt = at + interval;
  if (at > now) await new Promise((r) => setTimeout(r, at - now));
}
