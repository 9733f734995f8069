/**
 * Dangerous-command detection: normalisation, the shell-aware rendering the patterns run on,
 * and DANGEROUS_PATTERNS.
 *
 * How it sees through disguises: the command is normalised (ANSI, NUL, invisible characters,
 * NFKC), then read by a small shell parser (approval_shell.ts) that unquotes words (`r''m`, `r\m`,
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
 * stage or a redirection. The patterns below match that rendering, case-insensitively.
 *
 * Judgement calls:
 *  - A recursive `rm` is flagged only when a target leaves the working directory or cannot be
 *    known: absolute paths, `~`/`$HOME`, `..`, `.`, `*`, `$VAR`, `$( … )`. `rm -rf ./build`,
 *    `rm -rf node_modules dist` are not flagged; `rm -rf /tmp/x` is (the approver decides).
 *  - `chmod 777 file` in the working directory is not flagged; world-writable modes are flagged
 *    when recursive or on a system path.
 *  - `bash -c`/`python -c` are not flagged for being `-c` (Hermes v-A did): the script of a shell
 *    `-c` is analysed itself, so a harmless one passes and a harmful one is caught.
 *  - The fork-bomb pattern runs on the raw normalised text, so it also fires on an echoed bomb.
 *  - The working directory is followed through `cd`, `pushd` and `popd` (and a start directory
 *    may be given): once it is anywhere but a subdirectory of the start, the relative operands
 *    of `rm` and the relative targets of write redirections are rendered joined to it
 *    (`cd /usr && rm -rf lib` renders `rm -rf /usr/lib`), so the patterns see where they land.
 *    A directory that cannot be known (`cd -`, `popd`, `cd $(…)`) is rendered as a `$VAR`.
 */
import { posix } from "node:path";
import { assignmentOf, MAX_NESTING, parseShell, wordText, type SimpleCommand, type Word } from "./shell.js";

export interface DangerousPattern {
  /** Stable identifier: what session approvals and `command_allowlist` store. */
  key: string;
  pattern: RegExp;
  description: string;
  /** "command" (default): matched against each rendered pipeline; "raw": against the normalised text. */
  scope?: "command" | "raw";
}

export interface Detection {
  dangerous: boolean;
  /** The first (most severe) matching pattern. */
  patternKey?: string;
  description?: string;
  /** Every matching pattern, in pattern order. Approval by allowlist or session needs all of them approved. */
  matches?: { key: string; description: string }[];
}

// ---------------------------------------------------------------------------------------------
// Normalisation

// ECMA-48: CSI (7- and 8-bit), OSC/DCS/PM/APC strings, and two-character escapes.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b[\]P^_X][\s\S]*?(?:\x07|\x1b\\|$)|\x1b[ -/]*[0-~]/g;
// Invisible or direction-changing characters that a terminal hides but the shell passes through.
const INVISIBLE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
// C0/C1 control characters other than tab and newline.
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]/g;

/**
 * The command as the detector and the verdict cache see it: ANSI escapes, NUL and other control
 * characters and invisible characters removed, line endings unified, NFKC applied (fullwidth
 * letters become ASCII), surrounding blanks trimmed. Case is kept (`-R` and `-r` differ).
 */
export function normalizeCommand(cmd: string): string {
  return String(cmd)
    .replace(ANSI, "")
    .replace(/\r\n?|[\u2028\u2029]/g, "\n")
    .replace(INVISIBLE, "")
    .normalize("NFKC")
    .replace(ANSI, "")
    .replace(CONTROLS, "")
    .trim();
}

// ---------------------------------------------------------------------------------------------
// Rendering

interface Tok {
  /** The word as the program receives it (quotes removed, known variables substituted). */
  plain: string;
  /** Same, with `|<>` inside the word replaced, for the rendered line. */
  shown: string;
}

const sanitize = (s: string): string => s.replace(/\|/g, "¦").replace(/</g, "‹").replace(/>/g, "›").replace(/[\n\t]+/g, " ");

