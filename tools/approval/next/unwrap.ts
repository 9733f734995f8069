/**
 * Wrappers unwrapped once: `sudo`, `env`, `nohup`, `timeout`, `xargs`, `find -exec`, … hand over to the
 * command they run; `sh -c`, `eval`, `su -c`, `watch`, `trap`, tmux/screen, shell escapes of editors and
 * database shells, remote-execution tools' module arguments hand over shell text, judged as a line of its
 * own. The tables (`table.*`) are in rules/wrappers.ts.
 */
import { optionAt, upstream, type SimpleCommand, type Word } from "./model.js";
import * as table from "./rules/wrappers.js";
import { literalWord, printfOutput, type Variables } from "./words.js";
import { windowsShellText } from "./windows.js";

/** Where a program or shell text runs: the command it came from, the wrappers passed and their rights. */
export interface Context {
  /** Runs with raised rights (sudo, doas, su, pkexec, runuser). */
  elevated: boolean;
  /** The wrappers passed through, outermost first. */
  via: string[];
  command: SimpleCommand;
}

export interface Invocation extends Context {
  /** The program (basename, as run) and its arguments. */
  program: string;
  args: Word[];
  /** The program word itself (computed or globbed ones go to the smart approver). */
  word: Word;
  /** Arguments appended at run time (xargs, find -exec {}): targets unknown from the line. */
  runtimeArgs: boolean;
}

/** Shell text a wrapper hands over, to be modelled as a line of its own. */
export interface ShellText extends Context {
  code: Word;
  /** `sh -c CODE $0 $1 …`: the words the code sees as its positional parameters. */
  positional?: Word[];
  /** Variables the code sees (`X=1 sh -c …`, `env X=1 sh -c …`). */
  env?: Variables;
}

export interface Unwrapped {
  invocations: Invocation[];
  shellTexts: ShellText[];
}

interface Frame extends Context, Pick<Invocation, "runtimeArgs"> {
  env: Variables;
  depth: number;
}

export const isShell = (program: string) => table.SHELLS.has(program);

/** The name a program word runs (`/usr/bin/rm` → `rm`; `C:\\Windows\\sc.exe` → `sc`). */
export const basename = (text: string) =>
  (/^[a-zA-Z]:\\/.test(text)
    ? text.slice(text.lastIndexOf("\\") + 1).toLowerCase()
    : text.slice(text.lastIndexOf("/") + 1)
  ).replace(/\.exe$/i, "");

/** The program a command runs (its first word's basename; "" for none). */
export const programOf = (c: SimpleCommand | undefined) => basename(c?.argv[0]?.text ?? "");

/** `program ARGS` run with the frame's rights, through the frame's wrappers. */
function invocation(f: Frame, program: string, args: Word[], word = literalWord(program)): Invocation {
  return { program, args, word, elevated: f.elevated, runtimeArgs: f.runtimeArgs, via: f.via, command: f.command };
}

/** Shell text handed over in the frame, through the wrappers `via`. */
function shellText(f: Frame, code: Word, via = f.via): ShellText {
  return { code, elevated: f.elevated, via, command: f.command };
}

/** The frame of a command one wrapper further in. */
const inner = (f: Frame, change: Partial<Frame>): Frame => ({ ...f, ...change, depth: f.depth + 1 });

/** Words as shell text: joined as `eval`/ssh join them, or (`quote`) each word kept whole, as exec runs them. */
const joinWords = (words: Word[], quote = false): Word => ({
  text: words.map((w) => (quote && /\s/.test(w.text) ? `'${w.text.replace(/'/g, "'\\''")}'` : w.text)).join(" "),
  literal: words.every((w) => w.literal),
  glob: false,
});
/** Shell text only the running program knows (what awk prints into `sh`). */
const computed = (program: string): Word => ({ text: `$(${program})`, literal: false, glob: false });
export const isOption = (t: string) => t.startsWith("-") && t.length > 1;

