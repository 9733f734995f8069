/**
 * A line diff that produces the same hunks as Python's `difflib` (the original Hermes builds its patch
 * diffs with `difflib.unified_diff` and its "did you mean?" hints with `SequenceMatcher.ratio`), so a
 * patch result reads the same here as there. Written from difflib's documented behaviour: the longest
 * matching block first, then the same on each side of it; with no junk function, but with the
 * "autojunk" rule (in a sequence of 200 items or more, an item occurring more than 1 % + 1 times is not
 * used to start a match).
 */

type Opcode = ["equal" | "replace" | "delete" | "insert", number, number, number, number];

export class SequenceMatcher<T extends string> {
  private readonly a: readonly T[];
  private readonly b: readonly T[];
  private readonly b2j = new Map<T, number[]>();
  private blocks?: [number, number, number][];

  constructor(a: readonly T[], b: readonly T[]) {
    this.a = a;
    this.b = b;
    b.forEach((item, j) => {
      const at = this.b2j.get(item);
      if (at) at.push(j);
      else this.b2j.set(item, [j]);
    });
    if (b.length >= 200) {
      const limit = Math.floor(b.length / 100) + 1;
      for (const [item, at] of [...this.b2j]) if (at.length > limit) this.b2j.delete(item);
    }
  }

  private longestMatch(alo: number, ahi: number, blo: number, bhi: number): [number, number, number] {
    const { a, b } = this;
    let besti = alo;
    let bestj = blo;
    let bestsize = 0;
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of this.b2j.get(a[i]!) ?? []) {
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
    // Extend over equal items the index left out (the popular ones).
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
      besti--;
      bestj--;
      bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
    return [besti, bestj, bestsize];
  }

  matchingBlocks(): [number, number, number][] {
    if (this.blocks) return this.blocks;
    const la = this.a.length;
    const lb = this.b.length;
    const queue: [number, number, number, number][] = [[0, la, 0, lb]];
    const found: [number, number, number][] = [];
    while (queue.length > 0) {
      const [alo, ahi, blo, bhi] = queue.pop()!;
      const [i, j, k] = this.longestMatch(alo, ahi, blo, bhi);
      if (k === 0) continue;
      found.push([i, j, k]);
      if (alo < i && blo < j) queue.push([alo, i, blo, j]);
      if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
    }
    found.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
    const merged: [number, number, number][] = [];
    let [i1, j1, k1] = [0, 0, 0];
    for (const [i2, j2, k2] of found) {
      if (i1 + k1 === i2 && j1 + k1 === j2) k1 += k2;
      else {
        if (k1) merged.push([i1, j1, k1]);
        [i1, j1, k1] = [i2, j2, k2];
      }
    }
    if (k1) merged.push([i1, j1, k1]);
    merged.push([la, lb, 0]);
    this.blocks = merged;
    return merged;
  }

  opcodes(): Opcode[] {
    let i = 0;
    let j = 0;
    const out: Opcode[] = [];
    for (const [ai, bj, size] of this.matchingBlocks()) {
      const tag = i < ai && j < bj ? "replace" : i < ai ? "delete" : j < bj ? "insert" : "";
      if (tag) out.push([tag, i, ai, j, bj]);
      i = ai + size;
      j = bj + size;
      if (size) out.push(["equal", ai, i, bj, j]);
    }
    return out;
  }

  /** difflib's `ratio()`: 2 × matched items / all items (1.0 for two empty sequences). */
  ratio(): number {
    const matches = this.matchingBlocks().reduce((n, [, , k]) => n + k, 0);
    const total = this.a.length + this.b.length;
    return total ? (2 * matches) / total : 1;
  }

  groupedOpcodes(n = 3): Opcode[][] {
    let codes = this.opcodes();
    if (codes.length === 0) codes = [["equal", 0, 1, 0, 1]];
    const first = codes[0]!;
    if (first[0] === "equal")
      codes[0] = ["equal", Math.max(first[1], first[2] - n), first[2], Math.max(first[3], first[4] - n), first[4]];
    const last = codes[codes.length - 1]!;
    if (last[0] === "equal")
      codes[codes.length - 1] = [
        "equal",
        last[1],
        Math.min(last[2], last[1] + n),
        last[3],
        Math.min(last[4], last[3] + n),
      ];
    const groups: Opcode[][] = [];
    let group: Opcode[] = [];
    for (const code of codes) {
      let [tag, i1, i2, j1, j2] = code;
      if (tag === "equal" && i2 - i1 > 2 * n) {
        group.push([tag, i1, Math.min(i2, i1 + n), j1, Math.min(j2, j1 + n)]);
        groups.push(group);
        group = [];
        i1 = Math.max(i1, i2 - n);
        j1 = Math.max(j1, j2 - n);
      }
      group.push([tag, i1, i2, j1, j2]);
    }
    if (group.length > 0 && !(group.length === 1 && group[0]![0] === "equal")) groups.push(group);
    return groups;
  }
}

/** Python's `str.splitlines(keepends=True)`. */
export function splitLinesKeepEnds(text: string): string[] {
  const out: string[] = [];
  const re = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/g;
  let start = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push(text.slice(start, m.index + m[0].length));
    start = m.index + m[0].length;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/** Python's `str.splitlines()` (line ends dropped). */
export function splitLines(text: string): string[] {
  return splitLinesKeepEnds(text).map((l) => l.replace(/(\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029])$/, ""));
}

function unifiedRange(start: number, stop: number): string {
  let beginning = start + 1;
  const length = stop - start;
  if (length === 1) return String(beginning);
  if (!length) beginning -= 1;
  return `${beginning},${length}`;
}

/**
 * `difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/<name>", toName)` joined:
 * empty when nothing changed; a last line without its newline runs into the next diff line, as there.
 */
export function unifiedDiff(before: string, after: string, name: string, context = 3, toName = `b/${name}`): string {
  const a = splitLinesKeepEnds(before);
  const b = splitLinesKeepEnds(after);
  const groups = new SequenceMatcher(a, b).groupedOpcodes(context);
  if (groups.length === 0) return "";
  const out = [`--- a/${name}\n`, `+++ ${toName}\n`];
  for (const group of groups) {
    const first = group[0]!;
    const last = group[group.length - 1]!;
    out.push(`@@ -${unifiedRange(first[1], last[2])} +${unifiedRange(first[3], last[4])} @@\n`);
    for (const [tag, i1, i2, j1, j2] of group) {
      if (tag === "equal") {
        for (const line of a.slice(i1, i2)) out.push(` ${line}`);
        continue;
      }
      if (tag === "replace" || tag === "delete") for (const line of a.slice(i1, i2)) out.push(`-${line}`);
      if (tag === "replace" || tag === "insert") for (const line of b.slice(j1, j2)) out.push(`+${line}`);
    }
  }
  return out.join("");
}
