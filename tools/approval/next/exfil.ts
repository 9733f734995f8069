/**
 * Credential exfiltration: a secret (a credential file, a secret variable, a token a CLI prints, the
 * whole environment) sent off the machine, directly or staged through files across `&&`/`;`: posted or
 * uploaded (`curl -d @- / -T / -F`), piped to a socket or another host (`nc`, `socat`, `ssh`), copied
 * (`scp`, `rsync`), mailed, looked up as a DNS name, pasted as a gist, or committed and pushed. Public
 * keys, local destinations and a project's own secrets copied to a server (a deploy) pass. The tables
 * are in rules/exfil.ts (`table.*`).
 */
import type { Finding } from "./judges.js";
import { upstream, type SimpleCommand } from "./model.js";
import { absolutePath, classifyPath, type PathContext } from "./paths.js";
import * as table from "./rules/exfil.js";
import { basename, unwrap, type Invocation } from "./unwrap.js";
import { hostOf, literalWord, texts, type Word } from "./words.js";

export interface ExfilView {
  ctx: PathContext;
  lineKey: object;
}

/** Per line: files that now hold secrets, remotes added, whether a secret was staged in git. */
const newState = () => ({ tainted: new Set<string>(), remotes: new Set<string>(), staged: false });
type ExfilState = ReturnType<typeof newState>;
const STATES = new WeakMap<object, ExfilState>();

const secretText = (text: string, personal = false) =>
  table.SECRET_FILE.test(" " + (personal ? text.replace(table.PROJECT_SECRET, " ") : text));

/** The line's state, made on first use. */
const stateOf = (view: ExfilView) =>
  STATES.get(view.lineKey) ?? STATES.set(view.lineKey, newState()).get(view.lineKey)!;

const pathOf = (w: string, cwd: string | undefined, view: ExfilView) =>
  absolutePath(literalWord(w), { ...view.ctx, cwd });

/** Does this word name a secret (a secret file, a file holding one, a secret variable or substitution)? */
function secretWord(w: Word, cwd: string | undefined, view: ExfilView, st: ExfilState, personal = false): boolean {
  const text = w.text.replace(/^(@|[\w:-]+=@?|FILE:|OPEN:|GOPEN:)/i, "");
  if (secretText(text, personal) || table.SECRET_VAR.test(w.text)) return true;
  const abs = w.literal ? pathOf(text, cwd, view) : undefined;
  if (abs && [...st.tainted].some((t) => abs === t || abs.startsWith(`${t}/`))) return true;
  const subst = /[$<]\((.*)\)|`(.*)`/s.exec(w.text);
  return subst !== null && printsSecret((subst[1] ?? subst[2] ?? "").trim().split(/\s+/), personal);
}

/** A command (as words) that prints a secret: `gh auth token`, `cat ~/.netrc`, `env`. */
function printsSecret(words: string[], personal = false): boolean {
  const args = words.slice(1).join(" ");
  const prints = (test: RegExp | "FILE") =>
    test === "FILE" ? secretText(args.replace(/[*?]/g, ""), personal) : test.test(args);
  return table.SECRET_PRINTERS.some(([programs, test]) => programs.test(basename(words[0] ?? "")) && prints(test));
}

/** What feeds this command's standard input carries a secret. */
function stdinSecret(cmd: SimpleCommand, view: ExfilView, st: ExfilState, personal = false): boolean {
  const readsSecret = (c: SimpleCommand) =>
    c.redirects.some((r) => r.op === "<" && secretWord(r.target, c.cwd, view, st, personal));
  const text = cmd.stdin?.text ?? "";
  if (readsSecret(cmd) || table.SECRET_VAR.test(text) || (/\$\(/.test(text) && secretText(text))) return true;
  return upstream(cmd).some((c) => {
    const runs = [c.argv, ...unwrap(c).invocations.map((i) => [i.word, ...i.args])];
    const printed = runs.some((words) => printsSecret(texts(words), personal));
    return printed || readsSecret(c) || c.argv.slice(1).some((w) => secretWord(w, c.cwd, view, st, personal));
  });
}

const remoteUrl = (u: string) =>
  (table.URL_LIKE.test(u) || table.DROP_HOSTS.test(u)) && !table.LOCAL_HOST.test(hostOf(u));

/** A header naming a secret file, or a service's secret variable (`$OPENAI_API_KEY`) sent to a host not of that service. */
const leaksServiceSecret = (header: string, hosts: string[]) =>
  table.SECRET_FILE.test(header) ||
  [...header.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)].some(([, name]) =>
    table.SERVICE_SECRETS.some(([v, h]) => v.test(name!) && hosts.some((x) => !h.test(x))),
  );
const remoteCopyTarget = (w: string) => {
  const m = /^(?:[\w.-]+@)?(\[[^\]]+\]|[\w.-]+):/.exec(w);
  return m !== null && !/^[A-Za-z]$/.test(m[1]!) && !table.LOCAL_HOST.test(m[1]!);
};