/** The value of the first of these options among the first `before` words (`-m MODULE`, `-lc CMD`, `--split-string=TEXT`). */
function optionValue(args: Word[], names: string[], before = args.length): Word | undefined {
  const t = args.map((w) => w.text);
  const at = t.findIndex((_, i) => i < before && optionAt(t, i, names) !== undefined);
  if (at < 0) return undefined;
  const value = optionAt(t, at, names)!;
  return value === t[at + 1] ? args[at + 1] : { ...args[at]!, text: value };
}

/** The words that are neither options nor the values of `valued` options. */
function operands(args: Word[], valued: string[]): Word[] {
  const found: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    if (valued.includes(args[i]!.text)) i++;
    else if (!isOption(args[i]!.text)) found.push(args[i]!);
  }
  return found;
}

/** Where the words after `--` start (the end when there is no `--`). */
const afterDashes = (args: Word[]) => args.findIndex((w) => w.text === "--") + 1 || args.length;

/** Skips a wrapper's options (and its positional arguments); returns the index of the wrapped command. */
function skipOptions(args: Word[], from: number, spec: { valued: string[]; positional?: number }, env?: Variables) {
  let i = from;
  for (; i < args.length && args[i]!.text !== "--"; i++) {
    const t = args[i]!.text;
    const assignment = /^([A-Za-z_]\w*)=(.*)$/s.exec(t);
    if (assignment) env?.set(assignment[1]!, { ...args[i]!, text: assignment[2]! });
    else if (spec.valued.includes(t)) i++;
    else if (!isOption(t)) break;
  }
  return i + (args[i]?.text === "--" ? 1 : 0) + (spec.positional ?? 0);
}

/** `-c CODE ARGS…` of a shell (also `-lc`, `-ec`, `--login -c`): the word after the first option holding `c`. */
function shellCode(args: Word[]): { code: Word; positional: Word[] } | undefined {
  // `-O extglob`, `+o posix`: options whose value is the next word
  const at = args.findIndex(
    (w, i) =>
      /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w.text) || (!/^[-+]/.test(w.text) && !/^[-+][oO]$/.test(args[i - 1]?.text ?? "")),
  );
  const code = args[at + 1];
  return args[at]?.text.startsWith("-") && code ? { code, positional: args.slice(at + 2) } : undefined;
}

/** find/fd: the paths they search (default `.`) and the command their `-exec`/`-x` runs (none: empty). */
function search(program: string, args: Word[]): { roots: Word[]; exec: Word[] } | undefined {
  const spec = table.SEARCH_EXEC.get(program);
  if (!spec) return undefined;
  const at = args.findIndex((w) => spec.exec.test(w.text));
  const end = args.findIndex((w, i) => i > at && spec.end.test(w.text));
  const roots = spec.valued ? fdRoots(args.slice(0, at < 0 ? undefined : at), spec.valued) : findRoots(args);
  const exec = at < 0 ? [] : args.slice(at + 1, end < 0 ? undefined : end);
  return { roots: roots.length ? roots : [literalWord(".")], exec };
}

/** find's start paths: the words before its first test. */
function findRoots(args: Word[]): Word[] {
  const from = args.findIndex((w) => !/^-[HLP]$|^-O\d$/.test(w.text));
  const rest = from < 0 ? [] : args.slice(from);
  const end = rest.findIndex((w) => w.text.startsWith("-") || w.text === "(" || w.text === "!");
  return rest.slice(0, end < 0 ? undefined : end).filter((w) => w.text !== "");
}

/** fd's search paths among its words before `-x`: `--search-path` values and the operands after the pattern. */
function fdRoots(args: Word[], valued: string[]): Word[] {
  return [...args.filter((_, i) => args[i - 1]?.text === "--search-path"), ...operands(args, valued).slice(1)];
}

