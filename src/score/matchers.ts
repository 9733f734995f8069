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

const EDGE_PUNCTUATION = /^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu;

/** Lower case, whitespace runs as one space, punctuation and symbols stripped from both ends. */
export function normalizeAnswer(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").replace(EDGE_PUNCTUATION, "");
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

/** Every number in a text, in order (for `number` matches against prose answers). */
function numbersIn(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:e[-+]?\d+)?%?/gi)) {
    if (!/\d/.test(m[0])) continue;
    const n = parseNumber(m[0]);
    if (n !== undefined) out.push(n);
  }
  return out;
}

/**
 * Letters and digits of scripts written with spaces between words: a match may not start or end inside a run of
 * them. Scripts without spaces (Chinese, Japanese, Thai, …) have no such edge to test, and match anywhere.
 */
const SPACED_WORD_CHAR =
  /[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Armenian}\p{Script=Georgian}\p{Nd}_]/u;

/** `needle` in `haystack` where it is not the middle of a longer word or number (both normalised). */
function includesWhole(haystack: string, needle: string): boolean {
  const word = (c: string | undefined) => c !== undefined && SPACED_WORD_CHAR.test(c);
  const startsWord = word(needle[0]);
  const endsWord = word(needle.at(-1));
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if (startsWord && word(haystack[at - 1])) continue;
    if (endsWord && word(haystack[end])) continue;
    return true;
  }
  return false;
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function matchExpected(expected: Expected, answer: string | null): MatchResult {
  const spec = ExpectedSchema.parse(expected);
  const { value, match, tolerance } =
    typeof spec === "string" ? { value: spec, match: "includes" as const, tolerance: undefined } : spec;
  const want = String(value);
  const got = answer ?? "";
  const says = (ok: boolean, how: string) => ({
    passed: ok,
    reason: `expected ${how} ${JSON.stringify(clip(want))}, got ${JSON.stringify(clip(got))}`,
  });
  if (answer === null) return { passed: false, reason: `expected ${JSON.stringify(clip(want))}, got no final answer` };
  switch (match) {
    case "exact":
      return says(normalizeAnswer(got) === normalizeAnswer(want), "exactly");
    case "includes":
      return says(includesWhole(normalizeAnswer(got), normalizeAnswer(want)), "an answer including");
    case "regex":
      return says(new RegExp(want).test(got), "a match of /regex/");
    case "number": {
      const target = parseNumber(want)!;
      const tol = tolerance ?? 0;
      const whole = parseNumber(got);
      const candidates = whole !== undefined ? [whole] : numbersIn(got);
      // A prose answer passes on its last number (the conclusion), as graders of numeric answers usually do.
      const last = candidates.at(-1);
      return says(
        last !== undefined && Math.abs(last - target) <= tol,
        tol ? `a number within ${tol} of` : "the number",
      );
    }
  }
}
