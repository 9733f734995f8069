/**
 * The command model: a bash line as the simple commands it runs, in order, each with its resolved
 * words, redirections, what feeds its standard input, and the working directory it runs in. Built
 * from the tree-sitter tree once; wrappers are unwrapped later (unwrap.ts).
 */
import { posix } from "node:path";
import { withParsedBash, type SyntaxNode } from "./parser.js";
import { expandBraces, resolveWord, type Variables, type Word } from "./words.js";

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
}

export interface CommandLine {
  commands: SimpleCommand[];
  /** Names of functions the line defines. */
  functions: Set<string>;
  /** Each defined function's body (shell text), judged where the function is called. */
  functionBodies: Map<string, string>;
  /** Bare `> file` redirections (no command). */
  redirects: Redirect[];
  comments: string[];
  /** The parser could not read part of the line. */
  hasError: boolean;
  /** Variables as the line leaves them (what a `trap` or a later nested text sees). */
  vars: Variables;
}

interface WalkState {
  vars: Variables;
  cwd: string | undefined;
  home: string;
  out: CommandLine;
  nested: boolean;
}

const named = (n: SyntaxNode): SyntaxNode[] => n.namedChildren.filter((c): c is SyntaxNode => c !== null);

/** The directory `cd ARG` moves to from `cwd`. */
export function changeDirectory(cwd: string | undefined, arg: Word | undefined, home: string): string | undefined {
  if (!arg) return home;
  if (!arg.literal || arg.glob) return undefined;
  const text = arg.text.replace(/^~(?=\/|$)/, home);
  if (text.startsWith("/") || text.startsWith("~")) return posix.normalize(text);
  return cwd === undefined ? undefined : posix.join(cwd, text);
}

function redirectOf(node: SyntaxNode, s: WalkState): Redirect | undefined {
  const dest = node.childForFieldName("destination") ?? named(node).find((c) => c.type !== "file_descriptor");
  if (!dest) return undefined;
  const op = node.children.find((c) => c && !c.isNamed)?.text ?? ">";
  const fd = named(node).find((c) => c.type === "file_descriptor")?.text;
  return { op, ...(fd ? { fd } : {}), target: resolveWord(dest, s.vars) };
}

function assign(node: SyntaxNode, vars: Variables, s: WalkState): void {
  const name = node.childForFieldName("name")?.text;
  const value = node.childForFieldName("value");
  if (name) vars.set(name, value ? resolveWord(value, s.vars) : { text: "", literal: true, glob: false });
  if (value) walkChildren(value, s);
}

function buildCommand(node: SyntaxNode, s: WalkState): SimpleCommand {
  const env: Map<string, Word> = new Map();
  const argv: Word[] = [];
  const redirects: Redirect[] = [];
  let stdin: Word | undefined;
  for (const c of named(node)) {
    if (c.type === "variable_assignment") assign(c, env, s);
    else if (c.type === "file_redirect") {
      const r = redirectOf(c, s);
      if (r) redirects.push(r);
    } else if (c.type === "herestring_redirect") {
      const w = named(c)[0];
      if (w) stdin = resolveWord(w, s.vars);
    } else if (c.type !== "comment") {
      walkWord(c, s);
      argv.push(...expandBraces(resolveWord(c, s.vars)));
    }
  }
  return { argv, redirects, env, cwd: s.cwd, nested: s.nested, ...(stdin ? { stdin } : {}) };
}

/** Runs the substitutions inside a word (they run before the command). */
function walkWord(node: SyntaxNode, s: WalkState): void {
  if (node.type !== "command_substitution" && node.type !== "process_substitution") return walkChildren(node, s);
  const nested = s.nested;
  s.nested = true;
  walkChildren(node, s);
  s.nested = nested;
}

function emit(cmd: SimpleCommand, s: WalkState): void {
  s.out.commands.push(cmd);
  const name = cmd.argv[0]?.text;
  if (name === "cd" || name === "pushd")
    s.cwd = changeDirectory(
      s.cwd,
      cmd.argv.find((w, i) => i > 0 && !w.text.startsWith("-")),
      s.home,
    );
  if (cmd.argv.length === 0) for (const [k, v] of cmd.env) s.vars.set(k, v);
}

