/**
 * Wrappers unwrapped once: `sudo`, `env`, `nohup`, `timeout`, `xargs`, `find -exec`, … hand over to the
 * command they run; `sh -c`, `eval`, `su -c`, `watch`, `trap`, tmux/screen, shell escapes of editors and
 * database shells, remote-execution tools' module arguments hand over shell text, judged as a line of its
 * own. The tables are in rules/wrappers.ts.
 */
import type { SimpleCommand, Word } from "./model.js";
import {
  ANSIBLE_MODULES,
  COMMAND_ENV,
  FD_VALUED,
  INPUT_PARTS,
  LISTS_EVERYWHERE,
  MODULE_PROGRAMS,
  MULTIPLEXERS,
  ONE_TARGET,
  PATH_PARAMS,
  SALT_FUNCTIONS,
  OPTION_COMMANDS,
  SCRIPT_OPTIONS,
  SHELL_ESCAPES,
  SHELL_SINKS,
  SHELL_TEXT_TAKERS,
  WRAPPERS,
} from "./rules/wrappers.js";
import { literalWord, type Variables } from "./words.js";
import { windowsShellText } from "./windows.js";

export interface Invocation {
  /** The program (basename, as run) and its arguments. */
  program: string;
  args: Word[];
  /** The program word itself (computed or globbed ones go to the smart approver). */
  word: Word;
  /** Runs with raised rights (sudo, doas, su, pkexec, runuser). */
  elevated: boolean;
  /** Arguments appended at run time (xargs, find -exec {}): targets unknown from the line. */
  runtimeArgs: boolean;
  /** The wrappers passed through, outermost first. */
  via: string[];
  command: SimpleCommand;
}

/** Shell text a wrapper hands over, to be modelled as a line of its own. */
export interface ShellText {
  code: Word;
  /** `sh -c CODE $0 $1 …`: the words the code sees as its positional parameters. */
  positional?: Word[];
  /** Variables the code sees (`X=1 sh -c …`, `env X=1 sh -c …`). */
  env?: Variables;
  elevated: boolean;
  via: string[];
  command: SimpleCommand;
}

export interface Unwrapped {
  invocations: Invocation[];
  shellTexts: ShellText[];
}

interface Frame {
  command: SimpleCommand;
  elevated: boolean;
  via: string[];
  runtimeArgs: boolean;
  env: Variables;
  depth: number;
}

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash", "fish", "mksh", "rbash", "tcsh", "csh"]);
export const isShell = (program: string) => SHELLS.has(program);

/** The name a program word runs (`/usr/bin/rm` → `rm`; `C:\\Windows\\sc.exe` → `sc`). */
export const basename = (text: string) =>
  (/^[a-zA-Z]:\\/.test(text)
    ? text.slice(text.lastIndexOf("\\") + 1).toLowerCase()
    : text.slice(text.lastIndexOf("/") + 1)
  ).replace(/\.exe$/i, "");

/** Words as shell text: joined as `eval`/ssh join them, or (`quote`) each word kept whole, as exec runs them. */
const joinWords = (words: Word[], quote = false): Word => ({
  text: words.map((w) => (quote && /\s/.test(w.text) ? `'${w.text.replace(/'/g, "'\\''")}'` : w.text)).join(" "),
  literal: words.every((w) => w.literal),
  glob: false,
});
/** Shell text only the running program knows (what awk prints into `sh`). */
const computed = (program: string): Word => ({ text: `$(${program})`, literal: false, glob: false });
const isOption = (t: string) => t.startsWith("-") && t.length > 1;

/** Skips a wrapper's options (and its positional arguments); returns the index of the wrapped command. */
function skipOptions(args: Word[], from: number, spec: { valued: string[]; positional?: number }, env?: Variables) {
  let i = from;
  while (i < args.length) {
    const t = args[i]!.text;
    if (t === "--") return i + 1 + (spec.positional ?? 0);
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(t);
    if (assignment) {
      env?.set(assignment[1]!, { ...args[i]!, text: assignment[2]! });
      i++;
    } else if (spec.valued.includes(t)) i += 2;
    else if (isOption(t)) i++;
    else break;
  }
  return i + (spec.positional ?? 0);
}

/** `-c CODE` of a shell (also `-lc`, `-ec`, `--login -c`). */
function shellCode(args: Word[]): Word | undefined {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (!t.startsWith("-")) return undefined;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(t)) return args[i + 1];
  }
  return undefined;
}

