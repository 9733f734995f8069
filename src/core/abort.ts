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
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
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

/** Combines optional signals with an optional timeout into one signal (undefined when there is none). */
export function combineSignals(signals: (AbortSignal | undefined)[], timeoutMs?: number): AbortSignal | undefined {
  const all = signals.filter((s): s is AbortSignal => s !== undefined);
  if (timeoutMs !== undefined) all.push(AbortSignal.timeout(timeoutMs));
  if (all.length === 0) return undefined;
  return all.length === 1 ? all[0] : AbortSignal.any(all);
}

/** Largest delay a Node timer accepts (2^31 - 1 ms); larger values silently become 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;
