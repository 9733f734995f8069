/**
 * A command's timeout and abort, written once for every backend (persistent shell, host process, Docker exec,
 * verify sandbox): whichever comes first calls the backend's `stop` and is remembered, so the command's exit code
 * becomes 124 (timed out, as `timeout(1)` reports) or 130 (interrupted, as after Ctrl-C).
 */
export const TIMEOUT_EXIT_CODE = 124;
export const INTERRUPT_EXIT_CODE = 130;

export interface CommandLimits {
  /** No timeout when undefined or 0. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export class CommandStop {
  timedOut = false;
  aborted = false;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onAbort = () => {
    this.aborted = true;
    this.stop();
  };

  /** Starts watching; an already aborted signal calls `stop` at once. */
  constructor(
    private readonly limits: CommandLimits,
    private readonly stop: () => void,
  ) {
    this.timer =
      limits.timeoutMs !== undefined && limits.timeoutMs > 0
        ? setTimeout(() => {
            this.timedOut = true;
            stop();
          }, limits.timeoutMs)
        : undefined;
    if (limits.signal?.aborted) this.onAbort();
    else limits.signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** A timeout or an abort ended the command. */
  get stopped(): boolean {
    return this.timedOut || this.aborted;
  }

  /** 124 after a timeout, 130 after an abort, else the command's own exit code. */
  exitCode(own: number): number {
    return this.timedOut ? TIMEOUT_EXIT_CODE : this.aborted ? INTERRUPT_EXIT_CODE : own;
  }

  /** Stops watching: the timer is cleared and the abort listener removed. */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.limits.signal?.removeEventListener("abort", this.onAbort);
  }
}
