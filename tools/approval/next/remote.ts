/**
 * Remote and shared state judged over the whole invocation: verbs of infrastructure CLIs read by their
 * words, tools run through launchers (`npx cdk@2 …`) or as a container's entry point, deletes fed in
 * bulk by xargs, HTTP writes to whole stores, commands run on other hosts, access opened to this machine, and
 * what database and cache clients are told to run, from their arguments, standard input, here-docs or a script
 * file. The tables (`table.*`) are in rules/remote.ts.
 */
import type { ClassKey } from "./classes.js";
import type { Finding, LineView } from "./judges.js";
import { absolutePath, classifyPath } from "./paths.js";
import { optionValue, upstream, type SimpleCommand } from "./model.js";
import { FILE_SERVERS, X_TERMINALS } from "./rules/access.js";
import * as table from "./rules/remote.js";
import { basename, isShell, type Invocation } from "./unwrap.js";
import { literalWord, texts, type Word } from "./words.js";

const found = (key: ClassKey, reason: string): Finding => ({ key, reason });
const joined = (words: Word[]) => words.map((w) => w.text).join(" ");

/** A trial or help run changes no remote state: `--dry-run`, `--help`, a final `-h`, `git push -n`. */
export function isTrialRun(inv: Invocation): boolean {
  const t = texts(inv.args);
  if (t.some((w) => table.TRIAL_WORD.test(w)) || t.at(-1) === "-h") return true;
  return inv.program === "git" && t[0] === "push" && t.some((w) => /^-[a-zA-Z]*n[a-zA-Z]*$/.test(w));
}

/** The non-option words after global options, lower-cased. */
const verbWords = (args: string[]) =>
  args.flatMap((t, i) => (t.startsWith("-") || table.VALUED_GLOBALS.test(args[i - 1] ?? "") ? [] : [t.toLowerCase()]));

/**
 * `az keyvault secret purge`, `heroku ps:stop`, `doctl … power-off`: a destroying verb of a known CLI. A word
 * is read by its parts (`stop-instances` → stop); a part that destroys outweighs a reading part of the same word.
 */
function destructiveVerb(inv: Invocation): Finding | undefined {
  if (!table.INFRA_CLIS.has(inv.program)) return undefined;
  const verbs = verbWords(texts(inv.args)).filter((w, i) => i < 4 && !/[/=@$]|^\d/.test(w));
  const parts = verbs.map((w) => [w, w.replace(/[:._-]+/g, ""), ...w.split(/[:._-]+/)]);
  const destroys = parts.map((p) => p.some((x) => table.DESTRUCTIVE_VERBS.test(x)));
  // the word itself reads, or a part of a word that does not destroy
  const reads = parts.some((p, i) => p.some((x, j) => table.READ_VERBS.test(x) && (j === 0 || !destroys[i])));
  if (!destroys.includes(true) || reads) return undefined;
  const key = table.VERB_CLASSES.get(`${inv.program} ${verbs[0]}`) ?? table.VERB_CLASSES.get(inv.program);
  return found(key ?? "infra_teardown", `${inv.program} ${verbs.join(" ")}`);
}

/**
 * What `docker run [options] IMAGE ARGS…` runs, judged as a line of this machine: a tool image's arguments
 * as the tool (`hashicorp/terraform destroy`), or a command whose paths reach host folders bound in with
 * `-v HOST:PATH` (`-v /var/lib/docker/volumes:/v alpine rm -rf /v/pgdata`, `-v ~/.aws:/c … curl -F f=@/c/…`).
 */
