/**
 * Inline interpreter code (python -c, perl -e, ruby -e, node -e, php -r, awk programs, lua, R, tcl, julia, groovy, elixir)
 * read for the same effects as shell commands: the commands it runs through system()/exec/popen and
 * the paths it deletes, moves, writes or chmods. A call whose argument is not a literal (a variable,
 * `$0`, decoded data) cannot be analysed and is reported as such, so the approver is asked.
 */

export type CodeLanguage =
  | "python"
  | "perl"
  | "ruby"
  | "node"
  | "php"
  | "awk"
  | "lua"
  | "r"
  | "tcl"
  | "julia"
  | "groovy"
  | "elixir";

export type CodeAction =
  | { kind: "shell"; script: string }
  | { kind: "code"; lang: CodeLanguage; code: string }
  | { kind: "delete"; path: string; recursive: boolean }
  | { kind: "move"; path: string }
  /** `append`: only adds to the file (judged like `>>`: harmful on system and credential files). */
  | { kind: "write"; path: string; append?: boolean }
  | { kind: "chmod"; path: string }
  | { kind: "unanalysable" }
  /** Processes forked in an endless loop. */
  | { kind: "forkbomb" }
  /** Code fetched from the network and evaluated (`fetch(u).then(r => r.text()).then(eval)`, `exec(urlopen(u).read())`). */
  | { kind: "remote_eval" }
  /** SQL given to a database driver (`cursor.execute('DROP TABLE t')`); `db`: the sqlite file it was opened on, when literal. */
  | { kind: "sql"; sql: string; db?: string }
  /** A cache or key-value store emptied (`redis.Redis().flushall()`). */
  | { kind: "flush" }
  /** A signal sent to init or to every process (`os.kill(1, 9)`, `kill 9, -1`). */
  | { kind: "killall" }
  /** A network connection handed to a shell (a reverse shell). */
  | { kind: "remote_access" };

interface Arg {
  /** The literal value, when the argument is made of string literals only. */
  literal?: string;
  /** Every string literal inside the argument (for argv lists). */
  strings: string[];
  /** Made of string literals, brackets and commas only (a literal argv list counts). */
  allLiteral: boolean;
  raw: string;
}

