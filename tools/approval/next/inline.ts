/**
 * Interpreters' inline code (`python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`, `deno eval`, awk
 * programs, scripts written earlier): the calls that delete, write or run a shell, with their string
 * arguments (paths built on the home directory read as `~/…`, the script's own arguments substituted);
 * shell text is handed back to the line judge. Code that downloads and runs, decodes and runs, computes
 * the names it calls, sends secrets, empties stores or exhausts memory is classed here. The tables are
 * in rules/inline.ts.
 */
import type { ClassKey } from "./classes.js";
import { upstream } from "./model.js";
import * as T from "./rules/inline.js";
import { programOf, type Invocation } from "./unwrap.js";
import type { Word } from "./words.js";

export interface InlineFinding {
  key?: ClassKey;
  /** Paths a call deletes or writes, judged by the caller against the working directory. */
  deletes: string[];
  writes: string[];
  /** Shell text the code runs. */
  shell: string[];
  reason: string;
}

const first = (m: RegExpExecArray) => m.slice(1).find((g) => g !== undefined);
const COMPUTED = "\u0000computed";

/** `N<<K`, or the product of the `N`, `N**K` and `NeK` factors read before the first other one (0 if none). */
function evaluateSize(text: string): number {
  const expr = text.replace(/[_\s]/g, "");
  const shift = /^\(?(\d+)<<(\d+)\)?/.exec(expr);
  if (shift) return Number(shift[1]) * 2 ** Number(shift[2]);
  const factors = expr.replace(/[()]/g, "").split(/(?<!\*)\*(?!\*)/);
  const end = factors.findIndex((f) => !T.SIZE_FACTOR.test(f));
  const values = factors.slice(0, end < 0 ? undefined : end).map((f) => f.split("**").map(Number));
  return values.length ? values.reduce((total, [base, exp = 1]) => total * base! ** exp, 1) : 0;
}

