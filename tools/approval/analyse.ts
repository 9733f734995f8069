/**
 * The shell-aware rendering the dangerous-command patterns (patterns.ts) run on.
 *
 * How it sees through disguises: the command is normalised (ANSI, NUL, invisible characters,
 * NFKC), then read by a small shell parser (shell.ts) that unquotes words (`r''m`, `r\m`,
 * `"rm"`, `$'\x72m'` → `rm`), splits `;` `&&` `||` `|` `&` and newlines, and descends into
 * subshells, `$( … )`, backticks, `<( … )` and here-documents. Each simple command is unwrapped
 * (sudo, doas, env and `VAR=x` prefixes, nohup, nice, timeout, exec, command, xargs, docker exec,
 * ssh) and scripts given to `bash -c`, `sh -c`, `su -c`, `eval`, `watch`, `find -exec` and shell
 * here-docs are analysed recursively. Every pipeline is then rendered as one line:
 *
 *     <stage> | <stage> | …      where <stage> = name arg arg … [fd]>target …
 *
 * with the command name reduced to its basename and the characters `|`, `<`, `>` inside words
 * replaced by look-alikes (¦ ‹ ›), so a quoted `"a | rm -rf /"` can never look like a pipeline
 * stage or a redirection. The patterns (patterns.ts) match that rendering, case-insensitively.
 *
 * Each simple command (wrappers removed) is also handed, with its words, redirections, the working
 * directory and the previous pipeline stage, to the effect judge (judge.ts), whose findings are
 * classes of their own (delete/move/overwrite outside the working directory, text fed into a shell,
 * inline interpreter code, teardown, system state, …).
 *
 * Judgement calls:
 *  - A recursive `rm` is flagged only when a target leaves the working directory or cannot be
 *    known: absolute paths, `~`/`$HOME`, `..`, `.`, `*`, `$VAR`, `$( … )`. `rm -rf ./build`,
 *    `rm -rf node_modules dist` are not flagged; `rm -rf /tmp/x` is (the approver decides).
 *    `$(pwd)`/`$PWD` are the working directory; a variable set from `$(mktemp …)` is the command's own.
 *  - Words are brace-expanded (`{rm,-rf,/x}`); what xargs, parallel and `find -exec` feed in (`{}`,
 *    `$1`, `"$@"` of a `sh -c` script) stands for a path inside the working directory when the
 *    producer lists such paths (or find's roots are inside), and for an unknown path otherwise.
 *  - `chmod 777 file` in the working directory is not flagged; world-writable modes are flagged
 *    when recursive or on a system path.
 *  - `bash -c`/`python -c` are not flagged for being `-c` (Hermes v-A did): the script of a shell
 *    `-c` is analysed itself, so a harmless one passes and a harmful one is caught.
 *  - The working directory is followed through `cd`, `pushd` and `popd` (and a start directory
 *    may be given): once it is anywhere but a subdirectory of the start, the relative operands
 *    of `rm` and the relative targets of write redirections are rendered joined to it
 *    (`cd /usr && rm -rf lib` renders `rm -rf /usr/lib`), so the patterns see where they land.
 *    A directory that cannot be known (`cd -`, `popd`, `cd $(…)`) is rendered as a `$VAR`.
 *    With the task's working directory known (`defaultCwd`), absolute and `..` spellings of paths in it
 *    (`/workspace/./cache`, `../workspace/tmp`, `cd /workspace && rm -rf .venv`) are paths in it, and
 *    `rm` operands are rendered as seen from it (`rm -rf /workspace` renders `rm -rf .`).
 *  - `${VAR:-word}` is the word when the command line did not set VAR and VAR is not one the task's
 *    environment carries (its allow-list: HOME, PATH, USER, …; shell.ts ENVIRONMENT_NAME): the task starts
 *    with nothing else set, so the default is what the command means. An earlier command of the same shell
 *    could have exported VAR; that is the limit of judging one command line.
 *  - Assignments made for one command (`VAR=x cmd`, `env VAR=x cmd`) hold while its wrapped script is
 *    analysed; a `for`/`select` variable stands for its values (the first leaving the working directory,
 *    else the first); `trap` actions are scripts.
 *  - A substitution whose command writes a literal (`$(echo …)`, `$(printf …)`) is that text; an unquoted
 *    here-document whose only expansions are variables set here or carried by the environment is text.
 *  - A tool given `--help` or a dry run (`--dry-run[=client|server]`, `--dryrun`, …) only prints; its
 *    redirections are still judged. Core file tools, shells, interpreters and runners of other programs
 *    (docker run, ssh) are not taken at that word.
 *  - Fork bombs are looked for in the code of scripts that run (codeOf: quoted text and here-document
 *    bodies removed), so `echo ":(){ :|:& };:" > notes.txt` is text, and `bash -c ':(){ :|:& };:'` is not.
 */
import { posix } from "node:path";
import { normalizeCommand } from "./normalize.js";
import { supplementaryFindings } from "./next/supplement.js";
import {
  addFinding,
  INIT_IDIOM,
  interpreterLanguage,
  judgeCommand,
  producedLiteral,
  producerListsInside,
  type Finding,
  type JudgedArg,
  type JudgedRedirect,
  type Producer,
} from "./judge.js";
import {
  assignmentOf,
  ENVIRONMENT_NAME,
  MAX_NESTING,
  paramValue,
  parseShell,
  wordText,
  type SimpleCommand,
  type Word,
} from "./shell.js";

interface Tok {
  /** The word as the program receives it (quotes removed, known variables substituted). */
  plain: string;
  /** Same, with `|<>` inside the word replaced, for the rendered line. */
  shown: string;
  /** False when the word holds an expansion the analysis could not resolve (`$x`, `$( … )`). */
  literal?: boolean;
  procSubst?: boolean;
  substOutput?: string | null;
}

function isLiteral(word: Word, vars: ReadonlyMap<string, string>): boolean {
  return word.parts.every((p) => p.kind === "lit" || (p.kind === "param" && paramValue(p, vars) !== undefined));
}

const sanitize = (s: string): string =>
  s
    .replace(/\|/g, "¦")
    .replace(/</g, "‹")
    .replace(/>/g, "›")
    .replace(/[\n\t]+/g, " ");

function shownOf(word: Word, vars: ReadonlyMap<string, string>): string {
  const s = word.parts
    .map((p) => {
      if (p.kind === "lit") return sanitize(p.text);
      if (p.kind === "param") return sanitize(paramValue(p, vars) ?? p.raw);
      return `${p.op === "`" ? "$(" : p.op}${sanitize(p.raw)})`;
    })
    .join("");
  return s === "" ? "''" : s;
}

const MAX_BRACE_WORDS = 64;

type BraceChar = { c: string; active: boolean };

/** Brace expansion of unquoted `{a,b}` and `{1..3}` (bounded), as the shell does before running a word. */
function braceExpand(chars: BraceChar[], budget = { left: MAX_BRACE_WORDS }): BraceChar[][] {
  for (let open = 0; open < chars.length; open++) {
    if (!chars[open]!.active || chars[open]!.c !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    let close = -1;
    for (let k = open; k < chars.length; k++) {
      const ch = chars[k]!;
      if (!ch.active) continue;
      if (ch.c === "{") depth++;
      else if (ch.c === "}" && --depth === 0) {
        close = k;
        break;
      } else if (ch.c === "," && depth === 1) commas.push(k);
    }
    if (close < 0) return [chars];
    let alternatives: BraceChar[][] = [];
    if (commas.length) {
      let from = open + 1;
      for (const c of [...commas, close]) {
        alternatives.push(chars.slice(from, c));
        from = c + 1;
      }
    } else {
      const body = chars
        .slice(open + 1, close)
        .map((x) => x.c)
        .join("");
      const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])$/.exec(body);
      if (!m) continue;
      const num = /\d/.test(m[1]!);
      const a = num ? Number(m[1]) : m[1]!.charCodeAt(0);
      const b = num ? Number(m[2]) : m[2]!.charCodeAt(0);
      const step = a <= b ? 1 : -1;
      for (let v = a; alternatives.length < MAX_BRACE_WORDS; v += step) {
        alternatives.push([...(num ? String(v) : String.fromCharCode(v))].map((c) => ({ c, active: false })));
        if (v === b) break;
      }
    }
    const prefix = chars.slice(0, open);
    const suffix = chars.slice(close + 1);
    const out: BraceChar[][] = [];
    for (const alt of alternatives) {
      if (budget.left <= 0) break;
      budget.left--;
      out.push(...braceExpand([...prefix, ...alt, ...suffix], budget));
    }
    return out.length ? out : [chars];
  }
  return [chars];
}

/** The words a word becomes after brace expansion, or null when it has no unquoted braces to expand. */
function braceWords(word: Word, vars: ReadonlyMap<string, string>): string[] | null {
  if (!word.parts.some((p) => p.kind === "lit" && !p.quoted && p.text.includes("{"))) return null;
  if (
    word.parts.reduce(
      (n, p) => n + (p.kind === "subst" ? p.raw.length : p.kind === "lit" ? p.text.length : p.raw.length),
      0,
    ) > 4096
  )
    return null;
  const chars: BraceChar[] = word.parts.flatMap((p) => {
    const text =
      p.kind === "lit"
        ? p.text
        : p.kind === "param"
          ? (paramValue(p, vars) ?? p.raw)
          : p.op === "`"
            ? `$(${p.raw})`
            : `${p.op}${p.raw})`;
    const active = p.kind === "lit" && !p.quoted;
    return [...text].map((c) => ({ c, active }));
  });
  const words = braceExpand(chars).map((w) => w.map((x) => x.c).join(""));
  return words.length > 1 ? words : null;
}

