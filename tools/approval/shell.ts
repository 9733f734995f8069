/**
 * A small, total (never throwing) POSIX-shell reader for dangerous-command detection.
 *
 * It is not a shell: it finds the simple commands a command line would run, with their words
 * unquoted the way the shell would unquote them (`r''m`, `r\m`, `"rm"`, `$'\x72m'` all give `rm`),
 * their redirections and here-documents, and it descends into `( … )`, `{ …; }`, `$( … )`,
 * backticks and `<( … )`. Everything it cannot follow is kept as literal text, so detection errs
 * on the side of seeing more, not less.
 */

export type WordPart =
  /** `split`: text a command substitution wrote (analyse.ts), split into words when not quoted. */
  | { kind: "lit"; text: string; quoted: boolean; split?: boolean }
  /** `$name` / `${…}`; `raw` is the text as written. */
  | { kind: "param"; name: string; raw: string; quoted?: boolean }
  /** `$( … )`, backticks, `<( … )`, `>( … )`; `raw` is the inner text. */
  | { kind: "subst"; op: "$(" | "`" | "<(" | ">("; raw: string; quoted?: boolean };

export interface Word {
  parts: WordPart[];
}

export interface Redirect {
  /** The operator as written: `>`, `>>`, `<`, `<<`, `<<<`, `&>`, `>&`, … (`>|` is stored as `>`). */
  op: string;
  fd?: string;
  target?: Word;
  /** Body of a here-document (`<<`, `<<-`). */
  heredoc?: string;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
}

export interface Pipeline {
  commands: SimpleCommand[];
  /** Ids of the subshells and command substitutions it runs in (`(cd x && …)`, `$(cd x; pwd)`): their `cd` ends with them. */
  scopes?: number[];
}

export interface ParsedScript {
  /** Every pipeline found, nested ones (`$( … )`, subshells, backticks) included, in completion order. */
  pipelines: Pipeline[];
  /** Shell comments (text after `#`), which never run but may carry text aimed at a reviewer. */
  comments: string[];
  /** Nesting went deeper than the reader follows; the caller should treat the command as opaque. */
  tooDeep: boolean;
}

export const MAX_NESTING = 12;

let scopeIds = 0;

interface Shared {
  pipelines: Pipeline[];
  comments: string[];
  tooDeep: boolean;
}

const BLANK = new Set([" ", "\t"]);
// Characters that end an unquoted word.
const WORD_END = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"]);
const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;

function decodeAnsiC(body: string): string {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\" || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const n = body[++i]!;
    const simple: Record<string, string> = {
      n: "\n",
      t: "\t",
      r: "\r",
      a: "\x07",
      b: "\b",
      e: "\x1b",
      E: "\x1b",
      f: "\f",
      v: "\v",
      "\\": "\\",
      "'": "'",
      '"': '"',
      "?": "?",
    };
    if (n in simple) {
      out += simple[n];
    } else if (n === "x") {
      const m = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1));
      if (m) {
        out += String.fromCharCode(parseInt(m[0], 16));
        i += m[0].length;
      } else out += "\\x";
    } else if (n === "u" || n === "U") {
      const m = (n === "u" ? /^[0-9a-fA-F]{1,4}/ : /^[0-9a-fA-F]{1,8}/).exec(body.slice(i + 1));
      if (m) {
        const cp = parseInt(m[0], 16);
        out += cp <= 0x10ffff ? String.fromCodePoint(cp) : "";
        i += m[0].length;
      } else out += "\\" + n;
    } else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i))!;
      out += String.fromCharCode(parseInt(m[0], 8) & 0xff);
      i += m[0].length - 1;
    } else if (n === "c" && i + 1 < body.length) {
      out += String.fromCharCode(body.charCodeAt(++i) & 0x1f);
    } else {
      out += "\\" + n;
    }
  }
  return out;
}

class Reader {
  private pos = 0;
  private pendingHeredocs: { redirect: Redirect; delim: string; stripTabs: boolean }[] = [];

