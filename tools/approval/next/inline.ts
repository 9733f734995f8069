/**
 * Interpreters' inline code (`python -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`, `deno eval`, awk
 * programs, scripts written earlier): the calls that delete, write or run a shell, with their string
 * arguments (paths built on the home directory read as `~/…`, the script's own arguments substituted);
 * shell text is handed back to the line judge. Code that downloads and runs, decodes and runs, computes
 * the names it calls, sends secrets, empties stores or exhausts memory is classed here. The tables are
 * in rules/inline.ts.
 */
import type { ClassKey } from "./classes.js";
import * as T from "./rules/inline.js";
import { basename, type Invocation } from "./unwrap.js";
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

/** Sizes written as `N * 1024**3`, `N << 30`, `10**10`, `N * 2**30`, `NGB`: the largest one, in bytes. */
export function largestAllocation(code: string): number {
  let max = 0;
  for (const m of code.matchAll(T.ALLOCATIONS)) {
    const expr = m[2]!.replace(/_/g, "").replace(/\s+/g, "");
    const value = evaluateSize(expr);
    if (value > max) max = value;
  }
  return max;
}

function evaluateSize(expr: string): number {
  const shift = /^\(?(\d+)<<(\d+)\)?/.exec(expr);
  if (shift) return Number(shift[1]) * 2 ** Number(shift[2]);
  let total = 1;
  let any = false;
  for (const factor of expr.replace(/[()]/g, "").split(/(?<!\*)\*(?!\*)/)) {
    const pow = /^(\d+(?:\.\d+)?)(?:\*\*(\d+))?$/.exec(factor) ?? /^(\d+(?:\.\d+)?)e(\d+)$/.exec(factor);
    if (!pow) break;
    total *= factor.includes("e") ? Number(factor) : Number(pow[1]) ** Number(pow[2] ?? 1);
    any = true;
  }
  return any ? total : 0;
}

