import { describe, expect, it } from "vitest";
import { matchExpected, normalizeAnswer, parseNumber, ExpectedSchema } from "../src/score/matchers.js";
import { mcnemar, passAtK, passHatK, wilson } from "../src/score/metrics.js";
import { combineScores, runScoreMetrics, scoreMetrics, type ScoredSample } from "../src/score/summary.js";

describe("expected matchers", () => {
  it("a plain string is a normalised includes match: case, whitespace and edge punctuation ignored", () => {
    expect(matchExpected("Paris", "The capital is  PARIS.").passed).toBe(true);
    expect(matchExpected("'new   york'", "It is New York!").passed).toBe(true);
    expect(matchExpected("Paris", "London").passed).toBe(false);
    expect(matchExpected("Paris", null)).toEqual({ passed: false, reason: 'expected "Paris", got no final answer' });
    expect(normalizeAnswer("  «Hello,  World»!! ")).toBe("hello, world");
  });

  it("includes matches whole words and numbers, not part of another", () => {
    // A plain substring passed "1420" for 42 and "this" for "hi": a false pass for any short answer.
    expect(matchExpected("42", "The answer is 1420.").passed).toBe(false);
    expect(matchExpected("hi", "this is it").passed).toBe(false);
    expect(matchExpected("4", "3.14").passed).toBe(false);
    expect(matchExpected("42", "The answer is 42.").passed).toBe(true);
    expect(matchExpected("42", "42").passed).toBe(true);
    expect(matchExpected("hi", "Hi! How are you?").passed).toBe(true);
    expect(matchExpected("new york", "It is New York, of course").passed).toBe(true);
    expect(matchExpected({ value: "42", match: "includes" }, "x=42;").passed).toBe(true);
    // An expected text that starts or ends with a symbol is matched as written at that end.
    expect(matchExpected("$5", "it costs $50").passed).toBe(false);
    expect(matchExpected("#1", "ranked #1!").passed).toBe(true);
    // Scripts written without spaces between words are matched inside a run of letters.
    expect(matchExpected("東京", "日本の首都は東京です").passed).toBe(true);
    expect(matchExpected("Москва", "Столица — Москва.").passed).toBe(true);
  });

  it("exact compares the normalised whole answer", () => {
    expect(matchExpected({ value: "42", match: "exact" }, " 42. ").passed).toBe(true);
    expect(matchExpected({ value: "42", match: "exact" }, "about 42").passed).toBe(false);
  });

  it("regex tests the raw answer", () => {
    expect(matchExpected({ value: "^\\d{3}-\\d{4}$", match: "regex" }, "555-1234").passed).toBe(true);
    expect(matchExpected({ value: "^\\d{3}-\\d{4}$", match: "regex" }, "call 555-1234").passed).toBe(false);
  });

  it("number compares the answer's number (or a prose answer's last number) within the tolerance", () => {
    expect(matchExpected({ value: 3.14, match: "number", tolerance: 0.01 }, "3.141").passed).toBe(true);
    expect(matchExpected({ value: "1234", match: "number" }, "The total is 1,234.").passed).toBe(true);
    expect(matchExpected({ value: 10, match: "number" }, "between 5 and 11").passed).toBe(false);
    expect(matchExpected({ value: 10, match: "number" }, "no digits here").passed).toBe(false);
    expect(parseNumber("-4e3")).toBe(-4000);
    expect(parseNumber("50%")).toBe(50);
    expect(parseNumber("12abc")).toBeUndefined();
  });

  it("the failure reason says expected vs got", () => {
    expect(matchExpected({ value: "blue", match: "exact" }, "red").reason).toBe('expected exactly "blue", got "red"');
  });

  it("rejects malformed specs with a reason", () => {
    expect(ExpectedSchema.safeParse({ value: "a", match: "fuzzy" }).success).toBe(false);
    expect(ExpectedSchema.safeParse({ value: "x", match: "number" }).success).toBe(false);
    expect(ExpectedSchema.safeParse({ value: "(", match: "regex" }).success).toBe(false);
    expect(ExpectedSchema.safeParse({ value: "a", tolerance: 1 }).success).toBe(false);
    expect(ExpectedSchema.safeParse("").success).toBe(false);
  });
});

