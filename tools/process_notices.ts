/**
 * Notices about background processes started with `notify_on_complete` or `watch_patterns`, delivered as
 * the original Hermes delivers them in its CLI and gateway: once the agent has answered, each pending event
 * becomes the next user turn, `[IMPORTANT: Background process … completed (exit code N).…]` or
 * `[IMPORTANT: Background process … matched watch pattern "…".…]`. A completion the agent already saw
 * through process poll, log or wait is not announced again. Watch matches follow the original's rate limit:
 * one per 15 s per process; a match inside that window is dropped and counts one strike for the window;
 * after 3 strike windows in a row the patterns are switched off and the process is announced once when it ends.
 *
 * The original's batch runner delivers nothing (its queue is drained only by the CLI and the gateway); here
 * the task waits for what a user of the CLI would be told, up to 10 minutes per answer and within the task's time.
 */
import type { Environment } from "./environments/base.js";
import { sleep } from "../src/core/abort.js";

const WATCH_MIN_INTERVAL_MS = 15_000;
const WATCH_STRIKE_LIMIT = 3;
const NOTICE_OUTPUT_CHARS = 2000;
const MATCHED_LINES = 20;
const POLL_START_MS = 250;
const POLL_MAX_MS = 2000;
/** Longest wait for a notice after one answer (the foreground terminal's limit), so a long job cannot use up the task's time. */
export const NOTICE_WAIT_MS = 600_000;

interface Watched {
  id: string;
  command: string;
  notifyOnComplete: boolean;
  patterns: string[];
  /** Output bytes already scanned for patterns. */
  scannedBytes: number;
  matched: boolean;
  disabled: boolean;
  cooldownUntil: number;
  strikeCandidate: boolean;
  strikes: number;
  suppressed: number;
  ended: boolean;
}

/** The original's escape-sequence stripping (CSI, OSC and two-character escapes). */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g, "");
}

function completionText(w: Watched, exitCode: number | null, output: string): string {
  return `[IMPORTANT: Background process ${w.id} completed (exit code ${exitCode ?? "None"}).\nCommand: ${w.command}\nOutput:\n${output}]`;
}

export class ProcessNotices {
  private readonly watched = new Map<string, Watched>();
  private readonly consumed = new Set<string>();
  private readonly queue: string[] = [];

  /** Records a background process whose end or output the agent asked to be told about. */
  watch(id: string, command: string, flags: { notifyOnComplete: boolean; watchPatterns?: readonly string[] }): void {
    if (!flags.notifyOnComplete && !flags.watchPatterns?.length) return;
    this.watched.set(id, {
      id,
      command,
      notifyOnComplete: flags.notifyOnComplete,
      patterns: [...(flags.watchPatterns ?? [])],
      scannedBytes: 0,
      matched: false,
      disabled: false,
      cooldownUntil: 0,
      strikeCandidate: false,
      strikes: 0,
      suppressed: 0,
      ended: false,
    });
  }

  /** The agent saw the process end (process poll, log or wait): its completion is not announced. */
  markConsumed(id: string): void {
    this.consumed.add(id);
  }

  /**
   * The next notice for the agent, waiting while a process it asked about is still running (one with
   * notify_on_complete, or with watch patterns that have not matched yet); undefined when nothing is left to
   * tell. Stops waiting after `maxWaitMs` or when `signal` aborts.
   */
  async next(
    getEnv: () => Promise<Environment>,
    signal?: AbortSignal,
    maxWaitMs = NOTICE_WAIT_MS,
  ): Promise<string | undefined> {
    if (this.watched.size === 0 && this.queue.length === 0) return undefined;
    const env = await getEnv();
    const deadline = Date.now() + maxWaitMs;
    let delay = POLL_START_MS;
    for (;;) {
      await this.check(env);
      const notice = this.queue.shift();
      if (notice !== undefined) return notice;
      const waitingFor = [...this.watched.values()].some(
        (w) => !w.ended && (w.notifyOnComplete || (!w.matched && !w.disabled)),
      );
      if (!waitingFor || signal?.aborted || Date.now() >= deadline) return undefined;
      await sleep(Math.min(delay, Math.max(0, deadline - Date.now())), signal).catch(() => {});
      delay = Math.min(delay * 2, POLL_MAX_MS);
    }
  }

  private async check(env: Environment): Promise<void> {
    for (const w of this.watched.values()) {
      if (w.ended) continue;
      const status = await env.pollBackground(w.id).catch(() => undefined);
      if (!status) {
        w.ended = true;
        continue;
      }
      this.scan(w, status.output, status.outputBytes);
      if (status.running) continue;
      w.ended = true;
      if (w.notifyOnComplete && !this.consumed.has(w.id)) {
        this.queue.push(
          completionText(
            w,
            status.killed ? -15 : status.exitCode,
            stripAnsi(status.output.slice(-NOTICE_OUTPUT_CHARS)),
          ),
        );
      }
    }
  }

  /** Looks for the patterns in output not seen before, as the original scans each new chunk. */
  private scan(w: Watched, output: string, outputBytes: number | undefined): void {
    if (w.patterns.length === 0 || w.disabled) return;
    const total = outputBytes ?? Buffer.byteLength(output);
    const fresh = total - w.scannedBytes;
    if (fresh <= 0) return;
    const bytes = Buffer.from(output);
    const text = bytes.subarray(Math.max(0, bytes.length - fresh)).toString("utf8");
    w.scannedBytes = total;
    const lines: string[] = [];
    let pattern: string | undefined;
    for (const line of text.split(/\r\n|\r|\n/)) {
      const hit = w.patterns.find((p) => line.includes(p));
      if (hit === undefined) continue;
      lines.push(line.trimEnd());
      pattern ??= hit;
    }
    if (lines.length > 0) this.matched(w, pattern!, lines);
  }

  private matched(w: Watched, pattern: string, lines: string[]): void {
    const now = Date.now();
    if (w.cooldownUntil && now < w.cooldownUntil) {
      w.suppressed += lines.length;
      if (w.strikeCandidate) return;
      w.strikeCandidate = true;
      if (++w.strikes < WATCH_STRIKE_LIMIT) return;
      w.disabled = true;
      w.notifyOnComplete = true;
      this.queue.push(
        `[IMPORTANT: Watch patterns disabled for process ${w.id} \u2014 ${WATCH_STRIKE_LIMIT} consecutive rate-limit windows triggered ` +
          `(min spacing ${WATCH_MIN_INTERVAL_MS / 1000}s). Falling back to notify_on_complete semantics; you'll get exactly one notification when the process exits.]`,
      );
      return;
    }
    if (w.cooldownUntil && !w.strikeCandidate) w.strikes = 0;
    w.strikeCandidate = false;
    w.cooldownUntil = now + WATCH_MIN_INTERVAL_MS;
    w.matched = true;
    const suppressed = w.suppressed;
    w.suppressed = 0;
    let output = lines.slice(0, MATCHED_LINES).join("\n");
    if (output.length > 2000) output = `${output.slice(0, 2000)}\n...(truncated)`;
    let text = `[IMPORTANT: Background process ${w.id} matched watch pattern "${pattern}".\nCommand: ${w.command}\nMatched output:\n${output}`;
    if (suppressed) text += `\n(${suppressed} earlier matches were suppressed by rate limit)`;
    this.queue.push(`${text}]`);
  }
}
