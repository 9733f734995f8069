/** Deadline and abort helpers shared by the loop, the model clients, the gates and the environments. */

/** The reason a signal was aborted, as an Error (an AbortError DOMException when none was given). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. Holds no timer after. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Races a promise against a signal: rejects with the signal's reason when it aborts first. */
export function raceAbort<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** One abort for several sources: any of them, a deadline, or `abort()` itself; see `linkedAbort`. */
export interface LinkedAbort {
  readonly signal: AbortSignal;
  /** True once the deadline passed (whether or not another source aborted first). */
  readonly timedOut: boolean;
  abort(reason?: unknown): void;
  /** Removes the listeners on the sources and the deadline's timer; the signal stays as it is. */
  dispose(): void;
}

/**
 * A controller aborted by any of `sources` (with that source's reason) or after `timeoutMs` (with the
 * TimeoutError `AbortSignal.timeout` gives). Not `AbortSignal.any`: on Node 20 a signal it makes is never
 * freed while a listener is attached to it, which leaked about 0.4 KB per task.
 */
export function linkedAbort(sources: readonly AbortSignal[], timeoutMs?: number): LinkedAbort {
  return new LinkedAbortController(sources, timeoutMs);
}

/** A class, not an object literal with a getter (which V8 keeps as a slow dictionary): one is made per task. */
class LinkedAbortController implements LinkedAbort {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly listeners: [AbortSignal, () => void][] = [];
  timedOut = false;

  constructor(sources: readonly AbortSignal[], timeoutMs: number | undefined) {
    for (const source of sources) {
      if (source.aborted) {
        this.abort(source.reason);
        continue;
      }
      const onAbort = () => this.abort(source.reason);
      source.addEventListener("abort", onAbort, { once: true });
      this.listeners.push([source, onAbort]);
    }
    if (timeoutMs !== undefined) {
      this.timer = setTimeout(
        () => {
          this.timedOut = true;
          this.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
        },
        Math.min(Math.max(0, timeoutMs), MAX_TIMER_MS),
      );
      // Like AbortSignal.timeout: the deadline alone does not keep the thread alive.
      this.timer.unref();
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  readonly abort = (reason?: unknown): void => {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  };

  dispose(): void {
    clearTimeout(this.timer);
    for (const [source, onAbort] of this.listeners.splice(0)) source.removeEventListener("abort", onAbort);
  }
}

/** Largest delay a Node timer accepts (2^31 - 1 ms); larger values silently become 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;
