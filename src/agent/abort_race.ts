/**
 * Races promises, one at a time, against one signal with a single listener for all of them: the agent loop's
 * tool turns, which would otherwise add and remove a listener on the task's signal each turn.
 */
import { abortReason } from "../core/abort.js";

export class AbortRace {
  private rejectCurrent: ((reason: unknown) => void) | undefined;
  private readonly onAbort = () => this.rejectCurrent?.(abortReason(this.signal!));

  constructor(private readonly signal: AbortSignal | undefined) {
    signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Settles as `promise` does, or rejects with the signal's reason as soon as it aborts first. */
  race<T>(promise: Promise<T>): Promise<T> {
    const signal = this.signal;
    if (!signal) return promise;
    if (signal.aborted) return Promise.reject(abortReason(signal));
    return new Promise<T>((resolve, reject) => {
      this.rejectCurrent = reject;
      promise.then(
        (v) => {
          this.rejectCurrent = undefined;
          resolve(v);
        },
        (e) => {
          this.rejectCurrent = undefined;
          reject(e);
        },
      );
    });
  }

  dispose(): void {
    this.rejectCurrent = undefined;
    this.signal?.removeEventListener("abort", this.onAbort);
  }
}
