/**
 * The generic judges: a rule row (rules.ts) says which program, verb and options; the judge of its
 * effect says whether this invocation's paths make it dangerous.
 */
import type { ClassKey } from "./classes.js";
import { absolutePath, classifyPath, isForeign, isLinkItself, madeOnLine, NO_WORKDIR } from "./paths.js";
import type { PathClass, PathContext } from "./paths.js";
import { killAsPkill } from "./pids.js";
import { RULES, type Rule } from "./rules.js";
import { LISTINGS, TEMP_ROOT, TRIAL_RUN, WRITE_CLASSES, WRITE_PLACES } from "./rules/files.js";
import { optionAt, upstream, type SimpleCommand } from "./model.js";
import { MOVE_FROM_CLASSES, PERMISSION_CLASSES } from "./rules/judges_paths.js";
import { RUNTIME_ARGUMENT_PROGRAMS } from "./rules/system.js";
import { basename, isOption, under, type Invocation } from "./unwrap.js";
import { GLOB_REGEX } from "./rules/words_values.js";
import { literalWord, texts, UNKNOWN_DIR, type Word } from "./words.js";

/** What the line judge lends the judges of remote state and fetched code (remote.ts, fetch_exec.ts). */
export interface LineView {
  /** Where paths point, from the invocation's own directory. */
  ctx: PathContext;
  /** Text of a file written on this line or by an earlier call. */
  fileText: (word: Word, cwd: string | undefined) => string | undefined;
  /** What `echo`/`printf`/`cat FILE` prints, when known (`printf '…' > .git/hooks/x`). */
  printed: (cmd: SimpleCommand | undefined) => Word | undefined;
  /** Judges shell text as a line of its own (`elevated`: run on a server). */
  judgeShell: (code: Word, why: string, elevated?: boolean) => void;
  /** What earlier commands of the line left for later ones (a destroy plan's file, a git alias). */
  notes: Map<string, string>;
  /** One object per judged line (nested lines share it): the key of fetch_exec.ts's line state. */
  lineKey: object;
}

export interface Finding {
  key: ClassKey;
  /** What the judge saw, for `approval explain`. */
  reason: string;
  rule?: Rule;
  /** "glob": found by reading a globbed program word as the table programs it can match. */
  source?: "glob";
}

/**
 * Arguments before `--` that are not options, and options (option values are not told apart); `values` holds
 * those of the row's `globalValued` options (`-C DIR`).
 */
function split(args: Word[], rule?: Rule) {
  const parts = { options: [] as string[], operands: [] as Word[], values: new Map<string, Word>() };
  let afterDashes = false;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (!afterDashes && w.text === "--") afterDashes = true;
    else if (!afterDashes && rule?.globalValued?.includes(w.text) && !parts.operands.length && args[i + 1]) {
      parts.options.push(w.text);
      parts.values.set(w.text, args[++i]!);
    } else if (!afterDashes && isOption(w.text) && !rule?.optionLike?.test(w.text)) parts.options.push(w.text);
    else parts.operands.push(w);
  }
  return parts;
}
type Parts = ReturnType<typeof split>;

const RULES_BY_PROGRAM = new Map<string, Rule[]>();
for (const rule of RULES)
  for (const p of rule.program) RULES_BY_PROGRAM.set(p, [...(RULES_BY_PROGRAM.get(p) ?? []), rule]);

/** An option given as itself, as a `--opt=` prefix, or bundled with other short options (`-rf` has `-f`). */
function hasOption(options: string[], wanted: string[]): boolean {
  const bundled = (o: string, w: string) => /^-[a-zA-Z]$/.test(w) && /^-[a-zA-Z]+$/.test(o) && o.includes(w[1]!);
  return options.some((o) => wanted.some((w) => o === w || (w.endsWith("=") && o.startsWith(w)) || bundled(o, w)));
}

