/**
 * Tasks that arrive together start a few per event-loop turn, in arrival order.
 *
 * Why: a worker thread gets its first tasks (hundreds at a high --concurrency) while it still sets up, and they all
 * wait on that set-up. Resumed in one go, they advance in lockstep through the microtask queue: every task's
 * set-up, every first request built, and only then any socket connects (node connects on a later tick), so the
 * first request left after all of them were ready. A few starts per turn let the next turn's poll phase connect and
 * send the earlier tasks' requests (and read their replies) while the later ones still set up. A task that arrives
 * alone waits for one turn (`setImmediate`), a few microseconds.
 */
export class StartTurns {
  /**
   * @param perTurn how many start in one turn. 16: at 256 tasks on one worker it sent the first request as early as
   * one per turn did and ended the run no later than all at once (scripts/bench/throughput.mjs, start-up and end to end).
   */
  constructor(private readonly perTurn = 16) {}

  private readonly waiting: (() => void)[] = [];
  private head = 0;
  private scheduled = false;

  /** Resolves when it is this caller's turn to start. */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.startSome);
      }
    });
  }

  private readonly startSome = (): void => {
    for (let i = 0; i < this.perTurn && this.head < this.waiting.length; i++) this.waiting[this.head++]!();
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
    }
    if (this.waiting.length > this.head) setImmediate(this.startSome);
    else this.scheduled = false;
  };
}
