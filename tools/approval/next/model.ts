/**
 * The command model: a bash line as the simple commands it runs, in order, each with its resolved
 * words, redirections, what feeds its standard input, and the working directory it runs in. Built
 * from the tree-sitter tree once; wrappers are unwrapped later (unwrap.ts).
 */
import { posix } from "node:path";
import { withParsedBash, type SyntaxNode } from "./parser.js";
import { ENDLESS_CONDITION } from "./rules/model_loops.js";
import {
  bracesExpand,
  expandBraces,
  literalWord,
  resolveWord,
  nameRefKey,
  splitUnquoted,
  UNKNOWN_DIR,
  type Variables,
  type Word,
} from "./words.js";

export type { Word } from "./words.js";

export interface Redirect {
  /** `>`, `>>`, `<`, `&>`, `>|`, … */
  op: string;
  fd?: string;
  target: Word;
}

export interface SimpleCommand {
  argv: Word[];
  redirects: Redirect[];
  /** `X=… cmd`: assignments for this command only. */
  env: Map<string, Word>;
  /** Text fed on standard input by a here-doc or here-string, when known. */
  stdin?: Word;
  /** The command before this one in a pipeline (its output is this one's input). */
  pipedFrom?: SimpleCommand;
  /** Working directory when it runs: absolute, or undefined when unknown. */
  cwd: string | undefined;
  /** Inside `$(…)`, `<(…)` or a function body. */
  nested: boolean;
  /** Run in the background (`cmd &`, or inside a backgrounded group). */
  background?: boolean;
  /** The loop whose body runs it (the innermost). */
  loop?: Loop;
}

/** A loop: how many times its body runs, when the line says. */
export interface Loop {
  /** `for i in {1..N}`, `$(seq N)`, `for ((…; i<N; …))`; undefined when not known. */
  count?: number;
  /** `while :`, `while true`, `until false`. */
  endless: boolean;
  /** Loops it runs inside (a loop in a loop). */
  outer?: Loop;
}

/**
 * An empty model of a line; `openQuote`: the quote the line leaves open at its end (`cmd /c "cipher /w:C:\"`), which
 * bash refuses to run.
 */
const newCommandLine = (openQuote: string | undefined, vars: Variables) => ({
  commands: [] as SimpleCommand[],
  /** Names of functions the line defines. */
  functions: new Set<string>(),
  /** Each defined function's body (shell text), judged where the function is called. */
  functionBodies: new Map<string, string>(),
  /** Bare `> file` redirections (no command). */
  redirects: [] as Redirect[],
  comments: [] as string[],
  openQuote,
  /** Variables as the line leaves them (what a `trap` or a later nested text sees). */
  vars,
});
export type CommandLine = ReturnType<typeof newCommandLine>;

export interface ModelOptions {
  cwd?: string;
  home?: string;
  /** Variables known before the line (e.g. from an enclosing `sh -c`). */
  vars?: Variables;
}

/** Where the walk is: what the commands it meets run in and under, and the model it fills. */
const newWalkState = (out: CommandLine, opts: ModelOptions) => ({
  vars: out.vars,
  cwd: opts.cwd,
  home: opts.home ?? "~",
  out,
  nested: false,
  background: false,
  loop: undefined as Loop | undefined,
});
type WalkState = ReturnType<typeof newWalkState>;

/** The commands feeding `cmd` through pipes, nearest first. */
export const upstream = (cmd: SimpleCommand): SimpleCommand[] =>
  cmd.pipedFrom ? [cmd.pipedFrom, ...upstream(cmd.pipedFrom)] : [];

/** The value of one of `names` at word `i` (`-o F`, `-oF`, `-sSLo F`, `--output=F`, `--output F`, `bs=N`). */
export function optionAt(words: string[], i: number, names: string[]): string | undefined {
  const w = words[i]!;
  for (const name of names) {
    if (/^-[^-]$/.test(name)) {
      const m = !w.startsWith("--") && new RegExp(`^-[a-zA-Z]*?${name[1]}(.*)$`).exec(w);
      if (m) return m[1] || words[i + 1];
    } else if (w === name) return words[i + 1];
    else if (w.startsWith(`${name}=`)) return w.slice(name.length + 1);
  }
  return undefined;
}

/** The value the last of `names` in `words` gives (a later option overrides an earlier one). */
export const optionValue = (words: string[], names: string[]) =>
  words.map((_, i) => optionAt(words, i, names)).findLast((v) => v !== undefined);