  constructor(
    private readonly src: string,
    private readonly shared: Shared,
    private readonly depth: number,
  ) {}

  private peek(offset = 0): string {
    return this.src[this.pos + offset] ?? "";
  }

  private eof(): boolean {
    return this.pos >= this.src.length;
  }

  /** Parses a list of pipelines until the end of input or, when `closer` is ")", an unmatched `)`. */
  parseList(closer?: ")"): void {
    let pipeline: Pipeline = { commands: [] };
    let cmd: SimpleCommand = { words: [], redirects: [] };
    const endCommand = () => {
      if (cmd.words.length || cmd.redirects.length) pipeline.commands.push(cmd);
      cmd = { words: [], redirects: [] };
    };
    const endPipeline = () => {
      endCommand();
      if (pipeline.commands.length) this.shared.pipelines.push(pipeline);
      pipeline = { commands: [] };
    };
    while (!this.eof()) {
      const c = this.peek();
      if (BLANK.has(c)) {
        this.pos++;
        continue;
      }
      if (c === "\\" && this.peek(1) === "\n") {
        this.pos += 2;
        continue;
      }
      if (c === "\n") {
        this.pos++;
        endPipeline();
        this.readHeredocBodies();
        continue;
      }
      if (c === "#") {
        const end = this.src.indexOf("\n", this.pos);
        const stop = end < 0 ? this.src.length : end;
        this.shared.comments.push(this.src.slice(this.pos + 1, stop).trim());
        this.pos = stop;
        continue;
      }
      if (c === ")") {
        this.pos++;
        if (closer === ")") {
          endPipeline();
          return;
        }
        endPipeline(); // a stray `)`, as in `case` patterns
        continue;
      }
      if (c === ";") {
        while (this.peek() === ";" || (this.peek() === "&" && this.src[this.pos - 1] === ";")) this.pos++;
        endPipeline();
        continue;
      }
      if (c === "&") {
        if (this.peek(1) === ">") {
          this.readRedirect(cmd);
          continue;
        }
        this.pos += this.peek(1) === "&" ? 2 : 1;
        endPipeline();
        continue;
      }
      if (c === "|") {
        if (this.peek(1) === "|") {
          this.pos += 2;
          endPipeline();
        } else {
          this.pos += this.peek(1) === "&" ? 2 : 1;
          endCommand();
        }
        continue;
      }
      if (c === "(") {
        this.pos++;
        if (cmd.words.length) {
          // `name()` of a function definition: the name alone is not a command that runs.
          if (this.peek() === ")") this.pos++;
          cmd = { words: [], redirects: [] };
          continue;
        }
        if (this.peek() === "(") {
          this.skipArithmetic(1);
          continue;
        }
        this.readSubstitution(); // a subshell: its pipelines are collected like those of `$( … )`
        continue;
      }
      if ((c === "<" || c === ">") && this.peek(1) === "(") {
        const w = this.readWord();
        if (w) cmd.words.push(w);
        continue;
      }
      if (c === "<" || c === ">" || (/[0-9]/.test(c) && this.isFdRedirect())) {
        this.readRedirect(cmd);
        continue;
      }
      const w = this.readWord();
      if (w) cmd.words.push(w);
      else this.pos++; // cannot happen for well-formed input; guarantees progress
    }
    endPipeline();
    this.readHeredocBodies();
  }

  /** `(( … ))` arithmetic; `opened` parentheses were already consumed. */
  private skipArithmetic(opened: number): string {
    const start = this.pos;
    let depth = opened;
    while (!this.eof() && depth > 0) {
      const c = this.src[this.pos++];
      if (c === "(") depth++;
      else if (c === ")") depth--;
    }
    return this.src.slice(start, Math.max(start, this.pos - 2));
  }

  private isFdRedirect(): boolean {
    let i = this.pos;
    while (/[0-9]/.test(this.src[i] ?? "")) i++;
    const next = this.src[i];
    return (next === "<" || next === ">") && this.src[i + 1] !== "(";
  }

