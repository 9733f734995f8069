/**
 * Running code that was fetched, decoded or hidden in a setting: files a line downloads (`curl -o`,
 * `wget`, `git clone`, `… | base64 -d > f`) and later runs (`sh f`, `./f`, `dpkg -i f`, `LD_PRELOAD=f`),
 * `<(curl …)` handed to an interpreter, package sources outside the trusted hosts, shell text carried by
 * settings (`GIT_PAGER=…`, `git config alias.x '!…'`), and PowerShell's encoded or downloaded commands.
 * The tables are in rules/fetch.ts.
 */
import type { ClassKey } from "./classes.js";
import type { Finding, LineView } from "./judges.js";
import { optionAt, optionValue, upstream } from "./model.js";
import { absolutePath, classifyPath, within } from "./paths.js";
import * as table from "./rules/fetch.js";
import { basename, programOf, type Invocation } from "./unwrap.js";
import { hostOf, literalWord, texts, type Word } from "./words.js";

type CodeKey = Extract<ClassKey, "remote_code_exec" | "decoded_code_exec">;

/** Per line: files holding fetched or decoded code, and whether a fetched archive was unpacked. */
interface FetchState {
  files: Map<string, CodeKey>;
  unpacked?: CodeKey;
}

const STATES = new WeakMap<object, FetchState>();

const stateOf = (view: LineView): FetchState =>
  STATES.get(view.lineKey) ?? STATES.set(view.lineKey, { files: new Map() }).get(view.lineKey)!;

