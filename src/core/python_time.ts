/** Timestamps in the form the original's Python writes them. */

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * Python's `datetime.now().isoformat()`: naive local time, `2026-01-15T10:30:00.123000`, the fraction left
 * out when it is zero (as Python does).
 */
export function pythonLocalIsoformat(d: Date = new Date()): string {
  const base = `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const ms = d.getMilliseconds();
  return ms === 0 ? base : `${base}.${pad(ms * 1000, 6)}`;
}