/** Replaces find's `-exec CMD {} ;` by CMD; the `{}` become find's start paths. */
function findExec(args: Word[]): { exec: Word[]; roots: Word[] } | undefined {
  const at = args.findIndex((w) => /^-(exec|execdir|ok|okdir)$/.test(w.text));
  if (at < 0) return undefined;
  const end = args.findIndex((w, i) => i > at && (w.text === ";" || w.text === "+"));
  return { exec: args.slice(at + 1, end < 0 ? undefined : end), roots: findRoots(args) };
}

function findRoots(args: Word[]): Word[] {
  const from = args.findIndex((w) => !/^-[HLP]$|^-O\d$/.test(w.text));
  const rest = from < 0 ? [] : args.slice(from);
  const end = rest.findIndex((w) => w.text.startsWith("-") || w.text === "(" || w.text === "!");
  const roots = rest.slice(0, end < 0 ? undefined : end).filter((w) => w.text !== "");
  return roots.length ? roots : [literalWord(".")];
}

/** fd's `-x/-X CMD`: CMD, run on what fd finds under its search paths (default `.`). */
function fdExec(args: Word[]): { exec: Word[]; roots: Word[] } | undefined {
  const at = args.findIndex((w) => /^(-x|--exec|-X|--exec-batch)$/.test(w.text));
  if (at < 0) return undefined;
  const end = args.findIndex((w, i) => i > at && w.text === ";");
  const operands: Word[] = [];
  const searched: Word[] = [];
  for (let i = 0; i < at; i++) {
    const t = args[i]!.text;
    if (FD_VALUED.has(t)) {
      if (t === "--search-path" && args[i + 1]) searched.push(args[i + 1]!);
      i++;
    } else if (!t.startsWith("-")) operands.push(args[i]!);
  }
  const roots = [...searched, ...operands.slice(1)];
  return { exec: args.slice(at + 1, end < 0 ? undefined : end), roots: roots.length ? roots : [literalWord(".")] };
}

/** What find/ls list under a path: never the path itself. */
const under = (w: Word): Word => ({ ...w, text: `${w.text.replace(/\/$/, "")}/\u0000found` });

/** A filter stands between the listing and xargs (`… | grep 2023 | awk '{print $4}' | xargs …`). */
const narrowed = (c?: SimpleCommand): boolean =>
  !!c?.pipedFrom &&
  (/^(grep|egrep|fgrep|rg|head|tail)$/.test(basename(c.argv[0]?.text ?? "")) || narrowed(c.pipedFrom));

/** The words a pipeline feeds into xargs/parallel, when its first command says what they are. */
function pipedWords(cmd: SimpleCommand): Word[] | undefined {
  let origin = cmd.pipedFrom;
  if (!origin && cmd.stdin?.literal)
    return cmd.stdin.text
      .split(/\s+/)
      .filter(Boolean)
      .map((text) => literalWord(text));
  if (!origin) return undefined;
  while (origin.pipedFrom) origin = origin.pipedFrom;
  let argv = origin.argv;
  if (/^(busybox|toybox|sudo)$/.test(basename(argv[0]?.text ?? ""))) argv = argv.slice(1);
  const program = basename(argv[0]?.text ?? "");
  const operands = argv.slice(1).filter((w) => !isOption(w.text));
  if (program === "find") return findRoots(argv.slice(1)).map(under);
  if (program === "fd" || program === "fdfind") return fdExec([...argv.slice(1), literalWord("-x")])!.roots.map(under);
  if (program === "ls") return operands.length ? operands.map(under) : [under(literalWord("."))];
  if (LISTS_EVERYWHERE.test(program)) return [under(literalWord("/"))];
  // `docker volume ls -q`, `gsutil ls gs://b/`: every item of a kind or under a prefix (`npm ls` lists no kind)
  const verb = argv.findIndex((w, i) => i > 0 && /^(ls|list)$/.test(w.text));
  const filtered = argv.some((w) => /^(-f|--filter)/.test(w.text)) || narrowed(cmd.pipedFrom);
  const prefix =
    argv
      .slice(verb + 1)
      .find((w) => !isOption(w.text))
      ?.text.replace(/\/?$/, "/") ?? "";
  if ((verb > 1 || (verb > 0 && prefix)) && !filtered) return [{ text: `${prefix}*`, literal: true, glob: true }];
  if (program === "echo") return operands;
  if (program === "printf") return operands.slice(1);
  return undefined;
}