/** The command find/fd run, with what they found where `{}` stands (fd: last when the command has no `{}`). */
function execOnFound(program: string, args: Word[], { roots, exec }: { roots: Word[]; exec: Word[] }): Word[] {
  // what `-name PATTERN` finds is a file of that name under the roots (`! -name X`: anything but X)
  const afterName = (_: Word, i: number) =>
    /^-i?name$/.test(args[i - 1]?.text ?? "") && !/^(!|-not)$/.test(args[i - 2]?.text ?? "");
  const name = program === "find" ? args.find(afterName)?.text : undefined;
  const found = roots.map((r) => (name && !name.includes("/") ? { ...r, text: `${r.text}/${name}` } : under(r)));
  const placeholder = (w: Word) => /^\{[/.]*\}$/.test(w.text);
  if (program !== "find" && !exec.some(placeholder)) return [...exec, ...found];
  return exec.flatMap((w) => (placeholder(w) ? found : [w]));
}

/** What find/ls list under a path: never the path itself. */
export const under = (w: Word): Word => ({ ...w, text: `${w.text.replace(/\/$/, "")}/\u0000found` });

/** The words a pipeline feeds into xargs/parallel, when its first command says what they are. */
function pipedWords(cmd: SimpleCommand): Word[] | undefined {
  if (!cmd.pipedFrom)
    return cmd.stdin?.literal ? cmd.stdin.text.split(/\s+/).filter(Boolean).map(literalWord) : undefined;
  const [origin, ...between] = upstream(cmd).reverse();
  const argv = /^(busybox|toybox|sudo)$/.test(programOf(origin)) ? origin.argv.slice(1) : origin.argv;
  const program = basename(argv[0]?.text ?? "");
  const words = operands(argv.slice(1), []);
  const listed = search(program, argv.slice(1))?.roots;
  if (listed) return listed.map(under);
  if (program === "ls") return words.length ? words.map(under) : [under(literalWord("."))];
  if (table.LISTS_EVERYWHERE.test(program)) return [under(literalWord("/"))];
  // `docker volume ls -q`, `gsutil ls gs://b/`: every item of a kind or under a prefix (`npm ls` lists no kind)
  const verb = argv.findIndex((w, i) => i > 0 && /^(ls|list)$/.test(w.text));
  // a filter between the listing and xargs (`… | grep 2023 | awk '{print $4}' | xargs …`) selects part of it
  const narrowed = between.some((c) => /^(grep|egrep|fgrep|rg|head|tail)$/.test(programOf(c)));
  const filtered = argv.some((w) => /^(-f|--filter)/.test(w.text)) || narrowed;
  const prefix = operands(argv.slice(verb + 1), [])[0]?.text.replace(/\/?$/, "/") ?? "";
  if ((verb > 1 || (verb > 0 && prefix)) && !filtered) return [{ text: `${prefix}*`, literal: true, glob: true }];
  if (program === "echo") return words;
  // what printf prints, split as xargs splits it (blanks, newlines, NULs of `xargs -0`)
  const printed = words.every((w) => w.literal) && printfOutput(words.map((w) => w.text)).split(/[\s\0]+/);
  if (program === "printf") return printed ? printed.filter(Boolean).map(literalWord) : words.slice(1);
}

/** xargs' replace-string: `-I X`, `-J X`, `-IX`, `--replace=X`; `{}` for `-i`. */
function replaceString(args: Word[], before: number): string | undefined {
  const bare = args.find((w, i) => i < before && /^(-I.+|-i)$/.test(w.text))?.text;
  if (bare) return bare === "-i" ? "{}" : bare.slice(2);
  return optionValue(args, ["-I", "-J", "--replace"], before)?.text;
}