function toks(word: Word, vars: ReadonlyMap<string, string>): Tok[] {
  const braced = braceWords(word, vars);
  if (braced) {
    const literal = isLiteral(word, vars);
    return braced.filter((w) => w !== "").map((w) => ({ plain: w, shown: sanitize(w) || "''", literal }));
  }
  // An unquoted `$(echo a b)` is split into several words, as the shell does.
  const only = word.parts.length === 1 ? word.parts[0]! : null;
  if (only?.kind === "lit" && only.split && /\s/.test(only.text)) {
    return only.text
      .split(/\s+/)
      .filter(Boolean)
      .map((v) => ({ plain: v, shown: sanitize(v), literal: true }));
  }
  // An unquoted `$x` whose known value has blanks is split into several words, as the shell does; with IFS set by
  // the command line (`IFS=,`), at its characters.
  if (word.parts.length === 1 && word.parts[0]!.kind === "param") {
    const value = paramValue(word.parts[0] as { name: string; raw: string }, vars);
    const ifs = vars.get("IFS");
    const custom = ifs !== undefined && ifs !== "" && !word.parts[0]!.quoted && /[^\s]/.test(ifs);
    const sep = custom ? new RegExp(`[${ifs!.replace(/[\]\\^-]/g, "\\$&")}]+`) : /\s+/;
    if (value !== undefined && sep.test(value) && !(word.parts[0]!.quoted && /^\$\(/.test(value))) {
      return value
        .split(sep)
        .filter(Boolean)
        .map((v) => ({ plain: v, shown: sanitize(v), literal: true }));
    }
  }
  const first = word.parts[0];
  const procSubst = first?.kind === "subst" && first.op === "<(";
  const tok: Tok = {
    plain: wordText(word, vars),
    shown: shownOf(word, vars),
    literal: isLiteral(word, vars),
    procSubst,
  };
  if (procSubst && word.parts.length === 1) tok.substOutput = literalOutput(first.raw);
  return [tok];
}

/** The text a one-command script writes when it is a literal (`echo 'ls -la'`, `printf …`), else null. */
function literalOutput(script: string): string | null {
  if (script.length > 65_536) return null;
  const parsed = parseShell(script, MAX_NESTING);
  if (parsed.tooDeep || parsed.pipelines.length !== 1 || parsed.pipelines[0]!.commands.length !== 1) return null;
  const cmd = parsed.pipelines[0]!.commands[0]!;
  if (cmd.redirects.length || !cmd.words.every((w) => isLiteral(w, new Map()))) return null;
  const [name = "", ...args] = cmd.words.map((w) => wordText(w));
  return producedLiteral({ name, args: args.map((text) => ({ text, literal: true })) });
}

const plainTok = (s: string): Tok => ({ plain: s, shown: sanitize(s) || "''", literal: !/\$|`/.test(s) });

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish", "tcsh", "csh", "rbash"]);
const KEYWORDS = new Set(["!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "coproc", "function"]);
const DECLARATIONS = new Set(["export", "declare", "local", "readonly", "typeset"]);

function displayName(path: string): string {
  if (path.includes("$(")) return path; // computed at run time: keep it whole for the patterns
  if (/\$|\}/.test(path.replace(/\/+$/, "").split("/").pop() ?? "")) return path; // `${X:-/bin/sh}`: the name itself is computed
  const m = /(?:^|\/)((?:init|rc)\.d\/[^/]+)$/.exec(path);
  if (m) return m[1]!.replace(/^rc\.d/, "init.d");
  const base = path.replace(/\/+$/, "").split("/").pop() ?? path;
  // Windows spellings (`cmd.exe`, `C:\\Windows\\System32\\reg.exe`, `powershell.exe`): the program without its folder and `.exe`.
  if (/\.exe$/i.test(base)) return (base.split("\\").pop() ?? base).replace(/\.exe$/i, "").toLowerCase();
  return base || path;
}

/**
 * Skips options starting at `i`. `shortArgs`: letters whose option takes a value (attached or
 * next word); `longArgs`: long options taking the next word when written without `=`.
 */
function skipOptions(t: Tok[], i: number, shortArgs = "", longArgs: string[] = []): number {
  while (i < t.length) {
    const w = t[i]!.plain;
    if (w === "--") return i + 1;
    if (!w.startsWith("-") || w === "-") return i;
    if (w.startsWith("--")) {
      i += !w.includes("=") && longArgs.includes(w) ? 2 : 1;
      continue;
    }
    let consumed = 1;
    for (let k = 1; k < w.length; k++) {
      if (shortArgs.includes(w[k]!)) {
        if (k === w.length - 1) consumed = 2;
        break;
      }
    }
    i += consumed;
  }
  return i;
}

// ---------------------------------------------------------------------------------------------
// Working directory

/**
 * Where commands run, relative to the start directory: "." or a relative subdirectory ("src")
 * when inside it; otherwise an absolute path, `..`-relative path, `~…` or `$NAME…`.
 */
type Cwd = string;

const UNKNOWN_DIR = "$UNKNOWN_DIR";

function isOpaqueHead(seg: string): boolean {
  return seg.startsWith("~") || seg.startsWith("$");
}

/** Joins `rel` to `base` without letting `..` cancel an unknown head such as `~` or `$X`. */
function joinDir(base: Cwd, rel: string): Cwd {
  if (rel.startsWith("/")) return posix.normalize(rel);
  if (isOpaqueHead(rel)) return rel;
  if (base.startsWith("/")) return posix.join(base, rel);
  const [head, ...rest] = base.split("/");
  if (head && isOpaqueHead(head)) {
    const tail = posix.join(rest.join("/") || ".", rel);
    return tail === "." ? head : `${head}/${tail}`;
  }
  return posix.join(base, rel);
}

/** True when the directory is the start directory or one of its subdirectories. */
export function insideStart(cwd: Cwd): boolean {
  return !(cwd.startsWith("/") || isOpaqueHead(cwd) || cwd === ".." || cwd.startsWith("../"));
}

/** The working directory after `cd`/`pushd`/`popd` with these arguments. */
function changeDir(cwd: Cwd, name: string, args: string[]): Cwd {
  if (name === "popd") return "$DIRSTACK";
  let i = 0;
  while (i < args.length && args[i]!.startsWith("-") && args[i] !== "-") {
    if (args[i] === "--") {
      i++;
      break;
    }
    if (name === "pushd" && /^-\d/.test(args[i]!)) return "$DIRSTACK";
    i++;
  }
  const target = args[i];
  if (target === undefined) return name === "pushd" ? "$DIRSTACK" : "~";
  if (target === "") return cwd;
  if (target === "-") return "$OLDPWD";
  if (name === "pushd" && /^\+\d/.test(target)) return "$DIRSTACK";
  if (/\s|\$\(|`/.test(target)) return UNKNOWN_DIR;
  return joinDir(cwd, target);
}

/** The start directory for detection: `cwd` seen from `defaultCwd` (both optional). */
function startDir(opts: DetectOptions | undefined): Cwd {
  const cwd = opts?.cwd?.trim();
  if (!cwd) return ".";
  if (!cwd.startsWith("/")) return joinDir(".", cwd);
  const abs = posix.normalize(cwd);
  const def = opts?.defaultCwd?.trim();
  if (def && def.startsWith("/")) {
    const rel = posix.relative(posix.normalize(def), abs);
    if (rel === "") return ".";
    if (insideStart(rel)) return rel;
  }
  return abs;
}

/** A directory given as an absolute path (or `..`-relative) that lies inside the task's working directory, seen from it. */
function normalizeCwd(cwd: Cwd, root: string | undefined): Cwd {
  if (!root || isOpaqueHead(cwd) || insideStart(cwd)) return cwd;
  const abs = cwd.startsWith("/") ? posix.normalize(cwd) : posix.join(root, cwd);
  const rel = posix.relative(root, abs) || ".";
  return insideStart(rel) ? rel : abs;
}

/**
 * A path as seen from the start directory (the task's working directory) when it lies inside it:
 * `/workspace/./cache`, `../workspace/tmp` from /workspace and `cache` are all `cache`; the directory
 * itself is ".". Null when it lies outside or cannot be known.
 */
export function startRelative(cwd: Cwd, root: string | undefined, path: string): string | null {
  if (path === "" || isOpaqueHead(path) || isOpaqueHead(cwd)) return null;
  let rel: string;
  if (path.startsWith("/") || cwd.startsWith("/")) {
    if (!root) return null;
    rel = posix.relative(root, path.startsWith("/") ? posix.normalize(path) : posix.join(cwd, path)) || ".";
  } else {
    rel = posix.normalize(posix.join(cwd, path)).replace(/\/+$/, "") || ".";
    if (root && !insideStart(rel)) rel = posix.relative(root, posix.join(root, rel)) || ".";
  }
  return insideStart(rel) ? rel : null;
}

/** A relative path operand as seen from the start directory, when the working directory left it. */
function rebase(cwd: Cwd, path: string): string | null {
  if (insideStart(cwd) || path === "" || path.startsWith("/") || isOpaqueHead(path)) return null;
  return joinDir(cwd, path);
}

export interface DetectOptions {
  /** The directory the command runs in (absolute, or relative to `defaultCwd`). */
  cwd?: string;
  /** The task's working directory: a `cwd` inside it is not "leaving the working directory". */
  defaultCwd?: string;
}

interface State {
  cwd: Cwd;
  /** The directory before the last `cd` (what `cd -` returns to), when known. */
  oldCwd?: Cwd;
  /** Directories `pushd` left, for `popd`. */
  dirStack?: Cwd[];
  root?: string;
  units: string[];
  findings: Finding[];
  insideTargets: string[];
  fetched: Set<string>;
  created: Set<string>;
  scripts: Map<string, string | null>;
  comments: string[];
  tooDeep: boolean;
  vars: Map<string, string>;
  /** The previous pipeline stage of the command being rendered (what xargs reads). */
  stdin: Producer | null;
  /** Bound on nested analyses, against pathological inputs. */
  budget: number;
  /** The code of every shell script that runs, quoted text and here-document bodies removed (codeOf). */
  code: string[];
  /** Aliases a literal `alias name='…'` of the script defined: a later command named so runs their text. */
  aliases?: Map<string, string>;
  /** Links the command line made (ln): paths through them are judged at their targets (judge.ts). */
  links: Map<string, string>;
  /** Shell functions the script defined (name → body), and those called so far. */
  functions?: Map<string, string>;
  called?: Set<string>;
  /** Functions being judged now (a function calling itself is not followed again). */
  active?: Set<string>;
  /** Commands being analysed run as another (privileged) user (sudo, doas, pkexec, su -c) or on another host (ssh HOST CMD): nesting counts. */
  privileged?: number;
  remote?: number;
  /** `trap 'cmd' EXIT` actions, judged when the script that set them has run (their variables set by then). */
  traps?: { script: string; depth: number }[];
}

interface Unwrapped {
  prefix: string;
  /** The command runs privileged (a sudo-like wrapper was removed, or it runs in a script given to one) or on another host. */
  privileged?: boolean;
  remote?: boolean;
  argv: Tok[];
  /** `NAME=value` words placed before the command (also through env): the environment it runs with. */
  env?: { name: string; value: string }[];
  /** Findings of a command the wrapper runs elsewhere (in a container), added after the wrapper's own. */
  later?: string[];
}

/** Wrappers that run their operands as a command after options (and `fixed` more words: a user, a mask, …). */
const ARGV_WRAPPERS: Record<string, { shortArgs?: string; longArgs?: string[]; fixed?: number }> = {
  nsenter: { shortArgs: "tSGw", longArgs: ["--target", "--setuid", "--setgid", "--wd"] },
  unshare: { shortArgs: "", longArgs: ["--setuid", "--setgid", "--map-user", "--map-group", "--propagation", "--wd"] },
  taskset: { fixed: 1 },
  chrt: { fixed: 1 },
  numactl: {
    shortArgs: "NmCpiP",
    longArgs: ["--cpunodebind", "--membind", "--physcpubind", "--preferred", "--interleave"],
  },
  cgexec: { shortArgs: "g" },
  "systemd-run": {
    shortArgs: "pEMu",
    longArgs: [
      "--unit",
      "--property",
      "--setenv",
      "--machine",
      "--uid",
      "--gid",
      "--working-directory",
      "--description",
      "--slice",
    ],
  },
  gosu: { fixed: 1 },
  "su-exec": { fixed: 1 },
  "s6-setuidgid": { fixed: 1 },
  setpriv: { longArgs: ["--reuid", "--regid", "--groups", "--inh-caps", "--bounding-set"] },
  prlimit: { shortArgs: "p", longArgs: ["--pid"] },
  strace: { shortArgs: "oepsuEIbPaXS", longArgs: ["--output", "--trace", "--signal", "--user", "--env"] },
  ltrace: { shortArgs: "oepsuEIbPaXSnAD", longArgs: ["--output", "--user"] },
  fakeroot: { shortArgs: "lsi", longArgs: ["--lib", "--faked"] },
  firejail: {},
  proot: { shortArgs: "rbwq", longArgs: ["--rootfs", "--bind", "--cwd", "--qemu"] },
  "xvfb-run": { shortArgs: "nsfe", longArgs: ["--server-num", "--server-args", "--auth-file", "--error-file"] },
  tini: {},
  "dumb-init": {},
  faketime: { shortArgs: "f", fixed: 1 },
  torsocks: { shortArgs: "uapP" },
  proxychains: { shortArgs: "f" },
  proxychains4: { shortArgs: "f" },
  rlwrap: { shortArgs: "aAbcCDefFgHilmMnNoOpPqrRsStvwWz" },
  caffeinate: { shortArgs: "tw" },
  pkexec: { longArgs: ["--user"] },
  sshpass: { shortArgs: "pfdPe" },
  entr: {},
  cpulimit: { shortArgs: "lpe", longArgs: ["--limit", "--pid", "--exe"] },
  trickle: { shortArgs: "udwtln" },
  doppler: {},
  "aws-vault": {},
};

/** Effects on files and the system of the machine a command runs on: inside a fresh container, they are the container's. */
const CONTAINER_LOCAL =
  /^(?:delete_outside_workdir|delete_system_path|recursive_delete|move_system_path|move_outside_workdir|move_to_dev_null|overwrite_\w+|credential_write|chmod_\w+|world_writable|system_config_write|shell_rc_write|ssh_config_write|crontab_\w+|find_delete|find_exec_rm|xargs_rm|shred|symlink_outside_workdir|package_remove|mount_change|user_change|kernel_change|log_wipe|firewall_\w+|network_change|service_change|stop_service|kill_all_processes|pkill_force|killall|resource_exhaustion)$/;

/** The placeholder for a path read from stdin or found by find: inside when the producer lists paths inside. */
function placeholderFor(inside: boolean, root = "."): string {
  return inside ? posix.join(root, "_item_") : "$INPUT_ITEM";
}

const POSITIONAL = /\$\{?[0-9@*]\}?/g;

/** Strips wrappers and hands scripts they carry to `analyseScript`. `positional`: what `$1`, `$@`, … of a `sh -c` script stand for. */
function unwrap(t: Tok[], depth: number, st: State, positional?: string): Unwrapped {
  // `DEST=/etc sh -c '… "$DEST/hosts"'`, `env DEST=/etc sh -c …`: the script a wrapper runs sees the
  // assignments made for it (and only it: they are undone afterwards).
  const saved = new Map<string, string | undefined>();
  const elevation = { privileged: st.privileged, remote: st.remote };
  try {
    const u = unwrapWith(t, depth, st, positional, saved);
    const env: { name: string; value: string }[] = [];
    for (const tok of t) {
      const m = /^([A-Za-z_]\w*)=(.*)$/s.exec(tok.plain);
      if (m && env.length < 16) env.push({ name: m[1]!, value: m[2]! });
    }
    return { ...u, env, privileged: (st.privileged ?? 0) > 0, remote: (st.remote ?? 0) > 0 };
  } finally {
    st.privileged = elevation.privileged;
    st.remote = elevation.remote;
    for (const [k, v] of saved) v === undefined ? st.vars.delete(k) : st.vars.set(k, v);
  }
}

function unwrapWith(
  t: Tok[],
  depth: number,
  st: State,
  positional: string | undefined,
  saved: Map<string, string | undefined>,
): Unwrapped {
  let prefix = "";
  let i = 0;
  for (let guard = 0; guard < 32 && i < t.length; guard++) {
    while (i < t.length && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(t[i]!.plain)) {
      const m = /^([A-Za-z_]\w*)=(.*)$/s.exec(t[i]!.plain);
      if (m) {
        if (!saved.has(m[1]!)) saved.set(m[1]!, st.vars.get(m[1]!));
        // A value whose only expansion is the shell's process id (`d=/tmp/job-$$`) is known up to that unique part.
        if (t[i]!.literal !== false || PID_ONLY.test(m[2]!)) st.vars.set(m[1]!, m[2]!);
        else st.vars.delete(m[1]!);
      }
      i++;
    }
    if (i >= t.length) break;
    // `$SHELL -c …`, `${SHELL:-/bin/sh} -c …`, `$BASH`: the user's shell, whichever it is, runs the script.
    if (/^\$(?:\{(?:SHELL|BASH)(?::?[-=][^}]*)?\}|SHELL|BASH)$/.test(t[i]!.plain))
      t = [...t.slice(0, i), plainTok("sh"), ...t.slice(i + 1)];
    const name = displayName(t[i]!.plain);
    const rest = () => t.slice(i + 1);
    if (KEYWORDS.has(name)) {
      i++;
      continue;
    }
    // Package runners (`npx cdk destroy`, `pnpm dlx`, `yarn dlx`, `bunx`, `bun x`, `npm exec --`): the tool they run
    // is the command; a package spec `tool@2` / `@scope/tool` names the tool.
    const runner =
      name === "npx" || name === "pnpx" || name === "bunx"
        ? 1
        : (name === "pnpm" || name === "yarn") && t[i + 1]?.plain === "dlx"
          ? 2
          : name === "bun" && t[i + 1]?.plain === "x"
            ? 2
            : name === "npm" && (t[i + 1]?.plain === "exec" || t[i + 1]?.plain === "x")
              ? 2
              : 0;
    if (runner) {
      let j = i + runner;
      while (j < t.length && /^-/.test(t[j]!.plain) && t[j]!.plain !== "--") {
        if (/^(?:-c|--call)$/.test(t[j]!.plain)) break;
        j += /^(?:-p|--package|--registry|--cache|--userconfig|--workspace|-w)$/.test(t[j]!.plain) ? 2 : 1;
      }
      if (t[j]?.plain === "--") j++;
      if (j < t.length && !/^(?:-c|--call)$/.test(t[j]!.plain)) {
        const spec = t[j]!.plain;
        const tool = /^(?:@[^/\s]+\/)?([^@/\s]+)(?:@[^/\s]*)?$/.exec(spec)?.[1];
        if (tool && tool !== spec) t = [...t.slice(0, j), plainTok(tool), ...t.slice(j + 1)];
        i = j;
        continue;
      }
    }
    // Environment runners (`uv run`, `poetry run`, `pipenv run`, `conda run -n env`, `pixi run`, `uvx`, `pipx run`):
    // the command they run in the environment is the command.
    const envRunner =
      /^(?:uv|poetry|pipenv|pdm|hatch|rye|conda|mamba|micromamba|pixi|pipx|bundle|dotenv|direnv|devbox|nix-shell|op)$/.test(
        name,
      ) && /^(?:run|exec)$/.test(t[i + 1]?.plain ?? "")
        ? 2
        : name === "uvx"
          ? 1
          : 0;
    if (envRunner && !(name === "nix-shell" || name === "devbox")) {
      let j = i + envRunner;
      while (j < t.length && t[j]!.plain.startsWith("-") && t[j]!.plain !== "--") {
        const w = t[j]!.plain;
        j +=
          !w.includes("=") &&
          /^(?:-n|-p|-e|--name|--prefix|--python|--with|--with-requirements|--project|--directory|--env-file|--extra|--group|--package|--index|--from|--environment|--manifest-path|--spec|-f|--file|--env|--cwd)$/.test(
            w,
          )
            ? 2
            : 1;
      }
      if (t[j]?.plain === "--") j++;
      if (j < t.length) {
        i = j;
        continue;
      }
    }
    if (/^(?:sudo|doas|run0|pkexec)$/.test(name)) st.privileged = (st.privileged ?? 0) + 1;
    switch (name) {
      case "sudo":
        i = skipOptions(t, i + 1, "CDghpRrtTUu", [
          "--close-from",
          "--chdir",
          "--group",
          "--host",
          "--prompt",
          "--chroot",
          "--role",
          "--type",
          "--command-timeout",
          "--other-user",
          "--user",
        ]);
        continue;
      case "doas":
      case "run0":
        i = skipOptions(t, i + 1, "uC", ["--user"]);
        continue;
      case "env": {
        let j = i + 1;
        while (j < t.length) {
          const w = t[j]!.plain;
          if (w === "--") {
            j++;
            break;
          }
          if (
            w === "-S" ||
            w === "--split-string" ||
            w.startsWith("--split-string=") ||
            (w.startsWith("-S") && w.length > 2)
          ) {
            const value =
              w === "-S" || w === "--split-string" ? (t[j + 1]?.plain ?? "") : w.replace(/^(-S|--split-string=)/, "");
            const after = t.slice(j + (w === "-S" || w === "--split-string" ? 2 : 1));
            t = [...value.split(/\s+/).filter(Boolean).map(plainTok), ...after];
            i = 0;
            j = -1;
            break;
          }
          if (
            w === "-" ||
            /^-[i0v]+$/.test(w) ||
            w === "--ignore-environment" ||
            w === "--null" ||
            w.startsWith("--unset=") ||
            w.startsWith("--chdir=")
          )
            j++;
          else if (w === "-u" || w === "-C" || w === "--unset" || w === "--chdir") j += 2;
          else if (/^-[uC]./.test(w)) j++;
          else break;
        }
        // `env` (or `env -0`, `env X=1`) with no command prints the environment: it is the command.
        if (j >= 0 && !t.slice(j).some((x) => !/^[A-Za-z_]\w*=/.test(x.plain)))
          return { prefix, argv: t.slice(i, i + 1) };
        if (j >= 0) i = j;
        continue;
      }
      case "nohup":
      case "builtin":
      case "unbuffer":
      case "catchsegv":
      case "setsid":
      case "busybox":
      case "toybox":
      case "chronic":
        i = name === "setsid" ? skipOptions(t, i + 1) : i + 1;
        continue;
      case "time":
        i = skipOptions(t, i + 1, "fo", ["--format", "--output"]);
        continue;
      case "exec":
        i = skipOptions(t, i + 1, "a");
        continue;
      case "command":
        if (t[i + 1] && /^-[pV]*v|^-[pv]*V/.test(t[i + 1]!.plain)) return { prefix, argv: t.slice(i) };
        i = skipOptions(t, i + 1);
        continue;
      case "nice":
        i = skipOptions(t, i + 1, "n", ["--adjustment"]);
        continue;
      case "ionice":
        i = skipOptions(t, i + 1, "cn", ["--class", "--classdata"]);
        continue;
      case "stdbuf":
        i = skipOptions(t, i + 1, "ioe", ["--input", "--output", "--error"]);
        continue;
      case "timeout":
        i = skipOptions(t, i + 1, "sk", ["--signal", "--kill-after"]) + 1; // and the duration
        continue;
      case "chroot":
        i = skipOptions(t, i + 1, "", ["--userspec", "--groups"]) + 1; // and the new root
        continue;
      case "flock": {
        // `flock [opts] FILE -c CMD`, `flock -c CMD FILE`: the -c text is a shell script wherever it stands;
        // otherwise the words after the lock file are the command.
        const r = rest();
        const cIdx = r.findIndex((x) => x.plain === "-c" || x.plain === "--command");
        if (cIdx >= 0) {
          const script = r[cIdx + 1]?.plain;
          if (script) analyseScript(script, depth + 1, st);
          return { prefix, argv: t.slice(i, i + 1) };
        }
        let j = skipOptions(t, i + 1, "wE", ["--timeout", "--conflict-exit-code"]);
        j += 1; // the lock file
        i = j;
        continue;
      }
      // Terminal multiplexers run a command detached from this one (`tmux new -d 'CMD'`, `tmux send-keys -t s 'CMD' Enter`,
      // `screen -dmS x CMD …`, `screen -S x -X stuff 'CMD\n'`): the command is what runs.
      case "tmux": {
        const r = rest();
        let k = 0;
        while (k < r.length && r[k]!.plain.startsWith("-")) k += /^-[LSf]$/.test(r[k]!.plain) ? 2 : 1;
        const sub = r[k]?.plain ?? "";
        if (
          /^(?:new|new-session|new-window|neww|split-window|splitw|run-shell|run|send-keys|send|respawn-pane|respawnp|respawn-window|respawnw)$/.test(
            sub,
          )
        ) {
          const words: string[] = [];
          for (let j = k + 1; j < r.length; j++) {
            const w = r[j]!.plain;
            if (/^-[ceFlnNstxy]$/.test(w) && !(sub.startsWith("send") && /^-[lF]$/.test(w))) j++;
            else if (!w.startsWith("-") || words.length) words.push(w);
          }
          const keys = /^send/.test(sub)
            ? words.filter((w) => !/^(?:Enter|C-m|C-j|KPEnter|Escape|C-c|C-d)$/.test(w))
            : words;
          if (keys.length) analyseScript(keys.join(" ").replace(/\\n/g, "\n"), depth + 1, st);
        }
        return { prefix, argv: t.slice(i, i + 1) };
      }
      case "screen": {
        const r = rest();
        const x = r.findIndex((w) => w.plain === "-X");
        if (x >= 0) {
          if (/^(?:stuff|exec|screen)$/.test(r[x + 1]?.plain ?? ""))
            analyseScript(
              r
                .slice(x + 2)
                .map((w) => w.plain)
                .join(" ")
                .replace(/\\n|\\r|\^M/g, "\n"),
              depth + 1,
              st,
            );
          return { prefix, argv: t.slice(i, i + 1) };
        }
        i = skipOptions(t, i + 1, "ScehpTtlLsX", ["--logfile"]);
        if (i >= t.length) return { prefix, argv: t.slice(t.length - 1) };
        continue;
      }
      case "watch": {
        const j = skipOptions(t, i + 1, "nq", ["--interval", "--differences"]);
        analyseScript(
          t
            .slice(j)
            .map((x) => x.plain)
            .join(" "),
          depth + 1,
          st,
        );
        return { prefix, argv: t.slice(i, i + 1) };
      }
      case "xargs": {
        prefix = "xargs ";
        const start = i + 1;
        i = skipOptions(t, i + 1, "IJLnPsdEaR", [
          "--arg-file",
          "--delimiter",
          "--max-args",
          "--max-procs",
          "--max-chars",
          "--eof",
          "--process-slot-var",
        ]);
        let replace: string | undefined;
        for (let k = start; k < i; k++) {
          const w = t[k]!.plain;
          if (w === "-I" || w === "-J") replace = t[k + 1]?.plain;
          else if (/^-[IJ]./.test(w)) replace = w.slice(2);
          else if (w === "-i" || w === "--replace") replace = "{}";
          else if (/^-i./.test(w) || w.startsWith("--replace=")) replace = w.replace(/^(-i|--replace=)/, "");
        }
        const fromFile = t.slice(start, i).some((x) => x.plain === "-a" || x.plain.startsWith("--arg-file"));
        // Unbounded parallelism (-P 0) over an endless input (`yes | xargs -P0 …`): processes without limit, a fork bomb.
        const opts = t.slice(start, i).map((x) => x.plain);
        const unbounded = opts.some(
          (w, k) => /^(?:-P0|--max-procs=0)$/.test(w) || ((w === "-P" || w === "--max-procs") && opts[k + 1] === "0"),
        );
        if (
          unbounded &&
          !fromFile &&
          st.stdin &&
          /^(?:yes|seq|jot)$/.test(st.stdin.name) &&
          (st.stdin.name === "yes" || st.stdin.args.some((a) => /^inf/i.test(a.text)))
        )
          addFinding(st.findings, "fork_bomb");
        // As many processes at once as a long count gives (`seq 1 100000 | xargs -P 0 …`): the process table fills.
        else if (
          (unbounded ||
            opts.some((w, k) => /^(?:-P|--max-procs)$/.test(opts[k - 1] ?? "") && Number(w) >= 1000) ||
            opts.some((w) => /^-P\d{4,}$/.test(w))) &&
          !fromFile &&
          st.stdin &&
          /^(?:seq|jot)$/.test(st.stdin.name) &&
          Math.max(...st.stdin.args.map((a) => Number(a.text)).filter((x) => Number.isFinite(x))) >= 1000
        )
          addFinding(st.findings, "resource_exhaustion");
        // Thousands of items each starting a detached container or pod (`seq 100000 | xargs -I{} docker run -d …`): they pile up.
        else if (
          !fromFile &&
          st.stdin &&
          /^(?:seq|jot)$/.test(st.stdin.name) &&
          Math.max(...st.stdin.args.map((a) => Number(a.text)).filter((x) => Number.isFinite(x))) >= 1000 &&
          /^(?:docker|podman|nerdctl) (?:container )?run (?:.* )?(?:-d|--detach|-[a-z]*d[a-z]*)\b|^kubectl (?:run|create)\b/.test(
            t
              .slice(i)
              .map((x) => x.plain)
              .join(" "),
          )
        )
          addFinding(st.findings, "resource_exhaustion");
        // An endless input fanned out to hundreds of processes at once (`yes /x | xargs -P 1000 -n 1 du -s`).
        else if (
          !fromFile &&
          st.stdin?.name === "yes" &&
          opts.some(
            (w, k) =>
              (/^(?:-P|--max-procs)$/.test(opts[k - 1] ?? "") && Number(w) >= 100) ||
              /^-P\d{3,}$|^--max-procs=\d{3,}$/.test(w),
          )
        )
          addFinding(st.findings, "resource_exhaustion");
        const inside = !fromFile && st.stdin !== null && producerListsInside(st.stdin, st.cwd, st.root);
        // Paths found under literal roots outside (`find /opt -type d -print0 | xargs chmod 0777`) are paths under them.
        const roots =
          !inside && !fromFile && st.stdin?.name === "find" && st.stdin.args.every((a) => a.literal)
            ? st.stdin.args.map((a) => a.text).filter((_, k, xs) => !xs.slice(0, k + 1).some((x) => /^[-(!]/.test(x)))
            : [];
        const item = roots.length
          ? posix.join(roots.find((r) => !startRelative(st.cwd, st.root, r)) ?? roots[0]!, "_item_")
          : placeholderFor(inside);
        positional = item;
        // Items a literal gives (`echo /etc/ssl/private | xargs sudo chmod -R 755`) are those words.
        const literalItems =
          !fromFile && st.stdin && /^(?:echo|printf)$/.test(st.stdin.name) ? producedLiteral(st.stdin) : null;
        const given =
          literalItems !== null
            ? literalItems
                .split(/\s+/)
                .filter((x) => x !== "")
                .slice(0, 32)
            : [];
        if (given.length && !replace && i < t.length) {
          t = [...t, ...given.map((x) => plainTok(x))];
          positional = given[0]!;
          continue;
        }
        if (given.length && replace) {
          t = [
            ...t.slice(0, i),
            ...t
              .slice(i)
              .map((x) => (x.plain.includes(replace!) ? plainTok(x.plain.split(replace!).join(given[0]!)) : x)),
          ];
          continue;
        }
        if (replace)
          t = [
            ...t.slice(0, i),
            ...t.slice(i).map((x) => (x.plain.includes(replace!) ? plainTok(x.plain.split(replace!).join(item)) : x)),
          ];
        // Without a replacement string the items are appended: chmod, chown and the like act on them.
        else if (
          roots.length &&
          /^(?:chmod|chown|chgrp|setfacl|chattr|truncate|shred|mv|cp|gzip|pigz|bzip2|xz|lzma|zstd|compress)$/.test(
            displayName(t.slice(i).find((x) => !/^(?:sudo|doas|-\S+)$/.test(x.plain))?.plain ?? ""),
          )
        )
          t = [...t, plainTok(item)];
        continue;
      }
      case "parallel":
      case "sem": {
        const j = skipOptions(t, i + 1, "jPSnNIdEa", [
          "--jobs",
          "--colsep",
          "--arg-file",
          "--delimiter",
          "--max-args",
          "--sshlogin",
          "--results",
          "--joblog",
          "--eta",
        ]);
        const sep = t.findIndex((x, k) => k >= j && /^:::+\+?$/.test(x.plain));
        // Every job at once (-j0, or a thousand slots) over thousands of inputs (`seq 100000 | parallel -j0 …`,
        // `::: $(seq 1 50000)`, `::: {1..50000}`): the process table and memory fill.
        {
          const popts = t.slice(i + 1, j).map((x) => x.plain);
          const slots = popts.some(
            (w, k) =>
              (/^(?:-j|--jobs|-P)$/.test(popts[k - 1] ?? "") &&
                ((/^0$|^\d+%$/.test(w) && !/^\d{1,3}%$/.test(w)) || w === "0" || Number(w) >= 1000)) ||
              /^(?:-j0|--jobs=0|-P0|-j\d{4,}|--jobs=\d{4,})$/.test(w),
          );
          const count = (text: string) =>
            Math.max(
              0,
              ...[...text.matchAll(/(?:\bseq|\bjot)\s+(?:-\S+\s+)*(\d+)(?:\s+(\d+))?|\{\d+\.\.(\d+)\}/g)].map((m) =>
                Number(m[2] ?? m[1] ?? m[3]),
              ),
            );
          const many =
            (st.stdin && /^(?:seq|jot)$/.test(st.stdin.name)
              ? Math.max(0, ...st.stdin.args.map((a) => Number(a.text)).filter((x) => Number.isFinite(x)))
              : 0) >= 1000 ||
            (sep >= 0 &&
              (count(
                t
                  .slice(sep + 1)
                  .map((x) => `${x.plain} ${x.shown}`)
                  .join(" "),
              ) >= 1000 ||
                t.length - sep > 1000)) ||
            st.stdin?.name === "yes";
          if (slots && many) addFinding(st.findings, "resource_exhaustion");
        }
        // parallel joins its command words with blanks and runs the line with a shell: a quoted command
        // (`parallel 'sqlite3 {} "DELETE FROM events"'`) is a script, its replacement strings the input item.
        const cmdWords = t.slice(j, sep < 0 ? t.length : sep);
        if (cmdWords.some((x) => /\s/.test(x.plain))) {
          const values = sep < 0 ? [] : t.slice(sep + 1).filter((x) => !/^:::+\+?$/.test(x.plain));
          const item =
            sep >= 0 && values[0]
              ? values[0].plain
              : placeholderFor(st.stdin !== null && producerListsInside(st.stdin, st.cwd, st.root));
          const script = cmdWords
            .map((x) => x.plain)
            .join(" ")
            .replace(/\{(?:\.|\/|\/\/|\/\.|#|%|\d+)?\}/g, item);
          analyseScript(script, depth + 1, st);
          return { prefix, argv: t.slice(i, i + 1) };
        }
        // No command at all: every input line is a command line. Lines from the network are text fed into a shell.
        if (sep < 0 && j >= t.length) {
          if (st.stdin && /^(?:curl|wget|nc|ncat|socat|aria2c|http|https|xh)$/.test(st.stdin.name))
            addFinding(st.findings, "shell_input");
          else if (st.stdin) {
            const out = producedLiteral(st.stdin);
            if (out !== null) analyseScript(out, depth + 1, st);
            else addFinding(st.findings, "shell_input");
          }
          return { prefix, argv: t.slice(i, i + 1) };
        }
        if (sep < 0) {
          prefix = "xargs ";
          positional = placeholderFor(st.stdin !== null && producerListsInside(st.stdin, st.cwd, st.root));
          i = j;
          continue;
        }
        const values = t.slice(sep + 1).filter((x) => !/^:::+\+?$/.test(x.plain));
        const cmd = t.slice(j, sep);
        const hasSlot = cmd.some((x) => x.plain.includes("{}"));
        // Every value is an operand of the same command, so all of them are judged.
        t = !hasSlot
          ? [...cmd, ...values]
          : [
              ...cmd.map((x) =>
                x.plain.includes("{}") ? plainTok(x.plain.split("{}").join(values[0]?.plain ?? "")) : x,
              ),
              ...values.slice(1),
            ];
        i = 0;
        continue;
      }
      case "script": {
        const r = rest();
        for (let k = 0; k < r.length; k++) {
          const w = r[k]!.plain;
          if (w === "-c" || w === "--command") {
            if (r[k + 1]) analyseScript(r[k + 1]!.plain, depth + 1, st);
            break;
          }
          if (w.startsWith("--command=")) {
            analyseScript(w.slice("--command=".length), depth + 1, st);
            break;
          }
          if (/^-[a-zA-Z]*c$/.test(w) && r[k + 1]) {
            analyseScript(r[k + 1]!.plain, depth + 1, st);
            break;
          }
        }
        return { prefix, argv: t.slice(i, i + 1) };
      }
      // `cmd /c "rd /s /q C:\\x"`, `cmd.exe /k …`: cmd runs the rest of the line as a command line. cmd has no backslash
      // escapes, so backslashes (path separators) are doubled for the shell reader.
      case "cmd": {
        const r = rest();
        const c = r.findIndex((x) => /^\/[ck]$/i.test(x.plain));
        if (c >= 0 && r[c + 1])
          analyseScript(
            r
              .slice(c + 1)
              .map((x) => x.plain)
              .join(" ")
              .replace(/\\/g, "\\\\"),
            depth + 1,
            st,
          );
        return { prefix, argv: t.slice(i) };
      }
      case "pwsh":
      case "powershell": {
        const r = rest();
        let c = r.findIndex((x) => /^-c(?:o(?:m(?:m(?:a(?:n(?:d)?)?)?)?)?)?$/i.test(x.plain));
        // Without -Command or -File the first word that is not an option starts the command (`powershell Stop-Service X`).
        if (c < 0 && !r.some((x) => /^-(?:f|fi|fil|file|e|ec|en|enc\w*|encodedcommand)$/i.test(x.plain))) {
          const first = r.findIndex(
            (x, k) =>
              !x.plain.startsWith("-") &&
              !/^-(?:ExecutionPolicy|ep|ex|WindowStyle|w|OutputFormat|of|InputFormat|if|ConfigurationName|config|WorkingDirectory|wd|Version|v|PSConsoleFile|CustomPipeName|SettingsFile)$/i.test(
                r[k - 1]?.plain ?? "",
              ),
          );
          if (first >= 0) c = first - 1;
        }
        const from = c + 1;
        if ((c >= 0 || from === 0) && r[from]) {
          // A statement that starts with `$…` is an expression, not a command (`$env:PATH -split ":"`); an assignment runs
          // its right-hand side (`$x = Remove-Item …`).
          const script = r
            .slice(from)
            .map((x) => x.plain)
            .join(" ")
            .replace(/\\/g, "\\\\") // PowerShell escapes with backticks: a backslash is a path separator
            .split(/(?<=[;\n])/)
            .map((stmt) => {
              const m = /^(\s*)\$[\w:{}.]+(?:\[[^\]]*\])?\s*[-+*/]?=(?!=)\s*(.*)$/s.exec(stmt);
              if (m) return m[1]! + m[2]!;
              return /^\s*\$/.test(stmt) ? stmt.replace(/^(\s*)\$[^;\n]*/, "$1:") : stmt;
            })
            .join("");
          // `iex (iwr URL)`, `Invoke-Expression (New-Object Net.WebClient).DownloadString(URL)`: text fetched and run.
          if (
            /\b(?:iex|invoke-expression)\b/i.test(script) &&
            /\b(?:iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|downloaddata|webclient|start-bitstransfer|curl|wget)\b/i.test(
              script,
            )
          )
            addFinding(st.findings, "remote_code_exec");
          else if (/\b(?:iex|invoke-expression)\b/i.test(script) && /\b(?:iex|invoke-expression)\s*\(/i.test(script))
            addFinding(st.findings, "shell_input");
          analyseScript(script, depth + 1, st);
        }
        return { prefix, argv: t.slice(i) };
      }
      case "sg": {
        const r = rest();
        const c = r.findIndex((x) => x.plain === "-c");
        if (c >= 0 && r[c + 1]) analyseScript(r[c + 1]!.plain, depth + 1, st);
        else if (r.length > 1)
          analyseScript(
            r
              .slice(1)
              .map((x) => x.plain)
              .join(" "),
            depth + 1,
            st,
          );
        return { prefix, argv: t.slice(i, i + 1) };
      }
      case "trap": {
        // `trap 'cmd' EXIT`: the action runs later, in this shell.
        const r = rest().filter((x, k) => !(k === 0 && x.plain === "--"));
        if (r.length >= 2 && r[0]!.plain !== "-" && !/^-[lp]$/.test(r[0]!.plain))
          (st.traps ??= []).push({ script: r[0]!.plain, depth });
        return { prefix, argv: t.slice(i) };
      }
      case "eval":
        if (rest().length === 1 && INIT_IDIOM.test(rest()[0]!.plain.trim())) return { prefix, argv: t.slice(i) };
        analyseScript(
          rest()
            .map((x) => x.plain)
            .join(" "),
          depth + 1,
          st,
        );
        return { prefix, argv: t.slice(i) };
      case "su":
      case "runuser": {
        const r = rest();
        st.privileged = (st.privileged ?? 0) + 1;
        for (let k = 0; k < r.length; k++) {
          const w = r[k]!.plain;
          if (w === "-c" || w === "--command" || w === "--session-command") {
            if (r[k + 1]) analyseScript(r[k + 1]!.plain, depth + 1, st);
            break;
          }
          if (w.startsWith("--command=")) {
            analyseScript(w.slice("--command=".length), depth + 1, st);
            break;
          }
          if (w === "--" && name === "runuser") {
            return { prefix, argv: unwrap(r.slice(k + 1), depth, st).argv };
          }
        }
        return { prefix, argv: t.slice(i) };
      }
      case "git": {
        // `git bisect run CMD…` runs CMD (once per step); `git submodule foreach [--recursive] SCRIPT` and
        // `git rebase -x/--exec SCRIPT` run a shell script.
        let j = i + 1;
        while (j < t.length && /^-/.test(t[j]!.plain)) j += /^-[Cc]$/.test(t[j]!.plain) ? 2 : 1;
        if (t[j]?.plain === "bisect" && t[j + 1]?.plain === "run" && j + 2 < t.length) {
          i = j + 2;
          continue;
        }
        if (t[j]?.plain === "submodule" && t[j + 1]?.plain === "foreach") {
          const r = t.slice(j + 2).filter((x) => !/^--/.test(x.plain));
          if (r.length) analyseScript(r.map((x) => x.plain).join(" "), depth + 1, st);
        }
        for (let k = j; k < t.length; k++) {
          if ((t[k]!.plain === "-x" || t[k]!.plain === "--exec") && t[k + 1])
            analyseScript(t[k + 1]!.plain, depth + 1, st);
          else if (t[k]!.plain.startsWith("--exec=")) analyseScript(t[k]!.plain.slice(7), depth + 1, st);
        }
        return { prefix, argv: t.slice(i) };
      }
      case "ssh": {
        let j = skipOptions(t, i + 1, "BbcDEeFIiJLlmOoPpQRSWw");
        j += 1; // the host
        st.remote = (st.remote ?? 0) + 1;
        if (j < t.length)
          analyseScript(
            t
              .slice(j)
              .map((x) => x.plain)
              .join(" "),
            depth + 1,
            st,
          );
        return { prefix, argv: t.slice(i, Math.min(j, t.length)) };
      }
      case "docker":
      case "podman":
      case "nerdctl":
        // `docker run [opts] IMAGE [CMD…]`: CMD runs in the container (judged like a command here); with no CMD, or
        // with arguments only, the image's own entrypoint runs: an image named after a tool (`hashicorp/terraform`,
        // `amazon/aws-cli`) runs that tool with the arguments.
        if (t[i + 1]?.plain === "run" || (t[i + 1]?.plain === "container" && t[i + 2]?.plain === "run")) {
          const start = i + (t[i + 1]!.plain === "run" ? 2 : 3);
          let j = skipOptions(t, start, "eEhlmpuvwc", [
            "--env",
            "--env-file",
            "--hostname",
            "--label",
            "--memory",
            "--publish",
            "--user",
            "--volume",
            "--workdir",
            "--name",
            "--network",
            "--net",
            "--mount",
            "--platform",
            "--cpus",
            "--restart",
            "--pull",
            "--add-host",
            "--cap-add",
            "--cap-drop",
            "--device",
            "--gpus",
            "--shm-size",
            "--ulimit",
            "--log-driver",
            "--log-opt",
            "--security-opt",
            "--tmpfs",
            "--cidfile",
            "--ipc",
            "--pid",
            "--runtime",
            "--entrypoint",
            "--label-file",
            "--dns",
            "--expose",
            "--link",
            "--cpuset-cpus",
            "--memory-swap",
            "--stop-signal",
            "--stop-timeout",
            "--health-cmd",
            "--userns",
            "--uts",
            "--cgroupns",
            "--group-add",
            "--volumes-from",
            "--annotation",
            "--secret",
            "--arch",
            "--os",
          ]);
          const entry = (() => {
            for (let k = start; k < j; k++) {
              if (t[k]!.plain === "--entrypoint") return t[k + 1]?.plain;
              if (t[k]!.plain.startsWith("--entrypoint=")) return t[k]!.plain.slice(13);
            }
            return undefined;
          })();
          const image = t[j]?.plain ?? "";
          j++;
          const tool = (entry ?? /([^/:@]+)(?:[:@][^/]*)?$/.exec(image)?.[1] ?? "")
            .replace(/-cli$/, "")
            .replace(/^awscli$/, "aws");
          const first = t[j]?.plain ?? "";
          const viaTool =
            entry !== undefined ||
            (tool &&
              first &&
              first !== tool &&
              /^(?:curl|wget|http|ncat|socat|terraform|tofu|terragrunt|pulumi|aws|gcloud|az|kubectl|helm|flux|argocd|velero|psql|mysql|redis-cli|mongosh|mongo|gsutil|doctl|eksctl|ansible-playbook|packer|vault|nomad|consul|rclone|restic)$/.test(
                tool,
              ) &&
              !/^(?:\/|sh$|bash$|ash$)/.test(first));
          const scripts = [
            ...(viaTool ? [[tool, ...t.slice(j).map((x) => x.plain)]] : []),
            ...(entry === undefined && j < t.length ? [t.slice(j).map((x) => x.plain)] : []),
          ];
          // The command runs in a fresh container: its file-system changes land in the container's own files (gone
          // with it), unless a host directory outside the working directory is mounted. Everything else it does
          // (downloads it runs, teardown, SQL, cluster and cloud changes) is judged as here.
          if (scripts.length) {
            const mounts = t
              .slice(start, j)
              .map((x, k, xs) =>
                /^(?:-v|--volume|--mount)$/.test(xs[k - 1]?.plain ?? "")
                  ? x.plain
                  : /^--(?:volume|mount)=/.test(x.plain)
                    ? x.plain.replace(/^--\w+=/, "")
                    : /^-v./.test(x.plain)
                      ? x.plain.slice(2)
                      : null,
              )
              .filter((x): x is string => x !== null);
            const hostOutside = mounts.some((m) => {
              const src = /(?:^|,)(?:source|src)=([^,]+)/.exec(m)?.[1] ?? m.split(":")[0]!;
              return src.startsWith("/") || src.startsWith("~") || src.startsWith("$HOME")
                ? startRelative(st.cwd, st.root, src) === null
                : false;
            });
            const saved = { findings: st.findings, units: st.units.length, code: st.code.length };
            const inner: Finding[] = [];
            st.findings = inner;
            try {
              for (const words of scripts)
                analyseScript(words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" "), depth + 1, st);
            } finally {
              st.findings = saved.findings;
            }
            st.units.length = saved.units;
            st.code.length = saved.code;
            // A system directory or the whole root mounted is flagged as a mount of the host (judge.ts hostAccess) already.
            const hostSystem = mounts.some((m) =>
              /^\/+$|^\/(?:etc|usr|bin|sbin|lib\w*|boot|root|home|var|proc|sys|dev)\/*$/.test(
                /(?:^|,)(?:source|src)=([^,]+)/.exec(m)?.[1] ?? m.split(":")[0]!,
              ),
            );
            const later = inner
              .filter((f) => (hostOutside && !hostSystem) || !CONTAINER_LOCAL.test(f.key))
              .map((f) => f.key);
            return { prefix, argv: t.slice(i), later };
          }
          return { prefix, argv: t.slice(i) };
        }
        if (t[i + 1]?.plain === "exec" || (t[i + 1]?.plain === "container" && t[i + 2]?.plain === "exec")) {
          const start = i + (t[i + 1]!.plain === "exec" ? 2 : 3);
          const j = skipOptions(t, start, "euw", ["--env", "--env-file", "--user", "--workdir", "--detach-keys"]) + 1;
          if (j < t.length) {
            i = j;
            continue;
          }
        }
        return { prefix, argv: t.slice(i) };
      case "kubectl":
      case "oc":
        if (/^(?:exec|debug|run)$/.test(t[i + 1]?.plain ?? "")) {
          // A pod run privileged or with the host's pids, network or files (`--overrides='{"spec":{"hostPID":true…}}'`).
          if (
            t[i + 1]!.plain !== "exec" &&
            t.some(
              (x) =>
                /"(?:privileged|hostPID|hostNetwork|hostIPC|allowPrivilegeEscalation)"\s*:\s*true|"hostPath"\s*:/.test(
                  x.plain,
                ) ||
                x.plain === "--privileged" ||
                x.plain === "--profile=sysadmin",
            )
          )
            addFinding(st.findings, "privilege_grant");
          const dd = t.findIndex((x, k) => k > i && x.plain === "--");
          if (dd > 0 && dd + 1 < t.length) {
            i = dd + 1;
            continue;
          }
        }
        return { prefix, argv: t.slice(i) };
      default: {
        const wrapper = Object.prototype.hasOwnProperty.call(ARGV_WRAPPERS, name) ? ARGV_WRAPPERS[name]! : null;
        // `systemd-run --on-calendar=…` (or another timer option): the command is scheduled, itself a change of system state.
        if (
          name === "systemd-run" &&
          rest().some((x) =>
            /^--on-(?:calendar|active|boot|startup|unit-active|unit-inactive|clock-change|timezone-change)\b|^--timer-property\b/.test(
              x.plain,
            ),
          )
        )
          addFinding(st.findings, "schedule_job");
        if (wrapper) {
          const j = skipOptions(t, i + 1, wrapper.shortArgs ?? "", wrapper.longArgs ?? []) + (wrapper.fixed ?? 0);
          if (j < t.length) {
            i = j;
            continue;
          }
          return { prefix, argv: t.slice(i) };
        }
        if (SHELLS.has(name)) {
          const r = rest();
          for (let k = 0; k < r.length; k++) {
            const w = r[k]!.plain;
            if (w === "-o" || w === "+o" || w === "-O" || w === "+O" || w === "--rcfile" || w === "--init-file") {
              k++;
              continue;
            }
            if (/^-[A-Za-z]*c[A-Za-z]*$/.test(w)) {
              const at = r.findIndex((x, n) => n > k && !x.plain.startsWith("-") && !x.plain.startsWith("+"));
              const script = at >= 0 ? r[at] : undefined;
              // `bash -c 'rm -rf "$1"' _ ./build`: the words after the script are $0, $1, …; literal ones are bound.
              const given = at >= 0 ? r.slice(at + 2) : [];
              if (script && positional === undefined && given.length && given.every((x) => x.literal !== false)) {
                const saved = new Map(st.vars);
                setPositional(
                  st.vars,
                  given.map((x) => x.plain),
                );
                try {
                  analyseScript(script.plain, depth + 1, st);
                } finally {
                  st.vars = saved;
                }
              } else if (script)
                analyseScript(
                  positional !== undefined ? script.plain.replace(POSITIONAL, positional) : script.plain,
                  depth + 1,
                  st,
                );
              break;
            }
            if (!w.startsWith("-") && !w.startsWith("+")) break;
          }
        }
        return { prefix, argv: t.slice(i) };
      }
    }
  }
  return { prefix, argv: t.slice(i) };
}

function renderArgv(prefix: string, argv: Tok[], redirects: string[]): string {
  const head = argv.length ? [sanitize(displayName(argv[0]!.plain)), ...argv.slice(1).map((x) => x.shown)] : [];
  return (prefix + [...head, ...redirects].join(" ")).trim();
}

/** What the judge needs to know about the previous pipeline stage. */
interface Stage {
  producer: Producer | null;
}

/**
 * A fresh temporary file or directory made by `mktemp` in the same command line belongs to the
 * command alone, like the working directory: `t=$(mktemp -d); …; rm -rf "$t"` deletes nothing else.
 */
const MKTEMP_DIR = "_mktemp_";

function isMktemp(w: Word): boolean {
  const value = w.parts.filter((p) => !(p.kind === "lit" && p.text === ""));
  const last = value[value.length - 1];
  return (
    value.length >= 1 &&
    last?.kind === "subst" &&
    last.op !== "<(" &&
    last.op !== ">(" &&
    /^\s*(?:command\s+)?mktemp(?:\s+(?:-[dqut]+|-p\s+\S+|--tmpdir(?:=\S+)?|--directory|--suffix=\S+|[\w.\/-]*X{3,}[\w.-]*))*\s*$/.test(
      last.raw,
    ) &&
    value.slice(0, -1).every((p) => p.kind === "lit" && /^[A-Za-z_]\w*\+?=$/.test(p.text))
  );
}

/** `$(pwd)`, `` `pwd` ``, `$PWD` and `${PWD}` are the directory the command runs in. */
function resolvePwd(word: Word, cwd: Cwd, vars: ReadonlyMap<string, string>): Word {
  if (
    !word.parts.some(
      (p) => (p.kind === "subst" && (p.op === "$(" || p.op === "`")) || (p.kind === "param" && p.name === "PWD"),
    )
  )
    return word;
  if (cwd.startsWith("$")) return word;
  return {
    parts: word.parts.map((p) =>
      (p.kind === "subst" && (p.op === "$(" || p.op === "`") && /^\s*pwd(?:\s+-[LP])?\s*$/.test(p.raw)) ||
      (p.kind === "param" &&
        (p.raw === "$PWD" || p.raw === "${PWD}" || /^\$\{PWD:?[?-][^}]*\}$/.test(p.raw)) &&
        !vars.has("PWD"))
        ? { kind: "lit", text: cwd, quoted: true }
        : p,
    ),
  };
}

/**
 * `$(echo 'echo ok')`, `$(printf 'rm -rf %s' /srv)`: a substitution whose command writes a literal is that
 * text (trailing newlines removed, as the shell does), split into words where it is not quoted.
 */
function resolveLiteralSubst(word: Word): Word {
  if (!word.parts.some((p) => p.kind === "subst" && (p.op === "$(" || p.op === "`"))) return word;
  return {
    parts: word.parts.map((p) => {
      if (p.kind !== "subst" || (p.op !== "$(" && p.op !== "`")) return p;
      const out = literalOutput(p.raw);
      return out === null
        ? p
        : { kind: "lit", text: out.replace(/\n+$/, ""), quoted: p.quoted === true, split: p.quoted !== true };
    }),
  };
}

/**
 * An unquoted `$IFS` / `${IFS}` (IFS not set by the command line: the default blank, tab, newline) is a
 * field separator after expansion: `rm${IFS}-rf${IFS}/etc` is the three words `rm -rf /etc`.
 */
function splitIfs(word: Word, vars: ReadonlyMap<string, string>): Word[] {
  const isSep = (p: Word["parts"][number]) =>
    p.kind === "param" && !p.quoted && p.name === "IFS" && (p.raw === "$IFS" || p.raw === "${IFS}") && !vars.has("IFS");
  if (!word.parts.some(isSep)) return [word];
  const out: Word[] = [];
  let cur: Word["parts"] = [];
  for (const p of word.parts) {
    if (isSep(p)) {
      if (cur.length) out.push({ parts: cur });
      cur = [];
    } else cur.push(p);
  }
  if (cur.length) out.push({ parts: cur });
  return out;
}

/** The words of a command after alias expansion: a literal, unquoted first word naming a defined alias is its text. */
function expandAlias(words: Word[], st: State): Word[] {
  const head = words[0]?.parts;
  if (!st.aliases?.size || head?.length !== 1 || head[0]!.kind !== "lit" || head[0]!.quoted) return words;
  const value = st.aliases.get(head[0]!.text);
  if (value === undefined) return words;
  const parsed = parseShell(value, MAX_NESTING);
  const cmds = parsed.pipelines.flatMap((p) => p.commands);
  if (parsed.tooDeep || parsed.pipelines.length !== 1 || cmds.length !== 1) return words;
  return [...cmds[0]!.words, ...words.slice(1)];
}

/** `alias name='value' …` with literal words: remembered, as the shell does for the commands after it. */
function rememberAliases(words: Word[], st: State): void {
  if (words[0] && wordText(words[0]) === "alias" && isLiteral(words[0], st.vars)) {
    for (const w of words.slice(1)) {
      const m = /^([\w.:@%+-]+)=(.*)$/s.exec(wordText(w, st.vars));
      if (m && isLiteral(w, st.vars)) (st.aliases ??= new Map()).set(m[1]!, m[2]!);
    }
  }
}

/** What a loop variable bound to `$(CMD)` stands for: an item of a listing, else the substitution itself. */
function loopItem(text: string): string | undefined {
  const m = /^\$\(([^()`]*)\)$|^`([^`]*)`$/s.exec(text.trim());
  if (!m) return undefined;
  const inner = (m[1] ?? m[2]!).trim();
  const first = inner
    .split("|")[0]!
    .trim()
    .split(/\s+/)
    .map((w) => w.replace(/^(['"])(.*)\1$/, "$2"));
  while (first[0] === "sudo" || first[0] === "command") first.shift();
  const [cmd = "", ...rest] = first;
  const ops = rest.filter((w) => !w.startsWith("-"));
  if (/\$|`/.test(ops.join(" "))) return undefined;
  if (cmd === "ls" && ops.length === 1)
    return /[*?[]/.test(ops[0]!) ? posix.join(posix.dirname(ops[0]!), "_item_") : "_item_";
  if (cmd === "find") {
    const roots: string[] = [];
    for (const w of rest) {
      if (/^[-(!]/.test(w)) break;
      roots.push(w);
    }
    return posix.join(roots[0] ?? ".", "_item_");
  }
  return /\s/.test(inner) || /^[\w.-]+$/.test(inner) ? `$(${inner})` : undefined;
}

/** A value whose only expansions are the shell's process id (`/tmp/job-$$`, `${BASHPID}`). */
const PID_ONLY = /^[^$`]*(?:\$(?:\$|\{\$\}|BASHPID\b|\{BASHPID\}|PPID\b|\{PPID\})[^$`]*)+$/;

function renderCommand(
  cmd: SimpleCommand,
  depth: number,
  st: State,
  prev: Producer | null,
  stage: Stage,
): string | null {
  rememberAliases(cmd.words, st);
  const words = expandAlias(cmd.words, st)
    .flatMap((w) => splitIfs(w, st.vars))
    .map((w) => resolveLiteralSubst(resolvePwd(w, st.cwd, st.vars)));
  // Assignments with no command (`a=rm`) are remembered for later `$a`.
  const assignments = words.map((w) => assignmentOf(w, st.vars));
  // A value computed at run time (`p=$(… | base64 -d)`) is unknown: `$p` stays an expansion.
  const remember = (w: Word, a: { name: string; value: string }) => {
    if (isLiteral(w, st.vars)) st.vars.set(a.name, a.value);
    else if (isMktemp(w)) st.vars.set(a.name, `${MKTEMP_DIR}/${a.name}`);
    else if (PID_ONLY.test(a.value))
      st.vars.set(a.name, a.value); // `d=/tmp/job-$$`: unique by the shell's pid, otherwise known
    else st.vars.delete(a.name);
  };
  if (words.length && assignments.every(Boolean)) {
    words.forEach((w, k) => remember(w, assignments[k]!));
  }
  const first = words[0] ? wordText(words[0], st.vars) : "";
  if (DECLARATIONS.has(first)) {
    for (const w of words.slice(1)) {
      const a = assignmentOf(w, st.vars);
      if (a) remember(w, a);
    }
  }

  // A word that is only `$(mktemp …)` is a fresh temporary file or directory: the command's own.
  // (Not for cd: where a fresh directory is, and so what relative paths then name, is not known.)
  const movesCwd = words[0] !== undefined && /^(?:cd|pushd)$/.test(wordText(words[0], st.vars));
  const t = words.flatMap((w, k) =>
    k > 0 && !movesCwd && !assignmentOf(w, st.vars) && isMktemp(w) ? [plainTok(`${MKTEMP_DIR}/new`)] : toks(w, st.vars),
  );
  st.stdin = prev;
  const unwrapped = unwrap(t, depth, st);
  const prefix = unwrapped.prefix;
  let argv = unwrapped.argv;
  const name = argv[0] ? displayName(argv[0].plain) : "";

  if (name === "set" && argv.length > 1 && (argv[1]!.plain === "--" || !/^[-+]/.test(argv[1]!.plain))) {
    // `set -- a b`: the positional parameters are these words from now on.
    const values = argv.slice(argv[1]!.plain === "--" ? 2 : 1);
    if (values.every((v) => v.literal !== false))
      setPositional(
        st.vars,
        values.map((v) => v.plain),
      );
    else for (const k of [...st.vars.keys()]) if (/^(?:[1-9]\d*|[@*#])$/.test(k)) st.vars.delete(k);
  }
  const fnBody = argv[0] && argv[0].literal !== false ? st.functions?.get(argv[0].plain) : undefined;
  if (fnBody !== undefined && !st.active?.has(argv[0]!.plain)) {
    // A call of a function the script defined: its body runs with the call's words as `$1 …`.
    const fname = argv[0]!.plain;
    (st.called ??= new Set()).add(fname);
    (st.active ??= new Set()).add(fname);
    const saved = new Map(st.vars);
    const args = argv.slice(1);
    if (args.every((v) => v.literal !== false))
      setPositional(
        st.vars,
        args.map((v) => v.plain),
      );
    else for (const k of [...st.vars.keys()]) if (/^(?:[1-9]\d*|[@*#])$/.test(k)) st.vars.delete(k);
    try {
      analyseScript(fnBody, depth + 1, st);
    } finally {
      st.vars = saved;
      st.active.delete(fname);
    }
  }
  if ((name === "for" || name === "select") && argv[1] && /^[A-Za-z_]\w*$/.test(argv[1].plain)) {
    // `for f in /etc/cron.daily/*; do : > "$f"; done`: the variable stands for its values; the body is judged
    // with the one leaving the working directory first (else the first), as `find -exec` judges `{}`.
    const loopVar = argv[1].plain;
    const values = argv[2]?.plain === "in" ? argv.slice(3) : null;
    // `for f in $(ls /etc/x/)`: the items of a listing (names, or paths under find's roots); `for p in $(pgrep x)`:
    // the command's output, kept as the substitution so that `kill -9 "$p"` is judged as `kill -9 $(pgrep x)`.
    const bound =
      values && values.length === 1 && values[0]!.literal === false ? loopItem(values[0]!.plain) : undefined;
    if (bound !== undefined) st.vars.set(loopVar, bound);
    else if (!values || !values.length || values.some((v) => v.literal === false)) st.vars.delete(loopVar);
    else {
      const outside = values.find(
        (v) =>
          (v.plain.startsWith("/") || isOpaqueHead(v.plain) || v.plain.startsWith("..")) &&
          startRelative(st.cwd, st.root, v.plain) === null,
      );
      st.vars.set(loopVar, (outside ?? values[0]!).plain);
    }
  } else if (name === "cd" || name === "pushd" || name === "popd") {
    const next = changeDir(
      st.cwd,
      name,
      argv.slice(1).map((x) => x.plain),
    );
    const before = st.cwd;
    // `cd -` returns to the directory before the last cd; a plain `popd` to the one its `pushd` left.
    if (name === "popd" && argv.length === 1 && st.dirStack?.length) st.cwd = st.dirStack.pop()!;
    else st.cwd = next === "$OLDPWD" && st.oldCwd !== undefined ? st.oldCwd : normalizeCwd(next, st.root);
    if (name === "pushd" && next !== "$DIRSTACK") (st.dirStack ??= []).push(before);
    st.oldCwd = before;
  } else if (name === "rm" && [...st.created].some((c) => c.startsWith("dir:"))) {
    // A scratch directory a `mkdir` of this command line made (judge.ts madeHere) is the command's own, like a
    // `mktemp -d` directory: `mkdir -p /tmp/b && cp -r src /tmp/b && rm -rf /tmp/b` deletes nothing else.
    argv = argv.map((tok, k) => {
      // (A word whose only expansion is the shell's process id, `/tmp/scratch-$$`, names the same directory each time.)
      if (
        k === 0 ||
        !tok.plain.startsWith("/") ||
        /[*?[]/.test(tok.plain) ||
        (tok.literal === false &&
          /\$(?!\$|\{\$\}|BASHPID\b|\{BASHPID\}|PPID\b|\{PPID\})|`/.test(
            tok.plain.replace(/\$(?:\$|\{\$\}|\{BASHPID\}|\{PPID\})/g, ""),
          ))
      )
        return tok;
      const abs = posix.normalize(tok.plain).replace(/\/+$/, "");
      const made = [...st.created].some(
        (c) => c.startsWith("dir:") && (abs === c.slice(4) || abs.startsWith(c.slice(4) + "/")),
      );
      return made ? plainTok(`${MKTEMP_DIR}${abs}`) : tok;
    });
  } else if (name === "rm" && !insideStart(st.cwd)) {
    let options = true;
    argv = argv.map((tok, k) => {
      if (k === 0) return tok;
      if (options && tok.plain === "--") {
        options = false;
        return tok;
      }
      if (options && tok.plain.startsWith("-") && tok.plain !== "-") return tok;
      const moved = rebase(st.cwd, tok.plain);
      return moved === null ? tok : plainTok(moved);
    });
  }

  const redirects: string[] = [];
  for (const r of cmd.redirects) {
    let target = r.target ? shownOf(r.target, st.vars) : "";
    const writes =
      r.op === ">" ||
      r.op === ">>" ||
      r.op === "&>" ||
      r.op === "&>>" ||
      r.op === "<>" ||
      (r.op === ">&" && !/^(?:\d+|-)$/.test(target));
    if (r.target && writes && r.heredoc === undefined) {
      const moved = rebase(st.cwd, wordText(r.target, st.vars));
      if (moved !== null) target = sanitize(moved);
    }
    if (r.heredoc !== undefined || r.op === "<<<") {
      const body = r.heredoc ?? (r.target ? wordText(r.target, st.vars) : "");
      // A shell reading a script from stdin runs it.
      if (SHELLS.has(name) && !argv.slice(1).some((x) => !x.plain.startsWith("-"))) analyseScript(body, depth + 1, st);
      redirects.push(`<< ${sanitize(body)}`);
    } else {
      redirects.push(`${r.fd ?? ""}${r.op}${target}`);
    }
  }

  const judged: JudgedRedirect[] = cmd.redirects.map((r) => {
    const body = r.heredoc ?? (r.op === "<<<" && r.target ? wordText(r.target, st.vars) : undefined);
    const quotedDelim = r.target?.parts.some((p) => p.kind === "lit" && p.quoted) ?? false;
    if (r.heredoc !== undefined && !quotedDelim) {
      const expanded = expandHeredoc(r.heredoc, st.vars);
      if (expanded !== null)
        return {
          op: r.op,
          fd: r.fd,
          target: r.target ? wordText(r.target, st.vars) : "",
          body: expanded,
          literal: true,
        };
    }
    // `mysql db < <(echo "DELETE FROM orders")`: stdin is what the substitution writes, a literal like a here-string.
    const only = r.op === "<" && !r.fd && r.target?.parts.length === 1 ? r.target.parts[0]! : null;
    if (only?.kind === "subst" && only.op === "<(") {
      const out = literalOutput(only.raw);
      if (out !== null) return { op: "<<<", fd: r.fd, target: wordText(r.target!, st.vars), body: out, literal: true };
    }
    const literal =
      r.heredoc !== undefined ? quotedDelim || !/\$|`/.test(r.heredoc) : r.target ? isLiteral(r.target, st.vars) : true;
    return { op: r.op, fd: r.fd, target: r.target ? wordText(r.target, st.vars) : "", body, literal };
  });
  const args: JudgedArg[] = argv
    .slice(1)
    .map((x) => ({ text: x.plain, literal: x.literal !== false, procSubst: x.procSubst, substOutput: x.substOutput }));
  // `kubectl delete … --dry-run=server`, `terraform destroy -help`: the tool only prints; its redirections still write.
  const inert = inertInvocation(name, args);
  judgeCommand({
    name: inert ? "" : name,
    args: inert ? [] : args,
    redirects: judged,
    cwd: st.cwd,
    root: st.root,
    producer: prev,
    viaXargs: prefix.startsWith("xargs"),
    analyseShell: (script) => analyseScript(script, depth + 1, st),
    out: st.findings,
    insideTargets: st.insideTargets,
    fetched: st.fetched,
    created: st.created,
    links: st.links,
    env: unwrapped.env,
    privileged: unwrapped.privileged,
    remote: unwrapped.remote,
    scripts: st.scripts,
    path: argv[0]?.plain,
  });
  for (const key of unwrapped.later ?? []) addFinding(st.findings, key);
  const heredoc = judged.find((r) => r.body !== undefined);
  stage.producer = { name, args, body: heredoc?.body, bodyLiteral: heredoc?.literal, before: prev };

  // `find … -exec cmd … ;` runs cmd: render it as a command of its own.
  if (name === "find") {
    for (let k = 1; k < argv.length; k++) {
      if (/^-(exec|execdir|ok|okdir)$/.test(argv[k]!.plain)) {
        let end = k + 1;
        while (end < argv.length && argv[end]!.plain !== ";" && argv[end]!.plain !== "+") end++;
        const item = findItem(argv, st);
        const cmdToks = argv
          .slice(k + 1, end)
          .map((x) => (x.plain.includes("{}") ? plainTok(x.plain.split("{}").join(item)) : x));
        const inner = unwrap(cmdToks, depth + 1, st, item);
        if (inner.argv.length) st.units.push(renderArgv(inner.prefix, inner.argv, []));
        // The command runs once per found path (or with them all): judged as a command of its own, `{}`
        // standing for a path under the start directory. Deletes are judged by find's own rule.
        const innerName = posix.basename(inner.argv[0]?.plain ?? "");
        if (
          inner.argv.length &&
          !/^(?:rm|shred|unlink|rmdir)$/.test(innerName) &&
          !SHELLS.has(innerName) &&
          inner.argv.every((x) => !/[\n]/.test(x.plain))
        ) {
          analyseScript(inner.argv.map((x) => `'${x.plain.replace(/'/g, "'\\''")}'`).join(" "), depth + 1, st);
        }
        k = end;
      }
    }
  }

  if (!argv.length && !redirects.length) return null;
  if (inert) return `inert ${renderArgv(prefix, argv, redirects)}`; // not a command name the patterns look for
  if (name === "rm" && insideStart(st.cwd)) {
    // `cd build && rm -rf *` deletes build/*, `rm -rf /workspace/./cache` deletes cache (in /workspace):
    // render operands inside the working directory as seen from it, for the patterns.
    let options = true;
    argv = argv.map((tok, k) => {
      if (k === 0 || (options && tok.plain.startsWith("-") && tok.plain !== "-") || isOpaqueHead(tok.plain)) {
        if (tok.plain === "--") options = false;
        return tok;
      }
      const rel = startRelative(st.cwd, st.root, tok.plain);
      if (rel !== null) return plainTok(rel === "." && /\/$/.test(tok.plain) ? "./" : rel);
      return tok.plain.startsWith("/") || st.cwd === "." ? tok : plainTok(joinDir(st.cwd, tok.plain));
    });
  }
  return renderArgv(prefix, argv, redirects);
}

// Not taken at their word: to some an operand spelled `--help` is a file name; others (docker run, ssh) pass
// the words after their first operand to another program.
const CORE_FILE_TOOLS = new Set([
  "rm",
  "unlink",
  "rmdir",
  "shred",
  "mv",
  "cp",
  "dd",
  "truncate",
  "chmod",
  "chown",
  "chgrp",
  "ln",
  "tee",
  "find",
  "install",
  "env",
  "xargs",
  "parallel",
  "sed",
  "docker",
  "podman",
  "nerdctl",
  "ctr",
  "ssh",
  "lxc-attach",
  "machinectl",
  "vagrant",
]);
const HELP_FLAG = /^(?:--help|-help|--usage|-\?)$/;
// Dry runs and previews by their spellings across tools: `--preview-only` (pulumi destroy), `--assumeno` (dnf/yum answer no
// to every question), `--pretend` (emerge), `--noop` (puppet), `--simulate`, `--no-act`, `-WhatIf`.
const DRY_RUN_FLAG =
  /^--?(?:dry[-_]?run|dryrun|simulate|no-act|just-print|what-?if|preview-only|assumeno|assume-no|pretend|noop|plan-only)(?:=(?!none$|false$|no$|0$|off$).*)?$/i;

/**
 * A tool asked for its help or a dry run only prints (unknown options make a tool stop before acting).
 * Not for shells and interpreters, whose programs run whatever their options.
 */
function inertInvocation(name: string, args: JudgedArg[]): boolean {
  if (!name || SHELLS.has(name) || interpreterLanguage(name) !== null) return false;
  // `docker volume rm --help`: a container tool's own subcommand asked for help (not one that runs another program).
  if (/^(?:docker|podman|nerdctl)$/.test(name)) {
    const help = args.findIndex((a) => HELP_FLAG.test(a.text));
    return (
      help >= 0 &&
      !args.slice(0, help).some((a) => /^(?:run|exec|create|start|attach|compose|buildx|debug)$/.test(a.text))
    );
  }
  if (CORE_FILE_TOOLS.has(name)) return false;
  // Asked only for its version (`mkfs.ext4 -V`, `nft --version`): prints it and exits.
  if (args.length === 1 && /^(?:--version|-V|-version)$/.test(args[0]!.text)) return true;
  // Read-only questions: `kubectl auth can-i delete ns` asks whether a verb is allowed; `explain` prints a schema.
  if (/^(?:kubectl|oc|k)$/.test(name)) {
    const first = args.find((a) => !a.text.startsWith("-"))?.text;
    if (first === "explain" || (first === "auth" && args.some((a) => a.text === "can-i" || a.text === "whoami")))
      return true;
  }
  // `apt-get -s remove …`: -s / --simulate (and their aliases) only print what would be done.
  if (
    /^(?:apt|apt-get|aptitude)$/.test(name) &&
    args.some((a) => /^-[a-zA-Z]*s[a-zA-Z]*$/.test(a.text) && !/^-[a-zA-Z]*[oct]/.test(a.text))
  )
    return true;
  // `pacman -Rns --print pkg`, `pacman -Rnsp pkg` (and its wrappers), `emerge -p`, `apk del -s`: print what would be done.
  if (
    /^(?:pacman|yay|paru|pikaur|makepkg)$/.test(name) &&
    args.some(
      (a) =>
        a.text === "--print" ||
        /^-[A-Za-z]*[RSU][A-Za-z]*p[A-Za-z]*$|^-[A-Za-z]*p[A-Za-z]*[RSU][A-Za-z]*$/.test(a.text) ||
        (/^-p$/.test(a.text) && args.some((b) => /^-[RSU]/.test(b.text))),
    )
  )
    return true;
  if (name === "emerge" && args.some((a) => /^-[A-Za-z]*p[A-Za-z]*$/.test(a.text))) return true;
  if (name === "apk" && args.some((a) => /^-[A-Za-z]*s$|^--simulate$/.test(a.text))) return true;
  // `useradd -D` alone prints the defaults for new users (with -b/-e/-f/-g/-s it changes them).
  if (name === "useradd" && args.length === 1 && (args[0]!.text === "-D" || args[0]!.text === "--defaults"))
    return true;
  // `terraform destroy -h`, `helm uninstall -h`: the subcommand CLIs of infrastructure tools take -h for help.
  if (
    /^(?:terraform|tofu|terragrunt|pulumi|helm|kubectl|oc|eksctl|kind|k3d|cdk|cdktf|flux|argocd|velero|doctl|hcloud|gh|glab|gcloud|vault|nomad|consul|packer|sst|serverless|sls|copilot|flyctl|fly|heroku|vercel|netlify|juju|azd)$/.test(
      name,
    ) &&
    args.some((a) => a.text === "-h")
  )
    return true;
  let inert = false;
  for (const a of args) {
    if (a.text === "--") break;
    if (/^--?(?:dry-?run|dryrun)=(?:none|false|no|0|off)$/i.test(a.text)) return false; // the last one given wins
    if (HELP_FLAG.test(a.text) || DRY_RUN_FLAG.test(a.text)) inert = true;
  }
  return inert;
}

/**
 * The text of an unquoted here-document whose only expansions are variables this command line set
 * (substituted) or variables of the task's environment (`$USER`, `$HOME`: kept, their values are not code
 * anyone wrote), so the text fed on is known: null when it holds `$( … )`, backticks or other variables.
 */
function expandHeredoc(body: string, vars: ReadonlyMap<string, string>): string | null {
  if (!/[$`]/.test(body)) return body;
  if (body.includes("`") || body.length > 65_536) return null;
  let ok = true;
  const out = body.replace(
    /\\\$|\$\(\(|\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)|\$([$?#!])|\$/g,
    (m, braced?: string, bare?: string, special?: string) => {
      if (m === "\\$" || m === "$((") return m;
      const name = braced ?? bare;
      if (name !== undefined) {
        if (vars.has(name)) return vars.get(name)!;
        if (ENVIRONMENT_NAME.test(name)) return m;
      }
      if (special !== undefined) return m;
      ok = false;
      return m;
    },
  );
  return ok ? out : null;
}

/** What `{}` of `find ROOTS … -exec` stands for: a path under the first root outside the working directory, else under the first root. */
function findItem(argv: Tok[], st: State): string {
  const roots: string[] = [];
  let k = 1;
  while (k < argv.length && /^-[HLP]$|^-O\d$/.test(argv[k]!.plain)) k++;
  for (; k < argv.length && !/^[-(!]/.test(argv[k]!.plain); k++) roots.push(argv[k]!.plain);
  if (!roots.length) roots.push(".");
  const outside = roots.find(
    (r) =>
      startRelative(st.cwd, st.root, r) === null &&
      !insideStart(r.startsWith("/") || isOpaqueHead(r) ? r : joinDir(st.cwd, r)),
  );
  const root = outside ?? roots[0]!;
  if (/\$|`/.test(root)) return "$INPUT_ITEM";
  return posix.join(outside === undefined ? (startRelative(st.cwd, st.root, root) ?? root) : root, "_item_");
}

/**
 * The text of a shell script that is code: quoted strings emptied (a `$( … )` inside double quotes kept),
 * here-document bodies and comments dropped. `echo ":(){ :|:& };:" > notes.txt` writes text; its code is
 * `echo "" > notes.txt`. A body or string that does run (`bash -c '…'`, a here-document fed to a shell) is
 * analysed as a script of its own and has a code of its own.
 */
export function codeOf(src: string): string {
  const parts: string[] = [];
  const heredocs: string[] = [];
  const special = /['"\\#<\n]/g;
  let from = 0;
  for (let m = special.exec(src); m; m = special.exec(src)) {
    const i = m.index;
    const c = src[i]!;
    if (c === "<" && !(src[i + 1] === "<" && src[i + 2] !== "<")) continue;
    if (c === "#" && !(i === 0 || /[\s;&|(]/.test(src[i - 1]!))) continue;
    if (c === "\n" && !heredocs.length) continue;
    parts.push(src.slice(from, i));
    let next = i + 1;
    if (c === "\\") {
      parts.push(src.slice(i, i + 2));
      next = i + 2;
    } else if (c === "'") {
      const end = src.indexOf("'", i + 1);
      parts.push("''");
      next = end < 0 ? src.length : end + 1;
    } else if (c === '"') {
      // the text is dropped, a `$( … )` inside is code
      parts.push('"');
      let j = i + 1;
      for (; j < src.length && src[j] !== '"'; j++) {
        if (src[j] === "\\") j++;
        else if (src[j] === "$" && src[j + 1] === "(") {
          let depth = 0;
          const open = j;
          for (; j < src.length; j++) {
            if (src[j] === "(") depth++;
            else if (src[j] === ")" && --depth === 0) break;
          }
          parts.push(src.slice(open, j + 1));
        }
      }
      parts.push('"');
      next = j + 1;
    } else if (c === "#") {
      const end = src.indexOf("\n", i);
      next = end < 0 ? src.length : end;
    } else if (c === "<") {
      const h = /^<<-?\s*(?:(['"])(.*?)\1|\\?([^\s;&|<>()]+))/.exec(src.slice(i, i + 256));
      if (h) heredocs.push(h[2] ?? h[3]!);
      parts.push("<<");
      next = i + 2;
    } else {
      // a newline ending a line that opened here-documents: their bodies are not code
      parts.push("\n");
      let pos = i + 1;
      for (const delim of heredocs.splice(0)) {
        while (pos < src.length) {
          const end = src.indexOf("\n", pos);
          const line = src.slice(pos, end < 0 ? src.length : end).replace(/^\t+/, "");
          pos = end < 0 ? src.length : end + 1;
          if (line === delim) break;
        }
      }
      next = pos;
    }
    from = Math.min(next, src.length);
    special.lastIndex = from;
  }
  parts.push(src.slice(from));
  return parts.join("");
}

/**
 * Shell functions and array assignments, found where they stand unquoted at the top of a script:
 * `f() { …; }` / `function f { …; }` and `name=( … )` / `name+=( … )` (also after declare/local).
 */
function topLevelDefinitions(
  src: string,
): { start: number; end: number; kind: "function" | "array"; name: string; body: string }[] {
  const out: { start: number; end: number; kind: "function" | "array"; name: string; body: string }[] = [];
  if (src.length > 65_536) return out;
  let quote = "";
  const atWordStart = (i: number) => i === 0 || /[\s;&|(){}]/.test(src[i - 1]!);
  /** The index after the bracket closing the one at `open`, skipping quoted text; -1 when unbalanced. */
  const closing = (open: number, o: string, c: string): number => {
    let depth = 0;
    let q = "";
    for (let k = open; k < src.length; k++) {
      const ch = src[k]!;
      if (q) {
        if (ch === "\\" && q === '"') k++;
        else if (ch === q) q = "";
        continue;
      }
      if (ch === "\\") k++;
      else if (ch === "'" || ch === '"') q = ch;
      else if (ch === o) depth++;
      else if (ch === c && --depth === 0) return k + 1;
    }
    return -1;
  };
  for (let i = 0; i < src.length && out.length < 32; i++) {
    const ch = src[i]!;
    if (quote) {
      if (ch === "\\" && quote === '"') i++;
      else if (ch === quote) quote = "";
      continue;
    }
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      continue;
    }
    // A here-document's body is text, not script: `func main() { … }` in a Go file written by `cat <<'EOF'` is no function.
    const here = ch === "<" ? /^<<-?\s*(['"]?)([A-Za-z_][\w.-]*)\1/.exec(src.slice(i, i + 128)) : null;
    if (here && src[i + 2] !== "<") {
      const nl = src.indexOf("\n", i);
      if (nl < 0) break;
      const endRe = new RegExp(`^\\t*${here[2]!.replace(/[.]/g, "\\.")}$`, "m");
      const m = endRe.exec(src.slice(nl + 1));
      if (!m) break;
      i = nl + 1 + m.index + m[0].length - 1;
      continue;
    }
    if (!atWordStart(i)) continue;
    const rest = src.slice(i, i + 256);
    const arr = /^([A-Za-z_]\w*)\+?=\(/.exec(rest);
    if (arr) {
      const open = i + arr[0].length - 1;
      const end = closing(open, "(", ")");
      if (end < 0) return out;
      out.push({ start: i, end, kind: "array", name: arr[1]!, body: src.slice(open + 1, end - 1) });
      i = end - 1;
      continue;
    }
    const fn = /^(?:function\s+([A-Za-z_][\w-]*)\s*(?:\(\s*\))?|([A-Za-z_][\w-]*)\s*\(\s*\))\s*\{/.exec(rest);
    if (fn) {
      const open = i + fn[0].length - 1;
      const end = closing(open, "{", "}");
      if (end < 0) return out;
      out.push({ start: i, end, kind: "function", name: (fn[1] ?? fn[2])!, body: src.slice(open + 1, end - 1) });
      i = end - 1;
    }
  }
  return out;
}

/** Positional parameters `$1 … $n`, `$@`, `$*`, `$#` set to `values` (for `set -- …` and function calls). */
function setPositional(vars: Map<string, string>, values: string[]): void {
  for (const k of [...vars.keys()]) if (/^(?:[1-9]\d*|[@*#])$/.test(k)) vars.delete(k);
  values.forEach((v, k) => vars.set(String(k + 1), v));
  vars.set("@", values.join(" "));
  vars.set("*", values.join(" "));
  vars.set("#", String(values.length));
}

function analyseScript(src: string, depth: number, st: State): void {
  if (depth > MAX_NESTING || --st.budget < 0) {
    st.tooDeep = true;
    return;
  }
  if (st.code.length < 64) st.code.push(codeOf(src));
  // Functions are judged where they are called, with the call's arguments as `$1 …`; array assignments are
  // remembered (`arr[0]`, `arr[@]`, `map[key]`). Their text is taken out of the script read below.
  const defs = topLevelDefinitions(src);
  const defined: string[] = [];
  if (defs.length) {
    let rewritten = "";
    let from = 0;
    for (const d of defs) {
      rewritten += src.slice(from, d.start) + (d.kind === "function" ? ":" : "");
      from = d.end;
      if (d.kind === "function") {
        (st.functions ??= new Map()).set(d.name, d.body);
        defined.push(d.name);
      } else rememberArray(d.name, d.body, st);
    }
    src = rewritten + src.slice(from);
  }
  const parsed = parseShell(src, depth);
  if (parsed.tooDeep) st.tooDeep = true;
  st.comments.push(...parsed.comments.filter(Boolean));
  // A subshell's or substitution's `cd` ends with it: the directory is restored when the pipelines leave its scope.
  const entered = new Map<number, typeof st.cwd>();
  for (const p of parsed.pipelines) {
    for (const [id, cwd] of [...entered].reverse()) {
      if (p.scopes?.includes(id)) continue;
      st.cwd = cwd;
      entered.delete(id);
    }
    for (const id of p.scopes ?? []) if (!entered.has(id)) entered.set(id, st.cwd);
    let prev: Producer | null = null;
    const stages: string[] = [];
    for (const c of p.commands) {
      const stage: Stage = { producer: null };
      const s = renderCommand(c, depth, st, prev, stage);
      prev = stage.producer;
      if (s) stages.push(s);
    }
    if (stages.length) st.units.push(stages.join(" | "));
  }
  // Trap actions set by this script run when it exits (or on a signal): judged now, with the values its variables got.
  if (st.traps?.some((x) => x.depth === depth)) {
    const mine = st.traps.filter((x) => x.depth === depth);
    st.traps = st.traps.filter((x) => x.depth !== depth);
    for (const x of mine) analyseScript(x.script, depth + 1, st);
  }
  // A function this script defines but never calls may still be called by a later command: its body is judged
  // as it stands, with its arguments unknown.
  for (const name of defined) {
    if (st.called?.has(name)) continue;
    const body = st.functions?.get(name);
    if (body === undefined) continue;
    st.called = (st.called ?? new Set()).add(name);
    const saved = new Map(st.vars);
    for (const k of [...st.vars.keys()]) if (/^(?:[1-9]\d*|[@*#])$/.test(k)) st.vars.delete(k);
    analyseScript(body, depth + 1, st);
    st.vars = saved;
  }
}

/** `arr=(a b c)`, `map=([k]=v …)`: the elements, when literal, as `name[i]` / `name[key]` and `name[@]`. */
function rememberArray(name: string, body: string, st: State): void {
  for (const k of [...st.vars.keys()]) if (k.startsWith(`${name}[`)) st.vars.delete(k);
  st.vars.delete(name);
  const parsed = parseShell(body, MAX_NESTING);
  const words = parsed.pipelines.flatMap((p) => p.commands).flatMap((c) => c.words);
  if (parsed.tooDeep || !words.every((w) => isLiteral(w, st.vars))) return;
  const values: string[] = [];
  words.forEach((w, k) => {
    const text = wordText(w, st.vars);
    const m = /^\[([^\]]*)\]=(.*)$/s.exec(text);
    if (m) st.vars.set(`${name}[${m[1]}]`, m[2]!);
    else st.vars.set(`${name}[${k}]`, text);
    values.push(m ? m[2]! : text);
  });
  st.vars.set(`${name}[@]`, values.join(" "));
}

export interface CommandAnalysis {
  /** The normalised command. */
  normalized: string;
  /** One rendered line per pipeline (nested ones included). */
  units: string[];
  /** Shell comments found (never executed). */
  comments: string[];
  tooDeep: boolean;
  /** Effect classes judged from what each simple command does (judge.ts). */
  findings: Finding[];
  /** Paths inside the working directory that are deleted, moved, written or chmodded, relative to it. */
  insideTargets: string[];
  /** The code of every shell script that runs (codeOf): what the "code" patterns match. */
  code: string[];
}

/** Parses and renders a command for the patterns. Exposed for tests and for `approval check --explain`. */
export function analyseCommand(cmd: string, opts?: DetectOptions): CommandAnalysis {
  const normalized = normalizeCommand(cmd);
  const def = opts?.defaultCwd?.trim();
  const st: State = {
    root: def && def.startsWith("/") ? posix.normalize(def) : undefined,
    cwd: startDir(opts),
    units: [],
    findings: [],
    insideTargets: [],
    fetched: new Set(),
    created: new Set(),
    links: new Map(),
    scripts: new Map(),
    comments: [],
    tooDeep: false,
    vars: new Map(),
    stdin: null,
    budget: 256,
    code: [],
  };
  try {
    analyseScript(normalized, 0, st);
  } catch {
    st.tooDeep = true; // the reader is total; this only guards against a bug turning into "safe"
  }
  for (const f of supplementaryFindings(cmd, opts)) if (!st.findings.some((g) => g.key === f.key)) st.findings.push(f);
  return {
    normalized,
    units: st.units,
    comments: st.comments,
    tooDeep: st.tooDeep,
    findings: st.findings,
    insideTargets: st.insideTargets,
    code: st.code,
  };
}