/** xargs/parallel: the command they run with the input words put where they go. */
function fanOut(program: string, args: Word[], at: number, cmd: SimpleCommand): { argv: Word[]; known: boolean } {
  let argv = args.slice(at);
  // `xargs -a LIST`: what a list names is taken to live where the list does
  const list = args.findIndex((w, i) => i < at && /^(-a|--arg-file)$/.test(w.text));
  const listed = list >= 0 && args[list + 1]?.literal ? /^[/~].*\//.exec(args[list + 1]!.text)?.[0] : undefined;
  let input = listed ? [under(literalWord(listed))] : pipedWords(cmd);
  const triple = argv.findIndex((w) => w.text === ":::");
  if (program === "parallel" && triple >= 0) [argv, input] = [argv.slice(0, triple), argv.slice(triple + 1)];
  const flagAt = args.findIndex((w, i) => i < at && /^(-I|-J|--replace)$|^-I.|^-i$|^--replace=/.test(w.text));
  const flag = args[flagAt]?.text ?? "";
  const mark =
    program === "parallel"
      ? "{}"
      : /^-(I|J)$/.test(flag)
        ? args[flagAt + 1]?.text
        : flag === "-i"
          ? "{}"
          : flag.replace(/^-I|^--replace=?/, "") || undefined;
  // unknown input in the command word or as a shell's whole code (`sh -c '{}'`): code known only when it runs
  if (!input)
    return {
      argv: argv.map((w, i) => (w.text === mark && (i === 0 || i === 2) ? { ...w, literal: false } : w)),
      known: false,
    };
  // Each run gets one input; listing them all reads the same for a program of many operands (rm), but a
  // program of one target (ssh HOST CMD) is judged with the first.
  const each = ONE_TARGET.test(basename(argv[0]?.text ?? "")) ? input.slice(0, 1) : input;
  if (mark && argv.some((w) => w.text.includes(mark)))
    return {
      argv: argv.flatMap((w) =>
        w.text.includes(mark) ? each.map((i) => ({ ...w, text: w.text.split(mark).join(i.text) })) : [w],
      ),
      known: true,
    };
  return { argv: [...argv, ...input], known: true };
}

/** A wrapper (`sudo`, `env`, `xargs`, `uv run`, …): unwraps to the command it runs; false if not one. */
function unwrapWrapper(program: string, args: Word[], f: Frame, out: Unwrapped): boolean {
  const spec = WRAPPERS[program];
  if (!spec || !args.length) return false;
  const verb = spec.verb?.find((v) => v.split(" ").every((part, i) => args[i]?.text === part));
  if (spec.verb && !verb) return false;
  const env: Variables = new Map(f.env);
  const skipped = skipOptions(args, verb ? verb.split(" ").length : 0, spec, env);
  const dashes = args.findIndex((w) => w.text === "--");
  const at = spec.afterDashes
    ? dashes < 0
      ? args.length
      : dashes + 1
    : skipped + (args[skipped]?.text === "--" ? 1 : 0);
  const via = [...f.via, program];
  if (program === "env") {
    const split = args.findIndex((w) => w.text === "-S" || w.text === "--split-string");
    if (split >= 0 && args[split + 1]) {
      out.shellTexts.push({ code: args[split + 1]!, env, elevated: f.elevated, via, command: f.command });
      return true;
    }
  }
  if (at >= args.length) return false;
  if (spec.judged)
    out.invocations.push({
      program,
      args,
      word: literalWord(program),
      elevated: f.elevated,
      runtimeArgs: f.runtimeArgs,
      via: f.via,
      command: f.command,
    });
  const fan = program === "xargs" || program === "parallel" ? fanOut(program, args, at, f.command) : undefined;
  const next: Frame = {
    ...f,
    elevated: f.elevated || !!spec.elevates,
    via,
    env,
    runtimeArgs: f.runtimeArgs || (fan !== undefined && !fan.known),
    depth: f.depth + 1,
  };
  commandEnv(env, next, out);
  // `parallel 'cmd {}' ::: …`: one quoted word is shell text.
  if (fan?.argv.length && fan.argv.every((w) => /\s/.test(w.text))) {
    for (const code of fan.argv) out.shellTexts.push({ code, env, elevated: next.elevated, via, command: f.command });
    return true;
  }
  unwrapWords(fan?.argv ?? args.slice(at), next, out);
  return true;
}

/** Environment variables that hold a command (`GIT_PAGER='…' git log`). */
function commandEnv(env: Variables, f: Frame, out: Unwrapped): void {
  for (const [name, value] of env)
    if (COMMAND_ENV.test(name) && value.text.trim())
      out.shellTexts.push({
        code: { ...value, text: value.text.replace(/^\|/, "") },
        elevated: f.elevated,
        via: [...f.via, name],
        command: f.command,
      });
}

