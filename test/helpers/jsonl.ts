/** Reading the JSONL a run or a command writes (trajectories.jsonl, failed.jsonl, exports, stdout): one copy for every test. */
import { existsSync, readFileSync } from "node:fs";

/** The records of JSONL text, one per non-empty line; a line that is not JSON throws (a torn or glued record fails). */
export function parseJsonl(text: string): any[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}

/**
 * The records of a JSONL file (see parseJsonl). A file that does not exist reads as no records, as a run that wrote
 * none leaves it; pass `{ mustExist: true }` where the file's absence is itself the failure.
 */
export function readJsonl(path: string, opts: { mustExist?: boolean } = {}): any[] {
  if (!opts.mustExist && !existsSync(path)) return [];
  return parseJsonl(readFileSync(path, "utf8"));
}