/** xargs/parallel: the command they run with the input words put where they go. */
function fanOut(program: string, args: Word[], at: number, cmd: SimpleCommand): { argv: Word[]; known: boolean } {
  let argv = args.slice(at);
  // `xargs -a LIST`: what a list names is taken to live where the list does
  const list = optionValue(args, ["-a", "--arg-file"], at);
  const listed = list?.literal ? /^[/~].*\//.exec(list.text)?.[0] : undefined;
  let input = listed ? [under(literalWord(listed))] : pipedWords(cmd);
  const triple = argv.findIndex((w) => w.text === ":::");
  if (program === "parallel" && triple >= 0) [argv, input] = [argv.slice(0, triple), argv.slice(triple + 1)];
  const mark = program === "parallel" ? "{}" : replaceString(args, at);
  // unknown input in the command word or as a shell's whole code (`sh -c '{}'`): code known only when it runs
  const unknownCode = (w: Word, i: number) => w.text === mark && (i === 0 || i === 2);
  if (!input) return { argv: argv.map((w, i) => (unknownCode(w, i) ? { ...w, literal: false } : w)), known: false };
  if (!mark || !argv.some((w) => w.text.includes(mark))) return { argv: [...argv, ...input], known: true };
  // Each run gets one input; listing them all reads the same for a program of many operands (rm), but a
  // program of one target (ssh HOST CMD) is judged with the first.
  const each = table.ONE_TARGET.test(basename(argv[0]?.text ?? "")) ? input.slice(0, 1) : input;
  const filled = (w: Word) => each.map((i) => ({ ...w, text: w.text.split(mark).join(i.text) }));
  return { argv: argv.flatMap((w) => (w.text.includes(mark) ? filled(w) : [w])), known: true };
}

/** A package run by a versioned name (`npx cdk@2 destroy`, `npx @scope/cli@latest`) is judged by the name. */
const withoutVersion = (argv: Word[], packages?: boolean): Word[] =>
  packages ? [{ ...argv[0]!, text: argv[0]!.text.replace(/^(@?[^@]+)@[^@/]*$/, "$1") }, ...argv.slice(1)] : argv;

/** A wrapper (`sudo`, `env`, `xargs`, `uv run`, …): unwraps to the command it runs; false if not one. */
function unwrapWrapper(program: string, args: Word[], f: Frame, out: Unwrapped): boolean {
  const spec = table.WRAPPERS.get(program);
  if (!spec || !args.length) return false;
  // `parallel --dry-run CMD ::: …` prints the commands it would run
  if (spec.fansOut && args.some((w) => /^--dry-?run$/.test(w.text))) return true;
  const verb = spec.verb?.find((v) => v.split(" ").every((part, i) => args[i]?.text === part));
  if (spec.verb && !verb) return false;
  const env: Variables = new Map(f.env);
  const skipped = skipOptions(args, verb ? verb.split(" ").length : 0, spec, env);
  const at = spec.afterDashes ? afterDashes(args) : skipped + (args[skipped]?.text === "--" ? 1 : 0);
  const via = [...f.via, program];
  const text = spec.textOptions && optionValue(args, spec.textOptions);
  if (text) {
    out.shellTexts.push({ ...shellText(f, text, via), env });
    return true;
  }
  if (at >= args.length) return false;
  if (spec.judged) out.invocations.push(invocation(f, program, args));
  const fan = spec.fansOut ? fanOut(program, args, at, f.command) : undefined;
  const runtimeArgs = f.runtimeArgs || fan?.known === false;
  const next = inner(f, { elevated: f.elevated || !!spec.elevates, via, env, runtimeArgs });
  commandEnv(env, next, out);
  // `parallel 'cmd {}' ::: …`: one quoted word is shell text.
  if (fan?.argv.length && fan.argv.every((w) => /\s/.test(w.text)))
    for (const code of fan.argv) out.shellTexts.push({ ...shellText(next, code), env });
  else unwrapWords(fan?.argv ?? withoutVersion(args.slice(at), spec.packages), next, out);
  return true;
}

/** Environment variables that hold a command (`GIT_PAGER='…' git log`). */
function commandEnv(env: Variables, f: Frame, out: Unwrapped): void {
  for (const [name, value] of env)
    if (table.COMMAND_ENV.test(name) && value.text.trim())
      out.shellTexts.push(shellText(f, { ...value, text: value.text.replace(/^\|/, "") }, [...f.via, name]));
}

