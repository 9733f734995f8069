import { describe, expect, it } from "vitest";
import { groupThousands, tokenTotals, tokenTotalsText } from "../src/core/chat.js";

describe("token totals on the run's last line", () => {
  it("groups digits exactly as toLocaleString('en-US') does, without loading ICU", () => {
    const values = [0, 7, 12, 999, 1000, 1001, 12_345, 999_999, 1_000_000, 123_456_789, -5, -1234, -1_000_000];
    for (let x = 1; x < Number.MAX_SAFE_INTEGER / 7; x = x * 7 + 3) values.push(x, -x);
    values.push(Number.MAX_SAFE_INTEGER, 1.5, 2 ** 60);
    for (const x of values) expect(groupThousands(x), String(x)).toBe(x.toLocaleString("en-US"));
  });

  it("names every part of the total", () => {
    expect(tokenTotalsText(tokenTotals(1_234_567, 2_000, 34))).toBe(
      "1,236,601 tokens (agent 1,234,567, approver 2,000, judge 34)",
    );
  });
});
