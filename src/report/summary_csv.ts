/**
 * `summary.csv`: one row per task result (a trajectory or a failure) and epoch, rebuilt from the run's
 * files at the end of every invocation (reports.ts). The columns after `error` came later and are
 * appended, so scripts that read columns by position keep working:
 *   epoch     0..K-1 with --epochs K (0 in a run of one epoch)
 *   passed    true/false; empty when unscored (no scorer, a scorer undecided, or a failed task)
 *   score     the score value (0..1); empty when unscored
 *   scorers   each scorer of the row as name:verdict, sorted by name and joined with ";", the verdict
 *             pass, fail or unscored (e.g. "expected:pass;rubric:fail"); empty without scorers
 * A text cell starting with =, +, -, @, a tab or a CR starts with a ' (a spreadsheet would run it as a formula).
 */
import { closeSync, existsSync, fsyncSync, openSync, statSync, writeSync } from "node:fs";
import { repairTornTail } from "../store/jsonl_file.js";
import type { ScoreRecord, StoredFailureRecord, TrajectoryEntry } from "../core/records.js";

export const SUMMARY_COLUMNS = [
  "task_id",
  "prompt_index",
  "outcome",
  "completed",
  "partial",
  "api_calls",
  "tool_calls",
  "tool_failures",
  "prompt_tokens",
  "completion_tokens",
  "duration_ms",
  "verify_passed",
  "toolsets",
  "error",
  "epoch",
  "passed",
  "score",
  "scorers",
] as const;

export type SummaryColumn = (typeof SUMMARY_COLUMNS)[number];
/** One CSV row; `null` cells are written empty (e.g. verify_passed of a task without verify). */
export type SummaryRow = Record<SummaryColumn, string | number | boolean | null>;

const MAX_ERROR_CHARS = 500;

function shortError(error: string | undefined): string {
  if (!error) return "";
  const one = error.replace(/\s+/g, " ").trim();
  return one.length > MAX_ERROR_CHARS ? `${one.slice(0, MAX_ERROR_CHARS - 1)}…` : one;
}

/** The scorers' verdicts in one cell: "expected:pass;rubric:fail" (sorted by name; unscored for undecided). */
export function scorersCell(score: Pick<ScoreRecord, "scorers"> | undefined): string {
  const verdict = (p: boolean | null) => (p === null ? "unscored" : p ? "pass" : "fail");
  return (score?.scorers ?? [])
    .map((s) => `${s.name}:${verdict(s.passed)}`)
    .sort()
    .join(";");
}

export function summaryRowFromEntry(entry: TrajectoryEntry): SummaryRow {
  let calls = 0;
  let failures = 0;
  for (const s of Object.values(entry.tool_stats ?? {})) {
    calls += s.count;
    failures += s.failure;
  }
  return {
    task_id: entry.task_id,
    prompt_index: entry.prompt_index,
    outcome: entry.outcome,
    completed: entry.completed,
    partial: entry.partial,
    api_calls: entry.api_calls,
    tool_calls: calls,
    tool_failures: failures,
    prompt_tokens: entry.usage?.prompt_tokens ?? 0,
    completion_tokens: entry.usage?.completion_tokens ?? 0,
    duration_ms: Math.round(entry.duration_ms),
    verify_passed: entry.verify ? entry.verify.passed : null,
    toolsets: (entry.toolsets_used ?? []).join(";"),
    error: shortError(entry.error),
    epoch: entry.epoch ?? 0,
    passed: entry.score?.passed ?? null,
    score: entry.score && entry.score.passed !== null ? entry.score.value : null,
    scorers: scorersCell(entry.score),
  };
}

export function summaryRowFromFailure(rec: StoredFailureRecord): SummaryRow {
  return {
    task_id: rec.task_id,
    prompt_index: rec.prompt_index ?? null,
    outcome: rec.outcome,
    completed: false,
    partial: false,
    api_calls: rec.api_calls ?? 0,
    tool_calls: 0,
    tool_failures: 0,
    prompt_tokens: rec.usage?.prompt_tokens ?? 0,
    completion_tokens: rec.usage?.completion_tokens ?? 0,
    duration_ms: rec.duration_ms === undefined ? null : Math.round(rec.duration_ms),
    verify_passed: null,
    toolsets: (rec.toolsets_used ?? []).join(";"),
    error: shortError(rec.error),
    epoch: (rec as { epoch?: number }).epoch ?? 0,
    // A task that failed for infrastructure reasons is unscored, never a 0.
    passed: null,
    score: null,
    scorers: "",
  };
}

/**
 * One CSV cell as csv-stringify 6 writes it with its defaults and `escape_formulas` (the library this file used):
 * empty for null, `true`/`false`, numbers as `String(n)`, quoted (inner quotes doubled) when the text holds a comma,
 * a quote, a CR or an LF. By hand because the library's per-row set-up (options, column normalisation, casts) was
 * most of summary.csv's cost.
 */
function csvCell(value: unknown): string {
  if (value === null || value === undefined || value === "") return "";
  const text =
    typeof value === "string"
      ? value
      : typeof value === "boolean"
        ? String(value)
        : typeof value === "object"
          ? JSON.stringify(value) // a hand-edited line's odd value, as the library casts it
          : `${value as number}`;
  // A text cell a spreadsheet would run as a formula (a task id or an error from the model or a dataset) gets a
  // leading quote (OWASP's CSV injection advice); numbers and booleans are written as they are.
  const safe = typeof value === "string" && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One row as its CSV line, newline included. */
export function summaryCsvLine(row: SummaryRow): string {
  let line = csvCell(row[SUMMARY_COLUMNS[0]]);
  for (let i = 1; i < SUMMARY_COLUMNS.length; i++) line += `,${csvCell(row[SUMMARY_COLUMNS[i]!])}`;
  return `${line}\n`;
}

const HEADER_LINE = `${SUMMARY_COLUMNS.join(",")}\n`;

/** The CSV text of `rows`, header included. */
export function formatSummaryCsv(rows: readonly SummaryRow[]): string {
  return HEADER_LINE + rows.map(summaryCsvLine).join("");
}

/** Appends rows to summary.csv (256 rows a write, the rest at close); the header only when the file is new or empty. */
export class SummaryCsvWriter {
  private fd: number;
  private pending = "";
  private pendingRows = 0;

  constructor(readonly path: string) {
    repairTornTail(path);
    const fresh = !existsSync(path) || statSync(path).size === 0;
    this.fd = openSync(path, "a");
    if (fresh) writeSync(this.fd, HEADER_LINE);
  }

  write(row: SummaryRow): void {
    this.pending += summaryCsvLine(row);
    if (++this.pendingRows >= 256) this.flush();
  }

  private flush(): void {
    if (this.pending) writeSync(this.fd, this.pending);
    this.pending = "";
    this.pendingRows = 0;
  }

  close(): void {
    if (this.fd < 0) return;
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = -1;
  }
}
