/** The digest of what a row is graded against (`score.criteria`): what changes it and what does not. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scoringCriteria } from "../src/score/criteria.js";

describe("scoringCriteria", () => {
  it("is undefined for a row that names no scorer, and a short sha256 otherwise", () => {
    expect(scoringCriteria({})).toBeUndefined();
    expect(scoringCriteria({ expected: "4" })).toMatch(/^sha256:[0-9a-f]{16}$/);
  });

  it("changes with the answer key, the verify command or the rubric; not with the order of keys", () => {
    const a = scoringCriteria({ expected: { any: ["4", "four"], mode: "contains" } });
    expect(scoringCriteria({ expected: { mode: "contains", any: ["4", "four"] } })).toBe(a);
    expect(scoringCriteria({ expected: { any: ["4", "five"], mode: "contains" } })).not.toBe(a);
    expect(scoringCriteria({ verify: "pytest -q" })).not.toBe(scoringCriteria({ verify: "pytest -q -x" }));
    expect(scoringCriteria({ rubric: "polite" })).not.toBe(scoringCriteria({ rubric: "polite and short" }));
    expect(scoringCriteria({ expected: "4" })).not.toBe(scoringCriteria({ rubric: "4" }));
  });

  it("changes with the content of the verify_files folder, file by file", () => {
    const make = (content: string) => {
      const dir = mkdtempSync(join(tmpdir(), "criteria-"));
      mkdirSync(join(dir, "tests"));
      writeFileSync(join(dir, "tests", "test_hidden.py"), content);
      return scoringCriteria({ verify: "pytest -q tests", verifyFiles: dir });
    };
    expect(make("assert f() == 4\n")).toBe(make("assert f() == 4\n"));
    expect(make("assert f() == 4\n")).not.toBe(make("assert f() == 5\n"));
  });
});