const pathOf = (text: string, view: LineView) =>
  absolutePath(literalWord(text.replace(/^\$PWD\/|^\$\{PWD\}\//, "./")), view.ctx);

const isFetched = (w: Word) => table.FETCHED_WORD.test(w.text);

/** The files a downloader writes (`-o F`, `-O`, `-P DIR`, wget's default) or a clone makes (`git clone URL [DIR]`). */
function downloadedFiles(inv: Invocation): string[] {
  const t = texts(inv.args);
  const urlAt = t.findIndex((w) => table.URL_WORD.test(w));
  const urlName = urlAt < 0 ? "" : basename(t[urlAt]!.replace(/[?#].*$/, "").replace(/\/+$/, ""));
  const clone = table.CLONERS[inv.program];
  if (clone) {
    const dir = t[urlAt + 1];
    if (!clone.includes(t[0] ?? "") || urlAt < 0) return [];
    return [dir && !dir.startsWith("-") ? dir : urlName.replace(/\.git$/, "")];
  }
  const spec = table.DOWNLOAD_OUTPUT[inv.program];
  if (!spec) return [];
  const named = t.map((_, i) => optionAt(t, i, spec.file));
  const bundled = (o: string) => new RegExp(`^-[a-zA-Z]*${o[1]}[a-zA-Z]*$`);
  const lastUrlName = t.findLastIndex((w) => spec.urlName.some((o) => w === o || (o[1] !== "-" && bundled(o).test(w))));
  const lastNamed = named.findLastIndex((f) => f !== undefined);
  // the URL's own name when asked for after the last file named, or by default when neither is
  const byUrl = lastUrlName < 0 && lastNamed < 0 ? spec.byDefault : lastUrlName >= lastNamed;
  const files = named.filter((f): f is string => f !== undefined && f !== "-");
  if (byUrl && urlName) files.push(urlName);
  const dir = optionValue(t, spec.dir);
  return files.map((f) => (dir && !f.startsWith("/") ? `${dir}/${f}` : f));
}

/** Records what this invocation writes that holds fetched or decoded code; returns hooks it writes. */
function record(inv: Invocation, view: LineView, st: FetchState): (CodeKey | Word | undefined)[] {
  const hooks: (CodeKey | Word | undefined)[] = [];
  const chain = [inv.program, ...upstream(inv.command).map(programOf)];
  const key: CodeKey | undefined = chain.some((p) => table.DOWNLOADERS.has(p))
    ? "remote_code_exec"
    : chain.some((p) => table.DECODER_PROGRAMS.test(p))
      ? "decoded_code_exec"
      : undefined;
  const keep = (text: string, k: CodeKey) => {
    const abs = pathOf(text, view);
    if (abs) st.files.set(abs, k);
  };
  for (const f of downloadedFiles(inv)) keep(f, "remote_code_exec");
  for (const r of inv.command.redirects) {
    if (!r.op.includes(">") || /^&?\d*$/.test(r.target.text)) continue;
    if (key) keep(r.target.text, key);
    if (table.HOOK_FILES.test(pathOf(r.target.text, view) ?? "")) hooks.push(key ?? view.printed(inv.command));
  }
  const into = table.UNPACK_INTO[inv.program];
  const from = into && (fetchedArg(inv, view, st) ?? (key === "remote_code_exec" ? key : undefined));
  if (into && from) {
    const dir = optionValue(texts(inv.args), into);
    if (dir) keep(dir, from);
    else st.unpacked = from;
  }
  return hooks;
}

/** The class of the first argument naming fetched code, if any. */
function fetchedArg(inv: Invocation, view: LineView, st: FetchState): CodeKey | undefined {
  for (const w of inv.args) {
    if (w.text.startsWith("-") && !w.text.includes("=")) continue;
    const abs = pathOf(w.text.replace(/^[\w-]+=/, ""), view);
    if (abs === undefined) continue;
    for (const [file, key] of st.files) if (within(abs, file)) return key;
  }
}

/** The file a shell or interpreter runs: its first operand (`-f FILE` for make), none with `-m`/`-c`/`-e`. */
function scriptArg(args: Word[]): Word | undefined {
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === "-f" || t === "--file") return args[i + 1];
    if (/^-[a-zA-Z]*[mceE]$|^--(eval|command)$/.test(t)) return undefined;
    if (!t.startsWith("-")) return args[i];
  }
}

/** No script, no inline code: the program is read from standard input. */
function readsProgramFromStdin(args: Word[]): boolean {
  if (args.some((w) => /^-[a-zA-Z]*[mceEr]$|^--(eval|command)$/.test(w.text))) return false;
  const script = scriptArg(args);
  return !script || script.text === "-" || script.text === "/dev/stdin";
}

/** Running fetched code: the program word, a shell or interpreter's script, a package file, a preload. */
function runsFetched(inv: Invocation, view: LineView, st: FetchState): CodeKey | undefined {
  const script = table.RUNS_FILE_ARG.test(inv.program) ? scriptArg(inv.args) : undefined;
  const env = [...inv.command.env];
  const named = [
    ...(inv.word.text.includes("/") ? [inv.word] : []),
    ...(table.INSTALLS_FILE.test(inv.program) ? inv.args.filter((w) => table.PACKAGE_FILE.test(w.text)) : []),
    ...(script ? [script] : []),
    ...env.flatMap(([name, value]) => (table.PRELOAD_ENV.test(name) ? [value] : [])),
  ];
  const key = fetchedArg({ ...inv, args: named }, view, st);
  if (key) return key;
  if (st.unpacked && /^\.{1,2}\//.test(inv.word.text)) return st.unpacked;
  // a download as the script, its standard input, the here-doc it reads, or the start-up file (BASH_ENV)
  const input = [...inv.args, ...inv.command.redirects.filter((r) => r.op === "<").map((r) => r.target)];
  const startUp = env.filter(([name]) => /^(BASH_ENV|ENV)$/.test(name)).map(([, value]) => value);
  const hereDoc = /\$\(\s*(curl|wget)\b/.test(inv.command.stdin?.text ?? "");
  if ((table.RUNS_FILE_ARG.test(inv.program) && (input.some(isFetched) || hereDoc)) || startUp.some(isFetched))
    return "remote_code_exec";
  return fetchedArguments(inv) ?? pipedFetch(inv);
}

/** A download read as the commands xargs runs (`xargs -a <(curl …)`) or as the packages an installer installs. */
function fetchedArguments(inv: Invocation): CodeKey | undefined {
  const words = texts(inv.command.argv);
  const fileOf = words.findIndex((w, i) => table.FETCHED_WORD.test(w) && /^(-a|--arg-file)$/.test(words[i - 1] ?? ""));
  if (basename(words[0] ?? "") === "xargs" && fileOf > 0) return "remote_code_exec";
  const installs = table.INSTALLERS.test(inv.program) && /^(install|add|i)$/.test(inv.args[0]?.text ?? "");
  return installs && inv.args.some(isFetched) ? "remote_code_exec" : undefined;
}

/** Downloaded or decoded text piped into a program that runs it (a shell, a SQL client, `kubectl apply -f -`). */
function pipedFetch(inv: Invocation): CodeKey | undefined {
  const runsStdin =
    table.PIPE_EXECUTORS.test(inv.program) ||
    (table.RUNS_FILE_ARG.test(inv.program) && readsProgramFromStdin(inv.args)) ||
    (inv.program !== "curl" &&
      inv.args.some((w) => w.text === "-" && inv.args.some((v) => /^(-f|--filename)$/.test(v.text))));
  if (!runsStdin || inv.args.some((w) => /^--dry-run/.test(w.text))) return undefined;
  for (const c of upstream(inv.command)) {
    const words = c.argv.map((w) => basename(w.text));
    const p = words[0] === "busybox" ? (words[1] ?? "") : (words[0] ?? "");
    if (table.DOWNLOADERS.has(p) && !c.argv.some((w) => table.LOCAL_HOST.test(hostOf(w.text))))
      return "remote_code_exec";
    if (table.DECODER_PROGRAMS.test(p) && c.argv.some((w) => /^(-d|--decode|-D|-r)$/.test(w.text)))
      return "decoded_code_exec";
  }
}

/**
 * A package source a task should not install from: plain http to another host, a bare IP, an unknown host,
 * or a repository (`git+https://…`, `github:x/y`) of an owner nobody vouches for.
 */
function untrustedSource(word: string): boolean {
  const url = word.replace(/^[\w.-]+\s*@\s*|^--[\w-]+=/g, "").replace(/^(github|gitlab):/i, "https://$1.com/");
  if (!/^(git\+)?(https?|ftp|oci):\/\//i.test(url)) return false;
  const host = hostOf(url);
  if (table.LOCAL_HOST.test(host)) return false;
  if (/^http:|^git\+http:/i.test(url) || /^\d+(\.\d+){3}$/.test(host) || !table.TRUSTED_HOSTS.test(host)) return true;
  const owner = /^(?:[a-z+]+:\/\/)?[^/]+\/([^/]+)/i.exec(url.replace(/^git\+/, ""))?.[1] ?? "";
  return table.CODE_HOSTS.test(host) && !table.VOUCHED_OWNERS.has(owner.toLowerCase());
}

/**
 * `pip install -i http://…`, `npm config set registry …`, `PIP_INDEX_URL=…`, `npx URL` (`kubectl apply -f URL` is a
 * row of rules/remote_exposure.ts).
 */
function installsFromUntrusted(inv: Invocation): boolean {
  for (const [name, value] of inv.command.env)
    if (table.SOURCE_ENV.test(name) && untrustedSource(value.text)) return true;
  const t = texts(inv.args);
  if (table.URL_WORD.test(inv.word.text)) return untrustedSource(inv.word.text);
  const runner = table.REMOTE_SCRIPT_RUNNERS[inv.program];
  if (runner && runner.verbs.includes(t[0] ?? ""))
    return t.some((w) => runner.powers.test(w)) && t.some((w) => table.URL_WORD.test(w) && untrustedSource(w));
  if (!table.INSTALLERS.test(inv.program) && !table.INSTALLS_FILE.test(inv.program)) return false;
  if (t[0] === "config" && t[1] === "set") {
    const [key, value] = t[2]?.includes("=") ? t[2].split(/=(.*)/) : [t[2], t[3]];
    return table.SOURCE_CONFIG_KEYS.test(key ?? "") && untrustedSource(value ?? "");
  }
  return t.some(
    (w, i) =>
      untrustedSource(w) ||
      (table.SOURCE_OPTIONS.test(t[i - 1] ?? "") && /^\d+(\.\d+){3}/.test(w)) ||
      (table.TRUSTED_HOST_OPTIONS.test(t[i - 1] ?? "") && !table.LOCAL_HOST.test(w) && !table.TRUSTED_HOSTS.test(w)),
  );
}

const splitSetting = (w: string) => w.split(/=(.*)/s).slice(0, 2) as [string, string];

/** Settings an invocation makes: `git -c K=V`, `git config K V`, `npm pkg set scripts.x=…` (as a shell alias). */
function settingsOf(program: string, t: string[]): [string, string][] {
  if (/^(npm|pnpm)$/.test(program) && t[0] === "pkg" && t[1] === "set")
    return t.slice(2).flatMap((w) => (/^scripts\./.test(w) ? [["alias.script", `!${splitSetting(w)[1] ?? ""}`]] : []));
  if (program !== "git") return [];
  const config = t.slice(t.indexOf("config") + 1).filter((w) => !w.startsWith("-"));
  const set = t.includes("config") && config.length >= 2 ? [[config[0]!, config[1]!] as [string, string]] : [];
  return [...t.filter((w, i) => t[i - 1] === "-c" && w.includes("=")).map(splitSetting), ...set];
}

/** Shell text in settings: `GIT_PAGER=…`, `git config alias.x '!…'`, `git -c core.pager=…`, npm scripts. */
function configuredShell(inv: Invocation, view: LineView): Finding | undefined {
  for (const w of inv.args)
    for (const m of table.SHELL_OPTIONS.map((re) => re.exec(w.text)))
      if (m?.[1]) view.judgeShell({ ...w, text: m[1].replace(/^['"]|['"]$/g, "") }, `option ${w.text.slice(0, 30)}`);
  let hooks: Finding | undefined;
  for (const [key, value] of settingsOf(inv.program, texts(inv.args))) {
    if (/^core\.hookspath$/i.test(key) && classifyPath(literalWord(value), view.ctx) !== "inside")
      hooks = { key: "shell_input", reason: `git runs hooks from ${value}, outside the working directory` };
    const store = /^credential\.helper$/i.test(key) && /^store\b.*--file[= ]\s*(\S+)/.exec(value)?.[1];
    if (store && classifyPath(literalWord(store), view.ctx) === "temp")
      hooks = { key: "credential_exfiltration", reason: `git stores credentials in ${store}, readable by all` };
    // an alias of git words (no `!`) is expanded where it is used (remote.ts)
    const gitWords = /^alias\./i.test(key) && !value.startsWith("!");
    if (table.GIT_SHELL_KEYS.test(key) && !gitWords)
      view.judgeShell(literalWord(value.replace(/^!/, "")), `git setting ${key}`);
  }
  return hooks;
}

/** PowerShell's `-EncodedCommand`, and `-Command` text that downloads and runs (`iwr … | iex`). */
function powershell(inv: Invocation): CodeKey | undefined {
  const { program, encoded, runs, downloads } = table.POWERSHELL;
  if (!program.test(inv.program)) return undefined;
  if (inv.args.some((w) => encoded.test(w.text))) return "decoded_code_exec";
  const text = texts(inv.args).join(" ");
  return runs.test(text) && downloads.test(text) ? "remote_code_exec" : undefined;
}

/** Code run from what fetched or decoded it, or from a substitution an interpreter reads as its script. */
function runsComputed(inv: Invocation, view: LineView, st: FetchState): Finding | undefined {
  const runs = syntaxCheckOnly(inv) ? undefined : (runsFetched(inv, view, st) ?? powershell(inv));
  const what = runs === "decoded_code_exec" ? "decoded" : "downloaded";
  return runs && { key: runs, reason: `${inv.program} runs ${what} code` };
}

/** `sudo PYTHONPATH=/tmp/x python3 …`: code loaded from outside the task under raised rights. */
function elevatedCodePath(inv: Invocation, view: LineView): Finding | undefined {
  const loads = inv.command.argv.map((w) => table.CODE_PATH_ENV.exec(w.text)?.[2]).find((v) => v !== undefined);
  if (!inv.elevated || !loads || classifyPath(literalWord(loads), view.ctx) === "inside") return undefined;
  return { key: "privilege_grant", reason: `${inv.program} runs with raised rights, loading code from ${loads}` };
}

/** `bash -n`: the shell only reads the text for syntax, running none of it. */
export const syntaxCheckOnly = (inv: Invocation) =>
  /^(sh|bash|zsh|dash|ksh|ash)$/.test(inv.program) && inv.args.some((w) => /^-[a-zA-Z]*n[a-zA-Z]*$/.test(w.text));

/** Every fetched-code finding of one invocation (and records what it writes for later commands). */
export function judgeFetchedCode(inv: Invocation, view: LineView): Finding[] {
  const st = stateOf(view);
  const out = [runsComputed(inv, view, st), configuredShell(inv, view)];
  if (installsFromUntrusted(inv))
    out.push({ key: "remote_code_exec", reason: `${inv.program} installs from an untrusted source` });
  out.push(elevatedCodePath(inv, view));
  for (const hook of record(inv, view, st)) {
    if (typeof hook === "string") out.push({ key: hook, reason: "writes fetched code into a git hook" });
    else if (hook) view.judgeShell(hook, "a git hook written on this line");
  }
  return out.filter((f): f is Finding => f !== undefined);
}
