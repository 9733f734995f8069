/**
 * V4A patches (the format of the original's `patch` tool in mode "patch"): several files added, updated
 * (optionally moved) or deleted in one call.
 *
 *   *** Begin Patch
 *   *** Update File: src/app.py
 *   @@ def main():
 *    context line
 *   -removed line
 *   +added line
 *   *** Add File: notes.txt
 *   +first line
 *   *** Delete File: old.txt
 *   *** End Patch
 *
 * Parsing and applying are pure (text in, text out); the patch tool does the file I/O, all or nothing.
 */

import { fuzzyFindAndReplace, noMatchHint } from "./fuzzy_match.js";

export interface V4AHunk {
  /** The text after `@@` (a line to find before the change), or "" without one. */
  anchor: string;
  /** Lines before the change: context and removed lines. */
  oldLines: string[];
  /** Lines after the change: context and added lines. */
  newLines: string[];
}

export type V4AOperation =
  | { kind: "add"; path: string; content: string }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo?: string; hunks: V4AHunk[] };

export class V4AError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "V4AError";
  }
}

const FILE_HEADER = /^\*\*\* (Add|Update|Delete) File: (.+)$/;

/** Parses a V4A patch; throws V4AError naming the line for anything malformed. */
export function parseV4APatch(text: string): V4AOperation[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length && lines[i]!.trim() === "") i++;
  if (lines[i]?.trim() !== "*** Begin Patch") throw new V4AError("a V4A patch starts with '*** Begin Patch'");
  i++;
  const ops: V4AOperation[] = [];
  let ended = false;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === "*** End Patch") {
      ended = true;
      break;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const header = FILE_HEADER.exec(line.trimEnd());
    if (!header)
      throw new V4AError(
        `line ${i + 1}: expected '*** Add File:', '*** Update File:' or '*** Delete File:', got '${line.slice(0, 80)}'`,
      );
    const [, kind, rawPath] = header;
    const path = rawPath!.trim();
    i++;
    if (kind === "Delete") {
      ops.push({ kind: "delete", path });
      continue;
    }
    if (kind === "Add") {
      const body: string[] = [];
      while (i < lines.length && !lines[i]!.startsWith("*** ")) {
        const l = lines[i]!;
        if (!l.startsWith("+") && l !== "")
          throw new V4AError(`line ${i + 1}: every line of an added file starts with '+'`);
        body.push(l.slice(1));
        i++;
      }
      while (body.length > 0 && body[body.length - 1] === "" && !lines[i - 1]!.startsWith("+")) body.pop();
      // As the original: the added lines joined, without a final newline.
      ops.push({ kind: "add", path, content: body.join("\n") });
      continue;
    }
    let moveTo: string | undefined;
    const move = /^\*\*\* Move to: (.+)$/.exec(lines[i]?.trimEnd() ?? "");
    if (move) {
      moveTo = move[1]!.trim();
      i++;
    }
    const hunks: V4AHunk[] = [];
    let hunk: V4AHunk | undefined;
    while (i < lines.length) {
      const l = lines[i]!;
      if (l.trim() === "*** End of File") {
        i++;
        continue;
      }
      if (l.startsWith("*** ")) break;
      if (l.startsWith("@@")) {
        hunk = {
          anchor: l
            .replace(/^@@\s?/, "")
            .replace(/\s?@@\s*$/, "")
            .trim(),
          oldLines: [],
          newLines: [],
        };
        hunks.push(hunk);
        i++;
        continue;
      }
      if (!hunk) hunks.push((hunk = { anchor: "", oldLines: [], newLines: [] }));
      const tag = l[0];
      const rest = l.slice(1);
      if (tag === " " || l === "") {
        hunk.oldLines.push(rest);
        hunk.newLines.push(rest);
      } else if (tag === "-") hunk.oldLines.push(rest);
      else if (tag === "+") hunk.newLines.push(rest);
      else throw new V4AError(`line ${i + 1}: a change line starts with ' ', '-' or '+', got '${l.slice(0, 80)}'`);
      i++;
    }
    // A blank line that only separated two files is not part of the last hunk.
    const last = hunks[hunks.length - 1];
    while (last && last.oldLines.at(-1) === "" && last.newLines.at(-1) === "" && lines[i - 1] === "") {
      last.oldLines.pop();
      last.newLines.pop();
    }
    const changes = hunks.filter((h) => h.oldLines.join("\n") !== h.newLines.join("\n"));
    if (changes.length === 0 && !moveTo) throw new V4AError(`'*** Update File: ${path}' changes nothing`);
    ops.push({ kind: "update", path, ...(moveTo ? { moveTo } : {}), hunks: changes });
  }
  if (!ended) throw new V4AError("a V4A patch ends with '*** End Patch'");
  if (ops.length === 0) throw new V4AError("the patch names no file");
  return ops;
}