  private readRedirect(cmd: SimpleCommand): void {
    let fd: string | undefined;
    const m = /^[0-9]+/.exec(this.src.slice(this.pos, this.pos + 12));
    if (m) {
      fd = m[0];
      this.pos += m[0].length;
    }
    const ops = ["<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">|", ">&", "&>", "<", ">"];
    const op = ops.find((o) => this.src.startsWith(o, this.pos)) ?? this.peek();
    this.pos += op.length;
    while (BLANK.has(this.peek())) this.pos++;
    const target = this.readWord() ?? undefined;
    const redirect: Redirect = { op: op === ">|" ? ">" : op, fd, target };
    if ((op === "<<" || op === "<<-") && target) {
      const delim = target.parts.map((p) => (p.kind === "lit" ? p.text : p.kind === "param" ? p.raw : "")).join("");
      this.pendingHeredocs.push({ redirect, delim, stripTabs: op === "<<-" });
    }
    cmd.redirects.push(redirect);
  }

  private readHeredocBodies(): void {
    while (this.pendingHeredocs.length) {
      const h = this.pendingHeredocs.shift()!;
      const lines: string[] = [];
      while (!this.eof()) {
        const end = this.src.indexOf("\n", this.pos);
        const stop = end < 0 ? this.src.length : end;
        let line = this.src.slice(this.pos, stop);
        this.pos = end < 0 ? stop : stop + 1;
        if (h.stripTabs) line = line.replace(/^\t+/, "");
        if (line === h.delim) break;
        lines.push(line);
      }
      h.redirect.heredoc = lines.join("\n");
      // An unquoted delimiter means `$( … )` and backticks in the body run.
      const quoted = h.redirect.target?.parts.some((p) => p.kind === "lit" && p.quoted) ?? false;
      if (!quoted) this.scanExpansions(h.redirect.heredoc);
    }
  }

  private scanExpansions(body: string): void {
    if (this.depth + 1 > MAX_NESTING) {
      this.shared.tooDeep = true;
      return;
    }
    const r = new Reader(body, this.shared, this.depth + 1);
    while (!r.eof()) {
      const c = r.peek();
      if (c === "\\") r.pos += 2;
      else if (c === "$") r.readDollar();
      else if (c === "`") r.readBackticks();
      else r.pos++;
    }
  }

  /** Reads one word, or returns null when the next character cannot start one. */
  private readWord(): Word | null {
    const parts: WordPart[] = [];
    let lit = "";
    const flush = (quoted: boolean) => {
      if (lit) parts.push({ kind: "lit", text: lit, quoted });
      lit = "";
    };
    const start = this.pos;
    while (!this.eof()) {
      const c = this.peek();
      if (
        (c === "<" || c === ">") &&
        this.peek(1) === "(" &&
        (this.pos === start || (parts.length === 0 && /^[A-Za-z_]\w*=$/.test(lit)))
      ) {
        flush(false);
        this.pos += 2;
        const raw = this.readSubstitution();
        parts.push({ kind: "subst", op: c === "<" ? "<(" : ">(", raw });
        continue;
      }
      if (WORD_END.has(c)) break;
      if (c === "\\") {
        const n = this.peek(1);
        this.pos += 2;
        if (n === "\n" || n === "") continue;
        lit += n;
        continue;
      }
      if (c === "'") {
        flush(false);
        const end = this.src.indexOf("'", this.pos + 1);
        const stop = end < 0 ? this.src.length : end;
        lit = this.src.slice(this.pos + 1, stop);
        flush(true);
        this.pos = end < 0 ? stop : stop + 1;
        continue;
      }
      if (c === '"') {
        flush(false);
        this.pos++;
        this.readDoubleQuoted(parts);
        continue;
      }
      if (c === "`") {
        flush(false);
        parts.push(this.readBackticks());
        continue;
      }
      if (c === "$") {
        const part = this.readDollar();
        if (part.kind === "lit") {
          lit += part.text;
          if (part.quoted) flush(true);
        } else {
          flush(false);
          parts.push(part);
        }
        continue;
      }
      lit += c;
      this.pos++;
    }
    flush(false);
    return this.pos > start ? { parts } : null;
  }

  private readDoubleQuoted(parts: WordPart[]): void {
    let lit = "";
    const flush = () => {
      if (lit) parts.push({ kind: "lit", text: lit, quoted: true });
      lit = "";
    };
    while (!this.eof()) {
      const c = this.peek();
      if (c === '"') {
        this.pos++;
        break;
      }
      if (c === "\\") {
        const n = this.peek(1);
        if (n === "\n") {
          this.pos += 2;
          continue;
        }
        if ('$`"\\'.includes(n) && n !== "") {
          lit += n;
          this.pos += 2;
          continue;
        }
        lit += c;
        this.pos++;
        continue;
      }
      if (c === "`") {
        flush();
        parts.push({ ...this.readBackticks(), quoted: true } as WordPart);
        continue;
      }
      if (c === "$" && this.peek(1) !== "'") {
        const part = this.readDollar();
        if (part.kind === "lit") lit += part.text;
        else {
          flush();
          parts.push(part.kind === "subst" || part.kind === "param" ? { ...part, quoted: true } : part);
        }
        continue;
      }
      lit += c;
      this.pos++;
    }
    flush();
    // `""` must still produce an (empty) word part so that `rm ""` has two words.
    if (!parts.length) parts.push({ kind: "lit", text: "", quoted: true });
  }

  /** At a `$`. */
  private readDollar(): WordPart {
    const n = this.peek(1);
    if (n === "(") {
      if (this.peek(2) === "(") {
        this.pos += 3;
        const body = this.skipArithmetic(2);
        return { kind: "lit", text: `$((${body}))`, quoted: false };
      }
      this.pos += 2;
      return { kind: "subst", op: "$(", raw: this.readSubstitution() };
    }
    if (n === "{") {
      const start = this.pos;
      this.pos += 2;
      let depth = 1;
      while (!this.eof() && depth > 0) {
        const c = this.src[this.pos++];
        if (c === "{") depth++;
        else if (c === "}") depth--;
      }
      const raw = this.src.slice(start, this.pos);
      const name = /^\$\{[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(raw)?.[1] ?? "";
      return { kind: "param", name, raw };
    }
    if (n === "'") {
      this.pos += 2;
      let body = "";
      while (!this.eof() && this.peek() !== "'") {
        if (this.peek() === "\\" && this.pos + 1 < this.src.length) {
          body += this.src.slice(this.pos, this.pos + 2);
          this.pos += 2;
        } else body += this.src[this.pos++];
      }
      this.pos++;
      return { kind: "lit", text: decodeAnsiC(body), quoted: true };
    }
    if (n === '"') {
      // $"…" (locale string) reads like "…": consume the `$` only.
      this.pos++;
      return { kind: "lit", text: "", quoted: false };
    }
    if (NAME_START.test(n)) {
      const start = this.pos;
      this.pos++;
      while (NAME_CHAR.test(this.peek())) this.pos++;
      const raw = this.src.slice(start, this.pos);
      return { kind: "param", name: raw.slice(1), raw };
    }
    if (n && /[0-9@*#?$!-]/.test(n)) {
      this.pos += 2;
      return { kind: "param", name: n, raw: "$" + n };
    }
    this.pos++;
    return { kind: "lit", text: "$", quoted: false };
  }

  /** After `$(` or `<(`: parses the inner list (its pipelines are collected) and returns its text. */
  private readSubstitution(): string {
    const start = this.pos;
    if (this.depth + 1 > MAX_NESTING) {
      this.shared.tooDeep = true;
      // Skip to the matching parenthesis without looking inside.
      let depth = 1;
      while (!this.eof() && depth > 0) {
        const c = this.src[this.pos++];
        if (c === "(") depth++;
        else if (c === ")") depth--;
      }
      return this.src.slice(start, Math.max(start, this.pos - 1));
    }
    const inner = new Reader(this.src, this.shared, this.depth + 1);
    inner.pos = this.pos;
    const before = this.shared.pipelines.length;
    inner.parseList(")");
    this.pos = inner.pos;
    const scope = ++scopeIds;
    for (const p of this.shared.pipelines.slice(before)) (p.scopes ??= []).push(scope);
    const end = this.src[this.pos - 1] === ")" ? this.pos - 1 : this.pos;
    return this.src.slice(start, Math.max(start, end));
  }

  private readBackticks(): WordPart {
    this.pos++;
    let body = "";
    while (!this.eof() && this.peek() !== "`") {
      if (this.peek() === "\\" && "`$\\".includes(this.peek(1)) && this.peek(1) !== "") {
        body += this.peek(1);
        this.pos += 2;
      } else body += this.src[this.pos++];
    }
    this.pos++;
    if (this.depth + 1 > MAX_NESTING) this.shared.tooDeep = true;
    else parseInto(body, this.shared, this.depth + 1);
    return { kind: "subst", op: "`", raw: body };
  }
}

function parseInto(src: string, shared: Shared, depth: number): void {
  new Reader(src, shared, depth).parseList();
}

/** Parses a command line; `depth` counts the nesting of the caller (bash -c inside bash -c …). */
export function parseShell(src: string, depth = 0): ParsedScript {
  const shared: Shared = { pipelines: [], comments: [], tooDeep: depth > MAX_NESTING };
  if (!shared.tooDeep) parseInto(src, shared, depth);
  return shared;
}

/** The word's text as the shell would pass it, with substitutions and parameters kept as written. */
export function wordText(word: Word, vars: ReadonlyMap<string, string> = new Map()): string {
  return word.parts
    .map((p) => {
      if (p.kind === "lit") return p.text;
      if (p.kind === "param") return paramValue(p, vars) ?? p.raw;
      return p.op === "`" ? `$(${p.raw})` : `${p.op}${p.raw})`;
    })
    .join("");
}

/** Variables the task's environment may carry (its allow-list, the shell's own): their value is never assumed. */
export const ENVIRONMENT_NAME =
  /^(?:HOME|PATH|PWD|OLDPWD|USER|LOGNAME|SHELL|TMPDIR|TMP|TEMP|LANG|LANGUAGE|TERM|TZ|COLUMNS|LINES|HOSTNAME|IFS|CDPATH|LC_\w+|XDG_\w+)$/;

/**
 * The value of `$name` / `${name}` when known. `${name:-word}` (and `-`, `:=`, `=`) with a literal word
 * is the variable's value when this command line set it, else the word: the task's environment is
 * built from an allow-list, so any other name is unset unless the command line sets it (an earlier
 * command of the same shell could have exported it; the default is what the command means).
 * `${name/x/y}`, `${name//x/y}`, `${name#x}`, `${name%x}` (and `##`, `%%`), `${name:off:len}` of a known value
 * are computed; `${arr[i]}`, `${arr[@]}` read an array the command line set (stored as `arr[i]` / `arr[@]`).
 */
export function paramValue(p: { name: string; raw: string }, vars: ReadonlyMap<string, string>): string | undefined {
  if (p.raw === "$" + p.name || p.raw === "${" + p.name + "}") return vars.get(p.name) ?? vars.get(`${p.name}[0]`);
  const indexed = /^\$\{([A-Za-z_]\w*)\[([^\]]*)\]\}$/.exec(p.raw);
  if (indexed) return vars.get(`${indexed[1]}[${indexed[2] === "*" ? "@" : indexed[2]!.replace(/^["']|["']$/g, "")}]`);
  const edited =
    /^\$\{([A-Za-z_]\w*|[0-9@*])(?:(\/\/?|\/#|\/%)([^/}]*)(?:\/([^}]*))?|(##?|%%?)([^}]*)|:(-?\d+)(?::(-?\d+))?)\}$/s.exec(
      p.raw,
    );
  if (edited && edited[1] === p.name) {
    const value = vars.get(p.name);
    if (value === undefined) return undefined;
    const pattern = edited[3] ?? edited[6];
    if (pattern !== undefined && /["'$`\\[]/.test(pattern)) return undefined;
    const glob = (pat: string, greedy: boolean) =>
      pat
        .replace(/[.+^${}()|\\]/g, "\\$&")
        .replace(/\*/g, greedy ? ".*" : ".*?")
        .replace(/\?/g, ".");
    if (edited[2] !== undefined) {
      const written = edited[4] ?? "";
      if (/["'$`]/.test(written)) return undefined;
      const rep = written.replace(/\\(.)/g, "$1");
      if (pattern === "") return value;
      const body = glob(pattern!, true);
      if (edited[2] === "//") return value.replace(new RegExp(body, "g"), () => rep);
      if (edited[2] === "/#") return value.replace(new RegExp(`^${body}`), () => rep);
      if (edited[2] === "/%") return value.replace(new RegExp(`${body}$`), () => rep);
      return value.replace(new RegExp(body), () => rep);
    }
    if (edited[5] !== undefined) {
      const long = edited[5].length === 2;
      if (edited[5][0] === "#") return value.replace(new RegExp(`^${glob(pattern!, long)}`), "");
      // suffix: the shortest (or longest) match at the end
      for (let k = long ? 0 : value.length; long ? k <= value.length : k >= 0; k += long ? 1 : -1) {
        if (new RegExp(`^${glob(pattern!, true)}$`).test(value.slice(k))) return value.slice(0, k);
      }
      return value;
    }
    const off = Number(edited[7]);
    const start = off < 0 ? Math.max(0, value.length + off) : off;
    return edited[8] === undefined
      ? value.slice(start)
      : value.slice(start, Number(edited[8]) < 0 ? value.length + Number(edited[8]) : start + Number(edited[8]));
  }
  // `${name:?message}` / `${name?}`: the value when set (unset, the shell stops with the message instead).
  const check = /^\$\{([A-Za-z_]\w*)(:?)\?(.*)\}$/s.exec(p.raw);
  if (check && check[1] === p.name) {
    const known = vars.get(p.name);
    return known === "" && check[2] === ":" ? undefined : known;
  }
  const m = /^\$\{([A-Za-z_]\w*)(:?)[-=](.*)\}$/s.exec(p.raw);
  if (!m || m[1] !== p.name) return undefined;
  // A default that starts at the home directory (`${KUBECONFIG:-$HOME/.kube/config}`) is a path like `~/…`.
  const def = m[3]!.replace(/^(["']?)(?:\$HOME|\$\{HOME\})(?=\/|\1$)/, "$1~");
  const word = /^(["'])([^"'$`\\{}]*)\1$/.exec(def)?.[2] ?? (/^[^"'$`\\{}\s]*$/.test(def) ? def : undefined);
  if (word === undefined) return undefined;
  const known = vars.get(p.name);
  if (known !== undefined) return known === "" && m[2] === ":" ? word : known;
  return ENVIRONMENT_NAME.test(p.name) ? undefined : word;
}

/** `NAME=value` with the name unquoted: a variable assignment, not a command word. */
export function assignmentOf(
  word: Word,
  vars: ReadonlyMap<string, string> = new Map(),
): { name: string; value: string } | null {
  const first = word.parts[0];
  if (!first || first.kind !== "lit" || first.quoted) return null;
  const m = /^([A-Za-z_][A-Za-z0-9_]*)\+?=/.exec(first.text);
  if (!m) return null;
  const rest: Word = { parts: [{ ...first, text: first.text.slice(m[0].length) }, ...word.parts.slice(1)] };
  return { name: m[1]!, value: wordText(rest, vars) };
}
