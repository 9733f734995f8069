/**
 * A shell word as the judges see it: its text after quoting and the variables this line set, and
 * whether that text is known (`literal`) or depends on something only the running shell knows.
 */
import type { SyntaxNode } from "./parser.js";
import { ANSI_C_ESCAPES, NUMERIC_PARAMETERS } from "./rules/line.js";
import { GLOB_REGEX, KNOWN_SUBSTITUTIONS, PRESET_VARIABLES } from "./rules/words_values.js";

export interface Word {
  /** The resolved text; an unknown part keeps its source spelling (`$X`, `$(…)`). */
  text: string;
  /** Every part is known before the command runs. */
  literal: boolean;
  /** Unquoted glob characters (`*`, `?`, `[…]`) remain. */
  glob: boolean;
}

/** What a variable holds, as far as this line (or the environment) tells. */
export type Variables = Map<string, Word>;

/** The directory after `cd "$DIR"`, `cd -` or `popd`: only known when the line runs. */
export const UNKNOWN_DIR = "/\u0000unknown";

/** A word known as written. */
export const literalWord = (text: string): Word => ({ text, literal: true, glob: false });

/** The host a URL or `user@host:path` word names (scheme and user stripped). */
export const hostOf = (url: string) =>
  /^(?:[a-z][\w+.-]*:\/\/)?(?:[^@/\s]*@)?(\[[^\]]+\]|[^:/\s?#]+)/i.exec(url)?.[1] ?? "";

/** Decodes the body of `$'…'`. */
export function decodeAnsiC(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|[0-7]{1,3}|.)/g, (_, e: string) => {
    if (e[0] === "x" || e[0] === "u") return String.fromCharCode(parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8));
    return ANSI_C_ESCAPES[e] ?? `\\${e}`;
  });
}

const unknown = (text: string): Word => ({ text, literal: false, glob: false });

/** The key under which `declare -n NAME=TARGET` keeps TARGET: `$NAME` reads TARGET's value when it is used. */
export const nameRefKey = (name: string) => `&${name}`;

function variable(name: string, vars: Variables, depth = 0): Word {
  const target = vars.get(nameRefKey(name))?.text;
  if (target !== undefined && /^\w+$/.test(target) && depth < 8) return variable(target, vars, depth + 1);
  const known = vars.get(name);
  if (known) return { ...known, glob: false };
  const preset = NUMERIC_PARAMETERS.test(name) ? "0" : PRESET_VARIABLES.get(name);
  return preset === undefined ? unknown(`$${name}`) : literalWord(preset);
}

/** A shell pattern (`*`, `?`) as a regex source. */
const patternSource = (p: string) => p.replace(/[.+^${}()|[\]\\*?]/g, (c) => GLOB_REGEX[c] ?? `\\${c}`);

