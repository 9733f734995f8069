/** "Did you mean …?": the one name a mistyped flag, command or config key most likely meant. */

/**
 * The accepted name (a flag without its dashes, a command) a mistyped one most likely meant: the only one it
 * starts (`--allow-diff`), else the only closest one within a few edits (a letter left out, doubled or swapped;
 * `--dryrun` for `--dry-run`, `comapre` for `compare`).
 */
export function nearestName(typed: string, names: string[]): string | undefined {
  const prefixed = names.filter((f) => typed.length >= 3 && f.startsWith(typed));
  if (prefixed.length === 1) return prefixed[0];
  const limit = typed.length <= 4 ? 1 : 2;
  let best: string[] = [];
  let bestDistance = limit + 1;
  for (const flag of names) {
    const d = editDistance(typed, flag);
    if (d < bestDistance) [best, bestDistance] = [[flag], d];
    else if (d === bestDistance) best.push(flag);
  }
  return best.length === 1 ? best[0] : undefined;
}

/** Damerau-Levenshtein (optimal string alignment) distance: a swap of two neighbours is one edit. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}