/** What a sender sends: these words, its standard input (`stdin`); `personal`: a project's own secrets pass. */
interface Sink {
  payload: Word[];
  stdin: boolean;
  personal?: boolean;
}

/** What an HTTP client sends to a remote URL: its data and upload options, the URLs, telling headers. */
function httpSink(inv: Invocation, t: string[]): Sink | undefined {
  const urls = inv.args.filter((w) => remoteUrl(w.text));
  if (!urls.length) return undefined;
  const data = inv.args.filter(
    (w, i) => table.HTTP_SENDS.valued.test(t[i - 1] ?? "") || table.HTTP_SENDS.joined.test(w.text),
  );
  const hosts = urls.map((u) => hostOf(u.text));
  const dropped = urls.some((u, k) => table.DROP_HOSTS.test(hosts[k]!) || table.HTTP_SENDS.rawHost.test(u.text));
  const headers = inv.args.filter(
    (w, i) => /^(-H|--header)$/.test(t[i - 1] ?? "") && (dropped || leaksServiceSecret(w.text, hosts)),
  );
  const stdin = data.some((w) => table.HTTP_SENDS.stdin.test(w.text)) || /^(http|https|xh)$/.test(inv.program);
  return { payload: [...data, ...urls, ...headers], stdin };
}

/** The words this sender sends, and whether it sends its standard input; undefined when it sends nothing away. */
function sink(inv: Invocation): Sink | undefined {
  const t = texts(inv.args);
  const p = inv.program;
  if (/^(curl|wget|http|https|xh)$/.test(p)) return httpSink(inv, t);
  if (table.NET_SENDERS.test(p)) {
    // a listener sends what it is fed to whoever connects, unless it listens on this machine only
    const listens = t.some((x) => /^-[a-zA-Z]*l|^--listen$|^(TCP|TCP4|TCP6|UDP)[46]?-LISTEN:/i.test(x));
    if (listens && t.some((x) => table.LOCAL_HOST.test(x) && x !== "0.0.0.0")) return undefined;
    const hosts =
      p === "socat"
        ? t.map((x) => /^(?:TCP|TCP4|TCP6|UDP|OPENSSL|SSL)[46]?:([^:,]+):/i.exec(x)?.[1] ?? "").filter(Boolean)
        : t.filter((x) => !x.startsWith("-") && !/^\d+$/.test(x));
    if (!listens && hosts.every((h) => table.LOCAL_HOST.test(h))) return undefined;
    return { payload: inv.args.filter((w) => /^(FILE|OPEN|GOPEN):/i.test(w.text)), stdin: true };
  }
  if (p === "openssl" && t[0] === "s_client") {
    const host = t[t.indexOf("-connect") + 1] ?? "";
    return t.includes("-connect") && !table.LOCAL_HOST.test(hostOf(host)) ? { payload: [], stdin: true } : undefined;
  }
  if (/^(sftp|ftp|lftp)$/.test(p) && inv.command.stdin) {
    const host = t.find((x) => !x.startsWith("-") && x !== "-")?.replace(/^[^@]*@/, "") ?? "";
    const words = inv.command.stdin.text.split(/\s+/).map((text) => literalWord(text));
    return table.LOCAL_HOST.test(host) ? undefined : { payload: words, stdin: false, personal: true };
  }
  // an object store is the task's own unless the upload is made public: a project's secrets may go there
  if (table.UPLOADERS.test(p)) {
    const files = inv.args.filter((w) => w.literal && !w.text.startsWith("-"));
    return { payload: files, stdin: false, personal: !t.some((w) => table.PUBLIC_ACL.test(w)) };
  }
  if (table.COPY_SENDERS.test(p)) {
    const ops = inv.args.filter((w, i) => !w.text.startsWith("-") && !table.COPY_VALUED.test(t[i - 1] ?? ""));
    if (ops.length < 2 || !remoteCopyTarget(ops.at(-1)!.text)) return undefined;
    return { payload: ops.slice(0, -1), stdin: false, personal: true };
  }
  if (p === "ssh") {
    const host = t.find((x, k) => !x.startsWith("-") && !/^-[bcDEeFIiJLlmOopQRSWw]$/.test(t[k - 1] ?? ""));
    return host && !table.LOCAL_HOST.test(host.replace(/^[^@]*@/, "")) ? { payload: [], stdin: true } : undefined;
  }
  if (table.MAIL_SENDERS.test(p))
    return { payload: inv.args.filter((_, i) => /^-[aA]$/.test(t[i - 1] ?? "")), stdin: true };
  if ((p === "gh" && table.GH_UPLOADS.test(`${t[0]} ${t[1]}`)) || (p === "glab" && t[0] === "snippet"))
    return { payload: inv.args.slice(2).filter((w) => !w.text.startsWith("-")), stdin: t.includes("-") };
  if (table.DNS_LOOKUPS.test(p))
    return { payload: inv.args.filter((w) => /\$\(|`|\$\{?\w/.test(w.text)), stdin: false };
  return undefined;
}

/** The `-v HOST:PATH` mounts of a container run, split at `:`. */
const mounts = (t: string[]) => t.flatMap((w, i) => (/^(-v|--volume)$/.test(t[i - 1] ?? "") ? [w.split(":")] : []));

/** `docker run -v ~/.aws:/c IMAGE …`: a secret mounted into a container whose command sends to a remote host. */
function containerSends(inv: Invocation): boolean {
  const t = texts(inv.args);
  if (!/^(docker|podman|nerdctl)$/.test(inv.program) || t[0] !== "run") return false;
  const remote = t.some((w) => table.CONTAINER_REMOTE.test(w));
  return mounts(t).some(([host]) => secretText(host!)) && remote && t.some((w) => table.CONTAINER_SENDS.test(w));
}

/** A plain-http or bare-address remote: not a hosting service the task's own repository lives on. */
const rawHost = (url: string) => /^http:\/\//.test(url) || /^\d+(\.\d+){3}$/.test(hostOf(url).replace(/^.*@/, ""));

/** Records files that now hold secrets (copies, archives, redirects of a secret) and git staging. */
function record(inv: Invocation, view: ExfilView, st: ExfilState): void {
  const cwd = inv.command.cwd;
  const t = texts(inv.args);
  const taint = (path: string) => {
    const abs = pathOf(path, cwd, view);
    if (abs) st.tainted.add(abs);
  };
  if (inv.program === "git" && t[0] === "remote" && t[1] === "add" && t[2] && rawHost(t[3] ?? "")) st.remotes.add(t[2]);
  if (/^(docker|podman)$/.test(inv.program) && t[0] === "run")
    for (const [host, path] of mounts(t)) if (host && path && secretText(host)) st.tainted.add(path.replace(/\/$/, ""));
  if (inv.program === "git" && t[0] === "add" && inv.args.slice(1).some((w) => secretWord(w, cwd, view, st)))
    st.staged = true;
  const fromSecret = inv.args.some((w) => secretWord(w, cwd, view, st)) || stdinSecret(inv.command, view, st);
  if (!fromSecret && !printsSecret([inv.program, ...t])) return;
  for (const r of inv.command.redirects) if (r.op.includes(">") && r.target.literal) taint(r.target.text);
  if (!table.COPIERS.test(inv.program)) return;
  const operands = inv.args.filter((w) => !w.text.startsWith("-") && w.literal);
  const archive = /^(tar|zip|7z)$/.test(inv.program);
  const out = archive ? operands.find((w) => /\.(tgz|tar|gz|zip|7z|bz2|xz)$/.test(w.text)) : operands.at(-1);
  if (out && !secretWord(out, cwd, view, st)) taint(out.text);
}

/** `ssh HOST CMD`, which the unwrapper turns into shell text: what the pipe feeds it goes to the host. */
export function judgeRemoteShellExfil(cmd: SimpleCommand, view: ExfilView): Finding[] {
  const word = cmd.argv[0];
  if (!word || basename(word.text) !== "ssh") return [];
  const base = { word, elevated: false, runtimeArgs: false, via: [], command: cmd };
  return judgeExfil({ ...base, program: "ssh", args: cmd.argv.slice(1) }, view);
}

/**
 * `curl -o ~/.ssh/authorized_keys URL`: a download into a secret place. Not a leak, but the line judge
 * has always counted it here as well (the corpora's verdicts keep it).
 */
function downloadsIntoSecrets(inv: Invocation, view: ExfilView): boolean {
  const ctx = { ...view.ctx, cwd: inv.command.cwd };
  const output = inv.args.filter((_, i) => table.HTTP_SENDS.output.test(inv.args[i - 1]?.text ?? ""));
  return /^(curl|wget)$/.test(inv.program) && output.some((w) => table.SECRET_PLACES.has(classifyPath(w, ctx)));
}

/** `credential_exfiltration` when this invocation sends a secret off the machine. */
export function judgeExfil(inv: Invocation, view: ExfilView): Finding[] {
  const st = stateOf(view);
  const s = sink(inv);
  // xargs hands what it reads to the sender as arguments
  const sendsStdin = s?.stdin || (s && inv.via.includes("xargs"));
  const secretSent =
    s?.payload.some((w) => secretWord(w, inv.command.cwd, view, st, s.personal)) ||
    (sendsStdin && stdinSecret(inv.command, view, st, s?.personal));
  const pushes = inv.program === "git" && inv.args[0]?.text === "push";
  const pushesSecret = pushes && (st.staged || inv.args.some((w) => st.remotes.has(w.text)));
  const sends = pushesSecret || containerSends(inv) || secretSent || downloadsIntoSecrets(inv, view);
  record(inv, view, st);
  return sends ? [{ key: "credential_exfiltration", reason: `${inv.program} sends a secret off the machine` }] : [];
}
