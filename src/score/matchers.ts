/**
 * The `expected` scorer's matchers: a row's expected answer against the agent's final answer.
 * A plain string means a normalised "includes" match (case, whitespace and edge punctuation ignored) of whole
 * words: "42" is not found in "1420", nor "hi" in "this".
 */
import * as z from "zod";

export const MATCH_KINDS = ["exact", "includes", "regex", "number"] as const;
export type MatchKind = (typeof MATCH_KINDS)[number];

export const ExpectedSchema = z.union([
  z.string().min(1),
  z
    .object({
      value: z.union([z.string().min(1), z.number().finite()]),
      match: z.enum(MATCH_KINDS).default("includes"),
      tolerance: z.number().finite().nonnegative().optional(),
    })
    .strict()
    .superRefine((e, ctx) => {
      if (e.tolerance !== undefined && e.match !== "number") {
        ctx.addIssue({ code: "custom", message: "'tolerance' applies only to match 'number'" });
      }
      if (e.match === "number" && parseNumber(String(e.value)) === undefined) {
        ctx.addIssue({ code: "custom", message: `'value' ${JSON.stringify(e.value)} is not a number` });
      }
      if (e.match === "regex") {
        try {
          new RegExp(String(e.value));
        } catch (err) {
          ctx.addIssue({
            code: "custom",
            message: `'value' is not a valid regular expression: ${(err as Error).message}`,
          });
        }
      }
    }),
]);
export type Expected = z.input<typeof ExpectedSchema>;

export interface MatchResult {
  passed: boolean;
  /** What was compared, for the failure message: expected vs got. */
  reason: string;
}

/** Punctuation and symbols at either end, but a number's sign: "-42" is not "42". */
const EDGE_PUNCTUATION = /^(?:(?![-+]\d)[\s\p{P}\p{S}])+|[\s\p{P}\p{S}]+$/gu;

/** Folded as compared (see fold), punctuation and symbols stripped from both ends but a leading sign. */
export function normalizeAnswer(text: string): string {
  return fold(text).replace(EDGE_PUNCTUATION, "");
}

/** A number written in the usual ways: `1,234.5`, `-3`, `4e3`, `50%` (= 50). Undefined when none. */
export function parseNumber(text: string): number | undefined {
  const cleaned = text
    .trim()
    .replace(/(?<=\d),(?=\d{3}\b)/g, "")
    .replace(/%$/, "");
  if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(cleaned)) return undefined;
  const n = Number(cleaned);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * A number that reads as a quantity: with a leading zero (`007`, `02139`) it is an identifier, compared as text,
 * so `02139` is neither `2139` nor found in `the zip is 2139`.
 */
function quantity(text: string): number | undefined {
  return /^[-+]?0\d/.test(text.trim()) ? undefined : parseNumber(text);
}

/**
 * Letters and digits of scripts written with spaces between words: a match may not start or end inside a run of
 * them. Scripts without spaces (Chinese, Japanese, Thai, …) have no such edge to test, and match anywhere.
 */
const SPACED_WORD_CHAR =
  /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Armenian}\p{Script=Georgian}\p{Nd}_]/u;

/**
 * The text as it is compared: compatibility forms folded (full-width digits, ligatures), invisible format
 * characters dropped (a zero-width space must not split "142" into "1" and "42"), lower case, whitespace runs as
 * one space. Positions in it are what echoes and negations are looked up by.
 */
function fold(text: string): string {
  return text
    .normalize("NFKC")
    .replace(/\p{Cf}/gu, "")
    .replace(/\u2212/g, "-")
    .toLowerCase()
    .replace(/\s+/g, " ");
}

/**
 * A number as written in prose: a sign only where it is no hyphen (not after a letter or digit), thousands groups
 * of three digits, a decimal part, an exponent, a percent sign; never part of a longer word or number ("42" is
 * not in "1420", "1.42", "42.5", "42nd" or "-42").
 */
const NUMBER_TOKEN =
  /(?<![\p{L}\p{N}_])(?<!\d[.,])(?:(?<![\p{L}\p{N}_])[-+])?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:e[-+]?\d+)?(?![\p{L}\p{N}_])(?!\.\d)%?/giu;

interface Found {
  start: number;
  end: number;
  value?: number;
}

function numberTokens(folded: string): Found[] {
  const out: Found[] = [];
  for (const m of folded.matchAll(NUMBER_TOKEN)) {
    const value = quantity(m[0]);
    if (value !== undefined) out.push({ start: m.index, end: m.index + m[0].length, value });
  }
  return out;
}

/** The folded prompt, and whether it contains a text (remembered: a repetitive answer asks the same again). */
interface Prompt {
  text: string;
  has(part: string): boolean;
}

function promptOf(text: string): Prompt {
  const seen = new Map<string, boolean>();
  return {
    text,
    has(part) {
      let r = seen.get(part);
      if (r === undefined) seen.set(part, (r = text.includes(part)));
      return r;
    },
  };
}

/** Context an occurrence needs around it, copied from the prompt as well, to be an echo of the task. */
const ECHO_CONTEXT = 12;

/**
 * Whether `answer[start, end)` is inside text copied from the prompt with at least ECHO_CONTEXT characters around
 * it: "a) paris b) london" repeats the options, "paris" alone or "the answer is a) paris" answers.
 */
function echoed(answer: string, { start, end }: Found, prompt: Prompt): boolean {
  if (!prompt.text || !prompt.has(answer.slice(start, end))) return false;
  // The copied spans around an occurrence shrink on one side as they grow on the other: one pass over the left.
  let right = Math.min(ECHO_CONTEXT, answer.length - end);
  for (let left = 0; left <= Math.min(ECHO_CONTEXT, start); left++) {
    while (right >= 0 && !prompt.has(answer.slice(start - left, end + right))) right--;
    if (right < 0) return false;
    if (left + right >= ECHO_CONTEXT) return true;
  }
  return false;
}

