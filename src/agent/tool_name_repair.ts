/**
 * The original's repair of a near-miss tool name (hermes-agent `repair_tool_call`, agent/agent_runtime_helpers.py),
 * run before a call to a tool the task was not offered is treated as unknown: models write `Terminal`,
 * `read-file`, `TodoTool_tool` or `serch_files` for tools they were offered. The original rewrites the call's
 * name in place, so the saved conversation and the training text carry the repaired name.
 */
import { SequenceMatcher } from "../../tools/unified_diff.js";

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
  let best: { score: number; name: string } | undefined;
  for (const name of possibilities) {
    const score = new SequenceMatcher(Array.from(name), b).ratio();
    if (score < cutoff) continue;
    if (!best || score > best.score || (score === best.score && name > best.name)) best = { score, name };
  }
  return best?.name;
}