const named = (n: SyntaxNode): SyntaxNode[] => n.namedChildren.filter((c): c is SyntaxNode => c !== null);

/** The directory `cd ARG` moves to from `cwd`. */
export function changeDirectory(cwd: string | undefined, arg: Word | undefined, home: string): string | undefined {
  if (!arg) return home;
  if (!arg.literal || arg.glob || arg.text === "-") return UNKNOWN_DIR;
  const text = arg.text.replace(/^~(?=\/|$)/, home);
  if (text.startsWith("/") || text.startsWith("~")) return posix.normalize(text);
  return cwd === undefined ? undefined : posix.join(cwd, text);
}

/**
 * What a command's redirections say: files, its standard input, and `tail`, the commands a here-doc line goes on
 * with (`cat <<EOF | sh`: the grammar puts what follows the here-doc's start inside its node).
 */
type Redirections = Pick<SimpleCommand, "redirects" | "stdin"> & { tail: SyntaxNode[] };

/** Reads a redirection node into `into`; false when `c` is not one. */
function readRedirection(c: SyntaxNode, s: WalkState, into: Redirections): boolean {
  const parts = named(c);
  // the grammar reads `< F <<< WORD` as an error and `< WORD`: the here-string
  const misread = c.previousSibling?.type === "ERROR" && c.previousSibling.text.endsWith("<<");
  if (c.type === "herestring_redirect" || misread) {
    if (parts[0]) into.stdin = resolveWord(parts[0], s.vars);
  } else if (c.type === "file_redirect") {
    const target = c.childForFieldName("destination") ?? parts.find((p) => p.type !== "file_descriptor");
    // `<>` (read and write) is no token of the grammar: read from the text
    const op = /^\d*([<>&|]+)/.exec(c.text)?.[1] ?? ">";
    const fd = parts.find((p) => p.type === "file_descriptor")?.text;
    if (target) into.redirects.push({ op, fd, target: resolveWord(target, s.vars) });
  } else if (c.type === "heredoc_redirect") {
    const text = parts.find((h) => h.type === "heredoc_body");
    const quoted = /^['"]|\\/.test(parts.find((h) => h.type === "heredoc_start")?.text ?? "");
    if (text) into.stdin = { text: text.text, literal: quoted || !/[$`]/.test(text.text), glob: false };
    // an unquoted here-doc's command substitutions run when the shell reads it
    if (text && !quoted) walkHeredoc(text, s);
    into.tail = parts.filter((h) => !h.type.startsWith("heredoc_") && h.type !== "file_redirect");
    // `cat <<EOF > FILE`: the grammar puts the file redirect inside the here-doc node.
    for (const r of parts) if (r.type === "file_redirect") readRedirection(r, s, into);
  } else return false;
  return true;
}

/** Variables naming a file a shell runs at its start (BASH_ENV for bash, ENV for sh); exported ones reach later shells. */
export const STARTUP_FILE_VARIABLES = ["BASH_ENV", "ENV"] as const;

/** The key under which an exported variable's value is kept for the commands started after the export. */
const exportedKey = (name: string) => `^${name}`;

/** `a=(x y)`, `declare -A m=([k]=v)`: each element as `a[0]`, `m[k]`; `a[@]` holds how many. */
function assignArray(name: string, value: SyntaxNode, vars: Variables, s: WalkState): void {
  const elements = named(value);
  elements.forEach((e, i) => {
    const keyed = /^\[([^\]]+)\]=(.*)$/s.exec(e.text);
    const word = resolveWord(e, s.vars);
    if (keyed) vars.set(`${name}[${keyed[1]}]`, { ...word, glob: false, text: word.text.replace(/^\[[^\]]+\]=/, "") });
    else vars.set(`${name}[${i}]`, word);
  });
  vars.set(`${name}[@]`, literalWord(String(elements.length)));
}

function assign(node: SyntaxNode, vars: Variables, s: WalkState): void {
  const name = node.childForFieldName("name")?.text;
  const value = node.childForFieldName("value");
  if (name && value?.type === "array") return assignArray(name, value, vars, s);
  if (name) vars.set(name, value ? resolveWord(value, s.vars) : literalWord(""));
  if (value) walkChildren(value, s);
}

/** The words an argument stands for (split, brace-expanded, `"$@"` spread), after its substitutions ran. */
function argumentWords(c: SyntaxNode, s: WalkState): Word[] {
  walkStage(c, s); // runs the substitutions in the word first
  const node = commandWord(c);
  const positional = positionalWords(node, s.vars);
  if (positional) return positional;
  const words = splitUnquoted(node, resolveWord(c, s.vars), s.vars);
  return bracesExpand(node) ? words.flatMap(expandBraces) : words;
}

/** The node a command-name node wraps (`$s` as the program word). */
const commandWord = (n: SyntaxNode): SyntaxNode => (n.type === "command_name" && n.namedChildren[0]) || n;

/** `"$@"`, `$*`: the positional parameters, each a word, when the line was given them. */
function positionalWords(node: SyntaxNode, vars: Variables): Word[] | undefined {
  const array = /^"?\$\{(\w+)\[[@*]\]\}"?$/.exec(node.text)?.[1];
  if (array && vars.has(`${array}[@]`)) {
    const count = Number(vars.get(`${array}[@]`)!.text);
    return [...Array(count).keys()].flatMap((i) => vars.get(`${array}[${i}]`) ?? []);
  }
  if (!/^"?\$\{?[@*]\}?"?$/.test(node.text) || !vars.has("1")) return undefined;
  const words: Word[] = [];
  for (let i = 1; vars.has(String(i)); i++) words.push(vars.get(String(i))!);
  return words;
}

/** A command or process substitution: it runs before the command it sits in. */
const walkSubstitution = (node: SyntaxNode, s: WalkState) => walkWith(node, s, { nested: true });

/** Walks the children of `node` with `patch` applied to the state, then restores the fields it patched. */
function walkWith(node: SyntaxNode, s: WalkState, patch: Partial<WalkState>, walk: Stage = walkChildren): undefined {
  const saved = Object.fromEntries(Object.keys(patch).map((k) => [k, s[k as keyof WalkState]]));
  Object.assign(s, patch);
  walk(node, s);
  Object.assign(s, saved);
  return undefined;
}

/** An unquoted here-doc's `$(…)` (parsed by the grammar) and `` `…` `` (not parsed there: modelled apart). */
function walkHeredoc(body: SyntaxNode, s: WalkState): void {
  walkStage(body, s);
  for (const [, inner] of body.text.matchAll(/`((?:[^`\\]|\\.)+)`/g)) {
    const nested = modelCommandLine(inner!, { vars: s.vars, cwd: s.cwd, home: s.home });
    s.out.commands.push(...nested.commands.map((c) => ({ ...c, nested: true })));
  }
}

function emit(cmd: SimpleCommand, s: WalkState): void {
  s.out.commands.push(cmd);
  const at = /^(builtin|command)$/.test(cmd.argv[0]?.text ?? "") ? 1 : 0;
  const name = cmd.argv[at]?.text;
  const operand = cmd.argv.find((w, i) => i > at && !w.text.startsWith("-"));
  if (name === "cd" || name === "pushd") s.cwd = changeDirectory(s.cwd, operand, s.home);
  if (name === "popd") s.cwd = UNKNOWN_DIR;
  if (cmd.argv.length === 0) for (const [k, v] of cmd.env) s.vars.set(k, v);
  // `set -- a b c`: the positional parameters `"$@"` expands to.
  if (name === "set" && cmd.argv[at + 1]?.text === "--")
    cmd.argv.slice(at + 2).forEach((w, i) => s.vars.set(String(i + 1), w));
}

function redirected(node: SyntaxNode, s: WalkState, pipedFrom?: SimpleCommand): SimpleCommand | undefined {
  const body = node.childForFieldName("body");
  const before = s.out.commands.length;
  const last = body ? walkStage(body, s, pipedFrom) : undefined;
  const io: Redirections = { redirects: [], tail: [] };
  for (const c of named(node)) if (c !== body) readRedirection(c, s, io);
  const target = last ?? s.out.commands.slice(before).findLast((c) => c.nested === s.nested);
  (target?.redirects ?? s.out.redirects).push(...io.redirects);
  if (target && io.stdin) target.stdin = io.stdin;
  return walkPipeline(io.tail, s, target);
}

/** `( … )` (its own directory) and `{ …; }`: the last command feeds a pipe after it (`(curl …) | sh`). */
function grouped(node: SyntaxNode, s: WalkState, pipedFrom?: SimpleCommand): SimpleCommand | undefined {
  const before = s.out.commands.length;
  walkWith(node, s, node.type === "subshell" ? { cwd: s.cwd } : {});
  const inside = s.out.commands.slice(before).filter((c) => c.nested === s.nested);
  // the group's commands share the pipe's input (`curl … | (cd /tmp && sh)`)
  return inside.map((c) => Object.assign(c, { pipedFrom: c.pipedFrom ?? pipedFrom })).at(-1);
}

/** Walks stages, each fed by the one before; returns the last simple command. */
function walkPipeline(stages: SyntaxNode[], s: WalkState, pipedFrom?: SimpleCommand): SimpleCommand | undefined {
  let prev = pipedFrom;
  for (const c of stages) prev = walkStage(c, s, prev) ?? prev;
  return prev;
}

type Stage = (node: SyntaxNode, s: WalkState, pipedFrom?: SimpleCommand) => SimpleCommand | undefined;

function simpleCommand(node: SyntaxNode, s: WalkState, pipedFrom?: SimpleCommand): SimpleCommand | undefined {
  // `export -p`, `declare -x`: with no assignment, a command that prints variables
  if (node.type === "declaration_command" && named(node).some((c) => c.type === "variable_assignment")) {
    walkChildren(node, s);
    // `export X=…` (declare -x): the value later commands see in their environment. `declare -n r=HOME` (local,
    // typeset): `$r` is HOME's value, whenever it is read.
    const flags = named(node).flatMap((c) => (c.type === "word" ? [c.text] : []));
    const exported = node.children[0]?.text === "export" || flags.some((f) => /^-[a-zA-Z]*x/.test(f));
    const nameRef = flags.some((f) => /^-[a-zA-Z]*n/.test(f));
    for (const a of named(node).filter((c) => c.type === "variable_assignment")) {
      const name = a.childForFieldName("name")?.text;
      const value = a.childForFieldName("value");
      if (name && value && nameRef) s.vars.set(nameRefKey(name), resolveWord(value, s.vars));
      if (name && exported && s.vars.has(name)) s.vars.set(exportedKey(name), s.vars.get(name)!);
    }
    return;
  }
  const env: Map<string, Word> = new Map();
  const argv: Word[] = /^(declaration|unset)_command$/.test(node.type) ? [literalWord(node.children[0]!.text)] : [];
  const io: Redirections = { redirects: [], tail: [] };
  for (const c of named(node)) {
    if (c.type === "variable_assignment") assign(c, env, s);
    else if (c.type !== "comment" && !readRedirection(c, s, io)) argv.push(...argumentWords(c, s));
  }
  // An exported BASH_ENV or ENV reaches every shell started later on the line.
  for (const name of STARTUP_FILE_VARIABLES) {
    const exported = s.vars.get(exportedKey(name));
    if (exported && !env.has(name)) env.set(name, exported);
  }
  const { cwd, nested, background, loop } = s;
  const cmd = { argv, env, redirects: io.redirects, stdin: io.stdin, pipedFrom, cwd, nested, background, loop };
  emit(cmd, s);
  return cmd;
}

/** The body runs where the function is called, with the call's arguments (analyse.ts). */
function defineFunction(node: SyntaxNode, s: WalkState): undefined {
  const name = node.childForFieldName("name")?.text;
  const body = node.childForFieldName("body")?.text;
  if (name) s.out.functions.add(name);
  if (name && body !== undefined) s.out.functionBodies.set(name, body);
  return undefined;
}

function forLoop(node: SyntaxNode, s: WalkState): undefined {
  // The loop variable is judged as the first listed value (when the list is known).
  const name = node.childForFieldName("variable")?.text;
  const values = node.childrenForFieldName("value").filter((v): v is SyntaxNode => v !== null);
  if (name && values[0]) s.vars.set(name, loopValue(values, s.vars));
  return walkLoop(node, s, { count: listCount(values), endless: false });
}

function whileLoop(node: SyntaxNode, s: WalkState): undefined {
  const condition = node.childForFieldName("condition")?.text.replace(/;$/, "").trim() ?? "";
  const endless = ENDLESS_CONDITION[node.children[0]?.type === "until" ? "until" : "while"].test(condition);
  return walkLoop(node, s, { endless });
}

function cStyleLoop(node: SyntaxNode, s: WalkState): undefined {
  const bound = /<=?\s*(\d+)/.exec(node.childForFieldName("condition")?.text ?? "");
  return walkLoop(node, s, { ...(bound ? { count: Number(bound[1]) } : {}), endless: !bound });
}

/** How each kind of statement is walked; any other node, by its children. */
const STAGES: Record<string, Stage> = {
  command: simpleCommand,
  declaration_command: simpleCommand,
  unset_command: simpleCommand,
  redirected_statement: redirected,
  pipeline: (node, s, pipedFrom) => walkPipeline(named(node), s, pipedFrom),
  variable_assignment: (node, s) => void assign(node, s.vars, s),
  function_definition: defineFunction,
  comment: (node, s) => void s.out.comments.push(node.text),
  for_statement: forLoop,
  c_style_for_statement: cStyleLoop,
  while_statement: whileLoop,
  subshell: grouped,
  compound_statement: grouped,
  command_substitution: walkSubstitution,
  process_substitution: walkSubstitution,
};

/** Walks one pipeline stage (or any statement); returns its last simple command. */
function walkStage(node: SyntaxNode, s: WalkState, pipedFrom?: SimpleCommand): SimpleCommand | undefined {
  const stage = STAGES[node.type];
  return stage ? stage(node, s, pipedFrom) : walkChildren(node, s);
}

/**
 * What the loop variable is judged as: the first absolute or home path listed (the value that reaches
 * furthest), else the first value; `$(ls DIR)` and `$(find DIR …)` stand for what they list.
 */
function loopValue(values: SyntaxNode[], vars: Variables): Word {
  const listing = /^\$\(\s*(ls|find)\s+(?:-\S+\s+)*([^\s)$]+)[^)]*\)$/.exec(values.map((v) => v.text).join(" "));
  if (listing)
    return literalWord(listing[1] === "ls" ? "\u0000found" : `${listing[2]!.replace(/\/$/, "")}/\u0000found`);
  const words = values.flatMap((v) => expandBraces(resolveWord(v, vars)));
  return words.find((w) => /^[/~]/.test(w.text)) ?? words[0]!;
}

/** How many values `for x in …` goes through: `{1..N}`, `$(seq [A] N)`, or the listed words. */
function listCount(values: SyntaxNode[]): number | undefined {
  const text = values.map((v) => v.text).join(" ");
  const range = /^\{(-?\d+)\.\.(-?\d+)(\.\.\d+)?\}$/.exec(text);
  if (range) return Math.abs(Number(range[2]) - Number(range[1])) + 1;
  const seq = /^\$\(\s*seq\s+(?:(-?\d+)\s+)?(?:\d+\s+)?(\d+)\s*\)$/.exec(text);
  if (seq) return Number(seq[2]) - Number(seq[1] ?? 1) + 1;
  return values.some((v) => v.type === "command_substitution" || v.type === "expansion") ? undefined : values.length;
}

function walkLoop(node: SyntaxNode, s: WalkState, loop: Loop): undefined {
  return walkWith(node, s, { loop: s.loop ? { ...loop, outer: s.loop } : loop });
}

/** Walks each child statement; one followed by `&` runs in the background. */
function walkChildren(node: SyntaxNode, s: WalkState): undefined {
  for (const c of named(node)) {
    if (c.nextSibling?.type === "&") walkWith(c, s, { background: true }, walkStage);
    else walkStage(c, s);
  }
  return undefined;
}

/** The quote that opens an unreadable tail of the line (the parser's last ERROR node, reaching the end). */
function openQuote(root: SyntaxNode): string | undefined {
  for (let n = root.lastChild; n; n = n.lastChild) {
    const quote = n.type === "ERROR" && n.endIndex === root.endIndex && /^\s*(["'])/.exec(n.text)?.[1];
    if (quote) return quote;
  }
  return undefined;
}

/** The command model of one bash line (or script). */
export function modelCommandLine(source: string, opts: ModelOptions = {}): CommandLine {
  // Fullwidth and other compatibility forms (`ｒｍ`) read as the characters they look like.
  return withParsedBash(source.normalize("NFKC"), (root) => {
    const line = newCommandLine(root.hasError ? openQuote(root) : undefined, new Map(opts.vars ?? []));
    const state = newWalkState(line, opts);
    walkChildren(root, state);
    return state.out;
  });
}