/** Shell text a program takes as an argument (`sh -c`, `su -c`, `watch`, `trap`, `eval`, `ssh HOST CMD`, `fab -- CMD`). */
function textArgument(program: string, args: Word[]): { code: Word; positional: Word[] } | undefined {
  if (isShell(program)) {
    const code = shellCode(args);
    return code ? { code, positional: args.slice(args.indexOf(code) + 1) } : undefined;
  }
  const spec = SHELL_TEXT_TAKERS[program];
  if (!spec) return undefined;
  const bundled = (t: string) =>
    spec.flag!.some((o) => /^-[a-z]$/.test(o) && new RegExp(`^-[a-zA-Z]*${o[1]}$`).test(t));
  const flagged = spec.flag ? args.findIndex((w) => spec.flag!.includes(w.text) || bundled(w.text)) : -1;
  // the words after `--`, after the host (`ssh [opts] HOST CMD…`), or all of them (`eval`), joined
  const from =
    spec.rest === "--"
      ? args.findIndex((w) => w.text === "--") + 1 || args.length
      : spec.rest === "all"
        ? 0
        : skipOptions(args, 0, { valued: spec.rest ?? [] }) + 1;
  const code = spec.flag
    ? flagged >= 0
      ? args[flagged + 1]
      : undefined
    : spec.last
      ? args.at(-1)
      : spec.rest
        ? args.length > from
          ? joinWords(args.slice(from))
          : undefined
        : args.find((w) => w.text !== "--");
  return code && code.text !== "-" ? { code, positional: [] } : undefined;
}

/** tmux/screen: text typed into a window or run in a new one. */
function multiplexerText(program: string, args: Word[]): Word | undefined {
  const spec = MULTIPLEXERS[program];
  const verbAt = spec ? args.findIndex((w) => spec.verbs.includes(w.text)) : -1;
  if (!spec || verbAt < 0) return undefined;
  if (program === "screen") {
    const stuff = args.findIndex((w) => w.text === "stuff");
    if (stuff >= 0) return args[stuff + 1];
    const at = skipOptions(args, 0, spec);
    return at < args.length ? joinWords(args.slice(at), true) : undefined;
  }
  const words: Word[] = [];
  for (let i = verbAt + 1; i < args.length; i++) {
    const t = args[i]!.text;
    if (spec.valued.includes(t)) i++;
    else if (!isOption(t) && !spec.keys?.test(t)) words.push(args[i]!);
  }
  return words.length ? joinWords(words) : undefined;
}

/** `key=value` parameters of an Ansible `-a` string. */
function moduleParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const m of text.matchAll(/(\w+)=("[^"]*"|'[^']*'|\S+)/g)) params.set(m[1]!, m[2]!.replace(/^['"]|['"]$/g, ""));
  return params;
}

/** `ansible HOSTS -m MODULE -a ARGS` and `salt TARGET FUNCTION ARGS`: the local command of the same effect. */
function remoteModuleText(program: string, args: Word[]): Word | undefined {
  if (/^salt(-ssh|-call)?$/.test(program)) {
    const at = args.findIndex((w) => SALT_FUNCTIONS[w.text] !== undefined);
    if (at < 0) return undefined;
    const rest = joinWords(args.slice(at + 1));
    return { ...rest, text: SALT_FUNCTIONS[args[at]!.text]!.replace("$args", rest.text) };
  }
  if (program !== "ansible" || args.some((w) => w.text === "--check" || w.text === "-C")) return undefined;
  const valueOf = (flags: string[]) => {
    const at = args.findIndex((w) => flags.includes(w.text));
    return at < 0 ? undefined : args[at + 1];
  };
  const module = valueOf(["-m", "--module-name"])?.text ?? "command";
  const free = valueOf(["-a", "--args"]);
  if (!free) return undefined;
  const params = moduleParams(free.text);
  const path = PATH_PARAMS.map((p) => params.get(p)).find((v) => v !== undefined);
  const state = (params.get("state") ?? "").replace(/^(stop|start|restart|reload)p?ed$/, "$1");
  const vars: Record<string, string | undefined> = { ...Object.fromEntries(params), free: free.text, path, state };
  for (const row of ANSIBLE_MODULES) {
    if (!row.modules.includes(module)) continue;
    if (row.when && !Object.entries(row.when).every(([k, re]) => re.test(params.get(k) ?? ""))) continue;
    const text = row.command.replace(/\$(\w+)/g, (_, k: string) => vars[k] ?? "\u0000");
    if (!text.includes("\u0000")) return { text, literal: free.literal, glob: false };
  }
  return undefined;
}