/** Shell text a program takes as an argument (`sh -c`, `su -c`, `watch`, `trap`, `eval`, `ssh HOST CMD`, `fab -- CMD`). */
function textArgument(program: string, args: Word[], taker?: table.ShellTextTaker) {
  if (isShell(program)) return shellCode(args);
  const code = taker && takenText(taker, args);
  return code && code.text !== "-" ? { code, positional: [] } : undefined;
}

/** The shell text of a SHELL_TEXT_TAKERS row: after its flag, the last word, the rest joined, or the first word. */
function takenText(spec: table.ShellTextTaker, args: Word[]): Word | undefined {
  const { flag, rest } = spec;
  if (flag) return optionValue(args, flag);
  if (spec.last) return args.at(-1);
  if (!rest) return args.find((w) => w.text !== "--");
  // the words after `--`, after the host (`ssh [opts] HOST CMD…`), or all of them (`eval`), joined
  const from = rest === "--" ? afterDashes(args) : rest === "all" ? 0 : skipOptions(args, 0, { valued: rest }) + 1;
  return args.length > from ? joinWords(args.slice(from)) : undefined;
}

/** tmux/screen: text typed into a window or run in a new one. */
function multiplexerText(program: string, args: Word[]): Word | undefined {
  const spec = table.MULTIPLEXERS.get(program);
  const verbAt = spec ? args.findIndex((w) => spec.verbs.includes(w.text)) : -1;
  if (!spec || verbAt < 0) return undefined;
  if (program === "screen") {
    if (args.some((w) => w.text === "stuff")) return optionValue(args, ["stuff"]);
    const at = skipOptions(args, 0, spec);
    return at < args.length ? joinWords(args.slice(at), true) : undefined;
  }
  const words = operands(args.slice(verbAt + 1), spec.valued).filter((w) => !spec.keys?.test(w.text));
  return words.length ? joinWords(words) : undefined;
}