/** How many times an allocation in a loop or comprehension repeats (Infinity for endless loops). */
function repetitions(code: string): number {
  if (T.ENDLESS.test(code) || /\bsetInterval\s*\(/.test(code)) return Infinity;
  let max = 1;
  for (const m of code.matchAll(/\bin\s+range\s*\(\s*([\d\s*()<+.x_e]+)\)|\.times\b|Array\((\d+)\)\.fill/g))
    max = Math.max(max, evaluateSize((m[1] ?? m[2] ?? "1").replace(/[_\s]/g, "")));
  return max;
}

/** `p = '/etc/x'` assigned once: later bare uses of `p` as a call's argument read as the string. */
function substituteAssigned(code: string): string {
  const seen = new Map<string, string | undefined>();
  for (const m of code.matchAll(
    /(?:^|[;\s(])(?:my\s+|const\s+|let\s+|var\s+)?(\$?[A-Za-z_]\w*)\s*=\s*('[^'\\]*'|"[^"\\$]*")(?=\s*[;\n,)]|\s*$)/g,
  ))
    seen.set(m[1]!, seen.has(m[1]!) ? undefined : m[2]!);
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
  for (let i = 0; i < 4; i++)
    out = out.replace(/['"](~[^'"]*?)\/?['"]\s*(?:\+|\.\.?|\/|,)\s*['"]\/?([^'"]*)['"]/g, "'$1/$2'");
  for (let i = 0; i < 4; i++) out = out.replace(/'([^'\\]*)'\s*\+\s*'([^'\\]*)'/g, "'$1$2'");
  out = rewrite(out, T.PATH_OBJECT_REWRITES);
  const arg = (i: number) => (argv[i] !== undefined ? `'${argv[i]}'` : undefined);
  return out
    .replace(/\bshift(?:\s*\(\s*@ARGV\s*\))?(?![\w(])/g, (m) => arg(0) ?? m)
    .replace(/\bsys\.argv\[(\d+)\]/g, (m, n: string) => arg(Number(n) - 1) ?? m)
    .replace(/\$?ARGV\[(\d+)\]/g, (m, n: string) => arg(Number(n)) ?? m)
    .replace(/\bprocess\.argv\[(\d+)\]/g, (m, n: string) => arg(Number(n) - 1) ?? m);
}

/** The shell text a call runs: its string, a list's strings joined, a computed tail as `$COMPUTED`. */
function shellTexts(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(T.SHELL_CALLS)) {
    if (m[1]!.startsWith("[") || (m[2] ?? m[3] ?? m[4]) === undefined) {
      // an argv list: a part with spaces stays one word (`["sh", "-c", "rm -rf /x"]`)
      const parts = [...m[1]!.matchAll(new RegExp(T.STR, "g"))].map((p) => first(p) ?? "");
      if (parts.length) out.push(parts.map((p) => (/\s/.test(p) ? `'${p.replace(/'/g, "'\\''")}'` : p)).join(" "));
      continue;
    }
    const text = (m[2] ?? m[3] ?? m[4])?.replace(/\\(["\\])/g, "$1");
    if (text !== undefined) out.push(m[5] ? `${text} "$COMPUTED"` : text);
  }
  for (const m of code.matchAll(T.BARE_EXEC)) out.push(m[1]!.trim());
  for (const m of code.matchAll(T.QUOTED_SHELL)) out.push(first(m)!.trim());
  for (const m of code.matchAll(T.AWK_SHELL)) {
    const text = first(m);
    if (text !== undefined) out.push(text);
  }
  for (const m of code.matchAll(T.ENCODED_SHELL)) {
    const text = m[1]
      ? Buffer.from(m[1], "base64").toString("latin1")
      : Buffer.from(m[2] ?? m[3]!, "hex").toString("latin1");
    if (/^[\x20-\x7e\n\t]+$/.test(text)) out.push(text);
  }
  const assigned = /(\w+)\s*=\s*"([^"]*)"[\s\S]*?\b\1\s*\|\s*getline/.exec(code);
  if (assigned) out.push(assigned[2]!);
  return out;
}

function pathsOf(re: RegExp, code: string): string[] {
  return [...code.matchAll(re)].map((m) => first(m) ?? "\u0000computed");
}

/** Secrets (a secret file, a secret variable, the whole environment) sent over the network. */
function exfiltrates(code: string): boolean {
  if (!T.SENDS.test(code) || T.LOCAL_TARGET.test(code)) return false;
  if (T.WHOLE_ENVIRONMENT.test(code) || T.SECRET_PATH_IN_CODE.test(code)) return true;
  return (
    T.SECRET_ENV_READ.test(code) &&
    /https?:\/\/(\d+\.){3}\d+|http:\/\/|webhook\.site|requestbin|0x0\.st|termbin/.test(code)
  );
}

/** The class of what the code does as a whole, first match wins. */
function classify(code: string): [ClassKey, string] | undefined {
  if (T.EVALUATES.test(code) && T.DOWNLOADS.test(code)) return ["remote_code_exec", "runs code it downloads"];
  if (T.SOCKETS.test(code) && T.SHELL_ON_SOCKET.test(code)) return ["remote_access", "connects a shell to a socket"];
  if (exfiltrates(code)) return ["credential_exfiltration", "sends secrets over the network"];
  if (T.COMPUTED_MEMBER.test(code) || T.NAMED_DANGEROUS_MEMBER.test(code) || T.EVALUATES_COMPUTED.test(code))
    return ["inline_code_unanalysable", "the code computes what it calls or runs"];
  for (const [re, key] of T.STORE_WIPES) if (re.test(code)) return [key, "empties a whole store"];
  for (const [re, key] of T.STATE_CALLS) if (re.test(code)) return [key, "changes the machine's state"];
  const size = largestAllocation(code);
  if (size >= 8 * T.GIB || (size >= 2 ** 20 && size * repetitions(code) >= 8 * T.GIB))
    return ["resource_exhaustion", "allocates gigabytes of memory"];
  if (
    /fork\b|\bspawn\(|\bPopen\(|\bProcess\(|exe\b.*\.Start\(\)/.test(code) &&
    (T.ENDLESS.test(code) || /\bfork\s+while\b/.test(code))
  )
    return ["fork_bomb", "forks without end"];
  return endlessGrowth(code);
}

/** Endless loops that grow a list, double a value, or write files without a pause. */
function endlessGrowth(code: string): [ClassKey, string] | undefined {
  if (T.KILLS_ALL.test(code)) return ["kill_all_processes", "signals every process"];
  if (!T.ENDLESS.test(code) || T.PAUSES.test(code)) return undefined;
  if (/\.append\(|\.push\(|\bpush\s+@|\b(\w+)\s*=\s*\1\s*[+*]\s*\1\b|\b(\w+)\s*[+*]=\s*\2\b/.test(code))
    return ["resource_exhaustion", "allocates without end"];
  if (T.FILE_WRITES.test(code)) return ["resource_exhaustion", "writes files without end"];
  return undefined;
}

/** What one piece of inline code does. */
export function analyseInlineCode(source: string, argv: string[] = []): InlineFinding {
  const code = normaliseCode(source, argv);
  const writes = pathsOf(T.WRITE_CALLS, code).filter((p) => p !== "\u0000computed");
  for (const re of T.REDIRECT_WRITES) writes.push(...pathsOf(re, code));
  for (const m of code.matchAll(T.COPY_CALLS)) writes.push(m[4] ?? m[5] ?? m[6] ?? "");
  const deletes = pathsOf(T.DELETE_CALLS, code);
  const listed = pathsOf(T.LISTED, code).filter((p) => p !== "\u0000computed");
  if (deletes.includes("\u0000computed")) deletes.push(...listed);
  if (/\b(os\.chmod|os\.chown|File\.chmod|chmodSync)\s*\(\s*[\w$]/.test(code)) writes.push(...listed);
  const out: InlineFinding = { deletes, writes, shell: shellTexts(code), reason: "" };
  const found = classify(code);
  if (found) [out.key, out.reason] = found;
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
  let origin = inv.command;
  while (origin.pipedFrom) origin = origin.pipedFrom;
  const [program, ...args] = origin.argv.map((w) => w.text);
  if (origin === inv.command || !/^(find|ls)$/.test(basename(program ?? ""))) return undefined;
  return (args.find((a) => !a.startsWith("-")) ?? ".").replace(/\/$/, "");
}

/**
 * Inline code the line judge does not route itself, or routes without the script's arguments:
 * `php -r`, `deno eval`, `elixir -e`, awk programs, `rails runner`, and `-c`/`-e` code reading its argv.
 */
export function inlineProgram(inv: Invocation): { code: string; argv: string[] } | undefined {
  const t = inv.args.map((w) => w.text);
  const after = (i: number) =>
    i >= 0 && t[i + 1] !== undefined ? { code: t[i + 1]!, argv: t.slice(i + 2) } : undefined;
  switch (inv.program) {
    case "php": {
      const tinker = t[0] === "artisan" && t[1] === "tinker" ? t.find((w) => w.startsWith("--execute=")) : undefined;
      return tinker ? { code: tinker.slice("--execute=".length), argv: [] } : after(t.indexOf("-r"));
    }
    case "mix":
      return t[0] === "run" ? after(t.indexOf("-e")) : undefined;
    case "deno":
      return t[0] === "eval" ? { code: t.filter((w, i) => i > 0 && !w.startsWith("-"))[0] ?? "", argv: [] } : undefined;
    case "elixir":
    case "iex":
      return after(t.indexOf("-e"));
    case "rails": {
      // `rails runner [-e ENV] CODE`
      const code = t
        .slice(1)
        .find((w, i, rest) => !w.startsWith("-") && !/^(-e|--environment)$/.test(rest[i - 1] ?? ""));
      return t[0] === "runner" ? { code: code ?? "", argv: [] } : undefined;
    }
    case "erl":
      return after(t.indexOf("-eval"));
    case "awk":
    case "gawk":
    case "mawk":
    case "nawk":
    case "busybox": {
      const program = t.find((w, i) => !w.startsWith("-") && !/^-[vfF]$/.test(t[i - 1] ?? ""));
      if (program === undefined || inv.program === "busybox") return undefined;
      // a line of input is a path the feeding listing found (`find /etc … | awk '{system("rm " $0)}'`)
      const root = listingRoot(inv);
      return { code: root ? program.replace(/\$0\b/g, `"${root}/\u0000found"`) : program, argv: [] };
    }
    default: {
      const at = t.findIndex((w) => /^-[a-zA-Z]*[ce]$/.test(w));
      const found = after(at);
      return found && found.argv.length && /argv|ARGV|\bshift\b/.test(found.code) ? found : undefined;
    }
  }
}