/** Words that deny what follows them: "not 42", "isn't paris", "≠ 42", "rather than 42". */
const NEGATION = /(?:\b(?:not|no|never|nor)|n['’]t|≠|!=|\brather than|\binstead of|\bother than)\s*$/u;

function negated(answer: string, { start }: Found): boolean {
  return NEGATION.test(answer.slice(Math.max(0, start - 20), start));
}

/** What may stand between the items of a list of numbers: "1, 2, … 100", "41 or 42", "42 / 43", one a line. */
const LIST_GAP = /^(?:[\s,;/|…]|\.{2,}|\bor\b|\band\b)*$/u;

/**
 * For each number, whether it is one item of a list holding another value: a hedge, not an answer. One pass: the
 * numbers linked by LIST_GAP form runs, and a run with two values hedges all of its items.
 */
function hedges(answer: string, tokens: readonly Found[]): boolean[] {
  const out = new Array<boolean>(tokens.length).fill(false);
  let runStart = 0;
  for (let i = 0; i <= tokens.length; i++) {
    const linked = i > 0 && i < tokens.length && LIST_GAP.test(answer.slice(tokens[i - 1]!.end, tokens[i]!.start));
    if (i > 0 && !linked) {
      const run = tokens.slice(runStart, i);
      if (run.some((t) => t.value !== run[0]!.value)) out.fill(true, runStart, i);
      runStart = i;
    }
  }
  return out;
}

/** Whether an occurrence is the answer's own word: not denied, not a copy of the task's text. */
const says = (answer: string, f: Found, prompt: Prompt) => !negated(answer, f) && !echoed(answer, f, prompt);

/** `needle` in `haystack` where it is not the middle of a longer word or number (both folded). */
function occurrences(haystack: string, needle: string): Found[] {
  const word = (c: string | undefined) => c !== undefined && SPACED_WORD_CHAR.test(c);
  const digit = (c: string | undefined) => c !== undefined && /\d/.test(c);
  const startsWord = word(needle[0]);
  const endsWord = word(needle.at(-1));
  const out: Found[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    const before = haystack[at - 1];
    if (startsWord && word(before)) continue;
    if (digit(needle[0]) && /[.,]/.test(before ?? "") && digit(haystack[at - 2])) continue; // "1.42", "1,42"
    if (digit(needle[0]) && /[-+]/.test(before ?? "") && !word(haystack[at - 2])) continue; // "-42", not "10-42"
    if (endsWord && word(haystack[end])) continue;
    if (digit(needle.at(-1)) && /[.,]/.test(haystack[end] ?? "") && digit(haystack[end + 1])) continue; // "42.5"
    out.push({ start: at, end });
  }
  return out;
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * The answer against the row's `expected`. `prompt` is the task's prompt: an occurrence inside a copy of it is
 * the question repeated, not an answer. See the README ("Dataset and output") for the rules.
 */
export function matchExpected(expected: Expected, answer: string | null, prompt = ""): MatchResult {
  const spec = ExpectedSchema.parse(expected);
  const { value, match, tolerance } =
    typeof spec === "string" ? { value: spec, match: "includes" as const, tolerance: undefined } : spec;
  const want = String(value);
  const got = answer ?? "";
  const verdict = (ok: boolean, how: string) => ({
    passed: ok,
    reason: `expected ${how} ${JSON.stringify(clip(want))}, got ${JSON.stringify(clip(got))}`,
  });
  if (answer === null) return { passed: false, reason: `expected ${JSON.stringify(clip(want))}, got no final answer` };
  const text = fold(got);
  const task = promptOf(fold(prompt));
  switch (match) {
    case "exact": {
      // Two numbers are the same answer when their values are: "+42", "42.0" and "42" (not "-42").
      const [a, b] = [normalizeAnswer(got), normalizeAnswer(want)];
      const [x, y] = [quantity(a), quantity(b)];
      return verdict(x !== undefined && y !== undefined ? x === y : a === b, "exactly");
    }
    case "includes": {
      const needle = normalizeAnswer(want);
      // The sign is part of a number (edge punctuation is not stripped from it): "-42" is not 42.
      const target = quantity(fold(want).trim()) ?? quantity(needle);
      if (target !== undefined) {
        // A number: any spelling of its value ("42.0", "1,234", "４２"), once, as the answer's own and not as
        // one item of a list of candidates.
        const tokens = numberTokens(text);
        const hedged = hedges(text, tokens);
        const ok = tokens.some((t, i) => t.value === target && !hedged[i] && says(text, t, task));
        return verdict(ok, "an answer including the number");
      }
      return verdict(
        occurrences(text, needle).some((f) => says(text, f, task)),
        "an answer including",
      );
    }
    case "regex":
      return verdict(new RegExp(want).test(got), "a match of /regex/");
    case "number": {
      const target = parseNumber(want)!;
      const tol = tolerance ?? 0;
      const whole = parseNumber(fold(got).trim());
      // A prose answer passes on its last number (the conclusion), as graders of numeric answers usually do;
      // a number it denies ("41, not 42") or that is part of a copy of the task is not its conclusion.
      const last = whole ?? numberTokens(text).findLast((t) => says(text, t, task))?.value;
      return verdict(
        last !== undefined && Math.abs(last - target) <= tol,
        tol ? `a number within ${tol} of` : "the number",
      );
    }
  }
}