function judgeContainer(inv: Invocation, view: LineView): void {
  if (!/^(docker|podman|nerdctl)$/.test(inv.program) || !/^(run|create)$/.test(inv.args[0]?.text ?? "")) return;
  const binds: string[][] = [];
  let i = 1;
  for (; i < inv.args.length && inv.args[i]!.text.startsWith("-"); i++) {
    const [flag, value] = [inv.args[i]!.text, inv.args[i + 1]?.text ?? ""];
    if (/^(-v|--volume)$/.test(flag))
      binds.push(value.replace(table.HOST_DIRS.here, ".").replace(table.HOST_DIRS.home, "~").split(":"));
    if (table.CONTAINER_VALUED.has(flag)) i++;
  }
  const tool = table.IMAGE_TOOLS.get(basename(inv.args[i]?.text.replace(/[:@][^/]*$/, "") ?? ""));
  const args = inv.args.slice(i + 1 + (tool && inv.args[i + 1]?.text === tool ? 1 : 0));
  const mounts = binds.filter(([host, path]) => host && path?.startsWith("/"));
  const bound = (path: string) => new RegExp(`(^|[\\s'"=@])${path.replace(/\W/g, "\\$&")}(?=/|[\\s'"]|$)`, "g");
  const mapped = args.some((w) => mounts.some(([, path]) => bound(path!).test(w.text)));
  const words = args.map((w) => {
    const text = mounts.reduce((t, [host, path]) => t.replace(bound(path!), (_, before) => before + host), w.text);
    // a word known only at run time stays an expansion for the inner line (`"$(id -u)"`)
    return w.literal && /[\s'"|&;<>()$`]/.test(text) ? `'${text.replace(/'/g, `'\\''`)}'` : text;
  });
  const code = literalWord([tool, ...words].filter(Boolean).join(" "));
  if (tool || mapped) view.judgeShell(code, `${inv.program} run`, false);
}

/** `… | xargs gsutil rm`, `docker volume ls -q | xargs docker volume rm`: deletes of a listing not shown. */
function fedDelete(inv: Invocation): Finding | undefined {
  const verbs = inv.runtimeArgs ? verbWords(texts(inv.args)) : [];
  const spec = table.FED_DELETES.get(inv.program)?.find((f) => verbs.some((v) => f.verb.test(v)));
  return spec && found(spec.key, `${inv.program} deletes what a pipe lists`);
}

/**
 * HTTP writes: a whole index wiped or a cache purged (any method); `DELETE` of a store (an index, `_all`, a
 * top-level path) or of anything on another host; `PUT`/`PATCH` of a collection on another host; a `POST`
 * to a bulk-delete endpoint. An authorised write of one item (`/users/123`) is an API call.
 */
function httpWrite(inv: Invocation): Finding | undefined {
  if (!/^(curl|wget|http|https|xh|xhs)$/.test(inv.program)) return undefined;
  const t = texts(inv.args);
  const joined = t.join(" ");
  const wipe = table.HTTP.wipes.find((w) => w.test.test(joined));
  if (wipe) return found(wipe.key, wipe.what);
  // curl and wget take the method as an option, HTTPie and xh as a word (`http DELETE URL`)
  const word = /^(curl|wget)$/.test(inv.program) ? undefined : t.find((w) => /^(DELETE|PUT|PATCH|POST)$/i.test(w));
  const method = (table.HTTP.method.exec(joined)?.[3] ?? word)?.toUpperCase();
  if (!method) return undefined;
  const credentials = table.HTTP.credentials.test(joined);
  for (const u of t.filter((w) => table.HTTP.url.test(w))) {
    const m = table.HTTP.parts.exec(u.startsWith(":") ? `localhost${u}` : u)!;
    const local = table.HTTP.local.test(m[1]!);
    const segments = m[2]!.split("/").filter(Boolean);
    const bulk = table.HTTP.bulkQuery.test(m[3] ?? "");
    // a wildcard or `_all`, or a store named before its id (`/indexes/logs`)
    const named = segments.some((s) => /[*,]|^_all$/.test(s)) || table.STORE_SEGMENTS.test(segments.at(-2) ?? "");
    const whole = segments.length <= 1 || bulk || named;
    const oneItem = /\d/.test(segments.at(-1) ?? "") && !/^v\d+$/.test(segments.at(-1)!) && !bulk;
    const elsewhere = !local || u.startsWith("$");
    if (method === "DELETE" && (whole || (!local && !(credentials && oneItem)) || u.startsWith("$")))
      return found("http_delete", `DELETE ${u}`);
    if (method === "POST" && elsewhere && table.HTTP.bulkPost.test(m[2]!)) return found("http_delete", `POST ${u}`);
    // a collection is named in the plural (`/v2/customers`); `/repos/acme/infra` is one resource
    if (/^(PUT|PATCH)$/.test(method) && elsewhere && (bulk || table.HTTP.collection.test(segments.at(-1) ?? "")))
      return found("http_bulk_update", `${method} ${u}`);
  }
}

/** Tools told through the environment: `TF_CLI_ARGS_apply=-destroy`, `DOCKER_HOST=tcp://…` (ENV_EFFECTS). */
function toldByEnv(inv: Invocation): Finding | undefined {
  const env = [...inv.command.env].map(([k, v]) => `${k}=${v.text}`);
  const row = table.ENV_EFFECTS.find(
    (e) => e.program.test(inv.program) && e.args.test(joined(inv.args)) && env.some((x) => e.env.test(x)),
  );
  return row && found(row.key, `${inv.program} ${row.what}`);
}

/**
 * What earlier commands of the line set up for later ones: a saved destroy plan (`terraform plan -destroy
 * -out f && terraform apply f`) and git aliases (`git config alias.x 'push --force …' && git x`).
 */
function lineNotes(inv: Invocation, view: LineView): Finding | undefined {
  const notes = view.notes;
  const t = texts(inv.args);
  if (/^(terraform|tofu|terragrunt)$/.test(inv.program)) {
    const out = t.flatMap((w, i) => (w === "-out" ? [t[i + 1] ?? ""] : w.startsWith("-out=") ? [w.slice(5)] : []));
    const where = (p: string) => absolutePath(literalWord(p), view.ctx) ?? p;
    if (t.includes("plan") && t.includes("-destroy")) for (const f of out) notes.set(`tfplan:${where(f)}`, "destroy");
    const applied = t.slice(t.indexOf("apply") + 1).find((w) => !w.startsWith("-"));
    if (t.includes("apply") && applied && notes.get(`tfplan:${where(applied)}`))
      return found("infra_teardown", `${inv.program} applies a destroy plan`);
  }
  if (inv.program !== "git") return undefined;
  const at = t.findIndex((w) => /^alias\.[\w-]+(=|$)/.test(w));
  const [name, value] = at >= 0 ? t[at]!.slice(6).split(/=(.*)/s) : [];
  if (name && (t.includes("config") || t.includes("-c"))) notes.set(`git-alias:${name}`, value ?? t[at + 1] ?? "");
  const verb = verbWords(t)[0];
  const expanded = verb && notes.get(`git-alias:${verb}`);
  if (expanded && !expanded.startsWith("!"))
    view.judgeShell(literalWord(`git ${expanded} ${t.slice(t.indexOf(verb) + 1).join(" ")}`), "git alias", false);
}

/**
 * `git push --all|--mirror` to a URL, or to a remote the line added under another name than origin: the whole
 * repository sent to a place it did not have (`git remote add origin URL && git push -u origin --all` is a new
 * repository's first push).
 */
function pushedAway(inv: Invocation, view: LineView): Finding | undefined {
  const words = inv.program === "git" ? verbWords(texts(inv.args)) : [];
  if (words[0] === "remote" && words[1] === "add" && words[2]) view.notes.set(`git-remote:${words[2]}`, "added");
  const target = words[0] === "push" && texts(inv.args).some((w) => /^--(all|mirror)$/.test(w)) ? words[1] : undefined;
  if (target && (table.GIT_URL.test(target) || (target !== "origin" && view.notes.has(`git-remote:${target}`))))
    return found("repository_exfiltration", `git push sends every branch to ${target}`);
}

/**
 * `git reset --hard` with no working directory known: the repository whose uncommitted work it discards may
 * not be the task's (a feature branch reset to its remote is routine). With one, the rule row judges the path.
 */
function resetHard(inv: Invocation, view: LineView): Finding | undefined {
  const t = texts(inv.args);
  const reset = inv.program === "git" && t.includes("reset") && t.includes("--hard") && !view.ctx.workdir;
  if (reset && !t.some((w) => table.FEATURE_REF.test(w))) return found("git_reset_hard", "a repository not known");
}

/**
 * Shell text run on other hosts (REMOTE_RUNNERS): `fab -H web1 -- CMD`, `knife ssh QUERY CMD`, `gcloud compute
 * ssh VM --command CMD`, `aws ssm send-command --parameters commands=CMD`; judged as run on a server.
 */
function remoteRunner(inv: Invocation, view: LineView): void {
  const spec = table.REMOTE_RUNNERS.get(inv.program);
  const t = texts(inv.args);
  if (!spec || !spec.verbs.every((v) => t.includes(v))) return;
  const at = spec.option ? t.findIndex((w) => spec.option!.test(w)) : spec.last ? t.length - 2 : t.indexOf("--");
  const inline = spec.option && at >= 0 ? t[at]!.replace(spec.option, "") : "";
  const rest = inline ? [{ ...inv.args[at]!, text: inline }] : at < 0 ? [] : inv.args.slice(at + 1);
  const code = { text: joined(rest).replace(spec.strip ?? /^$/, ""), literal: rest.every((w) => w.literal) };
  if (code.text) view.judgeShell({ ...code, glob: false }, `${inv.program} on other hosts`, true);
}

/**
 * Access to this machine from elsewhere: an interactive shell piped to a socket (`sh -i < fifo | nc HOST PORT`),
 * a terminal shown on another machine's display, a file server of a directory the task does not own.
 */
function remoteAccess(inv: Invocation, view: LineView): Finding | undefined {
  const interactiveShell = (c: SimpleCommand) =>
    isShell(basename(c.argv[0]?.text ?? "")) && c.argv.some((w) => /^-[a-z]*i[a-z]*$/.test(w.text));
  if (/^(nc|ncat|netcat|socat|telnet|openssl)$/.test(inv.program) && upstream(inv.command).some(interactiveShell))
    return found("remote_access", `an interactive shell piped to ${inv.program}`);
  const display = inv.command.env.get("DISPLAY")?.text;
  if (display && X_TERMINALS.test(inv.program) && !/^(:|localhost:|127\.|unix:)/.test(display))
    return found("remote_access", `${inv.program} on the display ${display}`);
  const server = FILE_SERVERS[inv.program.replace(/[\d.]+$/, "")];
  const serves = server?.serves.test(joined(inv.args)) && !server.local.test(joined(inv.args));
  const dir = serves ? (optionValue(texts(inv.args), server.dir) ?? ".") : undefined;
  if (dir && /^(system|home|home-secret|ssh)$/.test(classifyPath(literalWord(dir), view.ctx)))
    return found("remote_access", `${inv.program} serves ${dir} to the network`);
}

/** Every remote-state finding of one invocation. */
export function judgeRemote(inv: Invocation, view: LineView): Finding[] {
  if (isTrialRun(inv)) return [];
  remoteRunner(inv, view);
  judgeContainer(inv, view);
  const stateChecks = [destructiveVerb, fedDelete, httpWrite, judgeDatabase, toldByEnv, resetHard];
  const lineChecks = [lineNotes, pushedAway, remoteAccess];
  return [...stateChecks, ...lineChecks].flatMap((check) => check(inv, view) ?? []);
}

/** The words a key-value client runs as its command (after the connection options). */
function kvCommand(args: Word[]): Word[] {
  let i = 0;
  while (i < args.length && args[i]!.text.startsWith("-")) i += table.KV_VALUED.test(args[i]!.text) ? 2 : 1;
  return args.slice(i);
}

/**
 * The text a database client is told to run: arguments (`--execute=SQL` read as SQL; a key-value client's
 * command as one statement), standard input, a piped producer, `-f FILE`, `< FILE`, `< <(echo SQL)`.
 */
function clientInput(inv: Invocation, view: LineView): string[] {
  const args = table.KV_CLIENTS.test(inv.program)
    ? [joined(kvCommand(inv.args))]
    : inv.args.map((w) => w.text.replace(/^--?[\w-]+=/, ""));
  const cwd = inv.command.cwd;
  // a file, or what `<(echo SQL)` prints, named by `-f`, as an operand or read from `<`
  const text = (w: Word) => /^<\(\s*(?:echo|printf)\s+(['"]?)(.*)\1\s*\)$/s.exec(w.text)?.[2] ?? view.fileText(w, cwd);
  const files = inv.args
    .filter((w, i) => /^(-f|--file|-i|--source)$/.test(inv.args[i - 1]?.text ?? "") || !w.text.startsWith("-"))
    .concat(inv.command.redirects.filter((r) => r.op === "<").map((r) => r.target));
  const all = [...args, inv.command.stdin?.text, view.printed(inv.command.pipedFrom)?.text, ...files.map(text)];
  return all.filter((text): text is string => Boolean(text));
}

/** One statement without its SQL comments and the text of its string literals (`LIKE '%DROP TABLE%'`). */
const withoutLiterals = (raw: string) =>
  table.SQL_NOISE.reduce((statement, [noise, by]) => statement.replace(noise, by), raw.trim()).trim();

/** SQL and store commands that drop or empty a whole table, database, keyspace or cache (SQL_EFFECTS). */
export function classifyStatements(text: string, literalsRun = false): ClassKey | undefined {
  const temporary = new Set([...text.matchAll(table.CREATED_TABLE)].map((m) => m[1]!.toLowerCase()));
  const guarded = text.replace(/'(?:[^'\n]|'')*'/g, (m) => m.replace(/;/g, ","));
  for (const raw of guarded.split(/;|\n(?=\s*[A-Za-z])/)) {
    const st = literalsRun ? raw.trim() : withoutLiterals(raw);
    if (/^explain\b(?!\s*\(?\s*analy[sz]e)/i.test(st)) continue;
    const dropped = /^drop\s+table\s+(?:if\s+exists\s+)?([\w.", ]+)$/i.exec(st)?.[1];
    if (dropped?.split(/\s*,\s*/).every((t) => temporary.has(t.toLowerCase()))) continue;
    const effect = table.SQL_EFFECTS.find((e) => e.test.test(e.raw ? raw : st));
    if (effect) return effect.key;
  }
}

/** A database file inside the known working directory (or /tmp, or in memory) is the task's own. */
function ownDatabaseFile(inv: Invocation, view: LineView): boolean {
  const db = inv.args.find(
    (w, i) => !w.text.startsWith("-") && !table.FILE_DB_VALUED.test(inv.args[i - 1]?.text ?? ""),
  );
  const where = db ? classifyPath(db, view.ctx) : "inside";
  return (where === "inside" && (Boolean(view.ctx.workdir) || !db)) || where === "temp" || db?.text === ":memory:";
}

function judgeDatabase(inv: Invocation, view: LineView): Finding | undefined {
  if (!table.DB_CLIENTS.test(inv.program)) return undefined;
  if (table.FILE_DATABASES.test(inv.program) && ownDatabaseFile(inv, view)) return undefined;
  // SQL a client prints for this one to run (`psql -c "SELECT 'DROP TABLE ' || …" | psql`): its strings are SQL.
  const producer = inv.command.pipedFrom;
  const fromClient = producer && table.DB_CLIENTS.test(basename(producer.argv[0]?.text ?? ""));
  const generated = fromClient && classifyStatements(producer.argv.map((w) => w.text).join("\n"), true);
  if (generated) return found(generated, `${inv.program} runs SQL another client generates`);
  for (const text of clientInput(inv, view)) {
    const key = classifyStatements(text);
    if (key) return found(key, `${inv.program} runs: ${text.slice(0, 60)}`);
  }
}
