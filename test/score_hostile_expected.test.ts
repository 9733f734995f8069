/**
 * A hostile agent against `expected`: an answer that lists every candidate, negates the expected value, echoes the
 * question that holds it, hides it in another number (a sign, a decimal part, an invisible character), and the
 * true answers in their usual spellings (full-width digits, "42.0", thousands separators) that must still pass.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { matchExpected, type Expected } from "../src/score/matchers.js";
import { startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

const LIST = `The answer is one of ${Array.from({ length: 100 }, (_, i) => i + 1).join(", ")}.`;
const pass = (e: Expected, answer: string, prompt?: string) => matchExpected(e, answer, prompt).passed;

describe("a plain number is matched as a number", () => {
  it("not found inside another number: a sign, a decimal part, a thousands group", () => {
    expect(pass("42", "The answer is -42.")).toBe(false);
    expect(pass("42", "The answer is −42.")).toBe(false); // U+2212 MINUS SIGN
    expect(pass("42", "The answer is 42.5.")).toBe(false);
    expect(pass("42", "The answer is 1.42")).toBe(false);
    expect(pass("42", "It is 42,000 exactly")).toBe(false);
    expect(pass("3", "pi is 3.14")).toBe(false);
    expect(pass("42", "1\u200b42")).toBe(false); // reads as 142
    expect(pass("42 apples", "-42 apples")).toBe(false);
  });

  it("the same number in another spelling passes", () => {
    expect(pass("42", "The answer is 42.0")).toBe(true);
    expect(pass("42", "The answer is ４２.")).toBe(true); // full-width digits
    expect(pass("1234", "The total is 1,234.")).toBe(true);
    expect(pass("1,234", "The total is 1234.")).toBe(true);
    expect(pass("-42", "x = -42")).toBe(true);
    expect(pass("42", "pages 10-42")).toBe(true); // a hyphen between numbers is no sign
    expect(pass("42", "The answer is 42.")).toBe(true);
    expect(pass({ value: 42, match: "number" }, "The answer is ４２")).toBe(true);
  });

  it("a list of candidates names no answer; one number among the working does", () => {
    expect(pass("42", LIST)).toBe(false);
    expect(pass("42", "41 or 42 or 43")).toBe(false);
    expect(pass("42", "It is 42 / 43")).toBe(false);
    expect(pass("42", "42\n43\n44")).toBe(false);
    expect(pass("42", "6 × 7 = 42")).toBe(true);
    expect(pass("42", "It is 42 (6 times 7).")).toBe(true);
    expect(pass("42", "42, 42!")).toBe(true); // the same number twice is one answer
  });
});

describe("exact", () => {
  it("keeps a number's sign: -42 is not exactly 42; the same value is", () => {
    expect(pass({ value: "42", match: "exact" }, "-42")).toBe(false);
    expect(pass({ value: "42", match: "exact" }, "+42")).toBe(true);
    expect(pass({ value: "42", match: "exact" }, "42.0")).toBe(true);
    expect(pass({ value: "42", match: "exact" }, "42.5")).toBe(false);
    expect(pass({ value: "-42", match: "exact" }, "42")).toBe(false);
    expect(pass({ value: "-42", match: "exact" }, " -42. ")).toBe(true);
    expect(pass({ value: "-42", match: "exact" }, "(−42)")).toBe(true);
    expect(pass({ value: "42", match: "exact" }, "«42»!")).toBe(true);
    // A leading zero makes an identifier, not a quantity.
    expect(pass({ value: "02139", match: "exact" }, "2139")).toBe(false);
    expect(pass("02139", "The zip code is 2139.")).toBe(false);
    expect(pass("2139", "The zip code is 02139.")).toBe(false);
    expect(pass("02139", "The zip code is 02139.")).toBe(true);
    expect(pass("0.5", "It is 0.50")).toBe(true);
  });
});

describe("long answers", () => {
  it("are matched in bounded time", () => {
    const started = Date.now();
    expect(pass("42", `${"42 ".repeat(100_000)}43`)).toBe(false); // one list holding 43
    expect(pass("42", `${"41, ".repeat(100_000)}42`)).toBe(false);
    expect(pass("42", `${"42 x ".repeat(100_000)}43`)).toBe(true);
    const prompt = `Is it 42 or 41? ${"x".repeat(5_000)}`;
    expect(pass({ value: 42, match: "number" }, "Is it 42 or 41? ".repeat(50_000), prompt)).toBe(false);
    expect(pass("42", "Is it 42 or 41? ".repeat(50_000), prompt)).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("negations and echoes of the question", () => {
  it("a negated occurrence is no answer", () => {
    expect(pass("42", "The answer is not 42.")).toBe(false);
    expect(pass("42", "It isn't 42, it is 41.")).toBe(false);
    expect(pass("42", "x ≠ 42")).toBe(false);
    expect(pass("Paris", "The capital is not Paris.")).toBe(false);
    expect(pass({ value: 42, match: "number" }, "The answer is 41, not 42")).toBe(false);
    // … while a correction to the right value passes.
    expect(pass("42", "Not 41 but 42.")).toBe(true);
    expect(pass({ value: 42, match: "number" }, "Not 41: the answer is 42")).toBe(true);
  });

  it("the expected text found only in a copy of the question does not count", () => {
    const prompt = "Which is the capital of France: a) Paris b) London c) Berlin? Answer with the city name.";
    expect(pass("Paris", "a) Paris b) London c) Berlin", prompt)).toBe(false);
    expect(
      pass("Paris", "You asked: Which is the capital of France: a) Paris b) London c) Berlin? I don't know.", prompt),
    ).toBe(false);
    expect(pass("Paris", "Paris", prompt)).toBe(true);
    expect(pass("Paris", "The answer is a) Paris.", prompt)).toBe(true);
    const numeric = "Is 6 × 7 equal to 41 or 42? Give the number.";
    expect(pass("42", "Is 6 × 7 equal to 41 or 42? Hard to say.", numeric)).toBe(false);
    expect(pass({ value: 42, match: "number" }, "Is 6 × 7 equal to 41 or 42? Hard to say.", numeric)).toBe(false);
    expect(pass({ value: 42, match: "number" }, "6 × 7 = 42", numeric)).toBe(true);
    // Repeating the task's words before giving the answer itself passes.
    const file = "Create a file named greeting.txt containing 'hello eval' and read it back.";
    expect(
      pass("hello eval", "I created greeting.txt containing 'hello eval'; reading it back gives: hello eval", file),
    ).toBe(true);
    expect(pass("hello eval", "Done. What the tools returned:\n- 1|hello eval\n       2|", file)).toBe(true);
  });
});

describe("hostile answers in a batch run", () => {
  let agent: FakeOpenAI;
  const answers: Record<string, string> = {
    list: LIST,
    negated: "It is not 42.",
    echo: "Is 6 × 7 equal to 41 or 42? I cannot tell.",
    sign: "-42",
    honest: "6 × 7 = ４２.0",
  };
  beforeAll(async () => {
    agent = await startFakeOpenAI((req) => {
      const prompt: string = req.body.messages.find((m: any) => m.role === "user").content;
      return text(answers[/^\[(\w+)\]/.exec(prompt)![1]!]!);
    });
  });
  afterAll(async () => {
    await agent.close();
  });

  it("only the honest answer passes", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    const rows = Object.keys(answers).map((id) => ({
      id,
      prompt: `[${id}] Is 6 × 7 equal to 41 or 42? Give the number.`,
      expected: "42",
    }));
    writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const out = join(dir, "runs");
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      agent.baseURL,
      "--api-key",
      "k",
      "--output-dir",
      out,
      "--run-name",
      "x",
      "--progress",
      "none",
    ]);
    expect(r.stderr).not.toMatch(/internal error/);
    const lines = readJsonl(join(out, "x", "trajectories.jsonl"));
    expect(Object.fromEntries(lines.map((l) => [l.task_id, l.score.passed]))).toEqual({
      list: false,
      negated: false,
      echo: false,
      sign: false,
      honest: true,
    });
    const stats = JSON.parse(readFileSync(join(out, "x", "statistics.json"), "utf8"));
    expect(stats.scores).toMatchObject({ scored: 5, passed: 1, pass_rate: 0.2 });
  });
});
