/**
 * The tasks a run has in flight, and a wait for the next one to end. `Promise.race` over the set subscribed to
 * every task at each wait: O(concurrency) per task dispatched, and its reactions stayed on each task until that
 * task ended (at 256 loops, some 65,000 of them held by the main thread at any time).
 */
export class InFlightTasks {
  private readonly tasks = new Set<Promise<void>>();
  private waiter: { resolve: () => void; reject: (err: unknown) => void } | undefined;
  private failure: { err: unknown } | undefined;

  get size(): number {
    return this.tasks.size;
  }

  add(task: Promise<void>): void {
    this.tasks.add(task);
    task.then(
      () => this.ended(task),
      (err: unknown) => {
        this.failure ??= { err };
        this.ended(task);
      },
    );
  }

  /** Resolves when a task ends; rejects with the first task's failure (at once when one has failed already). */
  next(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.err);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Waits for every task in flight to end, whatever the outcome. */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.tasks]);
  }

  private ended(task: Promise<void>): void {
    this.tasks.delete(task);
    const waiter = this.waiter;
    this.waiter = undefined;
    if (this.failure) waiter?.reject(this.failure.err);
    else waiter?.resolve();
  }
}
