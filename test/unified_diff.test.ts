/** tools/unified_diff.ts against Python's difflib (test/fixtures/difflib_cases.json, written by Python). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SequenceMatcher, splitLinesKeepEnds, unifiedDiff } from "../tools/unified_diff.js";

interface Case {
  a: string;
  b: string;
  diff: string;
  ratio: number;
  short?: boolean;
}
const { cases } = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/difflib_cases.json"), "utf8")) as {
  cases: Case[];
};

describe("unified_diff matches Python's difflib", () => {
  it("unified_diff text for every case (the large ones exercise the autojunk rule)", () => {
    expect(cases.length).toBeGreaterThan(50);
    for (const c of cases) expect(unifiedDiff(c.a, c.b, "f"), JSON.stringify([c.a, c.b])).toBe(c.diff);
  });

  it("SequenceMatcher.ratio over characters", () => {
    for (const c of cases) {
      const [a, b] = c.short ? [c.a.slice(0, 300), c.b.slice(0, 300)] : [c.a, c.b];
      expect(new SequenceMatcher([...a], [...b]).ratio()).toBeCloseTo(c.ratio, 12);
    }
  });

  it("splits lines as str.splitlines(keepends=True)", () => {
    expect(splitLinesKeepEnds("a\r\nb\rc\n\nd")).toEqual(["a\r\n", "b\r", "c\n", "\n", "d"]);
    expect(splitLinesKeepEnds("")).toEqual([]);
  });
});
