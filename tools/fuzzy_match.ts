/**
 * patch's matching of `old_string`, as the original Hermes matches it: a chain of ever looser strategies,
 * the first that finds anything wins. In order: exact, line_trimmed, whitespace_normalized,
 * indentation_flexible, escape_normalized, trimmed_boundary, unicode_normalized, block_anchor,
 * context_aware. More than one match without replace_all is refused; a loose match whose new_string
 * carries `\'` or `\"` that the file does not is refused as escape drift. Written from the original's
 * documented behaviour and replayed against its results (test/fixtures/hermes_file_tools.json).
 */
import { SequenceMatcher, splitLines } from "./unified_diff.js";

type Span = [start: number, end: number];
type Strategy = (content: string, pattern: string) => Span[];

export interface FuzzyReplace {
  /** The new content, or the old one when nothing was replaced. */
  content: string;
  count: number;
  strategy?: string;
  /** Where the first replaced text began in the old content. */
  start?: number;
  error?: string;
}

export const NO_MATCH_ERROR = "Could not find a match for old_string in the file";

const UNICODE_MAP: Record<string, string> = {
  "\u201c": '"',
  "\u201d": '"',
  "\u2018": "'",
  "\u2019": "'",
  "\u2014": "--",
  "\u2013": "-",
  "\u2026": "...",
  "\u00a0": " ",
};

function unicodeNormalize(text: string): string {
  let out = "";
  for (const ch of text) out += UNICODE_MAP[ch] ?? ch;
  return out;
}

/** difflib's ratio over characters (code points, as Python counts them). */
function similarity(a: string, b: string): number {
  return new SequenceMatcher([...a], [...b]).ratio();
}

/** Python's str.strip() / lstrip() whitespace. */
const strip = (s: string) => s.replace(/^\s+|\s+$/g, "");
const lstrip = (s: string) => s.replace(/^\s+/, "");

function exact(content: string, pattern: string): Span[] {
  const out: Span[] = [];
  for (let at = content.indexOf(pattern); at !== -1; at = content.indexOf(pattern, at + 1))
    out.push([at, at + pattern.length]);
  return out;
}

/** Character span of lines [from, to) of `lines` (joined by "\n"), the last newline excluded. */
function lineSpan(lines: readonly string[], from: number, to: number, contentLength: number): Span {
  let start = 0;
  for (let i = 0; i < from; i++) start += lines[i]!.length + 1;
  let end = start;
  for (let i = from; i < to; i++) end += lines[i]!.length + 1;
  end -= 1;
  return [start, Math.min(end, contentLength)];
}

/** Blocks of lines whose normalized form equals the normalized pattern, as spans of the original content. */
function lineBlocks(content: string, normalizedLines: readonly string[], normalizedPattern: string): Span[] {
  const lines = content.split("\n");
  const count = normalizedPattern.split("\n").length;
  const out: Span[] = [];
  for (let i = 0; i + count <= normalizedLines.length; i++) {
    if (normalizedLines.slice(i, i + count).join("\n") === normalizedPattern)
      out.push(lineSpan(lines, i, i + count, content.length));
  }
  return out;
}

function lineTrimmed(content: string, pattern: string): Span[] {
  return lineBlocks(content, content.split("\n").map(strip), pattern.split("\n").map(strip).join("\n"));
}

function indentationFlexible(content: string, pattern: string): Span[] {
  return lineBlocks(content, content.split("\n").map(lstrip), pattern.split("\n").map(lstrip).join("\n"));
}

const collapseBlanks = (s: string) => s.replace(/[ \t]+/g, " ");

function whitespaceNormalized(content: string, pattern: string): Span[] {
  const normalized = collapseBlanks(content);
  const found = exact(normalized, collapseBlanks(pattern));
  return found.length === 0 ? [] : mapCollapsedSpans(content, normalized, found);
}