/** `key=value` parameters of an Ansible `-a` string. */
const moduleParams = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(table.MODULE_PARAM)].map((m) => [m[1], m[2]!.replace(/^['"]|['"]$/g, "")]));

/** `ansible HOSTS -m MODULE -a ARGS` and `salt TARGET FUNCTION ARGS`: the local command of the same effect. */
function remoteModuleText(program: string, args: Word[]): Word | undefined {
  if (/^salt(-ssh|-call)?$/.test(program)) {
    const at = args.findIndex((w) => table.SALT_FUNCTIONS.has(w.text));
    if (at < 0) return undefined;
    const rest = joinWords(args.slice(at + 1));
    return { ...rest, text: table.SALT_FUNCTIONS.get(args[at]!.text)!.replace("$args", rest.text) };
  }
  if (program !== "ansible" || args.some((w) => w.text === "--check" || w.text === "-C")) return undefined;
  const module = optionValue(args, ["-m", "--module-name"])?.text ?? "command";
  const free = optionValue(args, ["-a", "--args"]);
  if (!free) return undefined;
  const params = moduleParams(free.text);
  const path = table.PATH_PARAMS.map((p) => params[p]).find((v) => v !== undefined);
  const state = (params.state ?? "").replace(/^(stop|start|restart|reload)p?ed$/, "$1");
  const vars: Record<string, string | undefined> = { ...params, free: free.text, path, state };
  for (const row of table.ANSIBLE_MODULES) {
    if (!row.modules.includes(module)) continue;
    if (row.when && !Object.entries(row.when).every(([k, re]) => re.test(params[k] ?? ""))) continue;
    const text = row.command.replace(/\$(\w+)/g, (_, k: string) => vars[k] ?? "\u0000");
    if (!text.includes("\u0000")) return { text, literal: free.literal, glob: false };
  }
}

/** The command a SHELL_ESCAPES pattern captured (a pattern may spell it in several groups). */
const escapedCommand = (m: RegExpExecArray | null | undefined) => m?.slice(1).findLast((g) => g !== undefined);

/** Shell text in an argument: an editor's `:!cmd`, psql's `\!`, ssh's ProxyCommand, git's `-c …=!cmd`. */
function escapes(program: string, args: Word[], f: Frame, out: Unwrapped): void {
  const hand = (code: Word) => out.shellTexts.push(shellText(f, code, [...f.via, program]));
  const re = table.SHELL_ESCAPES.get(program);
  for (const [i, w] of args.entries()) {
    const next = args[i + 1];
    // the option's value as the next word (`rsync -e 'sh -c …'`, `zip --unzip-command CMD`)
    const joined = next && /^-[^=]*$/.test(w.text) ? `${w.text} ${next.text}` : undefined;
    const code = escapedCommand(re?.exec(w.text)) || (joined && escapedCommand(re?.exec(joined)));
    if (code) hand(table.INPUT_PARTS.get(program)?.test(code) ? computed(program) : { ...w, text: code });
    const script = table.SCRIPT_OPTIONS.get(program)?.exec(w.text) && (w.text.startsWith("+") ? w : next);
    if (script && !script.literal && /\$\(|`/.test(script.text)) hand(script);
    if (table.SHELL_SINKS[program]?.test(w.text)) hand(computed(program));
  }
  const spec = table.OPTION_COMMANDS.get(program);
  const run = spec && args.map((w) => spec.program.exec(w.text)?.[1]).find((t) => t !== undefined);
  const given = spec && args.map((w) => spec.args.exec(w.text)?.[1]).find((t) => t !== undefined);
  if (run) hand({ ...args[0]!, text: given ? `${run} ${given}` : run });
}

/** The programs one simple command runs, wrappers unwrapped (at most a few levels deep). */
export function unwrap(command: SimpleCommand): Unwrapped {
  const out: Unwrapped = { invocations: [], shellTexts: [] };
  const frame: Frame = { command, elevated: false, via: [], runtimeArgs: false, env: new Map(command.env), depth: 0 };
  commandEnv(command.env, frame, out);
  unwrapWords(command.argv, frame, out);
  return out;
}

function unwrapWords(argv: Word[], f: Frame, out: Unwrapped): void {
  const word = argv[0];
  if (!word || f.depth > 8) return;
  // `time (a && b)`: the grammar hands the subshell to the keyword as one word; it is shell text.
  const group = /^\((.*)\)$/s.exec(word.text);
  if (group && argv.length === 1 && f.via.length) return void out.shellTexts.push(shellText(f, literalWord(group[1]!)));
  const initScript = /^\/etc\/(init\.d|rc\.d)\/([^/]+)$/.exec(word.text);
  if (initScript)
    return unwrapWords([{ ...word, text: "service" }, { ...word, text: initScript[2]! }, ...argv.slice(1)], f, out);
  const program = basename(word.text);
  const args = argv.slice(1);
  const taker = table.SHELL_TEXT_TAKERS.get(program);
  if (!taker?.flag?.some((o) => args.some((w) => w.text === o)) && unwrapWrapper(program, args, f, out)) return;
  const via = [...f.via, program];
  escapes(program, args, f, out);
  const text = textArgument(program, args, taker);
  const elevated = f.elevated || !!taker?.elevates;
  if (text) return void out.shellTexts.push({ ...shellText(f, text.code, via), ...text, env: f.env, elevated });
  const windows = windowsShellText(program, args);
  if (windows) out.shellTexts.push(shellText(f, windows, via));
  const handed = multiplexerText(program, args) ?? remoteModuleText(program, args);
  if (handed) return void out.shellTexts.push(shellText(f, handed, via));
  const module = args[0]?.text === "-m" ? table.MODULE_PROGRAMS.get(`${program} ${args[1]?.text}`) : undefined;
  if (module) return unwrapWords([{ ...word, text: module }, ...args.slice(2)], inner(f, {}), out);
  out.invocations.push(invocation(f, program, args, word));
  const searched = search(program, args);
  if (searched?.exec.length)
    unwrapWords(execOnFound(program, args, searched), inner(f, { via: [...f.via, `${program} -exec`] }), out);
}
