/**
 * `new Date(ms).toISOString()` for the times of a run's records, with the date and minute made once per minute:
 * a task records two times per model call, and V8's toISOString (a runtime call through its date cache) cost
 * more than the rest of the call's record. Times outside years 0–9999, fractional or negative ones take
 * toISOString itself, as does an invalid time (it throws the same RangeError).
 */
const MINUTE_MS = 60_000;
/** 10000-01-01T00:00:00.000Z: from there on, toISOString writes a six-digit year. */
const YEAR_10000_MS = 253_402_300_800_000;

let minuteStart = Number.NaN;
/** `YYYY-MM-DDTHH:MM:` of the minute starting at `minuteStart`. */
let minutePrefix = "";

export function isoTime(ms: number): string {
  let within = ms - minuteStart;
  if (!(within >= 0 && within < MINUTE_MS)) {
    if (!Number.isInteger(ms) || ms < 0 || ms >= YEAR_10000_MS) return new Date(ms).toISOString();
    minuteStart = ms - (ms % MINUTE_MS);
    minutePrefix = new Date(minuteStart).toISOString().slice(0, 17);
    within = ms - minuteStart;
  }
  const seconds = Math.floor(within / 1000);
  const millis = within % 1000;
  return `${minutePrefix}${seconds < 10 ? "0" : ""}${seconds}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
}