/** Spans in the blank-collapsed copy back to the original, trailing blanks of a match included (as the original maps them). */
function mapCollapsedSpans(original: string, normalized: string, spans: readonly Span[]): Span[] {
  const toNorm: number[] = [];
  let o = 0;
  let n = 0;
  const blank = (c: string | undefined) => c === " " || c === "\t";
  while (o < original.length && n < normalized.length) {
    toNorm.push(n);
    if (original[o] === normalized[n]) {
      o++;
      n++;
    } else if (blank(original[o]) && normalized[n] === " ") {
      o++;
      if (o < original.length && !blank(original[o])) n++;
    } else {
      o++;
    }
  }
  while (o < original.length) {
    toNorm.push(normalized.length);
    o++;
  }
  const firstAt = new Map<number, number>();
  const lastAt = new Map<number, number>();
  toNorm.forEach((np, op) => {
    if (!firstAt.has(np)) firstAt.set(np, op);
    lastAt.set(np, op);
  });
  return spans.map(([ns, ne]) => {
    const start = firstAt.get(ns) ?? toNorm.findIndex((np) => np >= ns);
    let end = lastAt.has(ne - 1) ? lastAt.get(ne - 1)! + 1 : start + (ne - ns);
    while (end < original.length && blank(original[end])) end++;
    return [start, Math.min(end, original.length)];
  });
}

function escapeNormalized(content: string, pattern: string): Span[] {
  const unescaped = pattern.replaceAll("\\n", "\n").replaceAll("\\t", "\t").replaceAll("\\r", "\r");
  return unescaped === pattern ? [] : exact(content, unescaped);
}

function trimmedBoundary(content: string, pattern: string): Span[] {
  const trimEnds = (lines: string[]) => {
    const out = [...lines];
    out[0] = strip(out[0]!);
    if (out.length > 1) out[out.length - 1] = strip(out[out.length - 1]!);
    return out.join("\n");
  };
  const patternLines = pattern.split("\n");
  const wanted = trimEnds(patternLines);
  const lines = content.split("\n");
  const out: Span[] = [];
  for (let i = 0; i + patternLines.length <= lines.length; i++) {
    if (trimEnds(lines.slice(i, i + patternLines.length)) === wanted)
      out.push(lineSpan(lines, i, i + patternLines.length, content.length));
  }
  return out;
}

function unicodeNormalized(content: string, pattern: string): Span[] {
  const normPattern = unicodeNormalize(pattern);
  const normContent = unicodeNormalize(content);
  if (normContent === content && normPattern === pattern) return [];
  let found = exact(normContent, normPattern);
  if (found.length === 0) found = lineTrimmed(normContent, normPattern);
  if (found.length === 0) return [];
  // Original index → normalized index (a character may expand, e.g. an em dash to "--").
  const toNorm: number[] = [];
  let n = 0;
  for (let i = 0; i < content.length; i++) {
    toNorm.push(n);
    n += UNICODE_MAP[content[i]!]?.length ?? 1;
  }
  toNorm.push(n);
  const firstAt = new Map<number, number>();
  toNorm.slice(0, -1).forEach((np, op) => {
    if (!firstAt.has(np)) firstAt.set(np, op);
  });
  const out: Span[] = [];
  for (const [ns, ne] of found) {
    const start = firstAt.get(ns);
    if (start === undefined) continue;
    let end = start;
    while (end < content.length && toNorm[end]! < ne) end++;
    out.push([start, end]);
  }
  return out;
}

function blockAnchor(content: string, pattern: string): Span[] {
  const patternLines = unicodeNormalize(pattern).split("\n");
  if (patternLines.length < 2) return [];
  const first = strip(patternLines[0]!);
  const last = strip(patternLines[patternLines.length - 1]!);
  const normLines = unicodeNormalize(content).split("\n");
  const lines = content.split("\n");
  const count = patternLines.length;
  const candidates: number[] = [];
  for (let i = 0; i + count <= normLines.length; i++) {
    if (strip(normLines[i]!) === first && strip(normLines[i + count - 1]!) === last) candidates.push(i);
  }
  const threshold = candidates.length === 1 ? 0.5 : 0.7;
  const middle = patternLines.slice(1, -1).join("\n");
  return candidates
    .filter((i) => count <= 2 || similarity(normLines.slice(i + 1, i + count - 1).join("\n"), middle) >= threshold)
    .map((i) => lineSpan(lines, i, i + count, content.length));
}

function contextAware(content: string, pattern: string): Span[] {
  const patternLines = pattern.split("\n");
  const lines = content.split("\n");
  const out: Span[] = [];
  for (let i = 0; i + patternLines.length <= lines.length; i++) {
    const close = patternLines.filter((p, j) => similarity(strip(p), strip(lines[i + j]!)) >= 0.8).length;
    if (close >= patternLines.length * 0.5) out.push(lineSpan(lines, i, i + patternLines.length, content.length));
  }
  return out;
}

