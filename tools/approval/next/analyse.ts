/**
 * The line judge: models a bash line (model.ts), unwraps each command (unwrap.ts), asks the rule judges
 * (judges.ts) about every program, and judges what spans commands: pipes into a shell, redirections,
 * staged exfiltration, memory bombs, inline code, shell text handed to `sh -c`/`eval`, and files the
 * line (or an earlier tool call of the task) wrote and now runs.
 */
import { CLASSES, type ClassKey } from "./classes.js";
import { BUILT, compiledFrom } from "./built.js";
import { analyseInlineCode, inlineProgram, unknownCode } from "./inline.js";
import { exhaustion, fanOut, loopExhaustion } from "./exhaust.js";
import { judgeInvocation, judgeWrite, rulesFor, type Finding } from "./judges.js";
import { judgeExfil, judgeRemoteShellExfil } from "./exfil.js";
import { judgeFetchedCode, syntaxCheckOnly } from "./fetch_exec.js";
import { isTrialRun, judgeRemote } from "./remote.js";
import { modelCommandLine, STARTUP_FILE_VARIABLES, upstream, type CommandLine, type SimpleCommand } from "./model.js";
import { absolutePath, classifyPath, NO_WORKDIR, pathKey, type PathContext } from "./paths.js";
import { ELEVATED_EXEMPT, READ_ONLY_MODES } from "./rules/elevated.js";
import { SUBSTITUTED_CODE } from "./rules/fetch.js";
import * as LINE from "./rules/line.js";
import { SHELL_SINKS } from "./rules/wrappers.js";
import { basename, isShell, programOf, unwrap, type Invocation, type ShellText } from "./unwrap.js";
import { decodeAnsiC, literalWord, printfOutput, type Variables, type Word } from "./words.js";

export interface JudgeOptions {
  /** Directory the command starts in. */
  cwd?: string;
  /** The task's working directory. */
  defaultCwd?: string;
  /** Text of a file an earlier tool call of this task wrote (absolute path), if any. */
  readWritten?: (path: string) => string | undefined;
}

/** A class a command falls in, with the class's description. */
export type Match = { key: string; description: string };

export interface Verdict {
  dangerous: boolean;
  patternKey?: string;
  description?: string;
  matches?: Match[];
  findings: Finding[];
}

/** What judging one line keeps; nested shell text shares it but for its own ctx, depth, rights and calls. */
function newLineState(opts: JudgeOptions) {
  const ctx: PathContext = { workdir: opts.defaultCwd || undefined, cwd: opts.cwd || undefined };
  return {
    ctx: { ...ctx, made: new Set<string>(), links: new Map<string, string>() },
    opts,
    /** Files written on this line: path → text when known. */
    written: new Map<string, string | undefined>(),
    findings: [] as Finding[],
    depth: 0,
    /** The line runs with raised rights (`sudo sh -c …`). */
    elevated: false,
    /** Aliases defined on the line: name → its text. */
    aliases: new Map<string, Word>(),
    /** Functions whose body is being judged (a function calling itself is not expanded again). */
    calling: new Set<string>(),
    /** What earlier commands left for later ones (remote.ts: destroy plans, git aliases). */
    notes: new Map<string, string>(),
  };
}
type LineState = ReturnType<typeof newLineState>;

const add = (s: LineState, key: ClassKey, reason: string): void => void s.findings.push({ key, reason });
/** A finding when a check gave its reason (checks return undefined when they find nothing). */
const addIf = (s: LineState, key: ClassKey, reason: string | undefined) => reason && add(s, key, reason);
/** An interpreter whose code inline.ts reads (`python3.12` is `python`). */
const interprets = (p: string) => LINE.INTERPRETERS.has(p.replace(/[\d.]+$/, "") || p);
const runsUnknownCode = (inv: Invocation, s: LineState) =>
  add(s, "inline_code_unanalysable", `${inv.program} runs code only known when it runs`);
