/** The records' ISO times (src/agent/iso_time.ts): the same text as toISOString for every time. */
import { describe, expect, it } from "vitest";
import { isoTime } from "../src/agent/iso_time.js";

const iso = (ms: number) => new Date(ms).toISOString();

describe("isoTime", () => {
  it("writes what toISOString writes, across seconds, minutes, days, years and back in time", () => {
    const start = Date.UTC(2026, 11, 31, 23, 58, 59, 990);
    const times: number[] = [];
    for (let ms = start; ms < start + 130_000; ms += 7) times.push(ms);
    // Jumps between minutes far apart, and back: each must get its own minute's prefix.
    times.push(0, 59_999, 60_000, Date.UTC(2000, 1, 29, 12, 0, 0, 5), start, Date.UTC(9999, 11, 31, 23, 59, 59, 999));
    for (let i = 0; i < 2000; i++) times.push(Math.floor(Math.random() * 253_402_300_799_999));
    for (const ms of times) expect(isoTime(ms)).toBe(iso(ms));
  });

  it("leaves times toISOString writes differently to it: negative, fractional, six-digit years; invalid throws", () => {
    for (const ms of [-1, -86_400_001, 1.5, 253_402_300_800_000, 8.64e15, -8.64e15]) expect(isoTime(ms)).toBe(iso(ms));
    expect(() => isoTime(Number.NaN)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });
});