const STRATEGIES: [string, Strategy][] = [
  ["exact", exact],
  ["line_trimmed", lineTrimmed],
  ["whitespace_normalized", whitespaceNormalized],
  ["indentation_flexible", indentationFlexible],
  ["escape_normalized", escapeNormalized],
  ["trimmed_boundary", trimmedBoundary],
  ["unicode_normalized", unicodeNormalized],
  ["block_anchor", blockAnchor],
  ["context_aware", contextAware],
];

/** `\'` or `\"` in both strings but not in the matched text: the transport's escaping, not the model's intent. */
function escapeDrift(
  content: string,
  spans: readonly Span[],
  oldString: string,
  newString: string,
): string | undefined {
  const matched = spans.map(([s, e]) => content.slice(s, e)).join("");
  for (const suspect of ["\\'", '\\"']) {
    if (newString.includes(suspect) && oldString.includes(suspect) && !matched.includes(suspect)) {
      const plain = suspect[1]!;
      const shown = plain === "'" ? `"\\\\'"` : `'\\\\"'`;
      const plainShown = plain === "'" ? `"'"` : `'"'`;
      return (
        `Escape-drift detected: old_string and new_string contain the literal sequence ${shown} but the matched region of ` +
        "the file does not. This is almost always a tool-call serialization artifact where an apostrophe or quote got " +
        "prefixed with a spurious backslash. Re-read the file with read_file and pass old_string/new_string without " +
        `backslash-escaping ${plainShown} characters.`
      );
    }
  }
  return undefined;
}

export function fuzzyFindAndReplace(
  content: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
): FuzzyReplace {
  if (!oldString) return { content, count: 0, error: "old_string cannot be empty" };
  if (oldString === newString) return { content, count: 0, error: "old_string and new_string are identical" };
  for (const [name, strategy] of STRATEGIES) {
    const spans = strategy(content, oldString);
    if (spans.length === 0) continue;
    if (spans.length > 1 && !replaceAll) {
      return {
        content,
        count: 0,
        error: `Found ${spans.length} matches for old_string. Provide more context to make it unique, or use replace_all=True.`,
      };
    }
    if (name !== "exact") {
      const drift = escapeDrift(content, spans, oldString, newString);
      if (drift) return { content, count: 0, error: drift };
    }
    let out = content;
    for (const [s, e] of [...spans].sort((x, y) => y[0] - x[0])) out = out.slice(0, s) + newString + out.slice(e);
    return { content: out, count: spans.length, strategy: name, start: Math.min(...spans.map(([st]) => st)) };
  }
  return { content, count: 0, error: NO_MATCH_ERROR };
}

/**
 * The original's "did you mean?" text for an old_string found nowhere: the lines most like its first
 * non-blank line (difflib ratio over 0.3, best 3), each with 2 lines around, numbered `%4d| `.
 */
export function closestLines(oldString: string, content: string): string {
  const oldLines = splitLines(oldString);
  const contentLines = splitLines(content);
  if (!oldString || !content || oldLines.length === 0 || contentLines.length === 0) return "";
  let anchor = oldLines[0]!.trim();
  if (!anchor) {
    const first = oldLines.map((l) => l.trim()).find((l) => l);
    if (!first) return "";
    anchor = first;
  }
  const anchorChars = [...anchor];
  const scored: { ratio: number; i: number }[] = [];
  contentLines.forEach((line, i) => {
    const stripped = line.trim();
    if (!stripped) return;
    const ratio = new SequenceMatcher(anchorChars, [...stripped]).ratio();
    if (ratio > 0.3) scored.push({ ratio, i });
  });
  const parts: string[] = [];
  const seen = new Set<string>();
  for (const { i } of scored.sort((x, y) => y.ratio - x.ratio).slice(0, 3)) {
    const start = Math.max(0, i - 2);
    const end = Math.min(contentLines.length, i + oldLines.length + 2);
    if (seen.has(`${start},${end}`)) continue;
    seen.add(`${start},${end}`);
    parts.push(
      contentLines
        .slice(start, end)
        .map((l, j) => `${String(start + j + 1).padStart(4, " ")}| ${l}`)
        .join("\n"),
    );
  }
  return parts.join("\n---\n");
}

/** The original's "\n\nDid you mean one of these sections?\n…" for a plain no-match error; "" otherwise. */
export function noMatchHint(error: string | undefined, oldString: string, content: string): string {
  if (!error?.startsWith("Could not find")) return "";
  const lines = closestLines(oldString, content);
  return lines ? `\n\nDid you mean one of these sections?\n${lines}` : "";
}