/** The row's `word` test: a non-option argument from `from` to `to` (or, with `options`, an option) that matches. */
function hasWord(spec: NonNullable<Rule["word"]>, parts: Parts): boolean {
  const words = [
    ...parts.operands.slice(spec.from, spec.to).map((w) => w.text),
    ...(spec.options ? parts.options : []),
  ];
  return words.some((w) => (spec.test?.test(w) ?? true) && !spec.except?.test(w));
}

function matches(rule: Rule, inv: Invocation, parts: Parts): boolean {
  const joined = inv.args.map((w) => w.text).join(" ");
  if (rule.elevated && !inv.elevated) return false;
  if (rule.verbs && !rule.verbs.every((alts, i) => alts.includes(parts.operands[i]?.text ?? ""))) return false;
  if (rule.anyOption && !hasOption(parts.options, rule.anyOption)) return false;
  if (rule.args && !rule.args.test(joined)) return false;
  if (rule.unless && rule.unless.test(joined)) return false;
  if ((rule.effect === "system" || rule.effect === "remote") && TRIAL_RUN.test(joined)) return false;
  if (rule.word && !hasWord(rule.word, parts)) return false;
  const operands = parts.operands.map((w) => w.text);
  return !rule.when || rule.when(operands, parts.options);
}

/** The values of options (`-C DIR`, `-CDIR`, `--directory=DIR`) and of `key=` operands (`of=FILE`). */
function optionPaths(spec: { option?: string[]; prefix?: string; fallback?: string }, args: Word[]): Word[] {
  const t = texts(args);
  const found = args.flatMap((w, i) => {
    const value = optionAt(t, i, spec.option ?? []) ?? (spec.prefix && /^(\w+=)(.*)$/s.exec(w.text));
    if (Array.isArray(value)) return value[1] === spec.prefix ? [{ ...w, text: value[2]! }] : [];
    return value === undefined || !value ? [] : [value === t[i + 1] ? args[i + 1]! : { ...w, text: value }];
  });
  return found.length || !spec.fallback ? found : [literalWord(spec.fallback)];
}

function pathsOf(rule: Rule, operands: Word[], args: Word[]): Word[] {
  if (typeof rule.paths === "object") return optionPaths(rule.paths, args);
  if (rule.paths === "last") return operands.slice(-1);
  if (rule.paths === "allButLast") return operands.slice(1);
  if (rule.paths !== "afterVerbs") return operands;
  const rest = operands.slice(rule.verbs?.length ?? 0);
  return rest.length ? rest : [literalWord(".")];
}

/** The class a write to `path` falls in, if it is dangerous. */
export function judgeWrite(path: Word, ctx: PathContext): ClassKey | undefined {
  const key = WRITE_CLASSES[classifyPath(path, ctx)];
  const abs = key && absolutePath(path, ctx);
  return (abs && WRITE_PLACES.find(([place]) => place.test(abs))?.[1]) || key;
}

/** The first command of the pipeline `cmd` ends (itself when nothing is piped into it). */
const pipeStart = (cmd: SimpleCommand) => upstream(cmd).at(-1) ?? cmd;