type Compare = (a: string, b: string) => boolean;
const COMPARISONS: Compare[] = [
  (a, b) => a === b,
  (a, b) => a.trimEnd() === b.trimEnd(),
  (a, b) => a.trim() === b.trim(),
];

function findBlock(lines: string[], block: string[], from: number, same: Compare): number {
  for (let at = from; at + block.length <= lines.length; at++) {
    let ok = true;
    for (let k = 0; k < block.length && ok; k++) ok = same(lines[at + k]!, block[k]!);
    if (ok) return at;
  }
  return -1;
}

/**
 * A hunk the line comparisons cannot place, through the original's matching of the whole file (its nine
 * strategies, a unique match required); `lines` is changed in place, and the line after the change returned.
 * Throws with the original's wording when that fails too.
 */
function applyFuzzily(path: string, lines: string[], hunk: V4AHunk): number {
  const joined = lines.join("\n");
  const search = hunk.oldLines.join("\n");
  const r = fuzzyFindAndReplace(joined, search, hunk.newLines.join("\n"), false);
  if (r.error !== undefined) {
    const label = hunk.anchor ? `'${hunk.anchor}'` : "(no hint)";
    throw new V4AError(`${path}: hunk ${label} not found \u2014 ${r.error}${noMatchHint(r.error, search, joined)}`);
  }
  const startLine = joined.slice(0, r.start).split("\n").length - 1;
  lines.splice(0, lines.length, ...r.content.split("\n"));
  return startLine + hunk.newLines.length;
}

/**
 * Applies an update's hunks in order to `text`. Each hunk's old lines are found after the previous hunk
 * (after its `@@` anchor line when it has one): exactly, else ignoring trailing, else surrounding white
 * space; else as the original matches them (applyFuzzily). Throws V4AError when a hunk's lines are not in the file.
 */
export function applyV4AHunks(path: string, text: string, hunks: readonly V4AHunk[]): string {
  const endsWithNewline = text.endsWith("\n");
  const lines = text === "" ? [] : (endsWithNewline ? text.slice(0, -1) : text).split("\n");
  let cursor = 0;
  for (const hunk of hunks) {
    let from = cursor;
    if (hunk.anchor) {
      const anchorAt =
        COMPARISONS.map((same) => findBlock(lines, [hunk.anchor], cursor, same)).find((at) => at >= 0) ?? -1;
      if (anchorAt >= 0)
        from =
          anchorAt + (hunk.oldLines[0] !== undefined && COMPARISONS[2]!(lines[anchorAt]!, hunk.oldLines[0]) ? 0 : 1);
      else if (hunk.oldLines.length === 0) throw new V4AError(`${path}: '@@ ${hunk.anchor}' not found`);
    }
    let at: number;
    if (hunk.oldLines.length === 0) at = hunk.anchor ? from : lines.length;
    else {
      at = -1;
      for (const same of COMPARISONS) if ((at = findBlock(lines, hunk.oldLines, from, same)) >= 0) break;
      if (at < 0 && from !== cursor)
        for (const same of COMPARISONS) if ((at = findBlock(lines, hunk.oldLines, cursor, same)) >= 0) break;
      if (at < 0) {
        cursor = applyFuzzily(path, lines, hunk);
        continue;
      }
    }
    lines.splice(at, hunk.oldLines.length, ...hunk.newLines);
    cursor = at + hunk.newLines.length;
  }
  const out = lines.join("\n");
  return lines.length === 0 ? "" : endsWithNewline || text === "" ? `${out}\n` : out;
}