describe("metrics", () => {
  it("pass@k and pass^k match hand-computed values", () => {
    expect(passAtK(3, 1, 1)).toBeCloseTo(1 / 3, 12);
    expect(passAtK(3, 1, 2)).toBeCloseTo(2 / 3, 12); // 1 - C(2,2)/C(3,2)
    expect(passAtK(3, 0, 3)).toBe(0);
    expect(passAtK(3, 2, 2)).toBe(1); // C(1,2) = 0
    expect(passHatK(3, 2, 2)).toBeCloseTo(1 / 3, 12); // C(2,2)/C(3,2)
    expect(passHatK(3, 1, 2)).toBe(0);
    expect(passHatK(4, 4, 4)).toBe(1);
    expect(() => passAtK(2, 1, 3)).toThrow(RangeError);
  });

  it("Wilson interval for 8/10 is [0.490, 0.943]; none for n = 0", () => {
    const [lo, hi] = wilson(8, 10)!;
    expect(lo).toBeCloseTo(0.4902, 3);
    expect(hi).toBeCloseTo(0.9433, 3);
    expect(wilson(0, 0)).toBeNull();
    expect(wilson(0, 5)![0]).toBe(0);
  });

  it("exact McNemar: b=1, c=9 gives p = 22/1024; no discordant pair gives 1", () => {
    expect(mcnemar(1, 9).twoSided).toBeCloseTo(22 / 1024, 12);
    expect(mcnemar(9, 1).twoSided).toBeCloseTo(22 / 1024, 12);
    expect(mcnemar(0, 0).twoSided).toBe(1);
    expect(mcnemar(5, 5).twoSided).toBe(1);
  });
});

describe("scores", () => {
  it("all named scorers must pass; one undecided scorer leaves the task unscored", () => {
    const yes = { name: "expected", passed: true, value: 1 };
    const no = { name: "verify", passed: false, value: 0 };
    const judgeDown = { name: "rubric", passed: null, value: null, reason: "judge failed" };
    expect(combineScores([yes, no]).passed).toBe(false);
    expect(combineScores([yes, { ...yes, name: "verify" }])).toMatchObject({ passed: true, value: 1 });
    expect(combineScores([yes, judgeDown])).toMatchObject({ passed: null, value: null });
    expect(combineScores([])).toMatchObject({ passed: null });
  });

  it("run metrics over mixed epochs: pass rate over scored samples only, pass@k averaged over tasks", () => {
    const s = (taskId: string, epoch: number, passed: boolean | null, level: string): ScoredSample => ({
      taskId,
      epoch,
      passed,
      groups: { "metadata.level": level },
    });
    const samples = [
      s("a", 0, true, "easy"),
      s("a", 1, true, "easy"),
      s("a", 2, false, "easy"),
      s("b", 0, false, "hard"),
      s("b", 1, false, "hard"),
      s("b", 2, true, "hard"),
      s("c", 0, null, "hard"),
      s("c", 1, null, "hard"),
      s("c", 2, null, "hard"),
    ];
    const m = runScoreMetrics(samples, 3);
    expect(m).toMatchObject({ scored: 6, unscored: 3, passed: 3, pass_rate: 0.5 });
    // a: n=3 c=2; b: n=3 c=1; c has no scored epoch and is left out.
    expect(m.pass_at_k["1"]).toBeCloseTo((2 / 3 + 1 / 3) / 2, 12);
    expect(m.pass_at_k["2"]).toBeCloseTo((1 + 2 / 3) / 2, 12);
    expect(m.pass_at_k["3"]).toBeCloseTo(1, 12);
    expect(m.pass_hat_k["2"]).toBeCloseTo((1 / 3 + 0) / 2, 12);
    expect(m.pass_hat_k["3"]).toBe(0);
    expect(m.ci95![0]).toBeLessThanOrEqual(0.5);
    expect(m.groups!["metadata.level"]!["easy"]).toMatchObject({ scored: 3, passed: 2 });
    expect(m.groups!["metadata.level"]!["hard"]).toMatchObject({ scored: 3, unscored: 3, passed: 1 });
  });

  it("one epoch uses the Wilson interval", () => {
    const samples: ScoredSample[] = Array.from({ length: 10 }, (_, i) => ({
      taskId: `t${i}`,
      epoch: 0,
      passed: i < 8,
    }));
    expect(scoreMetrics(samples, 1).ci95).toEqual(wilson(8, 10));
  });
});