/** Shell text in an argument: an editor's `:!cmd`, psql's `\!`, ssh's ProxyCommand, git's `-c …=!cmd`. */
function escapes(program: string, args: Word[], f: Frame, out: Unwrapped): void {
  const shell = { elevated: f.elevated, via: [...f.via, program], command: f.command };
  const re = SHELL_ESCAPES[program] ?? /$^/;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    let code = re
      .exec(w.text)
      ?.slice(1)
      .findLast((g) => g !== undefined);
    // the option's value as the next word (`rsync -e 'sh -c …'`, `zip --unzip-command CMD`)
    const next = args[i + 1];
    if (!code && next && /^-[^=]*$/.test(w.text))
      code = re
        .exec(`${w.text} ${next.text}`)
        ?.slice(1)
        .findLast((g) => g !== undefined);
    if (code)
      out.shellTexts.push({
        ...shell,
        code: INPUT_PARTS[program]?.test(code) ? computed(program) : { ...w, text: code },
      });
    const script = SCRIPT_OPTIONS[program]?.exec(w.text) && (w.text.startsWith("+") ? w : next);
    if (script && !script.literal && /\$\(|`/.test(script.text)) out.shellTexts.push({ ...shell, code: script });
    if (SHELL_SINKS[program]?.test(w.text)) out.shellTexts.push({ ...shell, code: computed(program) });
  }
  const spec = OPTION_COMMANDS[program];
  const run = spec && args.map((w) => spec.program.exec(w.text)?.[1]).find((t) => t !== undefined);
  if (run) {
    const given = args.map((w) => spec.args.exec(w.text)?.[1]).find((t) => t !== undefined);
    out.shellTexts.push({ ...shell, code: { ...args[0]!, text: given ? `${run} ${given}` : run } });
  }
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
  if (group && argv.length === 1 && f.via.length)
    return void out.shellTexts.push({
      code: literalWord(group[1]!),
      elevated: f.elevated,
      via: f.via,
      command: f.command,
    });
  const initScript = /^\/etc\/(init\.d|rc\.d)\/([^/]+)$/.exec(word.text);
  if (initScript)
    return unwrapWords([{ ...word, text: "service" }, { ...word, text: initScript[2]! }, ...argv.slice(1)], f, out);
  const program = basename(word.text);
  const args = argv.slice(1);
  if (
    !SHELL_TEXT_TAKERS[program]?.flag?.some((o) => args.some((w) => w.text === o)) &&
    unwrapWrapper(program, args, f, out)
  )
    return;
  const via = [...f.via, program];
  escapes(program, args, f, out);
  const text = textArgument(program, args);
  if (text) {
    const elevated = f.elevated || !!SHELL_TEXT_TAKERS[program]?.elevates;
    out.shellTexts.push({ ...text, env: f.env, elevated, via, command: f.command });
    return;
  }
  const windows = windowsShellText(program, args);
  if (windows) out.shellTexts.push({ code: windows, elevated: f.elevated, via, command: f.command });
  const handed = multiplexerText(program, args) ?? remoteModuleText(program, args);
  if (handed) return void out.shellTexts.push({ code: handed, elevated: f.elevated, via, command: f.command });
  const module = args[0]?.text === "-m" ? MODULE_PROGRAMS[program]?.[args[1]?.text ?? ""] : undefined;
  if (module) return unwrapWords([{ ...word, text: module }, ...args.slice(2)], { ...f, depth: f.depth + 1 }, out);
  out.invocations.push({
    program,
    args,
    word,
    elevated: f.elevated,
    runtimeArgs: f.runtimeArgs,
    via: f.via,
    command: f.command,
  });
  const fe = program === "find" ? findExec(args) : program === "fd" || program === "fdfind" ? fdExec(args) : undefined;
  if (fe?.exec.length) {
    // what `-name PATTERN` finds is a file of that name under the roots (`! -name X`: anything but X)
    const name =
      program === "find"
        ? args.find((_, i) => /^-i?name$/.test(args[i - 1]?.text ?? "") && !/^(!|-not)$/.test(args[i - 2]?.text ?? ""))
        : undefined;
    const found = fe.roots.map((r) =>
      name && !name.text.includes("/") ? { ...r, text: `${r.text}/${name.text}` } : under(r),
    );
    const marked = fe.exec.some((w) => /^\{[/.]*\}$/.test(w.text));
    // fd puts the found path last when the command names no placeholder
    const exec =
      marked || program === "find"
        ? fe.exec.flatMap((w) => (/^\{[/.]*\}$/.test(w.text) ? found : [w]))
        : [...fe.exec, ...found];
    unwrapWords(exec, { ...f, via: [...f.via, `${program} -exec`], depth: f.depth + 1 }, out);
  }
}