/** A find test that selects (`-name`, `-mtime`, `-type l`), skipping what `-exec … ;` runs. */
function findNarrows(args: string[]): boolean {
  let inExec = false;
  for (const [i, a] of args.entries()) {
    if (inExec) inExec = !/^(;|\\;|\+)$/.test(a);
    else if (/^-(exec|execdir|ok|okdir)$/.test(a)) inExec = true;
    else if (args[i - 1] === "-type" ? !/^[fd]$/.test(a) : /^[-!(]/.test(a) && !LISTINGS.wholeTree.test(a)) return true;
  }
  return false;
}

/**
 * A delete of all the task's work: `.`, `*`, `./*` at the working directory's root, or all a listing there
 * finds (`find . -delete`, `ls | xargs rm`) unless a find test or a filter between the listing and xargs
 * (`grep`, `tail -n +6`) selects part of it. A found path (`…/\u0000found`) whose listing this command
 * does not show (`find … -exec sh -c 'rm "$1"'`) is not known to be all of it.
 */
function emptiesWorkdir(rule: Rule, inv: Invocation, p: Word, ctx: PathContext): boolean {
  const abs = absolutePath(p, ctx);
  const root = ctx.workdir ?? NO_WORKDIR;
  const found = abs === `${root}/\u0000found`;
  if (!/^(recursive|find)_delete$/.test(rule.key)) return false;
  if (!(abs === root || found || (p.glob && (abs === `${root}/*` || abs === `${root}/.*`)))) return false;
  const words = pipeStart(inv.command).argv.map((w) => w.text);
  const at = words.findIndex((w) => LISTINGS.listers.test(basename(w)));
  // a command between the listing and this one (`grep`, `tail -n +6`) filters it
  const filtered = upstream(inv.command).length > 1;
  return at < 0 ? !found : !filtered && !findNarrows(words.slice(at + 1));
}

function judgeDelete(rule: Rule, inv: Invocation, paths: Word[], recursive: boolean, ctx: PathContext) {
  // a find that selects (`-mtime +7`, `-name`) deletes what it finds below its start points, not them
  const below = rule.key === "find_delete" && findNarrows(inv.args.map((w) => w.text));
  // what xargs or find -exec hands a delete is named by the wrapper (xargs_rm, find_exec_rm)
  const fed = rule.key === "recursive_delete" ? LISTINGS.keys.find(([via]) => inv.via.includes(via))?.[1] : undefined;
  for (const given of paths) {
    const p = below && given.literal ? under(given) : given;
    // `rm link` removes the link; find, chmod and the rest go through it.
    if (madeOnLine(p, ctx) || (isLinkItself(p, ctx) && rule.program.some((n) => /^(rm|unlink)$/.test(n)))) continue;
    const c = classifyPath(p, ctx);
    const abs = absolutePath(p, ctx) ?? "";
    // what find/fd/ls list under a folder, deleted one by one, empties it like a recursive delete
    const deep = recursive || p.text.endsWith("/\u0000found");
    if (c === "system" || (c === "home" && /^~\/?(\.?\*)?$/.test(abs))) return "delete_system_path";
    const emptied =
      deep &&
      (c === "unknown" ||
        (c === "inside" && emptiesWorkdir(rule, inv, p, ctx)) ||
        (c === "temp" && (rule.key === "recursive_delete" || TEMP_ROOT.test(abs))));
    if (emptied) return fed ?? rule.key;
    // with raised rights, a path only known when it runs can be any file of the machine
    if (c === "unknown" && inv.elevated) return "delete_outside_workdir";
    if (!isForeign(c) || c === "unknown") continue;
    if (rule.key !== "recursive_delete") return rule.key;
    return deep ? (fed ?? "recursive_delete") : isSecret(c) ? "credential_write" : "delete_outside_workdir";
  }
}

const isSecret = (c: PathClass) => c === "home-secret" || c === "ssh";

function judgeMove(paths: Word[], ctx: PathContext): ClassKey | undefined {
  const target = paths.at(-1);
  if (!target || paths.length < 2) return undefined;
  if (target.text === "/dev/null") return "move_to_dev_null";
  const away = paths.slice(0, -1).map((p) => MOVE_FROM_CLASSES[classifyPath(p, ctx)]);
  // into a place outside: a move (a system, credential or start-up file keeps its write class)
  const key = away.find(Boolean) ?? judgeWrite(target, ctx);
  return key === "overwrite_outside_workdir" ? "move_outside_workdir" : key;
}

function judgePermission(paths: Word[], ctx: PathContext): ClassKey | undefined {
  for (const p of paths) {
    const c = classifyPath(p, ctx);
    // the home directory itself, like the system's and credentials: who may read it is the machine's security
    if (c === "home" && /^~\/?$/.test(absolutePath(p, ctx) ?? "")) return "chmod_chown_system";
    if (PERMISSION_CLASSES[c]) return PERMISSION_CLASSES[c];
  }
}

/**
 * What xargs hands over when the line does not show it: any path of the machine after a file index, or
 * from a list kept outside the task (`xargs -a /srv/files.lst rm`); else only known when it runs.
 */
function runtimeInput(inv: Invocation, ctx: PathContext): Word {
  const argv = pipeStart(inv.command).argv.map((w) => w.text);
  const list =
    argv.find((_, i) => /^(-a|--arg-file)$/.test(argv[i - 1] ?? "")) ?? argv.find((w) => /^--arg-file=/.test(w));
  const listed = list && isForeign(classifyPath(literalWord(list.replace(/^--arg-file=/, "")), ctx));
  const anywhere = listed || LISTINGS.machine.test(basename(argv[0] ?? ""));
  return anywhere ? literalWord("/\u0000found") : { text: "$input", literal: false, glob: false };
}

function judgeRule(rule: Rule, inv: Invocation, parts: Parts, ctx: PathContext): ClassKey | undefined {
  const dir = parts.values.get("-C");
  if (dir) ctx = { ...ctx, cwd: absolutePath(dir, ctx) ?? UNKNOWN_DIR };
  const given = pathsOf(rule, parts.operands, inv.args);
  // xargs/find -exec with input the line does not show: the paths are unknown, or anywhere (`locate … |`).
  const paths = given.length || !inv.runtimeArgs ? given : [runtimeInput(inv, ctx)];
  const recursive = !rule.recursive || hasOption(parts.options, rule.recursive);
  if (rule.effect === "delete") return judgeDelete(rule, inv, paths, recursive, ctx);
  if (rule.effect === "move") return judgeMove(paths, ctx);
  if (rule.effect === "permission") return judgePermission(paths, ctx);
  if (rule.effect !== "overwrite") return rule.key;
  // a write's own class (a crontab, a data file) unless the row names one
  const key = paths.map((p) => judgeWrite(p, ctx)).find(Boolean);
  return key && (rule.key === "overwrite_outside_workdir" ? key : rule.key);
}

/** The table's programs a globbed program word (`/bin/r?`, `r[m]`) can name. */
function globbedPrograms(program: string): string[] {
  const source = program.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*|\?|\[!/g, (g) => GLOB_REGEX[g]!);
  try {
    const re = new RegExp(`^${source}$`);
    return [...RULES_BY_PROGRAM.keys()].filter((p) => re.test(p));
  } catch {
    return []; // not a pattern (`r[m`): it names no program of the tables
  }
}

function judgeAs(program: string, inv: Invocation, ctx: PathContext, source?: "glob"): Finding[] {
  return (RULES_BY_PROGRAM.get(program) ?? []).flatMap((rule) => {
    const parts = split(inv.args, rule);
    const key = matches(rule, inv, parts) ? judgeRule(rule, inv, parts, ctx) : undefined;
    return key ? [{ key, reason: `${program}: ${rule.effect}`, rule, ...(source ? { source } : {}) }] : [];
  });
}

/** Every rule row that fires for one invocation. */
export function judgeInvocation(inv: Invocation, ctx: PathContext): Finding[] {
  const found: Finding[] = [];
  if (!inv.word.literal || inv.word.glob)
    found.push({ key: "computed_command", reason: `the program word '${inv.word.text}' is only known when it runs` });
  if (inv.word.glob)
    for (const p of globbedPrograms(inv.program)) found.push(...judgeAs(p, { ...inv, program: p }, ctx, "glob"));
  found.push(...judgeAs(inv.program, inv, ctx));
  const runtime = inv.runtimeArgs && !inv.args.length ? RUNTIME_ARGUMENT_PROGRAMS.get(inv.program) : undefined;
  if (runtime) found.push({ key: runtime, reason: `${inv.program} runs with arguments only known when it runs` });
  const pkill = killAsPkill(inv);
  if (pkill === "all") found.push({ key: "kill_all_processes", reason: "kill of every listed process" });
  else if (pkill) found.push(...judgeAs("pkill", pkill, ctx));
  return found;
}

/** The rules a program word has (for `approval explain`). */
export const rulesFor = (program: string): Rule[] => RULES_BY_PROGRAM.get(program) ?? [];