/** How many times an allocation in a loop or comprehension repeats (Infinity for endless loops). */
function repetitions(code: string): number {
  if (T.ENDLESS.test(code) || /\bsetInterval\s*\(/.test(code)) return Infinity;
  return Math.max(1, ...[...code.matchAll(T.REPEATS)].map((m) => evaluateSize(m[1] ?? m[2] ?? "1")));
}

/** `p = '/etc/x'` assigned once: later bare uses of `p` as a call's argument read as the string. */
function substituteAssigned(code: string): string {
  const seen = new Map<string, string | undefined>();
  for (const m of code.matchAll(T.STRING_ASSIGNMENTS)) seen.set(m[1]!, seen.has(m[1]!) ? undefined : m[2]!);
  let out = code;
  for (const [name, value] of seen)
    if (value !== undefined)
      out = out.replace(new RegExp(String.raw`([(,]\s*)${name.replace(/\$/g, "\\$")}(?=\s*[,)])`, "g"), `$1${value}`);
  return out;
}

const rewrite = (code: string, table: [RegExp, string][]) => table.reduce((c, [re, to]) => c.replace(re, to), code);

/** Reads paths built on the home directory as `~/…`, and the script's own arguments as literals. */
export function normaliseCode(code: string, argv: string[] = []): string {
  let out = rewrite(substituteAssigned(code), T.CODE_REWRITES);
  for (const [re, to] of T.CONCATENATIONS) for (let i = 0; i < 4; i++) out = out.replace(re, to);
  out = rewrite(out, T.PATH_OBJECT_REWRITES);
  const arg = (i: number) => (argv[i] !== undefined ? `'${argv[i]}'` : undefined);
  out = out.replace(/\bshift(?:\s*\(\s*@ARGV\s*\))?(?![\w(])/g, (m) => arg(0) ?? m);
  for (const [re, offset] of T.ARGV_READS) out = out.replace(re, (m, n: string) => arg(Number(n) + offset) ?? m);
  return out;
}

/** An argv list as shell text: a part with spaces stays one word (`["sh", "-c", "rm -rf /x"]`). */
function argvText(list: string): string[] {
  const parts = [...list.matchAll(new RegExp(T.STR, "g"))].map((p) => first(p) ?? "");
  return parts.length ? [parts.map((p) => (/\s/.test(p) ? `'${p.replace(/'/g, "'\\''")}'` : p)).join(" ")] : [];
}

/** The shell text a call runs: its string, a list's strings joined, a computed tail as `$COMPUTED`. */
function shellTexts(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(T.SHELL_CALLS)) {
    const text = (m[2] ?? m[3] ?? m[4])?.replace(/\\(["\\])/g, "$1");
    if (text === undefined) out.push(...argvText(m[1]!));
    else out.push(m[5] ? `${text} "$COMPUTED"` : text);
  }
  for (const re of [T.BARE_EXEC, T.QUOTED_SHELL, T.AWK_SHELL])
    for (const m of code.matchAll(re)) out.push(first(m)!.trim());
  for (const m of code.matchAll(T.ENCODED_SHELL)) {
    const text = Buffer.from(first(m)!, m[1] ? "base64" : "hex").toString("latin1");
    if (/^[\x20-\x7e\n\t]+$/.test(text)) out.push(text);
  }
  const assigned = /(\w+)\s*=\s*"([^"]*)"[\s\S]*?\b\1\s*\|\s*getline/.exec(code);
  if (assigned) out.push(assigned[2]!);
  return out;
}

const pathsOf = (re: RegExp, code: string) => [...code.matchAll(re)].map((m) => first(m) ?? COMPUTED);

/** Secrets (a secret file, a secret variable, the whole environment) sent over the network. */
function exfiltrates(code: string): boolean {
  if (!T.SENDS.test(code) || T.LOCAL_TARGET.test(code)) return false;
  const secretEnv = T.SECRET_ENV_READ.test(code) && T.UNTRUSTED_SINK.test(code);
  return secretEnv || T.WHOLE_ENVIRONMENT.test(code) || T.SECRET_PATH_IN_CODE.test(code);
}

const allocatesGigabytes = (code: string) => {
  // the largest size written as `N * 1024**3`, `N << 30`, `10**10`, `N * 2**30`, `NGB`, in bytes
  const size = Math.max(0, ...[...code.matchAll(T.ALLOCATIONS)].map((m) => evaluateSize(m[2]!)));
  return size >= 8 * T.GIB || (size >= 2 ** 20 && size * repetitions(code) >= 8 * T.GIB);
};

/** The tests a CODE_CLASSES row names by `check`. */
const CHECKS = { exfiltrates, allocatesGigabytes };
const applies = (row: T.CodeClass, code: string) =>
  row.all.every((re) => re.test(code)) && !row.none?.test(code) && (!row.check || CHECKS[row.check](code));

/** What one piece of inline code does. */
export function analyseInlineCode(source: string, argv: string[] = []): InlineFinding {
  const code = normaliseCode(source, argv);
  const writes = pathsOf(T.WRITE_CALLS, code).filter((p) => p !== COMPUTED);
  for (const re of T.REDIRECT_WRITES) writes.push(...pathsOf(re, code));
  for (const m of code.matchAll(T.COPY_CALLS)) writes.push(m[4] ?? m[5] ?? m[6] ?? "");
  const deletes = pathsOf(T.DELETE_CALLS, code);
  const listed = pathsOf(T.LISTED, code).filter((p) => p !== COMPUTED);
  if (deletes.includes(COMPUTED)) deletes.push(...listed);
  if (T.CHMOD_COMPUTED.test(code)) writes.push(...listed);
  const out: InlineFinding = { deletes, writes, shell: shellTexts(code), reason: "" };
  const found = T.CODE_CLASSES.find((row) => applies(row, code));
  if (found) [out.key, out.reason] = [found.key, found.reason];
  // What /tmp holds is every task's and program's: emptying it is not the line's own.
  else if (deletes.some((p) => /^\/(var\/)?tmp\/?\*?$/.test(p)))
    [out.key, out.reason] = ["recursive_delete", "empties /tmp"];
  return out;
}

/** Code only known when it runs: a command substitution, or nothing but variables (`echo "$script" | python3`). */
export const unknownCode = (w: Word): boolean =>
  !w.literal && (/\$\(|`/.test(w.text) || /^\s*("?\$\{?\w+\}?"?\s*)+$/.test(w.text));

/** The folder a `find`/`ls` at the head of the pipe into `inv` lists. */
function listingRoot(inv: Invocation): string | undefined {
  const origin = upstream(inv.command).at(-1);
  if (!origin || !/^(find|ls)$/.test(programOf(origin))) return undefined;
  return (origin.argv.find((w, i) => i > 0 && !w.text.startsWith("-"))?.text ?? ".").replace(/\/$/, "");
}

const codeAfter = (t: string[], i: number) =>
  i >= 0 && t[i + 1] !== undefined ? { code: t[i + 1]!, argv: t.slice(i + 2) } : undefined;

/**
 * Inline code the line judge does not route itself, or routes without the script's arguments:
 * `php -r`, `deno eval`, `elixir -e`, awk programs, `rails runner`, and `-c`/`-e` code reading its argv.
 */
export function inlineProgram(inv: Invocation): { code: string; argv: string[] } | undefined {
  const t = inv.args.map((w) => w.text);
  const tinker = inv.program === "php" && t[0] === "artisan" && t[1] === "tinker";
  const execute = tinker ? t.find((w) => w.startsWith("--execute=")) : undefined;
  if (execute !== undefined) return { code: execute.slice("--execute=".length), argv: [] };
  const spec = T.CODE_ARGUMENTS.get(inv.program);
  if (!spec) {
    const at = t.findIndex((w) => T.CODE_OPTION.test(w));
    const found = codeAfter(t, at);
    return found?.argv.length && /argv|ARGV|\bshift\b/.test(found.code) ? found : undefined;
  }
  if (spec.subcommand !== undefined && t[0] !== spec.subcommand) return undefined;
  const words = spec.subcommand === undefined ? t : t.slice(1);
  if (spec.option) return codeAfter(words, words.indexOf(spec.option));
  const valued = spec.operand;
  const code = valued && words.find((w, i) => !w.startsWith("-") && !valued.includes(words[i - 1] ?? ""));
  if (code === undefined) return undefined;
  // a line of input is a path the feeding listing found (`find /etc … | awk '{system("rm " $0)}'`)
  const root = spec.lines ? listingRoot(inv) : undefined;
  return { code: root ? code.replace(/\$0\b/g, `"${root}/\u0000found"`) : code, argv: [] };
}
