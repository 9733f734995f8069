/**
 * The early-stop rule of a run (and so of every shard): an endpoint that cannot work (a bad key, an unknown
 * model, nobody listening) or stops working (it died mid-run) fails every task the same way. When
 * --stop-after-failures N results in a row are all one model error, no further task starts: at the start of
 * a run those are its first N tasks; later, N in a row after an answer that worked. 0 turns the rule off.
 */
export interface Observed {
  kind: string;
  outcome: string;
  error?: string;
}

export interface EarlyStop {
  /** The model error every one of the N results had. */
  error: string;
  /** "the first 5 tasks" or "5 tasks in a row", for messages. */
  what: string;
}

export class DeadEndpointWatch {
  private streak = 0;
  private streakError = "";
  private anyOther = false;

  constructor(private readonly n: number) {}

  /** One task's result; returns the stop when this result completes N equal model errors in a row. */
  observe(msg: Observed): EarlyStop | undefined {
    if (this.n === 0) return undefined;
    if (msg.kind !== "failed" || msg.outcome !== "model_error") {
      this.streak = 0;
      this.anyOther = true;
      return undefined;
    }
    const error = msg.error ?? "";
    if (this.streak > 0 && error !== this.streakError) {
      // Another error breaks the streak; this one starts the next.
      this.anyOther = true;
      this.streak = 0;
    }
    this.streakError = error;
    this.streak++;
    if (this.streak < this.n) return undefined;
    return { error, what: this.anyOther ? `${this.n} tasks in a row` : `the first ${this.n} tasks` };
  }
}