const INTERPOLATES: Record<CodeLanguage, RegExp | null> = {
  python: null,
  perl: /[$@]\w|\$\{/,
  ruby: /#\{/,
  node: null,
  php: /\$\w|\{\$/,
  awk: null,
  lua: null,
  r: null,
  tcl: /\$\w|\[/,
  julia: /\$\w|\$\(/,
  groovy: /\$\w|\$\{/,
  elixir: /#\{/,
};

/** Reads the call arguments starting just after `(`; returns them and the index after `)`. */
function readArgs(code: string, start: number, lang: CodeLanguage, closer = ")"): { args: Arg[]; end: number } {
  const args: Arg[] = [];
  let depth = 0;
  let cur: Arg = { strings: [], allLiteral: true, raw: "" };
  let literalParts: string[] = [];
  let sawNonString = false;
  const finish = () => {
    cur.raw = cur.raw.trim();
    if (cur.raw !== "") {
      cur.allLiteral = cur.allLiteral && cur.strings.length > 0;
      if (!sawNonString && literalParts.length) cur.literal = literalParts.join("");
      args.push(cur);
    }
    cur = { strings: [], allLiteral: true, raw: "" };
    literalParts = [];
    sawNonString = false;
  };
  let i = start;
  for (; i < code.length; i++) {
    const c = code[i]!;
    if (c === "'" || c === '"' || (c === "`" && (lang === "node" || lang === "python"))) {
      const r = readString(code, i, lang);
      cur.raw += code.slice(i, r.end);
      if (r.value === null) {
        cur.allLiteral = false;
        sawNonString = true;
      } else {
        cur.strings.push(r.value);
        if (depth === 0) literalParts.push(r.value);
        else sawNonString = true;
      }
      i = r.end - 1;
      continue;
    }
    if (c === "(" || c === "[" || c === "{") {
      depth++;
      cur.raw += c;
      continue;
    }
    if ((c === ")" || c === "]" || c === "}") && depth > 0) {
      depth--;
      cur.raw += c;
      continue;
    }
    if (depth === 0 && (c === closer || (closer === ")" && (c === ";" || c === "\n")))) break;
    if (depth === 0 && c === ",") {
      finish();
      continue;
    }
    cur.raw += c;
    if (/\s/.test(c) || c === "," || c === "+" || (c === "." && lang === "perl")) continue;
    if (depth > 0 && c === ",") continue;
    // a string prefix (python r/b/u, ruby %w) is part of the literal
    if (/[rbuRBU]/.test(c) && /['"]/.test(code[i + 1] ?? "") && lang === "python") continue;
    sawNonString = true;
    cur.allLiteral = false;
  }
  finish();
  return { args, end: i + 1 };
}

function readString(code: string, i: number, lang: CodeLanguage): { value: string | null; end: number } {
  const q = code[i]!;
  const triple = lang === "python" && code.startsWith(q.repeat(3), i);
  const open = triple ? 3 : 1;
  let j = i + open;
  let out = "";
  while (j < code.length) {
    if (triple ? code.startsWith(q.repeat(3), j) : code[j] === q) break;
    if (code[j] === "\\" && j + 1 < code.length) {
      const n = code[j + 1]!;
      out += n === "n" ? "\n" : n === "t" ? "\t" : n;
      j += 2;
      continue;
    }
    out += code[j++];
  }
  const end = Math.min(code.length, j + open);
  const prefix = code[i - 1] ?? "";
  const fstring = lang === "python" && /[fF]/.test(prefix) && /\{/.test(out);
  const template = q === "`" && /\$\{/.test(out);
  const interp = (q === '"' || q === "`") && INTERPOLATES[lang]?.test(out);
  return { value: fstring || template || interp ? null : out, end };
}

interface CallRule {
  re: RegExp;
  action: "shell" | "argv" | "delete" | "rdelete" | "move" | "write" | "chmod" | "eval";
  /** Which argument holds the path (default 0; -1 = last). */
  pathArg?: number;
}

const SHELL_CALLS: Record<CodeLanguage, CallRule[]> = {
  python: [
    { re: /\bos\.(?:system|popen)\s*\(/g, action: "shell" },
    { re: /\bsubprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)\s*\(/g, action: "argv" },
    { re: /\b(?:os\.(?:exec|spawn)[lvpe]*|pty\.spawn|commands\.getoutput)\s*\(/g, action: "argv" },
    { re: /(?<![\w.])(?:exec|eval|compile)\s*\(/g, action: "eval" },
    { re: /(?<![\w.])(?:shutil\.)?rmtree\s*\(/g, action: "rdelete" },
    { re: /\bos\.(?:remove|unlink|rmdir|removedirs)\s*\(/g, action: "delete" },
    { re: /\b(?:os\.(?:rename|replace)|shutil\.move)\s*\(/g, action: "move" },
    { re: /\bos\.(?:chmod|chown|lchown)\s*\(/g, action: "chmod" },
    { re: /\bos\.truncate\s*\(/g, action: "write" },
    { re: /\bshutil\.(?:copy\w*|copyfile)\s*\(/g, action: "write", pathArg: -1 },
  ],
  perl: [
    { re: /(?<![\w$>])(?:system|exec)(?!\w)\s*\(?/g, action: "argv" },
    { re: /\bqx\s*[({]/g, action: "shell" },
    { re: /(?<![\w$>])(?:rmtree|remove_tree)(?!\w)\s*\(?/g, action: "rdelete" },
    { re: /(?<![\w$>])(?:unlink|rmdir)(?!\w)\s*\(?/g, action: "delete" },
    { re: /(?<![\w$>])rename(?!\w)\s*\(?/g, action: "move" },
    { re: /(?<![\w$>])(?:chmod|chown)(?!\w)\s*\(?/g, action: "chmod", pathArg: -1 },
    { re: /(?<![\w$>])eval\s*\(?(?![\s(]*\{)/g, action: "eval" },
  ],
  ruby: [
    { re: /(?<![\w.])(?:Kernel\.)?(?:system|exec|spawn)(?!\w)\s*\(?/g, action: "argv" },
    { re: /\b(?:IO\.popen|Open3\.\w+)(?!\w)\s*\(?/g, action: "argv" },
    { re: /%x[({]/g, action: "shell" },
    { re: /\bFileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry\w*|rmtree|remove_tree)(?!\w)\s*\(?/g, action: "rdelete" },
    {
      re: /\b(?:FileUtils\.(?:rm|rm_f|remove|rmdir|safe_unlink)|File\.(?:delete|unlink)|Dir\.(?:delete|rmdir|unlink))(?!\w)\s*\(?/g,
      action: "delete",
    },
    { re: /\b(?:FileUtils\.(?:mv|move)|File\.rename)(?!\w)\s*\(?/g, action: "move" },
    { re: /\b(?:File|IO)\.(?:write|binwrite)(?!\w)\s*\(?/g, action: "write" },
    { re: /\bFile\.(?:truncate)(?!\w)\s*\(?/g, action: "write" },
    { re: /\b(?:FileUtils|File)\.(?:chmod\w*|chown\w*)(?!\w)\s*\(?/g, action: "chmod", pathArg: -1 },
    { re: /(?<![\w.])(?:eval|instance_eval|class_eval)(?!\w)\s*\(?/g, action: "eval" },
  ],
  node: [
    { re: /\b(?:execSync|exec|execFileSync|execFile|spawnSync|spawn|fork)\s*\(/g, action: "argv" },
    { re: /\b(?:Deno\.Command|Bun\.spawn(?:Sync)?)\s*\(/g, action: "argv" },
    { re: /\b(?:rmSync|rmdirSync|rimraf(?:\.sync)?|removeSync|emptyDirSync|remove)\s*\(/g, action: "rdelete" },
    { re: /\bfs(?:\.promises)?\.(?:rm|rmdir)\s*\(/g, action: "rdelete" },
    { re: /\b(?:unlinkSync|fs(?:\.promises)?\.unlink)\s*\(/g, action: "delete" },
    { re: /\bDeno\.remove(?:Sync)?\s*\(/g, action: "rdelete" },
    { re: /\bDeno\.(?:rename|move)(?:Sync)?\s*\(/g, action: "move" },
    { re: /\bDeno\.(?:writeTextFile|writeFile|truncate)(?:Sync)?\s*\(/g, action: "write" },
    { re: /\bDeno\.(?:chmod|chown)(?:Sync)?\s*\(/g, action: "chmod" },
    { re: /\bBun\.write\s*\(/g, action: "write" },
    { re: /\b(?:renameSync|fs(?:\.promises)?\.rename|moveSync)\s*\(/g, action: "move" },
    {
      re: /\b(?:writeFileSync|fs(?:\.promises)?\.writeFile|truncateSync|fs(?:\.promises)?\.truncate|appendFileSync)\s*\(/g,
      action: "write",
    },
    { re: /\b(?:copyFileSync|fs(?:\.promises)?\.copyFile|cpSync)\s*\(/g, action: "write", pathArg: 1 },
    { re: /\b(?:chmodSync|chownSync|fs(?:\.promises)?\.ch(?:mod|own))\s*\(/g, action: "chmod" },
    { re: /(?<![\w.])(?:eval|Function|runInNewContext|runInThisContext)\s*\(/g, action: "eval" },
  ],
  php: [
    { re: /\b(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec)\s*\(/g, action: "shell" },
    { re: /\b(?:unlink|rmdir)\s*\(/g, action: "delete" },
    { re: /\brename\s*\(/g, action: "move" },
    { re: /\b(?:file_put_contents)\s*\(/g, action: "write" },
    { re: /\b(?:chmod|chown)\s*\(/g, action: "chmod" },
    { re: /\b(?:eval|assert|create_function)\s*\(/g, action: "eval" },
  ],
  awk: [{ re: /\bsystem\s*\(/g, action: "shell" }],
  lua: [
    { re: /\b(?:os\.execute|io\.popen)\s*\(/g, action: "shell" },
    { re: /\bos\.remove\s*\(/g, action: "delete" },
    { re: /\bos\.rename\s*\(/g, action: "move" },
    { re: /\b(?:loadstring|load)\s*\(/g, action: "eval" },
  ],
  r: [
    { re: /\b(?:system2?|shell)\s*\(/g, action: "shell" },
    { re: /\bunlink\s*\(/g, action: "rdelete" },
    { re: /\bfile\.remove\s*\(/g, action: "delete" },
    { re: /\beval\s*\(\s*parse/g, action: "eval" },
  ],
  tcl: [{ re: /\bexec\s+/g, action: "argv" }],
  julia: [
    { re: /(?<![\w.])rm\s*\(/g, action: "delete" },
    { re: /(?<![\w.])mv\s*\(/g, action: "move" },
    { re: /(?<![\w.])(?:write|truncate)\s*\(/g, action: "write" },
    { re: /(?<![\w.])cp\s*\(/g, action: "write", pathArg: 1 },
    { re: /(?<![\w.])(?:chmod|chown)\s*\(/g, action: "chmod" },
    { re: /(?<![\w.])(?:eval|include_string)\s*\(/g, action: "eval" },
  ],
  groovy: [
    { re: /\bRuntime\.getRuntime\(\)\.exec\s*\(/g, action: "argv" },
    { re: /\bnew\s+ProcessBuilder\s*\(/g, action: "argv" },
    { re: /(?<![\w.])evaluate\s*\(/g, action: "eval" },
  ],
  elixir: [
    { re: /\bFile\.rm_rf!?\s*\(/g, action: "rdelete" },
    { re: /\bFile\.(?:rm|rmdir)!?\s*\(/g, action: "delete" },
    { re: /\bFile\.(?:rename|cp_r|cp)!?\s*\(/g, action: "move" },
    { re: /\bFile\.write!?\s*\(/g, action: "write" },
    { re: /\bFile\.(?:chmod|chown)!?\s*\(/g, action: "chmod" },
    { re: /\bSystem\.(?:cmd|shell)\s*\(/g, action: "argv" },
    { re: /:os\.cmd\s*\(/g, action: "shell" },
    { re: /\bCode\.eval_string\s*\(/g, action: "eval" },
  ],
};

/** The shell text of an argv-style call (`subprocess.run(["rm","-rf","/"])`, `system("rm", "-rf", …)`). */
function argvScript(args: Arg[], lang: CodeLanguage): string | null {
  const real = args.filter((a) => !/^\w+\s*[=:]|^\{/.test(a.raw) || (a.raw.startsWith("{") && lang === "perl"));
  if (!real.length) return null;
  if (real.every((a) => a.allLiteral)) {
    const strings = real.flatMap((a) => a.strings);
    // one string: a command line; several: an argv (quoted words joined)
    return strings.length === 1
      ? strings[0]!
      : strings.map((s) => (/^[\w./=:@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`)).join(" ");
  }
  return null;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Python with its import spellings undone, so the call rules see `os.remove(…)` whatever the import:
 * `__import__('os').remove`, `import os as o; o.remove`, `from os import remove as rm; rm(…)`,
 * `from shutil import *`-style bare names are matched by the rules themselves.
 */
/** `'o' + 's'` → `'os'`: adjacent string literals joined by `+` are one literal (the obfuscation undone). */
function foldConcat(code: string): string {
  let out = code;
  for (let k = 0; k < 16; k++) {
    const next = out.replace(/(['"])([^'"\\\n]*)\1\s*\+\s*(['"])([^'"\\\n]*)\3/g, (_m, _q, a: string, _q2, b: string) =>
      JSON.stringify(a + b),
    );
    if (next === out) break;
    out = next;
  }
  return out;
}

/**
 * Python variables bound once to a literal (`p = '/etc'`) are that literal where they are used as an argument;
 * a directory made by `tempfile.mkdtemp()` (or `TemporaryDirectory()`) is the program's own, like a `mktemp -d`
 * of the shell (`_mktemp_/…`, counted as inside the working directory).
 */
function pythonLiterals(code: string): string {
  const vars = new Map<string, string>();
  const counts = new Map<string, number>();
  for (const m of code.matchAll(/(?<![\w.=!<>])([A-Za-z_]\w*)\s*=(?!=)/g))
    counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
  for (const m of code.matchAll(
    /(?<![\w.=!<>])([A-Za-z_]\w*)\s*=\s*(?:[rbu]?(['"])([^'"\\{}\n]*)\2|(tempfile\.mkdtemp\s*\([^()]*\)|tempfile\.TemporaryDirectory\s*\([^()]*\)\.name))\s*(?=[;\n)]|$)/g,
  )) {
    if (counts.get(m[1]!) !== 1) continue;
    vars.set(m[1]!, m[4] ? `_mktemp_/${m[1]}` : m[3]!);
  }
  for (const m of code.matchAll(/\bwith\s+tempfile\.TemporaryDirectory\s*\([^()]*\)\s+as\s+(\w+)/g))
    vars.set(m[1]!, `_mktemp_/${m[1]}`);
  if (!vars.size) return code;
  // Replaced where they stand as a call argument: `rmtree(p)`, `os.remove(p, …)`, `Path(p)`.
  return code.replace(/([(,]\s*)([A-Za-z_]\w*)(?=\s*[,)])/g, (all, open: string, name: string) =>
    vars.has(name) ? open + JSON.stringify(vars.get(name)!) : all,
  );
}

function canonicalPython(code: string): string {
  code = pythonLiterals(foldConcat(code)).replace(
    /\b(?:__import__|importlib\.import_module)\(\s*[rbu]?(['"])([\w.]+)\1\s*\)/g,
    "$2",
  );
  // map(os.remove, glob.glob('/x/*')) → os.remove('/x/*'): a function mapped over the paths a literal pattern matches.
  code = code
    .replace(/\bglob\.i?glob\s*\(\s*[rbu]?(['"])([^'"{}]*)\1\s*(?:,[^()]*)?\)/g, "$1$2$1")
    .replace(/\b(?:list\s*\(\s*)?map\s*\(\s*((?:os|shutil)\.\w+)\s*,\s*/g, "$1(");
  // getattr(os, 'system') → os.system
  code = code.replace(/\bgetattr\(\s*([\w.]+)\s*,\s*[rbu]?(['"])(\w+)\2\s*\)/g, "$1.$3");
  let out = code.replace(/\b(?:__import__|importlib\.import_module)\(\s*[rbu]?(['"])([\w.]+)\1\s*\)/g, "$2");
  for (const m of code.matchAll(/\bimport\s+([\w.]+)\s+as\s+(\w+)/g)) {
    if (m[2] !== m[1]) out = out.replace(new RegExp(`(?<![\\w.])${escapeRe(m[2]!)}\\.`, "g"), `${m[1]}.`);
  }
  for (const m of code.matchAll(/\bfrom\s+([\w.]+)\s+import\s+\(?([\w\s,]+)\)?/g)) {
    for (const item of m[2]!.split(",")) {
      const [name, alias] = item.trim().split(/\s+as\s+/);
      if (!name || !/^\w+$/.test(name)) continue;
      const local = alias?.trim() || name;
      out = out.replace(new RegExp(`(?<![\\w.])${escapeRe(local)}(?=\\s*[(.])`, "g"), `${m[1]}.${name}`);
    }
  }
  return homePaths(out);
}

const PY_LIT = String.raw`[rbu]?(['"])([^'"\\{}]*)`;
/**
 * The home directory as Python spells it is `~`: `Path.home()`, `os.path.expanduser('~/x')`,
 * `Path('~/x').expanduser()`, `os.environ['HOME']` / `os.getenv('HOME')`; joined literal parts
 * (`.joinpath('a', 'b')`, `/ 'a'`, `os.path.join('~', 'a')`) make one literal path the rules read.
 */
function homePaths(code: string): string {
  const lit = (s: string) => JSON.stringify(s);
  let out = code
    .replace(/\bos\.(?:environ\[\s*(['"])HOME\1\s*\]|(?:environ\.get|getenv)\(\s*(['"])HOME\2\s*\))/g, '"~"')
    .replace(new RegExp(String.raw`\bos\.path\.expanduser\(\s*${PY_LIT}\1\s*\)`, "g"), (_m, _q, p: string) => lit(p))
    .replace(
      new RegExp(String.raw`\bPath\(\s*${PY_LIT}\1\s*\)\.expanduser\(\)`, "g"),
      (_m, _q, p: string) => `Path(${lit(p)})`,
    )
    .replace(/\b(?:pathlib\.)?Path\.home\(\)/g, 'Path("~")');
  // os.path.join of literals
  out = out.replace(/\bos\.path\.join\(([^()]*)\)/g, (m, inner: string) => {
    const parts = inner.split(",").map((x) => /^\s*[rbu]?(['"])([^'"\\{}]*)\1\s*$/.exec(x)?.[2]);
    return parts.every((x) => x !== undefined) ? lit(posixJoin(parts as string[])) : m;
  });
  // Path("a").joinpath("b", …) and Path("a") / "b" / …
  for (let k = 0; k < 8; k++) {
    const before = out;
    out = out
      .replace(
        new RegExp(String.raw`Path\(\s*${PY_LIT}\1\s*\)\s*\.joinpath\(([^()]*)\)`, "g"),
        (m, _q, base: string, inner: string) => {
          const parts = inner.split(",").map((x) => /^\s*[rbu]?(['"])([^'"\\{}]*)\1\s*$/.exec(x)?.[2]);
          return parts.every((x) => x !== undefined) ? `Path(${lit(posixJoin([base, ...(parts as string[])]))})` : m;
        },
      )
      .replace(
        new RegExp(String.raw`Path\(\s*${PY_LIT}\1\s*\)\s*/\s*${PY_LIT}\3`, "g"),
        (_m, _q, base: string, _q2, rest: string) => `Path(${lit(posixJoin([base, rest]))})`,
      )
      .replace(/(?<![\w.])\(\s*(Path\("[^"]*"\))\s*\)/g, "$1");
    if (out === before) break;
  }
  return out;
}

const posixJoin = (parts: string[]): string =>
  parts.reduce((a, b) => (b.startsWith("/") ? b : a === "" ? b : `${a.replace(/\/+$/, "")}/${b}`), "");

/** Perl: `glob "x"` / `<*.tmp>` is a list of paths; read it as the literal pattern. */
function canonicalPerl(code: string): string {
  // `use File::Path qw(remove_tree);` imports a name: it is not a call.
  code = code.replace(
    /\b(?:use|no|require)\s+[\w:]+(?:\s+qw\s*(?:\([^)]*\)|\/[^/]*\/|\{[^}]*\}|\[[^\]]*\])|\s+(['"])[^'"]*\1)?\s*;/g,
    ";",
  );
  return code
    .replace(/\bglob\s*\(?\s*(['"])([^'"$@]*)\1\s*\)?/g, "$1$2$1")
    .replace(/<([^<>$@\s]*[*?][^<>$@\s]*)>/g, '"$1"');
}

/**
 * PHP: a function named by a string and called on a list (`array_map('unlink', …)`, `array_walk(…)`,
 * `call_user_func('system', …)`) is a call of that function; `glob('x')` is the list of paths matching the pattern.
 */
function canonicalPhp(code: string): string {
  return code
    .replace(/\bglob\s*\(\s*(['"])([^'"$]*)\1\s*\)/g, "$1$2$1")
    .replace(/\b(?:array_map|call_user_func(?:_array)?)\s*\(\s*(['"])(\w+)\1\s*,\s*/g, "$2(")
    .replace(/\barray_walk\s*\(\s*((['"])[^'"]*\2)\s*,\s*(['"])(\w+)\3\s*\)/g, "$4($1)");
}

/** Ruby: `Dir.glob("x")` / `Dir["x"]` is the list of paths matching the literal pattern: read it as the pattern. */
function canonicalRuby(code: string): string {
  return code.replace(/\bDir(?:\.glob\s*\(\s*|\[\s*)(['"])([^'"#]*)\1\s*[)\]]/g, "$1$2$1");
}

/**
 * Tcl: `file delete ?-force? ?--? path …` with its words read as Tcl reads them ({…} and "…" quoting);
 * a word with `$` or `[` in it is computed.
 */
function tclDeletes(code: string): CodeAction[] {
  const out: CodeAction[] = [];
  for (const m of code.matchAll(/\bfile\s+delete\b([^;\n\]]*)/g)) {
    const words = m[1]!.match(/\{[^}]*\}|"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
    let opts = true;
    for (const w of words) {
      if (opts && w === "--") {
        opts = false;
        continue;
      }
      if (opts && /^-\w+$/.test(w)) continue;
      opts = false;
      const text = w.replace(/^\{([\s\S]*)\}$|^"([\s\S]*)"$/, (_a, b?: string, q?: string) => b ?? q ?? "");
      if (!w.startsWith("{") && /[$[]/.test(text)) out.push({ kind: "unanalysable" });
      else out.push({ kind: "delete", path: text, recursive: true });
    }
  }
  return out;
}

/** awk: string variables assigned a literal (`cmd="rm -rf /x"`) replaced where they are used as a command. */
function canonicalAwk(code: string): string {
  const vars = new Map<string, string>();
  for (const m of code.matchAll(/(?<![\w$=!<>])([A-Za-z_]\w*)\s*=\s*("(?:[^"\\]|\\.)*")\s*(?=[;}\n]|$)/g))
    vars.set(m[1]!, m[2]!);
  if (!vars.size) return code;
  return code
    .replace(/(\|\s*(?:&\s*)?)([A-Za-z_]\w*)(?=\s*(?:[;}\n)]|$))/g, (all, bar: string, name: string) =>
      vars.has(name) ? bar + vars.get(name)! : all,
    )
    .replace(/(?<![\w$])([A-Za-z_]\w*)(\s*\|\s*getline)/g, (all, name: string, rest: string) =>
      vars.has(name) ? vars.get(name)! + rest : all,
    )
    .replace(/\b(system\s*\(\s*)([A-Za-z_]\w*)(\s*\))/g, (all, open: string, name: string, close: string) =>
      vars.has(name) ? open + vars.get(name)! + close : all,
    );
}

// A fork call, and a loop that never ends around it (or fork as its own loop condition).
const FORK_CALL: Partial<Record<CodeLanguage, RegExp>> = {
  python: /\bos\.fork\s*\(|\bos\.forkpty\s*\(/,
  perl: /(?<![\w$>])fork(?!\w)/,
  ruby: /(?<![\w.])(?:Process\.)?fork(?!\w)/,
  node: /\b(?:fork|spawn|exec|execFile)\s*\(/,
  php: /\bpcntl_fork\s*\(/,
  lua: /\bposix\.fork\s*\(/,
  julia: /\b(?:run|fork)\s*\(/,
};
const ENDLESS =
  /\bwhile\s*\(\s*(?:1|true|!0|True)\s*\)|\bwhile\s*\(?\s*(?:1|true|True|fork(?:\(\))?|os\.fork\(\))\s*\)?\s*(?::|\{|do\b|;|$)|\bwhile\s+(?:1|true|fork)\b|\bfor\s*\(\s*;\s*;\s*\)|\bloop\s*(?:\{|do\b)|\buntil\s*\(?\s*(?:0|false)\b|\biter\s*\(\s*int\s*,\s*1\s*\)|\bitertools\.count\s*\(|\b(?:1|fork)\s+while\s+(?:1|fork)\b|\bsetInterval\s*\(/;

/** awk code with the insides of strings and /regex/ literals replaced by `_` (same length, so indices match). */
function maskAwk(code: string): string {
  let out = "";
  let prev = "";
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (c === '"' || (c === "/" && (prev === "" || "(,~!{};&|=?:\n".includes(prev)))) {
      let j = i + 1;
      while (j < code.length && code[j] !== c && !(c === "/" && code[j] === "\n")) j += code[j] === "\\" ? 2 : 1;
      out += c + "_".repeat(Math.max(0, Math.min(j, code.length) - i - 1)) + (j < code.length ? c : "");
      i = j;
      prev = c === '"' ? '"' : "r";
      continue;
    }
    out += c;
    if (!/\s/.test(c) || c === "\n") prev = c;
  }
  return out.slice(0, code.length);
}

/** 1 at each position inside a quoted string literal ('…' or "…", backslash escapes honoured), else 0. */
function stringSpans(code: string): Uint8Array {
  const out = new Uint8Array(code.length + 1);
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (c !== '"' && c !== "'") continue;
    let j = i + 1;
    while (j < code.length && code[j] !== c && code[j] !== "\n") j += code[j] === "\\" ? 2 : 1;
    if (j >= code.length || code[j] !== c) continue;
    out.fill(1, i + 1, j);
    i = j;
  }
  return out;
}

/** Reads the actions of a piece of inline code. `literal`: the shell passed it without unresolved expansions. */
export function inlineCodeActions(lang: CodeLanguage, source: string, literal = true): CodeAction[] {
  const code =
    lang === "python"
      ? canonicalPython(source)
      : lang === "perl"
        ? canonicalPerl(source)
        : lang === "awk"
          ? canonicalAwk(source)
          : lang === "ruby"
            ? canonicalRuby(source)
            : lang === "php"
              ? canonicalPhp(source)
              : source;
  const out: CodeAction[] = [];
  if (!literal && /\$\(|`/.test(code)) out.push({ kind: "unanalysable" });
  // Names computed at run time: a module, attribute or builtin looked up by a string that is not a literal
  // (`getattr(__import__('o'+x), …)`, `globals()['sys'+'tem']`): what runs cannot be read.
  if (
    lang === "python" &&
    (/\b(?:getattr|__import__|import_module)\s*\(\s*(?:[^)'"]*,\s*)?(?![rbu]?['"][\w.]+['"]\s*[,)])[^)\s]/.test(code) ||
      /\b(?:globals|locals|vars)\(\)\s*\[(?!\s*['"]\w+['"]\s*\])/.test(code) ||
      /\b__builtins__\b|\b__dict__\s*\[/.test(code))
  )
    out.push({ kind: "unanalysable" });
  const fork = FORK_CALL[lang];
  if (fork && fork.test(code) && (ENDLESS.test(code) || /\bfork\s+while\b|\bwhile\s+fork\b/.test(code)))
    out.push({ kind: "forkbomb" });
  // Where string literals stand: a call's name inside a string (`system("bundle", "exec", "rspec")`) is data, not a call.
  const inString = stringSpans(code);
  for (const rule of SHELL_CALLS[lang]) {
    rule.re.lastIndex = 0;
    let m: RegExpExecArray | null;
    let guard = 0;
    while ((m = rule.re.exec(code)) && guard++ < 64) {
      if (inString[m.index] === 1 && lang !== "awk" && lang !== "tcl") continue;
      const opened = m[0].trimEnd().endsWith("(") || m[0].endsWith("{");
      const closer = m[0].endsWith("{") ? "}" : opened ? ")" : ";";
      const { args } = readArgs(code, m.index + m[0].length, lang, closer);
      // Perl's bare `eval` evaluates $_, text the program computed (`tr/a-z/n-za-m/; eval`).
      if (
        !args.length &&
        rule.action === "eval" &&
        lang === "perl" &&
        /^\s*(?:;|\}|$)/.test(code.slice(m.index + m[0].length))
      )
        out.push({ kind: "unanalysable" });
      if (!args.length) continue;
      // The last positional argument: keyword arguments (`dirs_exist_ok=True`, `follow_symlinks=False`) are options, not paths.
      const positional = lang === "python" ? args.filter((a) => !/^\s*[A-Za-z_]\w*\s*=(?!=)/.test(a.raw)) : args;
      const first =
        rule.pathArg === -1 ? (positional[positional.length - 1] ?? args[args.length - 1]!) : args[rule.pathArg ?? 0]!;
      switch (rule.action) {
        case "shell": {
          if (first.literal !== undefined) out.push({ kind: "shell", script: first.literal });
          else out.push({ kind: "unanalysable" });
          break;
        }
        case "argv": {
          const s = argvScript(args, lang);
          if (s !== null) out.push({ kind: "shell", script: s });
          else out.push({ kind: "unanalysable" });
          break;
        }
        case "eval":
          if (first.literal !== undefined && first.allLiteral) out.push({ kind: "code", lang, code: first.literal });
          else out.push({ kind: "unanalysable" });
          break;
        default: {
          // A literal directory joined with a computed name (`'./tmp/' + f`, `dir + '/'` aside): a file in that directory.
          const joined = /^\s*(['"`])([^'"`$\\]*\/)\1\s*\+\s*[\w.$]+\s*$/.exec(first.raw)?.[2];
          const path =
            first.literal ??
            (joined !== undefined && !/(?:^|\/)\.\.(?:\/|$)/.test(joined) ? `${joined}_item_` : undefined) ??
            (rule.action === "chmod" ? args.find((a) => a.literal !== undefined)?.literal : undefined);
          if (path === undefined) {
            out.push({ kind: "unanalysable" });
            break;
          }
          if (rule.action === "rdelete" || rule.action === "delete") {
            const options = args
              .slice(1)
              .map((a) => a.raw)
              .join(" ");
            const recursive =
              (rule.action === "rdelete" &&
                !(lang === "node" && /rmdir/.test(m[0]) && !/recursive\s*:\s*true/.test(options))) ||
              (lang === "julia" && /^[^)]*recursive\s*=\s*true/.test(code.slice(m.index + m[0].length)));
            out.push({ kind: "delete", path, recursive });
          } else out.push({ kind: rule.action, path });
          if (rule.action === "move" && args[1]?.literal !== undefined)
            out.push({ kind: "write", path: args[1].literal });
        }
      }
    }
  }
  // Text read from the network and evaluated as code in the same program: run code downloaded from the network.
  const fetches =
    /\bfetch\s*\(|\b(?:https?|axios|got|request|undici)\s*\.\s*(?:get|request)\s*\(|\burlopen\s*\(|\brequests\s*\.\s*get\s*\(|\burllib\b|\bURI\s*\.\s*open\b|\bNet::HTTP\b|\bfile_get_contents\s*\(\s*['"]https?:|\bLWP::|\bHTTP::Tiny\b/;
  const evaluates =
    /(?<![\w.])(?:eval|exec)\b\s*[()]|\bnew\s+Function\s*\(|(?<![\w.])Function\s*\(|\bvm\s*\.\s*run\w*\s*\(|\brunInThisContext\b|\binstance_eval\b|\bimport\s*\(\s*['"`]?data:/;
  // More runtimes: Julia `include(download(URL))`, R `source("https://…")` / `eval(parse(url(…)))`, Elixir `Code.eval_string` of a
  // `Req.get!` body, Lua `load(http.request(…))`.
  const fetchesMore =
    /\b(?:Downloads\.)?download\s*\(|\bReq\.(?:get|request|post)!?\s*\(|\bHTTPoison\.|:httpc\.request|\bhttr2?::|\bcurl::|\burl\s*\(\s*['"]https?:|\bHTTP\.(?:get|request)\s*\(|\bhttp\.request\s*\(|\bFinch\.|\bTesla\./;
  const evaluatesMore =
    /\binclude\s*\(|\bCode\.(?:eval_string|eval_file|eval_quoted|compile_string|require_file)\b|(?<![\w.])source\s*\(|\beval\s*\(\s*parse\b|(?<![\w.])(?:load|loadstring|dofile|evalfile)\s*\(|\binclude_string\s*\(|\bMeta\.parse\b/;
  if ((fetches.test(code) || fetchesMore.test(code)) && (evaluates.test(code) || evaluatesMore.test(code)))
    out.push({ kind: "remote_eval" });
  else if (/(?<![\w.])(?:source|include|load|require|sys\.source|dofile|import)\s*\(?\s*['"]https?:\/\//.test(code))
    out.push({ kind: "remote_eval" });
  // SQL as a literal anywhere in the code (`execute(conn, "TRUNCATE ledger")`, `dbExecute(con, "DELETE FROM m")`): judged as SQL.
  // Only a literal handed to a call (not printed, measured or formatted: `print('DROP TABLE x')` writes text).
  for (const m of code.matchAll(
    /(['"])\s*((?:TRUNCATE|DROP\s+(?:TABLE|DATABASE|SCHEMA|COLLECTION|KEYSPACE)|DELETE\s+FROM|UPDATE\s+[\w."`]+\s+SET)\b(?:(?!\1)[^\\]|\\.)*)\1/gi,
  )) {
    const call = /([\w.$:]+)\s*\(\s*(?:(?:[^()'"]|\((?:[^()]|\([^()]*\))*\))*,\s*)?$/.exec(
      code.slice(0, m.index!),
    )?.[1];
    if (
      call === undefined ||
      /(?:^|[.:])(?:print\w*|puts|p|pp|log|info|warn|error|debug|echo|write\w*|say|message|cat|format|sprintf|len|length|str|repr|assert\w*|display|show|dump|inspect|IO\.puts|println)$/i.test(
        call,
      )
    )
      continue;
    if (/^\s*\.(?:length|size|len|lower|upper|split|strip|replace)\b/.test(code.slice(m.index! + m[0].length)))
      continue;
    out.push({ kind: "sql", sql: m[2]! });
  }
  // Bun shell and zx template literals (`await Bun.$\`rm -rf …\``, `await $\`…\``): a command line; process.env.X is $X.
  if (lang === "node") {
    for (const m of code.matchAll(/(?:\bBun\.)?(?<![\w$])\$`((?:[^`\\]|\\.)*)`/g)) {
      const script = m[1]!
        .replace(/\$\{\s*process\.env\.(\w+)\s*\}/g, "$$$1")
        .replace(/\$\{\s*(?:os\.homedir\(\)|homedir\(\))\s*\}/g, "$$HOME");
      out.push(/\$\{/.test(script) ? { kind: "unanalysable" } : { kind: "shell", script });
    }
  }
  if (lang === "tcl") out.push(...tclDeletes(code));
  // SQL given to a driver as a literal (`cur.execute('DROP TABLE t')`, `db.exec("DELETE FROM x")`, `$dbh->do(…)`):
  // judged like SQL given to a client. A sqlite file opened by a literal path travels with it.
  const sqliteDb =
    /\bsqlite3?\.(?:connect|open|Database)\s*\(\s*[rbu]?(['"])([^'"]+)\1|\bnew\s+(?:Database|sqlite3\.Database|SQLite3::Database)\s*\(?\s*(['"])([^'"]+)\3|\bSQLite3::Database\.new\s*\(?\s*(['"])([^'"]+)\5/.exec(
      code,
    );
  const db = sqliteDb ? (sqliteDb[2] ?? sqliteDb[4] ?? sqliteDb[6]) : undefined;
  const onlySqlite =
    /\bsqlite3?\b|SQLite3|better-sqlite3/.test(code) &&
    !/\b(?:psycopg2?|pymysql|MySQLdb|mysql|pg|asyncpg|sqlalchemy|mongo|DBI->connect\s*\(\s*['"]dbi:(?!SQLite))/i.test(
      code,
    );
  for (const m of code.matchAll(
    /(?:\.|->)\s*(?:execute|executescript|executemany|exec|query|do|run|raw|prepare|exec_query|execute_batch|executeQuery|executeUpdate|sql)\s*\(\s*[rbuf]?("""|'{3}|['"`])/g,
  )) {
    const r = readString(code, m.index! + m[0].length - m[1]!.length, lang);
    if (r.value !== null) out.push({ kind: "sql", sql: r.value, db: onlySqlite ? db : undefined });
  }
  // Redis / Memcached clients emptying the store.
  if (/(?:\.|->|::)\s*(?:flushall|flushdb|flush_all|flushAll|flushDb|flushDB|flush_db)\b/.test(code))
    out.push({ kind: "flush" });
  // A signal to init or to every process: `os.kill(1, …)`, `os.kill(-1, …)`, `process.kill(1)`, `kill 9, -1`, `Process.kill(:KILL, -1)`.
  if (
    /\b(?:os\.kill|os\.killpg|process\.kill|posix\.kill)\s*\(\s*-?1\s*[,)]|\bProcess\.kill\s*\(?\s*[^,()]+,\s*-?1\s*\)?(?![\w.])|(?<![\w$>])kill\s*\(?\s*(?:'?-?\w+'?|"-?\w+")\s*,\s*-?1\s*\)?\s*(?:;|$)|\bposix_kill\s*\(\s*-?1\s*,/.test(
      code,
    ) &&
    !/\b(?:os\.kill|process\.kill|posix_kill)\s*\(\s*-?1\s*,\s*0\s*\)/.test(code)
  )
    out.push({ kind: "killall" });
  // A reverse shell: a connection opened to a host, and a shell (or the process's own stdin/stdout) handed to it.
  const connects =
    /\bsocket\s*\.\s*(?:socket|create_connection)\b|\.connect\s*\(|\bfsockopen\s*\(|\bstream_socket_client\s*\(|\bTCPSocket\b|\bIO::Socket\b|(?<![\w$])socket\s*\(\s*[A-Z]|\bnet\.(?:connect|createConnection|Socket)\b|\/inet6?\/(?:tcp|udp)\/|\bsocket\.tcp\s*\(|\bjava\.net\.Socket\b|new\s+Socket\s*\(/;
  const handsOver =
    /\bdup2\s*\(|\breopen\s*\(|\bopen\s*\(\s*STD(?:IN|OUT|ERR)\s*,\s*['"][<>+]*&|\bpty\.spawn\b|<&\s*\d|>&\s*\d|\.pipe\s*\(\s*\w+\.stdin\b|\bstdio\s*:\s*\[\s*\w+|\|&/;
  const runsShell =
    /['"`](?:\/bin\/|\/usr\/bin\/)?(?:ba|z|da|k|c)?sh(?:\s+-i)?['"`\s]|['"`]cmd(?:\.exe)?['"`]|\bexec\s*\(?\s*['"]\/bin\//;
  if (
    connects.test(code) &&
    (handsOver.test(code) ||
      (runsShell.test(code) &&
        /\b(?:exec|system|spawn|popen|proc_open|shell_exec|passthru|subprocess|Popen|call)\b/.test(code)))
  )
    out.push({ kind: "remote_access" });
  // Python pathlib: Path('x').unlink() / .rmdir() / .write_text()
  if (lang === "python") {
    // Paths found by glob/rglob/iterdir of a literal Path (or glob/listdir/walk of a literal directory) and then
    // unlinked or removed: deletes under that path.
    if (/\.(?:unlink|rmdir)\s*\(|\b(?:rmtree|os\.remove|os\.unlink)\s*\(/.test(code)) {
      for (const m of code.matchAll(/Path\(\s*[rb]?(['"])(.*?)\1\s*\)\s*\.\s*(rglob|glob|iterdir|walk)\s*\(/g))
        out.push({
          kind: "delete",
          path: m[2]!.replace(/\/+$/, "") + "/_item_",
          recursive: m[3] === "rglob" || m[3] === "walk",
        });
      for (const m of code.matchAll(/\b(?:glob\.i?glob|os\.listdir|os\.scandir|os\.walk)\s*\(\s*[rb]?(['"])(.*?)\1/g))
        out.push({
          kind: "delete",
          path: m[2]!.includes("*") ? m[2]! : m[2]!.replace(/\/+$/, "") + "/_item_",
          recursive: true,
        });
    }
    for (const m of code.matchAll(
      /Path\(\s*[rb]?(['"])(.*?)\1\s*\)\.(unlink|rmdir|write_text|write_bytes|chmod|rename|replace)\s*\(/g,
    )) {
      const kind =
        m[3] === "unlink" || m[3] === "rmdir"
          ? "delete"
          : m[3] === "chmod"
            ? "chmod"
            : m[3] === "rename" || m[3] === "replace"
              ? "move"
              : "write";
      out.push(kind === "delete" ? { kind, path: m[2]!, recursive: false } : { kind, path: m[2]! });
    }
    for (const m of code.matchAll(
      /\bopen\(\s*[rb]?(['"])(.*?)\1\s*,\s*(?:mode\s*=\s*)?[rb]?(['"])([^'"]*[wax+][^'"]*)\3/g,
    ))
      out.push({ kind: "write", path: m[2]!, append: /a/.test(m[4]!) && !/[wx+]/.test(m[4]!) });
    if (
      /\b(?:b64decode|b32decode|a85decode|codecs\.decode|bytes\.fromhex|zlib\.decompress|marshal\.loads|pickle\.loads)\b/.test(
        code,
      ) &&
      /(?<![\w.])(?:exec|eval)\s*\(|\bos\.system\s*\(|subprocess/.test(code)
    )
      out.push({ kind: "unanalysable" });
  }
  if (lang === "perl") {
    for (const m of code.matchAll(
      /\bopen\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*(['"])\s*(\+?>{1,2}|\+<)\s*\1\s*,\s*(['"])(.*?)\3/g,
    ))
      out.push({ kind: "write", path: m[4]!, append: m[2] === ">>" || m[2] === "+>>" });
    for (const m of code.matchAll(/\bopen\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*(['"])\s*(>{1,2})\s*([^'"\s]+)\1/g))
      out.push({ kind: "write", path: m[3]!, append: m[2] === ">>" });
    // truncate "file", 0
    for (const m of code.matchAll(/(?<![\w$>])truncate\s*\(?\s*(['"])([^'"]+)\1/g))
      out.push({ kind: "write", path: m[2]! });
    for (const m of code.matchAll(/\bopen\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*(['"])\s*(?:\|-?|-\|)\s*\1?/g))
      out.push({ kind: "unanalysable" }) && m;
    for (const m of code.matchAll(/`([^`]*)`/g))
      out.push(/[$@]\w/.test(m[1]!) ? { kind: "unanalysable" } : { kind: "shell", script: m[1]! });
  }
  if (lang === "ruby") {
    for (const m of code.matchAll(/\b(?:File|IO)\.open\s*\(?\s*(['"])(.*?)\1\s*,\s*(['"])([wa+r][^'"]*)\3/g))
      if (/[wa+]/.test(m[4]!))
        out.push({ kind: "write", path: m[2]!, append: /^a/.test(m[4]!) && !m[4]!.includes("+") });
  }
  if (lang === "julia") {
    // run(`cmd`), read(`cmd`, String), pipeline(`cmd`): a command literal runs without a shell, word by word.
    for (const m of code.matchAll(/`([^`]*)`/g))
      out.push(/\$/.test(m[1]!) ? { kind: "unanalysable" } : { kind: "shell", script: m[1]! });
  }
  if (lang === "groovy") {
    // "cmd".execute(), ["rm", "-rf", p].execute(), new File("x").delete() / .deleteDir() / .write(…) / .text = …
    for (const m of code.matchAll(/(['"])((?:(?!\1)[^\\]|\\.)*)\1\s*\.execute\s*\(/g))
      out.push(m[1] === '"' && /\$/.test(m[2]!) ? { kind: "unanalysable" } : { kind: "shell", script: m[2]! });
    for (const m of code.matchAll(/\[([^\]]*)\]\s*\.execute\s*\(/g)) {
      const { args } = readArgs(m[1]! + ")", 0, lang);
      const script = argvScript(args, lang);
      out.push(script === null ? { kind: "unanalysable" } : { kind: "shell", script });
    }
    for (const m of code.matchAll(
      /\bnew\s+File\s*\(\s*(['"])([^'"]*)\1\s*\)\s*\.\s*(deleteDir|delete|write|setText|append|leftShift|withWriter|renameTo|setWritable|setExecutable|text\s*=|bytes\s*=)/g,
    )) {
      const verb = m[3]!;
      const path = m[2]!;
      if (verb === "deleteDir" || verb === "delete")
        out.push({ kind: "delete", path, recursive: verb === "deleteDir" });
      else if (verb === "renameTo") out.push({ kind: "move", path });
      else if (verb === "setWritable" || verb === "setExecutable") out.push({ kind: "chmod", path });
      else out.push({ kind: "write", path, append: verb === "append" || verb === "leftShift" });
    }
  }
  if (lang === "ruby" || lang === "php") {
    for (const m of code.matchAll(/`([^`]*)`/g))
      out.push(/#\{|\$\w/.test(m[1]!) ? { kind: "unanalysable" } : { kind: "shell", script: m[1]! });
  }
  if (lang === "awk") {
    // print … | "cmd"  /  "cmd" | getline  /  print > "file" — looked for outside strings and /regex/ literals
    // (`/DROP|TRUNCATE/` is a pattern, `a || b` a condition); the strings themselves are read from the code.
    const masked = maskAwk(code);
    const original = (m: RegExpMatchArray, re: RegExp) => re.exec(code.slice(m.index!, m.index! + m[0].length))!;
    for (const mm of masked.matchAll(/(?<!\|)\|(?!\|)\s*(?:&\s*)?("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)/g)) {
      const m = original(mm, /\|\s*(?:&\s*)?("(?:[^"\\]|\\.)*"|[A-Za-z_$][\w$]*)/);
      const target = m[1]!;
      // printed text piped into a shell or interpreter runs as code
      if (
        target.startsWith('"') &&
        /^"\s*(?:\S*\/)?(?:(?:ba|z|da|k|c|tc)?sh|python\S*|perl|ruby|node|php)(?:\s+-\S+)*\s*"$/.test(target)
      )
        out.push({ kind: "unanalysable" });
      else if (target.startsWith('"')) out.push({ kind: "shell", script: target.slice(1, -1) });
      else if (target !== "getline") out.push({ kind: "unanalysable" });
    }
    for (const mm of masked.matchAll(/("(?:[^"\\]|\\.)*")\s*\|\s*getline/g))
      out.push({ kind: "shell", script: original(mm, /("(?:[^"\\]|\\.)*")/)[1]!.slice(1, -1) });
    // `cmd | getline` with cmd not a known literal: a command computed at run time.
    for (const _ of masked.matchAll(/(?<!["\w$])(?:[A-Za-z_]\w*|\$\w+|\))\s*\|\s*getline/g))
      out.push({ kind: "unanalysable" });
    for (const mm of masked.matchAll(/print[f]?[^;}>|]*>\s*"([^"]+)"/g))
      out.push({ kind: "write", path: original(mm, /"([^"]+)"\s*$/)[1]! });
  }
  return out;
}

/** Holds what the judge needs; inline code never reaches this file's callers except as actions. */
export interface InlineCodeSink {
  analyseShell(script: string): void;
}