function shownOf(word: Word, vars: ReadonlyMap<string, string>): string {
  const s = word.parts
    .map((p) => {
      if (p.kind === "lit") return sanitize(p.text);
      if (p.kind === "param") return sanitize(vars.get(p.name) ?? p.raw);
      return `${p.op === "`" ? "$(" : p.op}${sanitize(p.raw)})`;
    })
    .join("");
  return s === "" ? "''" : s;
}

function toks(word: Word, vars: ReadonlyMap<string, string>): Tok[] {
  // An unquoted `$x` whose known value has blanks is split into several words, as the shell does.
  if (word.parts.length === 1 && word.parts[0]!.kind === "param") {
    const value = vars.get(word.parts[0]!.name);
    if (value !== undefined && /\s/.test(value)) {
      return value
        .split(/\s+/)
        .filter(Boolean)
        .map((v) => ({ plain: v, shown: sanitize(v) }));
    }
  }
  return [{ plain: wordText(word, vars), shown: shownOf(word, vars) }];
}

const plainTok = (s: string): Tok => ({ plain: s, shown: sanitize(s) || "''" });

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish", "tcsh", "csh", "rbash"]);
const KEYWORDS = new Set(["!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "coproc", "function"]);
const DECLARATIONS = new Set(["export", "declare", "local", "readonly", "typeset"]);

function displayName(path: string): string {
  if (path.includes("$(")) return path; // computed at run time: keep it whole for the patterns
  const m = /(?:^|\/)((?:init|rc)\.d\/[^/]+)$/.exec(path);
  if (m) return m[1]!.replace(/^rc\.d/, "init.d");
  const base = path.replace(/\/+$/, "").split("/").pop() ?? path;
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
  units: string[];
  comments: string[];
  tooDeep: boolean;
  vars: Map<string, string>;
  /** Bound on nested analyses, against pathological inputs. */
  budget: number;
}

interface Unwrapped {
  prefix: string;
  argv: Tok[];
}

/** Strips wrappers and hands scripts they carry to `analyseScript`. */
function unwrap(t: Tok[], depth: number, st: State): Unwrapped {
  let prefix = "";
  let i = 0;
  for (let guard = 0; guard < 32 && i < t.length; guard++) {
    while (i < t.length && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(t[i]!.plain)) i++;
    if (i >= t.length) break;
    const name = displayName(t[i]!.plain);
    const rest = () => t.slice(i + 1);
    if (KEYWORDS.has(name)) {
      i++;
      continue;
    }
    switch (name) {
      case "sudo":
        i = skipOptions(t, i + 1, "CDghpRrtTUu", ["--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user"]);
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
          if (w === "-S" || w === "--split-string" || w.startsWith("--split-string=") || (w.startsWith("-S") && w.length > 2)) {
            const value = w === "-S" || w === "--split-string" ? (t[j + 1]?.plain ?? "") : w.replace(/^(-S|--split-string=)/, "");
            const after = t.slice(j + (w === "-S" || w === "--split-string" ? 2 : 1));
            t = [...value.split(/\s+/).filter(Boolean).map(plainTok), ...after];
            i = 0;
            j = -1;
            break;
          }
          if (w === "-" || /^-[i0v]+$/.test(w) || w === "--ignore-environment" || w === "--null" || w.startsWith("--unset=") || w.startsWith("--chdir=")) j++;
          else if (w === "-u" || w === "-C" || w === "--unset" || w === "--chdir") j += 2;
          else if (/^-[uC]./.test(w)) j++;
          else break;
        }
        if (j >= 0) i = j;
        continue;
      }
      case "nohup":
      case "builtin":
      case "unbuffer":
      case "catchsegv":
      case "setsid":
      case "busybox":
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
        let j = skipOptions(t, i + 1, "wEc", ["--timeout", "--conflict-exit-code", "--command"]);
        const cIdx = t.slice(i + 1, j).findIndex((x) => x.plain === "-c" || x.plain === "--command");
        if (cIdx >= 0) {
          const script = t[i + 1 + cIdx + 1]?.plain;
          if (script) analyseScript(script, depth + 1, st);
          return { prefix, argv: t.slice(i, i + 1) };
        }
        j += 1; // the lock file
        i = j;
        continue;
      }
      case "watch": {
        const j = skipOptions(t, i + 1, "nq", ["--interval", "--differences"]);
        analyseScript(t.slice(j).map((x) => x.plain).join(" "), depth + 1, st);
        return { prefix, argv: t.slice(i, i + 1) };
      }
      case "xargs":
        prefix = "xargs ";
        i = skipOptions(t, i + 1, "ILnPsdEa", ["--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--eof", "--process-slot-var"]);
        continue;
      case "eval":
        analyseScript(rest().map((x) => x.plain).join(" "), depth + 1, st);
        return { prefix, argv: t.slice(i) };
      case "su":
      case "runuser": {
        const r = rest();
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
      case "ssh": {
        let j = skipOptions(t, i + 1, "BbcDEeFIiJLlmOoPpQRSWw");
        j += 1; // the host
        if (j < t.length) analyseScript(t.slice(j).map((x) => x.plain).join(" "), depth + 1, st);
        return { prefix, argv: t.slice(i, Math.min(j, t.length)) };
      }
      case "docker":
      case "podman":
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
        if (t[i + 1]?.plain === "exec") {
          const dd = t.findIndex((x, k) => k > i && x.plain === "--");
          if (dd > 0 && dd + 1 < t.length) {
            i = dd + 1;
            continue;
          }
        }
        return { prefix, argv: t.slice(i) };
      default:
        if (SHELLS.has(name)) {
          const r = rest();
          for (let k = 0; k < r.length; k++) {
            const w = r[k]!.plain;
            if (w === "-o" || w === "+o" || w === "-O" || w === "+O" || w === "--rcfile" || w === "--init-file") {
              k++;
              continue;
            }
            if (/^-[A-Za-z]*c[A-Za-z]*$/.test(w)) {
              const script = r.slice(k + 1).find((x) => !x.plain.startsWith("-") && !x.plain.startsWith("+"));
              if (script) analyseScript(script.plain, depth + 1, st);
              break;
            }
            if (!w.startsWith("-") && !w.startsWith("+")) break;
          }
        }
        return { prefix, argv: t.slice(i) };
    }
  }
  return { prefix, argv: t.slice(i) };
}

function renderArgv(prefix: string, argv: Tok[], redirects: string[]): string {
  const head = argv.length ? [sanitize(displayName(argv[0]!.plain)), ...argv.slice(1).map((x) => x.shown)] : [];
  return (prefix + [...head, ...redirects].join(" ")).trim();
}

function renderCommand(cmd: SimpleCommand, depth: number, st: State): string | null {
  const words = cmd.words;
  // Assignments with no command (`a=rm`) are remembered for later `$a`.
  const assignments = words.map((w) => assignmentOf(w, st.vars));
  if (words.length && assignments.every(Boolean)) {
    for (const a of assignments) st.vars.set(a!.name, a!.value);
  }
  const first = words[0] ? wordText(words[0], st.vars) : "";
  if (DECLARATIONS.has(first)) {
    for (const w of words.slice(1)) {
      const a = assignmentOf(w, st.vars);
      if (a) st.vars.set(a.name, a.value);
    }
  }

  const t = words.flatMap((w) => toks(w, st.vars));
  const unwrapped = unwrap(t, depth, st);
  const prefix = unwrapped.prefix;
  let argv = unwrapped.argv;
  const name = argv[0] ? displayName(argv[0].plain) : "";

  if (name === "cd" || name === "pushd" || name === "popd") {
    st.cwd = changeDir(st.cwd, name, argv.slice(1).map((x) => x.plain));
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
    const writes = r.op === ">" || r.op === ">>" || r.op === "&>" || r.op === "&>>" || r.op === "<>" || (r.op === ">&" && !/^(?:\d+|-)$/.test(target));
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

  // `find … -exec cmd … ;` runs cmd: render it as a command of its own.
  if (name === "find") {
    for (let k = 1; k < argv.length; k++) {
      if (/^-(exec|execdir|ok|okdir)$/.test(argv[k]!.plain)) {
        let end = k + 1;
        while (end < argv.length && argv[end]!.plain !== ";" && argv[end]!.plain !== "+") end++;
        const inner = unwrap(argv.slice(k + 1, end), depth + 1, st);
        if (inner.argv.length) st.units.push(renderArgv(inner.prefix, inner.argv, []));
        k = end;
      }
    }
  }

  if (!argv.length && !redirects.length) return null;
  return renderArgv(prefix, argv, redirects);
}

function analyseScript(src: string, depth: number, st: State): void {
  if (depth > MAX_NESTING || --st.budget < 0) {
    st.tooDeep = true;
    return;
  }
  const parsed = parseShell(src, depth);
  if (parsed.tooDeep) st.tooDeep = true;
  st.comments.push(...parsed.comments.filter(Boolean));
  for (const p of parsed.pipelines) {
    const stages = p.commands.map((c) => renderCommand(c, depth, st)).filter((s): s is string => s !== null && s !== "");
    if (stages.length) st.units.push(stages.join(" | "));
  }
}

export interface CommandAnalysis {
  /** The normalised command. */
  normalized: string;
  /** One rendered line per pipeline (nested ones included). */
  units: string[];
  /** Shell comments found (never executed). */
  comments: string[];
  tooDeep: boolean;
}

/** Parses and renders a command for the patterns. Exposed for tests and for `approval check --explain`. */
export function analyseCommand(cmd: string, opts?: DetectOptions): CommandAnalysis {
  const normalized = normalizeCommand(cmd);
  const st: State = { cwd: startDir(opts), units: [], comments: [], tooDeep: false, vars: new Map(), budget: 256 };
  try {
    analyseScript(normalized, 0, st);
  } catch {
    st.tooDeep = true; // the reader is total; this only guards against a bug turning into "safe"
  }
  return { normalized, units: st.units, comments: st.comments, tooDeep: st.tooDeep };
}

// ---------------------------------------------------------------------------------------------
// Patterns

const AT = String.raw`(?:^|\| )`; // start of a command in a rendered pipeline
const ANY = String.raw`(?:[^|]*\s)?`; // any words before the next one, within the same command
const EOT = String.raw`(?=\s|$)`; // end of a word
const END_ARGS = String.raw`(?=\s*$|\s\|\s|\s[0-9&]*[<>])`; // after the last argument
const REC = String.raw`(?:-[a-z]*r[a-z]*|--recursive)`;
const CORE = String.raw`(?:etc|boot|usr|bin|sbin|lib(?:32|64|x32)?)`;
const TOP = String.raw`(?:dev|home|opt|proc|root|srv|sys|var|mnt|media|snap|run)`;
const HOME = String.raw`(?:~|\$home|\$\{home\})`;
const SYS_TARGET = String.raw`(?:/+\*?|/+${CORE}(?:/\S*)?|/+${TOP}/*\*?|${HOME}/*\*?)`;
const SYS_TREE = String.raw`(?:/+\*?|/+(?:${CORE}|${TOP})(?:/\S*)?|${HOME}/*\*?)`;
const CONFIG_PATH = String.raw`(?:/+${CORE}(?:/\S*)?|/+proc/sys(?:rq-trigger|/\S*)|/+sys/\S*)`;
const CONFIG_TARGET = `${CONFIG_PATH}${EOT}`;
// Any absolute or home-relative `.ssh` directory: the home of the environment is not known here.
// (a quoted path may hold blanks: `> '/tmp/my dir/.ssh/k'`).
const SSH_TARGET = String.raw`(?:${HOME}|/[^|<>]*?)/\.ssh/\S*`;
const RC_FILE = String.raw`\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile|zlogin|zlogout|kshrc|mkshrc|cshrc|tcshrc|login|logout|inputrc|xprofile|xinitrc|xsessionrc|pam_environment|config/fish/config\.fish)`;
const RC_PATH = String.raw`(?:${HOME}|/[^|<>]*?)/${RC_FILE}`;
const RC_TARGET = `${RC_PATH}${EOT}`;
const DISK = String.raw`/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|mapper/|disk/|loop\d|sr\d)\S*`;
const WRITE_REDIR = String.raw`\s(?:\d+|&)?>>?`;
const COPY = String.raw`(?:cp|mv|install|ln|rsync)`;
const SQL_CLIENT = String.raw`^(?=.*(?:^|\s)(?:psql|mysql|mariadb|sqlite3?|sqlcmd|duckdb|clickhouse(?:-client)?|cqlsh|mongo(?:sh)?|cockroach|pgcli|mycli|litecli|usql|isql)${EOT})`;
const INTERP = String.raw`(?:(?:ba|z|da|k|a|mk|fi|tc|c)?sh|python[\d.]*|perl|ruby|node|php|source|\.|eval)`;
// An interpreter that reads its program from stdin: no script, -c or -m argument.
const STDIN_INTERP = String.raw`(?:${INTERP}(?:\s-(?![cme]${EOT})\S*)*(?:\s--(?:\s\S+)*)?|(?:source|\.)\s/dev/stdin)${END_ARGS}`;
// A command that decodes or decrypts its input (within one pipeline stage).
const DECODER = String.raw`(?:(?:base(?:64|32)|basenc)\s${ANY}(?:-[a-z]*d[a-z]*|--decode)|xxd\s${ANY}-[a-z]*r[a-z]*|openssl\s${ANY}-d|gpg2?\s${ANY}(?:-d|--decrypt)|uudecode|(?:python[\d.]*|perl|ruby)\s${ANY}\S*(?:b64decode|decode_base64|unpack)\S*)`;
const GITOPTS = String.raw`(?:\s-\S+(?:\s[^-\s]\S*)?)*?`;

const re = (...alternatives: string[]): RegExp => new RegExp(alternatives.join("|"), "i");

export const DANGEROUS_PATTERNS: DangerousPattern[] = [
  {
    key: "fork_bomb",
    description: "fork bomb",
    scope: "raw",
    pattern: re(String.raw`(?<![\w:.])([\w:.]+)\s*\(\)\s*\{[^}]{0,200}?\1\s*\|\s*\1\s*&`, String.raw`\bfork\s+while\s+fork\b`, String.raw`while\s+(?:true|1)\s*:\s*os\.fork\(\)`),
  },
  {
    key: "unanalysable",
    description: "command nested too deeply to analyse",
    pattern: /^\u0000unanalysable$/,
  },
  {
    key: "delete_system_path",
    description: "delete the root, a system directory or the home directory",
    pattern: re(`${AT}rm\\s${ANY}(?:${SYS_TARGET}|--no-preserve-root)${EOT}`),
  },
  {
    key: "format_filesystem",
    description: "create a file system (mkfs)",
    pattern: re(String.raw`${AT}(?:mkfs(?:\.[\w.]+)?|mke2fs|mkswap|mkdosfs|mkntfs|mkexfatfs|mkfs_\w+)${EOT}`),
  },
  {
    key: "disk_write",
    description: "write raw data onto a disk device",
    pattern: re(
      String.raw`${AT}dd\s${ANY}of=/dev/(?!null${EOT}|zero${EOT}|stdout${EOT}|stderr${EOT}|tty|fd/|shm/|pts/)\S`,
      `${WRITE_REDIR}${DISK}`,
      String.raw`${AT}tee\s${ANY}${DISK}`,
      String.raw`${AT}(?:cp|mv|install)\s[^|]*\s${DISK}${END_ARGS}`,
    ),
  },
  {
    key: "erase_device",
    description: "erase a disk or its partition table (wipefs, blkdiscard, sgdisk --zap, parted mklabel)",
    pattern: re(
      String.raw`${AT}(?:wipefs|blkdiscard|sgdisk\s${ANY}(?:-z|--zap(?:-all)?)|hdparm\s${ANY}--security-erase\S*|parted\s${ANY}(?:mklabel|mktable|rm)|fdisk\s${ANY}--wipe\S*)${EOT}`,
    ),
  },
  {
    key: "shred",
    description: "irreversibly overwrite files or devices (shred)",
    pattern: re(`${AT}shred${EOT}`),
  },
  {
    key: "kill_all_processes",
    description: "kill init or every process (kill 1, kill -1, killall5)",
    pattern: re(String.raw`${AT}kill\s${ANY}-1${END_ARGS}`, String.raw`${AT}kill(?:\s-\S+)*(?:\s\d+)*\s1${EOT}`, `${AT}killall5${EOT}`),
  },
  {
    key: "reboot_shutdown",
    description: "reboot, shut down or halt the machine",
    pattern: re(String.raw`${AT}(?:reboot|shutdown|halt|poweroff|kexec|(?:tel)?init\s+[06]|systemctl\s${ANY}(?:reboot|poweroff|halt|kexec|soft-reboot|rescue|emergency))${EOT}`),
  },
  {
    key: "remote_code_exec",
    description: "run code downloaded from the network (curl/wget piped into a shell)",
    pattern: re(
      // The interpreter reads its program from the pipe only when no script, -c or -m argument is given.
      String.raw`${AT}(?:curl|wget|fetch|aria2c|https?)\s.*\| ${STDIN_INTERP}`,
      String.raw`${AT}${INTERP}\s${ANY}(?:<|\$)\(\s*(?:sudo\s+)?(?:curl|wget|fetch)${EOT}`,
    ),
  },
  {
    key: "decoded_code_exec",
    description: "run decoded or decrypted content (base64 -d, xxd -r, openssl -d piped into a shell or interpreter)",
    pattern: re(
      String.raw`${AT}${DECODER}${EOT}.*\| ${STDIN_INTERP}`,
      // `bash -c "$(… | base64 -d)"`, `eval $(…)`, `sh <(…)`: the inner pipes are rendered as ¦.
      String.raw`${AT}${INTERP}(?:\s-\S+)*\s[^\s|]*(?:<|\$)\((?:[^)]*¦)?\s*${DECODER}(?=[\s)]|$)`,
    ),
  },
  {
    key: "system_config_write",
    description: "overwrite system files or configuration (/etc, /boot, /usr, /proc/sys)",
    pattern: re(
      `(?:${WRITE_REDIR}|${AT}tee\\s${ANY}|${AT}dd\\s${ANY}of=|${AT}truncate\\s${ANY}|${AT}(?:sed|perl)(?=\\s${ANY}(?:-[a-z]*i\\S*|--in-place\\S*)${EOT})\\s${ANY}|${AT}${COPY}\\s${ANY}(?:-t\\s?|--target-directory=))${CONFIG_TARGET}`,
      `${AT}${COPY}\\s[^|]*\\s${CONFIG_PATH}${END_ARGS}`,
    ),
  },
  {
    key: "ssh_config_write",
    description: "write SSH keys or configuration (~/.ssh)",
    pattern: re(`(?:${WRITE_REDIR}|${AT}tee\\s${ANY})${SSH_TARGET}`, `${AT}${COPY}\\s[^|]*\\s${SSH_TARGET}${END_ARGS}`),
  },
  {
    key: "shell_rc_write",
    description: "write a shell startup file (~/.bashrc, ~/.profile, …)",
    pattern: re(`(?:${WRITE_REDIR}|${AT}tee\\s${ANY}|${AT}(?:sed|perl)(?=\\s${ANY}(?:-[a-z]*i\\S*|--in-place\\S*)${EOT})\\s${ANY})${RC_TARGET}`, `${AT}${COPY}\\s[^|]*\\s${RC_PATH}${END_ARGS}`),
  },
  {
    key: "sql_drop",
    description: "SQL DROP of a database, schema or table (or a datastore flush)",
    pattern: re(
      String.raw`${SQL_CLIENT}.*\bdrop\s+(?:table|database|schema|keyspace|collection)\b`,
      String.raw`${SQL_CLIENT}.*(?:\.dropdatabase\(|\bdb\.[\w.]+\.drop\(\))`,
      String.raw`${AT}redis-cli\s${ANY}(?:flushall|flushdb)${EOT}`,
    ),
  },
  {
    key: "sql_truncate",
    description: "SQL TRUNCATE",
    pattern: re(String.raw`${SQL_CLIENT}.*\btruncate\s+(?:table\s+)?(?!-)[\w"\x60.]`),
  },
  {
    key: "sql_delete_without_where",
    description: "SQL DELETE without WHERE",
    pattern: re(String.raw`${SQL_CLIENT}.*\bdelete\s+from\s+[^\s;]+(?![^;]*\bwhere\b)`),
  },
  {
    key: "recursive_delete",
    description: "recursive delete of a path outside the working directory or not known in advance",
    pattern: re(
      String.raw`${AT}rm(?=\s${ANY}${REC}${EOT})\s${ANY}(?:[/~$]|\.{1,2}/*(?:\*|\.\*)?${EOT}|\.?\*${EOT}|(?:\S*/)?\.\.(?:/|${EOT}))`,
    ),
  },
  {
    key: "find_delete",
    description: "find -delete",
    pattern: re(`${AT}find\\s${ANY}-delete${EOT}`),
  },
  {
    key: "find_exec_rm",
    description: "find -exec rm",
    pattern: re(String.raw`${AT}find\s${ANY}-(?:exec|execdir|ok|okdir)\s+(?:\S*/)?(?:rm|shred|unlink)${EOT}`),
  },
  {
    key: "xargs_rm",
    description: "xargs with rm",
    pattern: re(String.raw`${AT}xargs\s(?:\S*/)?(?:rm|shred|unlink)${EOT}`),
  },
  {
    key: "inline_script_delete",
    description: "inline script deleting a directory tree",
    pattern: re(
      String.raw`${AT}(?:python[\d.]*|perl|ruby|node|deno|bun|php)\s${ANY}-[a-z]*[ce]\s[^|]*(?:shutil\.rmtree|fileutils\.rm_r|rm_rf|\brm(?:dir)?sync\s*\(|rimraf|\brm\s+-[a-z]*r)`,
    ),
  },
  {
    key: "chmod_chown_system",
    description: "recursive chmod/chown of the root, a system directory or the home directory",
    pattern: re(`${AT}(?:chmod|chown|chgrp)(?=\\s${ANY}${REC}${EOT})\\s${ANY}${SYS_TREE}${EOT}`),
  },
  {
    key: "world_writable",
    description: "world-writable permissions (777) applied recursively or on a system path",
    pattern: re(
      `${AT}chmod(?=\\s${ANY}(?:[0-7]?[0-7]{2}[2367]|[ugoa]*[ao][ugoa]*[+=][rwxXst]*w[rwxXst]*)${EOT})(?=\\s${ANY}(?:${REC}|${SYS_TREE})${EOT})`,
    ),
  },
  {
    key: "stop_service",
    description: "stop, disable or mask a system service",
    pattern: re(
      String.raw`${AT}(?:systemctl\s${ANY}(?:stop|disable|mask|kill)|service\s+\S+\s+(?:stop|disable)|init\.d/\S+\s+stop|rc-service\s+\S+\s+stop|launchctl\s+(?:unload|stop|remove|bootout|disable)|update-rc\.d\s${ANY}(?:disable|remove))${EOT}`,
    ),
  },
  {
    key: "killall",
    description: "kill processes by name (killall)",
    pattern: re(`${AT}killall${EOT}`),
  },
  {
    key: "pkill_force",
    description: "force-kill processes by name (pkill -9)",
    pattern: re(String.raw`${AT}pkill\s${ANY}(?:-9|-kill|-sigkill|--signal[=\s](?:9|kill|sigkill)|-s\s?(?:9|kill|sigkill))${EOT}`),
  },
  {
    key: "git_force_push",
    description: "git force-push or remote branch deletion (rewrites shared history)",
    pattern: re(
      String.raw`${AT}git${GITOPTS}\spush\s${ANY}(?:--force(?:-with-lease|-if-includes)?(?:=\S*)?|-[a-z]*f[a-z]*|\+\S+|--mirror|--delete|-d|:\S+)${EOT}`,
    ),
  },
  {
    key: "git_reset_hard",
    description: "git reset --hard (discards uncommitted work)",
    pattern: re(String.raw`${AT}git${GITOPTS}\sreset\s${ANY}--hard${EOT}`),
  },
  {
    key: "git_clean_force",
    description: "git clean -f (deletes untracked files)",
    pattern: re(String.raw`${AT}git${GITOPTS}\sclean\s${ANY}(?:-[a-z]*f[a-z]*|--force)${EOT}`),
  },
  {
    key: "git_history_rewrite",
    description: "git history rewrite (filter-branch, filter-repo, reflog expire)",
    pattern: re(String.raw`${AT}(?:git${GITOPTS}\s(?:filter-branch|filter-repo|reflog\s+expire)|git-filter-repo|bfg)${EOT}`),
  },
  {
    key: "crontab_remove",
    description: "remove the crontab (crontab -r)",
    pattern: re(String.raw`${AT}crontab\s${ANY}-[a-z]*r[a-z]*${EOT}`),
  },
  {
    key: "firewall_flush",
    description: "flush or disable the firewall",
    pattern: re(
      String.raw`${AT}(?:(?:ip6?tables|iptables-(?:legacy|nft)|ebtables|arptables)\s${ANY}(?:-f|--flush|-x|--delete-chain)|nft\s${ANY}(?:flush|delete)\s+(?:ruleset|table)|ufw\s+(?:--force\s+)?(?:disable|reset))${EOT}`,
    ),
  },
  {
    key: "container_mass_delete",
    description: "delete all containers, images or volumes",
    pattern: re(
      String.raw`${AT}(?:docker|podman)\s(?:container\s|image\s)?(?:rm|rmi|kill|stop)\s[^|]*\$\(\s*(?:docker|podman)\s`,
      String.raw`${AT}(?:docker|podman)\s(?:system|image|builder)\sprune(?=\s${ANY}(?:-a|--all|--volumes)${EOT})`,
      String.raw`${AT}(?:docker|podman)\svolume\s(?:prune|rm\s[^|]*\$\()`,
      String.raw`${AT}(?:docker|podman)(?:\scompose|-compose)\s${ANY}down\s${ANY}(?:-v|--volumes|--rmi\s\S+)${EOT}`,
    ),
  },
  {
    key: "kubectl_mass_delete",
    description: "delete all Kubernetes resources or a namespace",
    pattern: re(String.raw`${AT}kubectl\s${ANY}delete\s${ANY}(?:--all|-a|--all-namespaces|namespaces?|ns)(?:=\S*)?${EOT}`),
  },
  {
    key: "computed_command",
    description: "command name computed at run time by a command substitution",
    pattern: re(String.raw`${AT}(?:xargs )?[^\s|]*\$\(`),
  },
  {
    key: "move_to_dev_null",
    description: "move files onto /dev/null",
    pattern: re(String.raw`${AT}mv\s[^|]*\s/dev/null${END_ARGS}`),
  },
];

const TOO_DEEP_UNIT = "\u0000unanalysable";

/** Which patterns match, in pattern order, for an analysed command. */
export function matchPatterns(analysis: CommandAnalysis): { key: string; description: string }[] {
  const units = analysis.tooDeep ? [...analysis.units, TOO_DEEP_UNIT] : analysis.units;
  const out: { key: string; description: string }[] = [];
  for (const p of DANGEROUS_PATTERNS) {
    const hit = p.scope === "raw" ? p.pattern.test(analysis.normalized) : units.some((u) => p.pattern.test(u));
    if (hit) out.push({ key: p.key, description: p.description });
  }
  return out;
}

/** Is this command dangerous, and by which pattern? */
export function detectDangerousCommand(cmd: string, opts?: DetectOptions): Detection {
  if (typeof cmd !== "string" || !cmd.trim()) return { dangerous: false };
  const matches = matchPatterns(analyseCommand(cmd, opts));
  if (!matches.length) return { dangerous: false };
  return { dangerous: true, patternKey: matches[0]!.key, description: matches[0]!.description, matches };
}
