/**
 * runs/<run>/atif.jsonl: one ATIF-v1.7 document per line of trajectories.jsonl, rebuilt with statistics.json at
 * the end of every invocation so the two never disagree. Written to a temporary name and renamed only when every
 * line converted to a valid document; otherwise no atif.jsonl is left at all (an old one would disagree) and the
 * first failure, naming its task, is returned.
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import type { TrajectoryEntry } from "../core/records.js";
import { errorMessage } from "../core/errors.js";
import { atifDocument, toAtif, type AtifOptions } from "../formats/atif.js";
import type { CallTokens } from "../core/rl_record.js";
import { wellFormed } from "../formats/well_formed.js";

export class AtifRunFile {
  private readonly tmp: string;
  private readonly fd: number;
  private error: string | undefined;
  private pending: string[] = [];

  constructor(
    private readonly path: string,
    private readonly opts: AtifOptions,
  ) {
    this.tmp = `${path}.tmp`;
    this.fd = openSync(this.tmp, "w");
  }

  /**
   * Converts one trajectory line (with its calls' engine tokens, when captured); after a failure the rest are not.
   * `checked: false` is for a line this run built itself: converted without the schema checks (see atifDocument).
   */
  add(entry: TrajectoryEntry, tokens?: Map<number, CallTokens>, { checked = true } = {}): void {
    if (this.error) return;
    try {
      const doc = checked ? atifDocument(entry, this.opts, tokens) : toAtif(entry, this.opts, tokens);
      const json = JSON.stringify(doc);
      // A lone surrogate (tool-call arguments parsed from a `\udXXX` escape) as U+FFFD: UTF-8 cannot hold it.
      this.pending.push(json.includes("\\ud") ? JSON.stringify(wellFormed(doc)) : json);
    } catch (err) {
      this.error = errorMessage(err);
      return;
    }
    if (this.pending.length >= 64) this.flush();
  }

  private flush(): void {
    if (this.pending.length) writeSync(this.fd, this.pending.join("\n") + "\n");
    this.pending = [];
  }

  /** Puts the file in place, or removes it and returns why it could not be written. */
  finish(): string | undefined {
    if (!this.error) this.flush();
    closeSync(this.fd);
    if (this.error) {
      rmSync(this.tmp, { force: true });
      rmSync(this.path, { force: true });
      return `${this.path} not written: ${this.error}`;
    }
    renameSync(this.tmp, this.path);
    return undefined;
  }
}
