/**
 * The original's repair of a near-miss tool name (hermes-agent `repair_tool_call`, agent/agent_runtime_helpers.py),
 * run before a call to a tool the task was not offered is treated as unknown: models write `Terminal`,
 * `read-file`, `TodoTool_tool` or `serch_files` for tools they were offered. The original rewrites the call's
 * name in place, so the saved conversation and the training text carry the repaired name.
 */

/** The original cuts a name at the first quote or angle bracket an endpoint leaked into it (not at position 0). */
const LEAKED_MARKUP = ['"', "'", "<", ">"];

const normalise = (s: string) => s.toLowerCase().replaceAll("-", "_").replaceAll(" ", "_");

/** Python's `re.sub(r"(?<!^)(?=[A-Z])", "_", s).lower()`: `TodoTool` → `todo_tool`. */
const camelToSnake = (s: string) => s.replace(/(?<!^)(?=[A-Z])/g, "_").toLowerCase();

function stripToolSuffix(s: string): string | undefined {
  const lower = s.toLowerCase();
  for (const suffix of ["_tool", "-tool", "tool"]) {
    if (lower.endsWith(suffix)) return s.slice(0, s.length - suffix.length).replace(/[_-]+$/, "");
  }
  return undefined;
}

/** The offered name `name` most likely meant, or undefined when none is close enough. */
export function repairToolName(name: string, offered: ReadonlySet<string>): string | undefined {
  if (!name) return undefined;
  for (const mark of LEAKED_MARKUP) {
    const at = name.indexOf(mark);
    if (at > 0) name = name.slice(0, at);
  }
  const lowered = name.toLowerCase();
  if (offered.has(lowered)) return lowered;
  const normalised = normalise(name);
  if (offered.has(normalised)) return normalised;

  // The original collects these in a Python set and returns the first offered one in the set's (hash) order;
  // here in the order they are made, so a name repairs the same way in every run.
  const candidates = new Set([name, lowered, normalised, camelToSnake(name)]);
  for (let round = 0; round < 2; round++) {
    const extra: string[] = [];
    for (const c of candidates) {
      const stripped = stripToolSuffix(c);
      if (stripped) extra.push(stripped, normalise(stripped), camelToSnake(stripped));
    }
    for (const e of extra) candidates.add(e);
  }
  for (const c of candidates) if (c && offered.has(c)) return c;
  return closestMatch(lowered, offered, 0.7);
}

/**
 * Python's `difflib.get_close_matches(word, possibilities, n=1, cutoff)`: the possibility with the highest
 * `SequenceMatcher(None, possibility, word).ratio()` at or above the cutoff, ties to the greatest string.
 */
export function closestMatch(word: string, possibilities: Iterable<string>, cutoff: number): string | undefined {
  const b = Array.from(word);
  const b2j = indexOf(b);
  let best: { score: number; name: string } | undefined;
  for (const name of possibilities) {
    const a = Array.from(name);
    const total = a.length + b.length;
    const score = total === 0 ? 1 : (2 * matchingCharacters(a, b, b2j)) / total;
    if (score < cutoff) continue;
    if (!best || score > best.score || (score === best.score && name > best.name)) best = { score, name };
  }
  return best?.name;
}

/** SequenceMatcher's b2j: where each element of b occurs, without the "popular" ones when b has 200 or more. */
function indexOf(b: readonly string[]): Map<string, number[]> {
  const b2j = new Map<string, number[]>();
  b.forEach((ch, j) => {
    const at = b2j.get(ch);
    if (at) at.push(j);
    else b2j.set(ch, [j]);
  });
  if (b.length >= 200) {
    const popular = Math.floor(b.length / 100) + 1;
    for (const [ch, at] of b2j) if (at.length > popular) b2j.delete(ch);
  }
  return b2j;
}

/** The sum of SequenceMatcher's matching blocks' sizes (get_matching_blocks, no junk function). */
function matchingCharacters(a: readonly string[], b: readonly string[], b2j: Map<string, number[]>): number {
  let matched = 0;
  const queue: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  while (queue.length > 0) {
    const [alo, ahi, blo, bhi] = queue.pop()!;
    const [i, j, k] = longestMatch(a, b, b2j, alo, ahi, blo, bhi);
    if (k === 0) continue;
    matched += k;
    if (alo < i && blo < j) queue.push([alo, i, blo, j]);
    if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
  }
  return matched;
}

/** SequenceMatcher.find_longest_match: the longest block, earliest in a, then earliest in b. */
function longestMatch(
  a: readonly string[],
  b: readonly string[],
  b2j: Map<string, number[]>,
  alo: number,
  ahi: number,
  blo: number,
  bhi: number,
): [number, number, number] {
  let besti = alo;
  let bestj = blo;
  let bestsize = 0;
  let j2len = new Map<number, number>();
  for (let i = alo; i < ahi; i++) {
    const next = new Map<number, number>();
    for (const j of b2j.get(a[i]!) ?? []) {
      if (j < blo) continue;
      if (j >= bhi) break;
      const k = (j2len.get(j - 1) ?? 0) + 1;
      next.set(j, k);
      if (k > bestsize) {
        besti = i - k + 1;
        bestj = j - k + 1;
        bestsize = k;
      }
    }
    j2len = next;
  }
  // Popular elements (left out of b2j) still extend a match at either end, as in the original.
  while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
    besti--;
    bestj--;
    bestsize++;
  }
  while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
  return [besti, bestj, bestsize];
}
