/**
 * The signal of each model attempt, aborted by the caller's signal or by the attempt's deadline. A controller
 * whose attempt ended without an abort serves the next attempt of the same caller signal, with its listener on
 * that signal: an agent loop's calls come one at a time, so most attempts create no controller and add no
 * listener (node makes an AbortController and an event listener at a cost above the rest of the scheduling).
 */
import type { DeadlineEntry } from "./deadlines.js";

/** One attempt's controller, bound to the caller's signal; its deadline is kept in a `Deadlines` list. */
export class AttemptSignal implements DeadlineEntry {
  readonly controller = new AbortController();
  /** Told the reason when the attempt is aborted (by the caller or by `abort`); cleared between attempts. */
  onAbort: ((reason: unknown) => void) | undefined;
  /** The attempt was aborted by its deadline. */
  timedOut = false;
  deadline = 0;
  prevDeadline: DeadlineEntry | undefined;
  nextDeadline: DeadlineEntry | undefined;
  linked = false;
  private readonly forward = () => this.abort(this.caller!.reason);

  constructor(readonly caller: AbortSignal | undefined) {
    caller?.addEventListener("abort", this.forward, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  expire(timeoutMs: number): void {
    this.timedOut = true;
    this.abort(new Error(`request timed out after ${timeoutMs} ms`));
  }

  abort(reason: unknown): void {
    this.controller.abort(reason);
    this.onAbort?.(this.controller.signal.reason);
  }

  dispose(): void {
    this.onAbort = undefined;
    this.caller?.removeEventListener("abort", this.forward);
  }
}

/** Hands out attempt signals, keeping the last one that ended without an abort for the next attempt. */
export class AttemptSignals {
  private spare: AttemptSignal | undefined;

  /** A signal for an attempt of `caller`'s; the attempt sets its `onAbort`. */
  take(caller: AbortSignal | undefined): AttemptSignal {
    let bound = this.spare;
    this.spare = undefined;
    if (!bound || bound.caller !== caller || bound.signal.aborted) {
      bound?.dispose();
      bound = new AttemptSignal(caller);
    }
    bound.timedOut = false;
    return bound;
  }

  /** The attempt is over: an aborted signal is dropped, any other kept for the next attempt. */
  give(bound: AttemptSignal): void {
    bound.onAbort = undefined;
    if (bound.signal.aborted) return bound.dispose();
    this.spare?.dispose();
    this.spare = bound;
  }
}