/** Programs that run a file's (or their input's) text as shell commands. */
const runsShellText = (p: string) => isShell(p) || p === "source" || p === ".";

/**
 * Shell text computed only by variables (`cat <<EOF | bash` with `echo "$USER"`): judged as written, the
 * variables left to the inner shell (unknown ones stay computed there). Command substitution is not.
 */
const onlyVariables = (text: string) => /\$/.test(text) && !/\$\(|`|<\(|>\(/.test(text);

/** How nested shell text runs, as a wrapper hands it over: its `$0 $1 …`, its variables, raised rights or not. */
type NestedRun = Partial<Pick<ShellText, "positional" | "env" | "elevated">>;

function judgeShellText(code: Word, s: LineState, cwd: string | undefined, why: string, run: NestedRun = {}): void {
  if (!code.literal && !onlyVariables(code.text)) {
    const evaluated = why.endsWith("eval");
    if (evaluated && LINE.INIT_IDIOM.test(code.text.trim().replace(/^`(.*)`$/s, "$$($1)"))) return;
    // eval's words are the command itself: what it runs is a command computed at run time
    const runner = why.split(" ").at(-1) ?? "";
    const computed = evaluated || isShell(runner) ? substitutedCode(code.text) : undefined;
    // awk's `print | "sh"`: inline code that runs the commands it computes
    const fallback = SHELL_SINKS[runner] ? "inline_code_unanalysable" : "shell_input";
    const key = computed ?? (evaluated ? "computed_command" : fallback);
    return add(s, key, `${why}: shell text only known when it runs`);
  }
  if (s.depth >= LINE.MAX_DEPTH) return add(s, "unanalysable", "nested too deeply");
  const vars = new Map([...(run.env ?? []), ...(run.positional ?? []).map((w, i) => [String(i), w] as const)]);
  const elevated = s.elevated || !!run.elevated;
  judgeLine(code.text, { ...s, depth: s.depth + 1, elevated, ctx: { ...s.ctx, cwd } }, vars);
}

/** Judges a file's (or a here-doc's) shell text, when known. */
const judgeScript = (text: string | undefined, s: LineState, cwd: string | undefined, why: string) =>
  text === undefined ? undefined : judgeShellText(literalWord(text), s, cwd, why);

/** The class of shell text a substitution computes: downloaded, decoded, or neither (SUBSTITUTED_CODE). */
const substitutedCode = (text: string): ClassKey | undefined => SUBSTITUTED_CODE.find(([re]) => re.test(text))?.[1];

/** A shell or interpreter reading its program from standard input. */
function judgeStdinProgram(inv: Invocation, s: LineState, named = false): void {
  const input = inv.command.redirects.find((r) => /^<&?$/.test(r.op) && !LINE.STDIN_FILE.test(r.target.text));
  // `bash < FILE` runs FILE, as `bash FILE` does: judged when its text is known. Naming the input as the script
  // (`. /dev/stdin < FILE`) runs a file of unknown text the way no plain run would: asked about.
  if (input) {
    const readable = input.target.literal && !/^&?\d+$/.test(input.target.text);
    const text = readable ? fileText(input.target, s, inv.command.cwd) : undefined;
    if (!readable || (named && text === undefined))
      return add(s, "shell_input", `${inv.program} runs a file's text as commands`);
    return judgeScript(text, s, inv.command.cwd, inv.program);
  }
  const feeders = upstream(inv.command).map(programOf);
  if (feeders.some((p) => LINE.FETCHERS.has(p)))
    return add(s, "remote_code_exec", `${inv.program} runs what a download printed`);
  const printed = feeders.length === 1 && /^(echo|printf)$/.test(feeders[0]!);
  if (!printed && feeders.some((p) => LINE.DECODERS.test(p)))
    return add(s, "decoded_code_exec", `${inv.program} runs decoded text`);
  const source = inv.command.stdin ?? literalOutput(inv.command.pipedFrom, s);
  if (!source) return inv.command.pipedFrom ? add(s, "shell_input", `${inv.program} runs text from a pipe`) : undefined;
  if (runsShellText(inv.program)) {
    if (!source.literal && !onlyVariables(source.text))
      return add(s, "shell_input", `${inv.program} runs text only known when it runs`);
    // a line that is one variable (`$CMD`) is text only known when it runs; the other lines are judged
    if (!source.literal && LINE.VARIABLE_LINE.test(source.text))
      add(s, "shell_input", `${inv.program} runs a variable's text`);
    const text = source.text.replace(new RegExp(LINE.VARIABLE_LINE, "gm"), "");
    const rest = { ...source, text, literal: source.literal || !text.includes("$") };
    // `bash -s -- ARGS <<EOF`: the text's `$1 …`
    const positional = [inv.word, ...inv.args.filter((w) => !w.text.startsWith("-"))];
    judgeShellText(rest, s, inv.command.cwd, inv.program, { positional });
  } else if (!source.literal && /\$\(|`|^\s*\$\{?\w+\}?\s*$/.test(source.text)) runsUnknownCode(inv, s);
  else judgeCode(source.text, s);
}

/** What `echo`/`printf`/`cat FILE` prints, when known. */
function literalOutput(cmd: SimpleCommand | undefined, s: LineState): Word | undefined {
  if (!cmd) return undefined;
  const p = programOf(cmd);
  if (p === "echo" || p === "printf") {
    const args = cmd.argv.slice(1).filter((w) => !/^-[neE]+$/.test(w.text));
    const texts = args.map((w) => w.text);
    const joined = texts.join(" ");
    // echo decodes `\x72` only with -e (or in shells whose echo does): what runs is not known for sure
    const escapes = p === "echo" && !cmd.argv.some((w) => /^-[nE]*e[neE]*$/.test(w.text)) && /\\(x|u|0)/.test(joined);
    const text = p === "printf" ? printfOutput(texts) : decodeAnsiC(joined);
    return { text, literal: !escapes && args.every((w) => w.literal), glob: false };
  }
  if (p === "cat" && cmd.argv[1] && cmd.argv[1].text !== "-") {
    const text = fileText(cmd.argv[1], s, cmd.cwd);
    return text === undefined ? undefined : literalWord(text);
  }
  // a filter (`rev`, `tr`) prints something other than its input
  return p === "cat" || p === "tee" ? cmd.stdin : undefined;
}

function fileText(word: Word, s: LineState, cwd: string | undefined): string | undefined {
  const path = absolutePath(word, { ...s.ctx, cwd });
  return path === undefined ? undefined : (s.written.get(path) ?? s.opts.readWritten?.(path));
}

/** A write to `target` a rule flags (a terminal is no disk). */
function judgeWriteTo(target: Word, ctx: PathContext, s: LineState, why = "writes"): void {
  const key = judgeWrite(target, ctx);
  if (key && !(key === "disk_write" && target.text.startsWith("/dev/tty"))) add(s, key, `${why} ${target.text}`);
}

/** Judges an interpreter's program text (inline.ts), when known. */
function judgeCode(code: string | undefined, s: LineState, argv?: string[]): void {
  if (code === undefined) return;
  const inline = analyseInlineCode(code, argv);
  if (inline.key) add(s, inline.key, inline.reason);
  for (const p of inline.deletes) {
    const c = p === "\u0000computed" ? "unknown" : classifyPath(literalWord(p), s.ctx);
    if (c === "system" || (c === "home" && /^~\/?$/.test(p))) add(s, "delete_system_path", `code deletes ${p}`);
    else if (c !== "inside" && c !== "temp" && c !== "unknown") add(s, "delete_outside_workdir", `code deletes ${p}`);
  }
  for (const p of inline.writes) judgeWriteTo(literalWord(p), s.ctx, s, "code writes");
  for (const text of inline.shell) judgeShellText(literalWord(text), s, s.ctx.cwd, "code runs a shell");
}

/** A compiler run keeps its sources' text for the program it builds; running that program judges them. */
function judgeBuilt(inv: Invocation, s: LineState): void {
  const ctx = { ...s.ctx, cwd: inv.command.cwd };
  const build = compiledFrom(inv);
  if (build) {
    const sources = build.sources.map((w) => fileText(w, s, inv.command.cwd));
    const texts = [...sources, build.stdin].filter((t) => t !== undefined);
    const out = absolutePath(build.output, ctx);
    if (texts.length && out) s.written.set(`${BUILT}${out}`, texts.join("\n"));
    return;
  }
  // `go run x.go`: built and run at once
  if (inv.program === "go" && inv.args[0]?.text === "run")
    for (const w of inv.args.filter((a) => /\.go$/.test(a.text))) judgeCode(fileText(w, s, inv.command.cwd), s);
  const path = inv.word.text.includes("/") ? absolutePath(inv.word, ctx) : undefined;
  if (path !== undefined) judgeCode(s.written.get(`${BUILT}${path}`), s);
}

/** `python -c CODE`, `node -e CODE`, `python script.py` (a script written earlier). */
function judgeInterpreter(inv: Invocation, s: LineState): void {
  const flag = inv.args.findIndex((w) => /^-[a-zA-Z]*[ceE]$|^--eval$|^--command$/.test(w.text));
  const code = flag >= 0 ? inv.args[flag + 1] : undefined;
  if (code) return code.literal ? judgeCode(code.text, s) : runsUnknownCode(inv, s);
  const script = inv.args.find((w) => !w.text.startsWith("-"));
  if (!script) return judgeStdinProgram(inv, s);
  // `python3 <(cat x.py)`: the program is a command's output, as `bash <(…)` is
  if (!script.literal && script.text.startsWith("<("))
    return add(s, substitutedCode(script.text) ?? "shell_input", `${inv.program} runs the output of ${script.text}`);
  judgeCode(fileText(script, s, inv.command.cwd), s);
}

/** What `<(echo …)` / `<(printf …)` prints, when it is one such command of known words. */
function printedBySubstitution(text: string, s: LineState): Word | undefined {
  const inner = /^<\((.*)\)$/s.exec(text)?.[1];
  if (!inner) return undefined;
  const { commands } = modelCommandLine(inner, { cwd: s.ctx.cwd ?? s.ctx.workdir ?? NO_WORKDIR });
  const only = commands.length === 1 ? commands[0] : undefined;
  return only && /^(echo|printf)$/.test(programOf(only)) && !only.pipedFrom ? literalOutput(only, s) : undefined;
}

function judgeRunsFile(inv: Invocation, s: LineState): void {
  if (syntaxCheckOnly(inv)) return;
  // `bash -s ARGS`: the program is standard input, the words its arguments
  const stdin = runsShellText(inv.program) && inv.args.some((w) => /^-[a-zA-Z]*s[a-zA-Z]*$/.test(w.text));
  const script = runsShellText(inv.program) ? inv.args.find((w) => !stdin && !w.text.startsWith("-")) : inv.word;
  if (!script || LINE.STDIN_FILE.test(script.text) || script.text === "-")
    return judgeStdinProgram(inv, s, !!script?.text.startsWith("/"));
  if (!script.literal && /^<\(|^\$\(/.test(script.text)) {
    if (LINE.INIT_IDIOM.test(script.text)) return;
    const printed = printedBySubstitution(script.text, s);
    if (printed?.literal) return judgeShellText(printed, s, inv.command.cwd, `${inv.program} ${script.text}`);
    return add(s, substitutedCode(script.text) ?? "shell_input", `${inv.program} runs the output of ${script.text}`);
  }
  judgeScript(fileText(script, s, inv.command.cwd), s, inv.command.cwd, `script ${script.text}`);
}

/** A recipe line as the shell runs it: `@` (silent) and `-` (errors ignored) dropped. */
const recipeLine = (line: string) => line.trim().replace(/^[@-]+/, "");

/** A Makefile's recipe lines: tab-led (or led by `.RECIPEPREFIX`), and `target: ; cmd`. */
function makeRecipes(text: string): string[] {
  const prefix = /^\.RECIPEPREFIX\s*:?=\s*(\S)/m.exec(text)?.[1] ?? "\t";
  return text.split("\n").flatMap((l) => {
    const recipe = l.startsWith(prefix) ? l.slice(1) : /^[^\s#=][^=]*?:[^=]*?;(.+)$/.exec(l)?.[1];
    return recipe === undefined ? [] : [recipeLine(recipe).replace(/\$\$/g, "$")];
  });
}

/** package.json's scripts (a file that is not JSON has none). */
function packageScripts(text: string): string[] {
  try {
    return Object.values((JSON.parse(text) as { scripts?: object }).scripts ?? {}).filter((v) => typeof v === "string");
  } catch {
    return [];
  }
}

/** How the commands a task runner runs are read from its file (TASK_FILES names the reader). */
const EXTRACTORS: Record<string, (text: string) => string[]> = {
  make: makeRecipes,
  // a justfile's recipe lines are indented under a recipe name
  recipes: (text) => text.split("\n").flatMap((l) => (/^\s+\S/.test(l) ? [recipeLine(l)] : [])),
  // a Taskfile's `cmds:` entries (`- cmd`)
  yaml: (text) => [...text.matchAll(/^\s*-\s+(?:cmd:\s*)?(.+)$/gm)].map((m) => m[1]!.replace(/^(['"])(.*)\1$/, "$2")),
  package: packageScripts,
};

function judgeTaskFiles(inv: Invocation, s: LineState): void {
  const spec = LINE.TASK_FILES[inv.program];
  if (!spec || (spec.verbs && !spec.verbs.test(inv.args[0]?.text ?? ""))) return;
  // `make -f FILE` (the grammar drops a last `-`: `make -f - <<EOF` reads standard input)
  const named = inv.args.flatMap((w, i) => (w.text === spec.fileOption ? [inv.args[i + 1]?.text ?? "-"] : []));
  for (const name of [...named, ...spec.files]) {
    const stdin = name === "-" || LINE.STDIN_FILE.test(name);
    const text = stdin ? inv.command.stdin?.text : fileText(literalWord(name), s, inv.command.cwd);
    if (text === undefined) continue;
    const body = spec.extract ? EXTRACTORS[spec.extract]!(text).join("\n") : text;
    if (/\.(py|gradle|kts)$/.test(name)) judgeCode(body, s);
    else judgeShellText(literalWord(body), s, inv.command.cwd, `${inv.program} runs ${name}`);
  }
}

/** Programs run with raised rights whose effect no rule read: asked about (ELEVATED_EXEMPT lists the known ones). */
function judgeElevated(inv: Invocation, s: LineState, before: number): void {
  if (!inv.elevated || s.findings.length > before || ELEVATED_EXEMPT.has(inv.program) || rulesFor(inv.program).length)
    return;
  if (READ_ONLY_MODES[inv.program]?.test(inv.args.map((w) => w.text).join(" "))) return;
  // an interpreter's inline code is read by inline.ts
  if (interprets(inv.program) && inv.args.some((w) => /^-[a-zA-Z]*[ceE]$|^--eval$/.test(w.text))) return;
  add(s, "elevated_unreadable", `${inv.program} runs with raised rights and no rule reads what it does`);
}

function judgeInvocationEffects(given: Invocation, s: LineState): void {
  const inv = s.elevated && !given.elevated ? { ...given, elevated: true } : given;
  const before = s.findings.length;
  const ctx = { ...s.ctx, cwd: inv.command.cwd };
  // a trial run changes no remote state: the program's remote rows are dropped
  const remoteRows = isTrialRun(inv) ? rulesFor(inv.program).filter((r) => r.effect === "remote") : [];
  for (const f of judgeInvocation(inv, ctx)) if (!remoteRows.some((r) => r.key === f.key)) s.findings.push(f);
  if (runsShellText(inv.program) || inv.word.text.includes("/")) judgeRunsFile(inv, s);
  // BASH_ENV (bash) and ENV (sh in POSIX mode) name a file the shell runs before its own commands.
  if (isShell(inv.program))
    for (const name of STARTUP_FILE_VARIABLES) {
      const file = inv.command.env.get(name);
      if (file?.text) judgeRunsFile({ ...inv, program: "source", args: [file] }, s);
    }
  if (interprets(inv.program)) judgeInterpreter(inv, s);
  judgeBuilt(inv, s);
  judgeTaskFiles(inv, s);
  addIf(s, "resource_exhaustion", exhaustion(inv));
  // Remote state, exfiltration, fetched code (remote.ts, exfil.ts, fetch_exec.ts), one view of the line for all.
  const view = {
    ctx,
    lineKey: s.findings,
    notes: s.notes,
    fileText: (w: Word, cwd?: string) => fileText(w, s, cwd),
    printed: (c?: SimpleCommand) => literalOutput(c, s),
    judgeShell: (text: Word, why: string, elevated = false) =>
      judgeShellText(text, s, inv.command.cwd, why, { elevated }),
  };
  for (const judge of [judgeRemote, judgeFetchedCode, judgeExfil]) s.findings.push(...judge(inv, view));
  const program = inlineProgram(inv);
  if (program && inv.args.some((w) => w.text === program.code && unknownCode(w))) runsUnknownCode(inv, s);
  else if (program) judgeCode(program.code, s, program.argv);
  judgeElevated(inv, s, before);
}

/**
 * Records what a command leaves for later commands of the line, and judges its writes: files it writes
 * (here-docs and `tee` keep the text they are fed: a script run later), a link makes a later path through it
 * a path under its target, and temporary directories the line makes are its own.
 */
function recordWrites(cmd: SimpleCommand, s: LineState): void {
  const ctx = { ...s.ctx, cwd: cmd.cwd };
  const p = programOf(cmd);
  for (const r of cmd.redirects) {
    if (!r.op.includes(">") || /^&?\d*$/.test(r.target.text)) continue;
    const path = absolutePath(r.target, ctx);
    if (path === undefined) continue;
    // what cat/echo/printf print is the file's text: a script run later on the line is judged from it
    const text = p === "tee" ? undefined : literalOutput(cmd, s)?.text;
    s.written.set(path, text);
    if (LINE.AUTORUN.test(path)) judgeScript(text, s, cmd.cwd, `${path} runs later`);
    if (/^(:|true)?$/.test(p) && r.op === ">" && LINE.DATA_FILE.test(path))
      add(s, "overwrite_data_file", `empties ${path}`);
    judgeWriteTo(r.target, ctx, s);
  }
  const operands = cmd.argv.slice(1).filter((w) => !w.text.startsWith("-"));
  if (p === "tee") {
    const text = cmd.stdin?.literal ? cmd.stdin.text : literalOutput(cmd.pipedFrom, s)?.text;
    for (const path of operands.map((w) => absolutePath(w, ctx))) if (path !== undefined) s.written.set(path, text);
  }
  if (p === "ln" && operands.length === 2) {
    const [target, link] = operands.map((w) => absolutePath(w, ctx));
    if (target && link && target !== link) s.ctx.links.set(link.replace(/(.)\/$/, "$1"), target);
  }
  if (p === "mkdir")
    for (const key of operands.map((w) => pathKey(w, ctx))) if (/^\/(var\/)?tmp\/[^/]/.test(key)) s.ctx.made.add(key);
}

/** A function or alias the line defined runs its text with the call's arguments; `alias` records one. */
function judgeDefinedCall(inv: Invocation, line: CommandLine, s: LineState): boolean {
  const body = line.functionBodies.get(inv.program);
  if (body !== undefined && !s.calling.has(inv.program)) {
    const calling = new Set([...s.calling, inv.program]);
    const positional = [inv.word, ...inv.args];
    judgeShellText(literalWord(body), { ...s, calling }, inv.command.cwd, `function ${inv.program}`, { positional });
  }
  if (line.functions.has(inv.program)) return true;
  const alias = s.aliases.get(inv.program);
  if (alias) {
    const text = [alias.text, ...inv.args.map((w) => w.text)].join(" ");
    judgeShellText({ ...alias, text }, s, inv.command.cwd, `alias ${inv.program}`);
    return true;
  }
  for (const w of inv.program === "alias" ? inv.args : []) {
    const [, name, text] = /^([\w.:-]+)=(.*)$/s.exec(w.text) ?? [];
    if (name !== undefined) s.aliases.set(name, { ...w, text: text! });
  }
  return false;
}

function judgeModel(line: CommandLine, s: LineState): void {
  for (const r of line.redirects) if (r.op.includes(">")) judgeWriteTo(r.target, s.ctx, s);
  for (const cmd of line.commands) {
    const { invocations, shellTexts } = unwrap(cmd);
    addIf(s, "resource_exhaustion", fanOut(cmd));
    for (const t of shellTexts)
      judgeShellText(t.code, s, cmd.cwd, t.via.join(" "), { ...t, env: new Map([...line.vars, ...(t.env ?? [])]) });
    if (!invocations.length) s.findings.push(...judgeRemoteShellExfil(cmd, { ctx: s.ctx, lineKey: s.findings }));
    for (const inv of invocations) if (!judgeDefinedCall(inv, line, s)) judgeInvocationEffects(inv, s);
    recordWrites(cmd, s);
  }
}

/** `f(){ f | f & }`: the body calls the function into a pipe or the background (a string search: names may be huge). */
function callsItselfAsync(name: string, body: string): boolean {
  for (let at = body.indexOf(name); at >= 0; at = body.indexOf(name, at + 1)) {
    if (at > 0 && !/[\s;{|&(]/.test(body[at - 1]!)) continue;
    const after = body.slice(at + name.length, at + name.length + 64).trimStart();
    if (after.startsWith("|") || (after.startsWith("&") && !after.startsWith("&&"))) return true;
  }
  return false;
}

function judgeLine(source: string, s: LineState, vars?: Variables): CommandLine {
  const line = modelCommandLine(source, { cwd: s.ctx.cwd ?? s.ctx.workdir ?? NO_WORKDIR, vars });
  const selfPiping = [...line.functionBodies].some(([name, body]) => callsItselfAsync(name, body));
  if (selfPiping || LINE.FORK_LOOPS.test(source))
    add(s, "fork_bomb", "a function that pipes into itself in the background");
  addIf(s, "resource_exhaustion", loopExhaustion(line));
  judgeModel(line, s);
  return line;
}

/** Judges one command line as the gate does. */
export function judgeCommand(command: string, opts: JudgeOptions = {}): Verdict {
  const s = newLineState(opts);
  // A line that leaves a quote open is refused by bash, but says what it meant: judged with the quote closed too.
  const { openQuote } = judgeLine(command, s);
  if (openQuote) judgeLine(command + openQuote, s);
  const keys = [...new Set(s.findings.map((f) => f.key))];
  if (!keys.length) return { dangerous: false, findings: [] };
  const matches = keys.map((key) => ({ key, description: CLASSES[key] }));
  return { dangerous: true, patternKey: keys[0]!, description: matches[0]!.description, matches, findings: s.findings };
}
