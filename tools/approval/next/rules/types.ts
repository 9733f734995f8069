/** The shape of a rule row (the rows are in ../rules.ts and this folder). */
import type { ClassKey } from "../classes.js";

/**
 * What a matched row does:
 * - path effects (delete, overwrite, move, permission): judged by where the path arguments point;
 * - the rest: the row's class when it matches.
 */
export type Effect = "delete" | "overwrite" | "move" | "permission" | "system" | "remote" | "exhaust" | "execute";

export interface Rule {
  /** Program names (basename as run). */
  program: string[];
  /** Leading non-option words that must follow (`kubectl delete`), any of each position. */
  verbs?: string[][];
  /** Matches only when one of these options (or `--opt=` prefixes) is present. */
  anyOption?: string[];
  /** Matches only when the arguments, joined by spaces, match. */
  args?: RegExp;
  /** Never matches when the arguments, joined by spaces, match. */
  unless?: RegExp;
  /**
   * Matches only when a word matches `test` (any word, when absent) and not `except`: a non-option argument
   * from index `from` (default 0) up to, not including, `to` (default: all), or with `options`, an option too
   * (`--namespace=prod`).
   */
  word?: { test?: RegExp; except?: RegExp; from?: number; to?: number; options?: boolean };
  /** A last test over the non-option arguments and the options, where no other field can say it. */
  when?: (operands: string[], options: string[]) => boolean;
  effect: Effect;
  key: ClassKey;
  /**
   * Path effects: which arguments are the paths (default: every non-option argument); `allButLast` is
   * all but the first (a mode, an owner); `{ option, prefix, fallback }`: the values of these options
   * (`-C DIR`, `--directory=DIR`), or the operands with this prefix (`of=`), else the fallback (`.`).
   */
  paths?: "operands" | "last" | "allButLast" | "afterVerbs" | { option?: string[]; prefix?: string; fallback?: string };
  /** Only when the program runs with raised rights (sudo, doas, su). */
  elevated?: boolean;
  /** Options read as operands (chmod's `-w`, `-x` are modes). */
  optionLike?: RegExp;
  /** Program options that take the next word as their value before the verb (`git -C DIR`). */
  globalValued?: string[];
  /** Options that make a delete recursive. */
  recursive?: string[];
  flag: string[];
  pass: string[];
}
