/**
 * Failures of one invocation grouped by reason for the end-of-run summary: a reason is the outcome plus the error
 * with the parts that differ from task to task (numbers, ids, quoted values, paths) blurred, so 300 timeouts or
 * 40 identical 401s are one line with a count and one real example.
 */

export interface FailureReason {
  outcome: string;
  count: number;
  exampleTaskId: string;
  exampleError: string;
}

const MAX_EXAMPLE = 200;

/** The part of an error that names its cause, with task-specific details blurred. */
export function reasonKey(outcome: string, error: string): string {
  const firstLine = error.split("\n", 1)[0] ?? "";
  const blurred = firstLine
    .replace(/'[^']*'|"[^"]*"|`[^`]*`/g, "'…'")
    .replace(/(?:\/[\w.@+-]+)+\/?/g, "/…")
    .replace(/\b[0-9a-f]{8,}\b/gi, "#")
    .replace(/\d+(?:\.\d+)?/g, "N")
    .replace(/\s+/g, " ")
    .trim();
  return `${outcome}\u0000${blurred.slice(0, 160)}`;
}

export class FailureReasons {
  private readonly groups = new Map<string, FailureReason>();

  add(taskId: string, outcome: string, error: string | undefined): void {
    const text = error ?? "";
    const key = reasonKey(outcome, text);
    const group = this.groups.get(key);
    if (group) group.count++;
    else this.groups.set(key, { outcome, count: 1, exampleTaskId: taskId, exampleError: oneLine(text) });
  }

  /** Most frequent first. */
  list(): FailureReason[] {
    return [...this.groups.values()].sort((a, b) => b.count - a.count);
  }

  /** Lines for the console: up to `max` reasons, then how many more there are. */
  summary(max = 5): string[] {
    const all = this.list();
    const lines = all
      .slice(0, max)
      .map(
        (r) =>
          `  ${r.count} × ${r.outcome}: ${r.exampleError || "(no message)"}${r.count > 1 ? ` (e.g. task ${r.exampleTaskId})` : ` (task ${r.exampleTaskId})`}`,
      );
    if (all.length > max) lines.push(`  … and ${all.length - max} more reason(s)`);
    return lines;
  }
}

function oneLine(text: string): string {
  const line = (text.split("\n", 1)[0] ?? "").trim();
  return line.length > MAX_EXAMPLE ? `${line.slice(0, MAX_EXAMPLE)}…` : line;
}