function redirected(node: SyntaxNode, s: WalkState, pipedFrom?: SimpleCommand): SimpleCommand | undefined {
  const body = node.childForFieldName("body");
  const before = s.out.commands.length;
  const last = body ? walkStage(body, s, pipedFrom) : undefined;
  const extra: Redirect[] = [];
  let stdin: Word | undefined;
  let tail: SyntaxNode[] = [];
  for (const c of named(node)) {
    if (c === body) continue;
    if (c.type === "file_redirect") {
      const r = redirectOf(c, s);
      if (r) extra.push(r);
    } else if (c.type === "heredoc_redirect") {
      const text = named(c).find((h) => h.type === "heredoc_body");
      const quoted = /^['"]|\\/.test(named(c).find((h) => h.type === "heredoc_start")?.text ?? "");
      if (text) stdin = { text: text.text, literal: quoted || !/[$`]/.test(text.text), glob: false };
      tail = named(c).filter((h) => !h.type.startsWith("heredoc_") && h.type !== "file_redirect");
    } else if (c.type === "herestring_redirect") {
      const w = named(c)[0];
      if (w) stdin = resolveWord(w, s.vars);
    }
  }
  const target = last ?? s.out.commands.slice(before).findLast((c) => c.nested === s.nested);
  if (target) {
    target.redirects.push(...extra);
    if (stdin) target.stdin = stdin;
  } else s.out.redirects.push(...extra);
  let prev = target;
  for (const t of tail) prev = walkStage(t, s, prev) ?? prev;
  return prev;
}

/** Walks one pipeline stage (or any statement); returns its last simple command. */
function walkStage(node: SyntaxNode, s: WalkState, pipedFrom?: SimpleCommand): SimpleCommand | undefined {
  switch (node.type) {
    case "command": {
      const cmd = buildCommand(node, s);
      if (pipedFrom) cmd.pipedFrom = pipedFrom;
      emit(cmd, s);
      return cmd;
    }
    case "redirected_statement":
      return redirected(node, s, pipedFrom);
    case "pipeline": {
      let prev = pipedFrom;
      for (const c of named(node)) prev = walkStage(c, s, prev) ?? prev;
      return prev;
    }
    case "variable_assignment":
      assign(node, s.vars, s);
      return undefined;
    case "function_definition": {
      // The body runs where the function is called, with the call's arguments (analyse.ts).
      const name = node.childForFieldName("name")?.text;
      const body = node.childForFieldName("body")?.text;
      if (name) s.out.functions.add(name);
      if (name && body !== undefined) s.out.functionBodies.set(name, body);
      return undefined;
    }
    case "comment":
      s.out.comments.push(node.text);
      return undefined;
    case "for_statement": {
      // The loop variable is judged as the first listed value (when the list is known).
      const name = node.childForFieldName("variable")?.text;
      const first = node.childrenForFieldName("value").find((v) => v !== null);
      if (name && first) s.vars.set(name, resolveWord(first, s.vars));
      walkChildren(node, s);
      return undefined;
    }
    case "subshell": {
      const cwd = s.cwd;
      walkChildren(node, s);
      s.cwd = cwd;
      return undefined;
    }
    default:
      walkChildren(node, s);
      return undefined;
  }
}

function walkChildren(node: SyntaxNode, s: WalkState): void {
  for (const c of named(node)) {
    if (c.type === "command_substitution" || c.type === "process_substitution") walkWord(c, s);
    else if (c.type === "variable_assignment") assign(c, s.vars, s);
    else walkStage(c, s);
  }
}

export interface ModelOptions {
  cwd?: string;
  home?: string;
  /** Variables known before the line (e.g. from an enclosing `sh -c`). */
  vars?: Variables;
}

/** The command model of one bash line (or script). */
export function modelCommandLine(source: string, opts: ModelOptions = {}): CommandLine {
  // Fullwidth and other compatibility forms (`ｒｍ`) read as the characters they look like.
  return withParsedBash(source.normalize("NFKC"), (root) => {
    const out: CommandLine = {
      commands: [],
      functions: new Set(),
      functionBodies: new Map(),
      redirects: [],
      comments: [],
      hasError: root.hasError,
      vars: new Map(),
    };
    const state: WalkState = {
      vars: new Map(opts.vars ?? []),
      cwd: opts.cwd,
      home: opts.home ?? "~",
      out,
      nested: false,
    };
    walkChildren(root, state);
    out.vars = state.vars;
    return out;
  });
}