/** `${X%suffix}`, `${X#prefix}`, `${X/a/b}`, `${X//a/b}`, `${X:1:3}` of a known value; undefined for others. */
function operate(value: string, op: string): string | undefined {
  const sub = /^:\s*\(?(-?\d+)\)?(?::\s*(-?\d+))?$/.exec(op);
  if (sub) {
    const from = Math.max(0, Number(sub[1]) < 0 ? value.length + Number(sub[1]) : Number(sub[1]));
    const length = sub[2] === undefined ? value.length : Number(sub[2]);
    return value.slice(from, length < 0 ? value.length + length : from + length);
  }
  const [, kind, rest = ""] = /^(%%?|##?|\/\/?)(.*)$/s.exec(op) ?? [];
  if (!kind) return undefined;
  if (kind.startsWith("/")) {
    const [from = "", to = ""] = rest.split(/(?<!\\)\//);
    const re = new RegExp(patternSource(from), kind === "//" ? "g" : "");
    return value.replace(re, to.replace(/\\(.)/g, "$1"));
  }
  const whole = new RegExp(`^${patternSource(rest)}$`, "s");
  // `#`/`%` remove the shortest matching prefix/suffix, `##`/`%%` the longest.
  const suffix = kind.startsWith("%");
  const lengths = [...Array(value.length + 1).keys()];
  if (kind.length === 2) lengths.reverse();
  const cut = lengths.find((n) => whole.test(suffix ? value.slice(value.length - n) : value.slice(0, n))) ?? 0;
  return suffix ? value.slice(0, value.length - cut) : value.slice(cut);
}

function expansion(node: SyntaxNode, vars: Variables): Word {
  const subscript = node.namedChildren.find((c) => c?.type === "subscript");
  if (subscript) {
    const key = `${subscript.childForFieldName("name")?.text}[${subscript.childForFieldName("index")?.text}]`;
    const element = /^\$\{[\w]+\[[^\]@*]+\]\}$/.test(node.text) ? vars.get(key) : undefined;
    return element ?? unknown(node.text);
  }
  const name = node.namedChildren.find((c) => c?.type === "variable_name")?.text;
  if (!name) return unknown(node.text);
  const value = variable(name, vars);
  const op = node.text.slice(2 + name.length, -1);
  if (op && !/^:?[-=+?]/.test(op)) {
    const result = value.literal ? operate(value.text, op) : undefined;
    return result === undefined ? unknown(node.text) : literalWord(result);
  }
  if (value.literal) return value;
  const fallback = node.namedChildren.find((c) => c && c !== node.namedChildren[0] && c.type !== "variable_name");
  // ${X:-default}, ${X:=default}: the default is what an unset X gives (what the author meant it to be).
  return fallback && /^\$\{\w+:?[-=]/.test(node.text) ? resolveWord(fallback, vars) : value;
}

const joined = (parts: Word[]): Word => ({
  text: parts.map((p) => p.text).join(""),
  literal: parts.every((p) => p.literal),
  glob: parts.some((p) => p.glob),
});

function doubleQuoted(node: SyntaxNode, vars: Variables): Word {
  const parts: Word[] = [];
  let row = node.startPosition.row;
  for (const c of node.namedChildren.filter((c): c is SyntaxNode => c !== null)) {
    // The grammar splits string content at line ends: the newlines between the pieces are the string's.
    if (c.startPosition.row > row) parts.push(literalWord("\n".repeat(c.startPosition.row - row)));
    row = c.endPosition.row;
    const content = c.type === "string_content" && literalWord(c.text.replace(/\\([$`"\\\n])/g, "$1"));
    parts.push(content || resolveWord(c, vars));
  }
  return { ...joined(parts), glob: false };
}

/** The texts of some words. */
export const texts = (words: Word[]) => words.map((w) => w.text);

/** The word a syntax node stands for. */
export function resolveWord(node: SyntaxNode, vars: Variables): Word {
  switch (node.type) {
    case "command_name":
      return node.firstNamedChild ? resolveWord(node.firstNamedChild, vars) : unknown(node.text);
    case "word":
      return { text: node.text.replace(/\\(.)/gs, "$1"), literal: true, glob: /(^|[^\\])[*?[]/.test(node.text) };
    case "brace_expression":
    case "number":
      return literalWord(node.text);
    case "raw_string":
      return literalWord(node.text.slice(1, -1));
    case "ansi_c_string":
      return literalWord(decodeAnsiC(node.text.slice(2, -1)));
    case "string":
    case "translated_string":
      return doubleQuoted(node.type === "string" ? node : (node.namedChildren[0] ?? node), vars);
    case "simple_expansion":
      return variable(node.namedChildren[0]?.text ?? node.text.slice(1), vars);
    case "expansion":
      return expansion(node, vars);
    case "concatenation":
      return joined(node.namedChildren.filter((c): c is SyntaxNode => c !== null).map((c) => resolveWord(c, vars)));
    case "command_substitution":
      return substituted(node.text) ?? printed(node, vars) ?? unknown(node.text);
    default:
      // command and process substitution, arithmetic, arrays: known only when run.
      return unknown(node.text);
  }
}

/**
 * What `printf FORMAT ARGS…` prints: the format's escapes decoded, its conversions taking the arguments in turn,
 * the format repeating while arguments are left (with no conversion, the arguments are kept: a caution).
 */
export function printfOutput([format = "", ...args]: string[]): string {
  const conversion = /%%|%[-+ #0-9.]*[sbdiqcxXoufeEgG]/g;
  if (!/%[-+ #0-9.]*[sbdiqcxXoufeEgG]/.test(format))
    return decodeAnsiC([format, ...args].join(" ").replace(/%%/g, "%"));
  let out = "";
  let next = 0;
  // `%b` decodes its argument's escapes as the format's own are decoded
  const take = (m: string) =>
    m.endsWith("b") ? decodeAnsiC((args[next++] ?? "").replace(/\\0(?=[0-7])/g, "\\")) : (args[next++] ?? "");
  do out += decodeAnsiC(format).replace(conversion, (m) => (m === "%%" ? "%" : take(m)));
  while (next < args.length);
  return out;
}

/** A substitution whose output is known without running it (KNOWN_SUBSTITUTIONS). */
const substituted = (text: string) =>
  KNOWN_SUBSTITUTIONS.filter(([re]) => re.test(text)).map(([re, to]) => literalWord(text.replace(re, to)))[0];

/** `$(printf …)`, `$(echo …)` of known words: what they print (trailing newlines dropped, as `$(…)` does). */
function printed(node: SyntaxNode, vars: Variables): Word | undefined {
  const inner = node.namedChildren.filter((c): c is SyntaxNode => c !== null);
  if (inner.length !== 1 || inner[0]!.type !== "command") return undefined;
  const words = inner[0]!.namedChildren.filter((c): c is SyntaxNode => c !== null).map((c) => resolveWord(c, vars));
  const [program, ...args] = words;
  if (!program || !words.every((w) => w.literal && !w.glob)) return undefined;
  const texts = args.map((w) => w.text);
  if (program.text === "printf") return literalWord(printfOutput(texts).replace(/\n+$/, ""));
  if (program.text === "echo") return literalWord(texts.filter((t) => !/^-[neE]+$/.test(t)).join(" "));
}

/** Whether a word's braces are unquoted (only those expand). */
export const bracesExpand = (node: SyntaxNode): boolean =>
  node.type === "word" ||
  (node.type === "concatenation" &&
    !node.namedChildren.some((c) => c && /string$/.test(c.type) && /[{},]/.test(c.text)));

/** `{a,b}` brace expansion of an unquoted literal word (one level, as agents write it). */
export function expandBraces(word: Word): Word[] {
  const m = /^(.*?)\{([^{}]*,[^{}]*)\}(.*)$/s.exec(word.text);
  if (!m || !word.literal) return [word];
  return m[2]!.split(",").flatMap((alt) => expandBraces({ ...word, text: `${m[1]}${alt}${m[3]}` }));
}

/** An unquoted expansion's value split into words at IFS (`w="rm -rf /"; $w`). */
export function splitUnquoted(node: SyntaxNode, word: Word, vars: Variables): Word[] {
  const expansions = /^(simple_)?expansion$/;
  // `ls${IFS}-la`: a concatenation of bare words and expansions splits where the expansions hold IFS.
  const kinds = node.type === "concatenation" ? node.namedChildren.map((c) => c?.type ?? "") : [];
  const spliced = kinds.some((k) => expansions.test(k)) && kinds.every((k) => k === "word" || expansions.test(k));
  if (!word.literal || (!expansions.test(node.type) && !spliced)) return [word];
  const ifs = vars.get("IFS")?.text ?? " \t\n";
  const parts = word.text.split(new RegExp(`[${ifs.replace(/[\]\\^-]/g, "\\$&")}]+`)).filter((p) => p !== "");
  return parts.length > 1 ? parts.map((text) => literalWord(text)) : [word];
}
