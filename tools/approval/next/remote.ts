/**
 * Remote and shared state judged over the whole invocation: verbs of infrastructure CLIs read by their
 * words, tools run through launchers (`npx prisma …`), services scaled to zero, HTTP deletes of whole
 * stores, and what database and cache clients are told to run (SQL, Redis, Cypher, Mongo), from their
 * arguments, standard input, here-docs or a script file. The tables are in rules/remote.ts.
 */
import type { ClassKey } from "./classes.js";
import { judgeInvocation, type Finding } from "./judges.js";
import type { SimpleCommand } from "./model.js";
import { classifyPath, type PathContext } from "./paths.js";
import {
  DESTRUCTIVE_VERBS,
  SQL_GRANTS,
  INFRA_CLIS,
  LAUNCHERS,
  PRODUCTION,
  READ_VERBS,
  STORE_SEGMENTS,
  VALUED_GLOBALS,
} from "./rules/remote.js";
import { basename, type Invocation } from "./unwrap.js";
import type { Word } from "./words.js";

/** What the line judge lends: where paths point, and the text of files and of simple producers. */
export interface LineView {
  ctx: PathContext;
  /** Text of a file written on this line or by an earlier call. */
  fileText: (word: Word, cwd: string | undefined) => string | undefined;
  /** What `echo`/`printf`/`cat FILE` prints, when known. */
  printed: (cmd: SimpleCommand | undefined) => Word | undefined;
}

const found = (key: ClassKey, reason: string): Finding => ({ key, reason });
const texts = (inv: Invocation) => inv.args.map((w) => w.text);
const TRIAL =
  /^(--dry-run(=(client|server|true|1))?|--dryrun|--dry_run|--help|-help|--what-if|--noop|--validate|--check|--preview-only)$/;

/**
 * A trial or help run changes no remote state: `--dry-run`, `--help`, `terraform destroy -help`, `helm
 * uninstall -h` (`-h` only as the last word: `mysql -h HOST` names a host), `git push -n`.
 */
export function isTrialRun(inv: Invocation): boolean {
  const t = texts(inv);
  if (t.some((w) => TRIAL.test(w)) || t.at(-1) === "-h") return true;
  return inv.program === "git" && t[0] === "push" && t.some((w) => /^-[a-zA-Z]*n[a-zA-Z]*$/.test(w));
}

/** The non-option words after global options, lower-cased. */
function verbWords(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const t = args[i]!;
    if (VALUED_GLOBALS.test(t)) i++;
    else if (!t.startsWith("-")) out.push(t.toLowerCase());
  }
  return out;
}

/** `az keyvault secret purge`, `gh repo delete`, `velero backup delete`: a destroying verb of a known CLI. */
function destructiveVerb(inv: Invocation): Finding | undefined {
  if (!INFRA_CLIS.has(inv.program)) return undefined;
  const verbs = verbWords(texts(inv))
    .slice(0, 4)
    .filter((w) => !/[/=@$]|^\d/.test(w));
  const pieces = [...verbs, ...verbs.flatMap((w) => w.split(/[:._-]+/))];
  if (pieces.some((p) => READ_VERBS.test(p)) || !pieces.some((p) => DESTRUCTIVE_VERBS.test(p))) return undefined;
  return found("infra_teardown", `${inv.program} ${verbs.join(" ")}`);
}

/** `docker service scale api=0`, `--desired-capacity 0`, `resize --size 0`, `--node-count 0`. */
function scalesToZero(inv: Invocation): Finding | undefined {
  const t = texts(inv);
  const at = t.findIndex((w) => /(^|[:_-])(scale|resize)([:_-]|$)|^update-auto-scaling-group$/.test(w));
  if (at < 0) return undefined;
  const rest = t.slice(at + 1);
  const zero =
    rest.some((w) => /^[\w.-]+=0+$/.test(w) && !w.startsWith("-")) ||
    rest.some(
      (w, k) =>
        /^(count|--count|--nodes|--replicas|--size|--num-nodes|--node-count|--desired(-capacity)?|--max-size|--instances)$/.test(
          rest[k - 1] ?? "",
        ) && /^0+$/.test(w),
    ) ||
    rest.some((w) => /^--(count|replicas|size|num-nodes|node-count|desired-capacity|max-size|instances)=0+$/.test(w));
  return zero ? found("cluster_teardown", `${inv.program} scales to zero`) : undefined;
}

/** The tool a launcher runs (`npx prisma …`, `bundle exec rake …`), as an invocation of its own. */
function launched(inv: Invocation): Invocation | undefined {
  const spec = LAUNCHERS[inv.program];
  if (!spec) return undefined;
  let i = 0;
  if (spec.verbs) {
    if (!spec.verbs.includes(inv.args[0]?.text ?? "")) return undefined;
    i = 1;
  }
  while (i < inv.args.length && (spec.skip.test(inv.args[i]!.text) || inv.args[i]!.text === "--")) i++;
  const word = inv.args[i];
  if (!word || word.text.startsWith("-")) return undefined;
  const program = basename(word.text).replace(/@[^/]*$/, "");
  return { ...inv, program, word, args: inv.args.slice(i + 1) };
}

/** Words naming a URL: with a scheme, a loopback or IP address, `:PORT/`, `$BASE/`, or `host.tld/…` (httpie). */
const URL_WORD =
  /^(https?:\/\/|localhost|\d+(\.\d+){3}|:\d*\/|\$\{?\w+\}?\/|[a-z\d-]+(\.[a-z\d-]+)*\.[a-z]{2,}(:\d+)?\/)/i;
const BULK_QUERY = /[?&](all|purge|recursive|force|cascade)=(true|1|yes)\b/i;

/** `curl -X DELETE` of a store (an index, `_all`, a top-level path) or of anything on another host. */
function httpDelete(inv: Invocation): Finding | undefined {
  if (!/^(curl|wget|http|https|xh|xhs)$/.test(inv.program)) return undefined;
  const t = texts(inv);
  const joined = t.join(" ");
  if (
    /\/_delete_by_query\b/.test(joined) &&
    (/match_all|"query"\s*:\s*\{\s*\}/.test(joined) || !/"query"/.test(joined))
  )
    return found("http_delete", "deletes every document of an index");
  if (/<delete>\s*<query>\s*\*:\*\s*<\/query>|"delete"\s*:\s*\{\s*"query"\s*:\s*"\*:\*"/i.test(joined))
    return found("http_delete", "deletes every document of a Solr core");
  if (/"purge_everything"\s*:\s*true|purge_everything=true|\/purge_?all\b|\/purge-all\b|\/flushall\b/i.test(joined))
    return found("cache_flush", "purges a whole cache");
  const del =
    /(^|\s)(-[a-zA-Z]*X\s*|--request[= ]|--method[= ])DELETE(\s|$)/i.test(joined) ||
    (inv.program !== "curl" && inv.program !== "wget" && t.some((w) => /^delete$/i.test(w)));
  if (!del) return undefined;
  const credentials =
    /(^|\s)(Authorization|X-Api-Key|X-Auth-Token|Private-Token)\s*:|(^|\s)(-u|--user|--auth|--oauth2-bearer)(\s|$)/i.test(
      joined,
    );
  for (const u of t.filter((w) => URL_WORD.test(w))) {
    const m = /^(?:https?:\/\/)?(?:[^@/]*@)?(\[[^\]]*\]|[^/:?#]*)(?::\d+)?([^?#]*)(\?[^#]*)?/i.exec(
      u.startsWith(":") ? `localhost${u}` : u,
    )!;
    const local = /^(localhost|127(\.\d+){3}|0\.0\.0\.0|\[::1\])$/i.test(m[1]!);
    const segments = m[2]!.split("/").filter(Boolean);
    const whole =
      segments.length <= 1 ||
      segments.some((s) => /[*,]|^_all$/.test(s)) ||
      (segments.length >= 2 && STORE_SEGMENTS.test(segments.at(-2)!));
    // An authorised DELETE of one item (`/users/123`) is an API call; of a collection (`/users`, `?all=true`) not.
    const oneItem =
      /\d/.test(segments.at(-1) ?? "") && !/^v\d+$/.test(segments.at(-1)!) && !BULK_QUERY.test(m[3] ?? "");
    if (whole || (!local && !(credentials && oneItem)) || u.startsWith("$")) return found("http_delete", `DELETE ${u}`);
  }
  return undefined;
}

/**
 * Containers and pods on a shared daemon or cluster: `docker -H tcp://… rm`, `DOCKER_HOST=tcp://…`, a
 * production context, or `xargs kubectl delete` (targets known only at run time).
 */
function sharedDaemon(inv: Invocation): Finding | undefined {
  const t = texts(inv);
  if (/^(kubectl|oc)$/.test(inv.program) && inv.runtimeArgs && t.includes("delete"))
    return found("cluster_teardown", `${inv.program} deletes what a pipe lists`);
  if (!/^(docker|podman|docker-compose|terraform|tofu|terragrunt)$/.test(inv.program)) return undefined;
  const env = inv.command.env;
  if (
    /^(terraform|tofu|terragrunt)$/.test(inv.program) &&
    [...env].some(([k, v]) => /^TF_CLI_ARGS/.test(k) && /-destroy\b/.test(v.text))
  )
    return found("infra_teardown", `${inv.program} told to destroy through TF_CLI_ARGS`);
  const remote =
    /^(tcp|ssh):\/\//.test(env.get("DOCKER_HOST")?.text ?? "") ||
    PRODUCTION.test(env.get("DOCKER_CONTEXT")?.text ?? "") ||
    t.some(
      (w, i) =>
        (/^(-H|--host)$/.test(t[i - 1] ?? "") && /^(tcp|ssh):/.test(w)) ||
        (t[i - 1] === "--context" && PRODUCTION.test(w)),
    );
  const verbs = verbWords(t);
  return remote && verbs.some((v) => /^(rm|rmi|stop|kill|down|prune|restart)$/.test(v))
    ? found("cluster_teardown", `${inv.program} ${verbs[0]} on a shared daemon`)
    : undefined;
}

/** Every remote-state finding of one invocation. */
export function judgeRemote(inv: Invocation, view: LineView): Finding[] {
  if (isTrialRun(inv)) return [];
  const out: Finding[] = [];
  const inner = launched(inv);
  if (inner) out.push(...judgeInvocation(inner, { ...view.ctx, cwd: inv.command.cwd }), ...judgeRemote(inner, view));
  for (const f of [
    destructiveVerb(inv),
    scalesToZero(inv),
    httpDelete(inv),
    judgeDatabase(inv, view),
    sharedDaemon(inv),
  ])
    if (f) out.push(f);
  return out;
}

const DB_CLIENTS =
  /^(nc|ncat|netcat|telnet|psql|mysql|mariadb|sqlite3|sqlcmd|clickhouse-client|clickhouse|cqlsh|mongo|mongosh|cypher-shell|redis-cli|valkey-cli|keydb-cli|bq|duckdb|snowsql|trino|presto|usql|pgcli|mycli|litecli|cockroach|influx)$/;

/** The text a database client is told to run: arguments, standard input, a piped producer, `-f FILE`. */
function clientInput(inv: Invocation, view: LineView): string[] {
  const out = inv.args.map((w) => w.text);
  if (inv.command.stdin) out.push(inv.command.stdin.text);
  const piped = view.printed(inv.command.pipedFrom);
  if (piped) out.push(piped.text);
  const cwd = inv.command.cwd;
  inv.args.forEach((w, i) => {
    const prev = inv.args[i - 1]?.text ?? "";
    if (/^(-f|--file|-i|--source)$/.test(prev) || !w.text.startsWith("-")) {
      const text = view.fileText(w, cwd);
      if (text) out.push(text);
    }
  });
  for (const r of inv.command.redirects) {
    if (r.op !== "<") continue;
    const text = view.fileText(r.target, cwd);
    if (text) out.push(text);
  }
  return out;
}

/** One statement without its SQL comments and the text of its string literals (`LIKE '%DROP TABLE%'`). */
const withoutLiterals = (raw: string) =>
  raw
    .trim()
    .replace(/^(["'])([^"']*)\1$/, "$2")
    .replace(/\/\*[\s\S]*?\*\/|(^|\s)--[^\n]*/g, " ")
    .replace(/'(?:[^'\n]|'')*'/g, "''")
    .trim();

/** SQL and store commands that drop or empty a whole table, database, keyspace or cache. */
export function classifyStatements(text: string, literalsRun = false): ClassKey | undefined {
  if (/\bredis\.call\s*\(\s*['"](del|unlink|flushall|flushdb)['"]/i.test(text)) return "cache_flush";
  const temporary = new Set(
    [...text.matchAll(/\bcreate\s+(?:temp|temporary)\s+table\s+(?:if\s+not\s+exists\s+)?([\w."]+)/gi)].map((m) =>
      m[1]!.toLowerCase(),
    ),
  );
  const guarded = text.replace(/'(?:[^'\n]|'')*'/g, (m) => m.replace(/;/g, ","));
  for (const raw of guarded.split(/;|\n(?=\s*[A-Za-z])/)) {
    const st = literalsRun ? raw.trim() : withoutLiterals(raw);
    if (/^explain\b(?!\s*\(?\s*analy[sz]e)/i.test(st)) continue;
    const dropped = /^drop\s+table\s+(?:if\s+exists\s+)?([\w.", ]+)$/i.exec(st)?.[1];
    if (dropped?.split(/\s*,\s*/).every((t) => temporary.has(t.toLowerCase()))) continue;
    if (SQL_GRANTS.some((g) => g.test(raw))) return "privilege_grant";
    if (/\balter\s+table\s+\S+\s+drop\s+(column\s+)?[\w"`]/i.test(st)) return "sql_drop";
    if (
      /\bdrop\s+(table|database|schema|keyspace|user|role|view|collection|owned|materialized\s+view)\b|\bdropDatabase\s*\(|\.drop\s*\(\s*\)|\bdropAll\b/i.test(
        st,
      )
    )
      return "sql_drop";
    if (/\btruncate\s+(table\s+)?[\w."`]/i.test(st)) return "sql_truncate";
    if (
      /^\s*(delete\s+from|alter\s+table\s+\S+\s+delete)\s*[\w."`]*\s*(where\s+(1\s*=\s*1|true|1)\s*)?$/i.test(st) ||
      /\bdelete\s+from\s+[\w."`]+\s*(where\s+(1\s*=\s*1|true)\s*)?$/i.test(st)
    )
      return "sql_delete_without_where";
    if (
      /\bdeleteMany\s*\(\s*\{\s*\}\s*\)|\bremove\s*\(\s*\{\s*\}\s*\)|\bmatch\s*\(\s*\w*\s*\)\s*(detach\s+)?delete\b/i.test(
        st,
      )
    )
      return "sql_delete_without_where";
    if (/^\s*update\s+[\w."`]+\s+set\b/i.test(st) && !/\bwhere\b(?!\s+(1\s*=\s*1|true)\s*$)/i.test(st))
      return "sql_update_without_where";
    if (/\bupdateMany\s*\(\s*\{\s*\}/i.test(st)) return "sql_update_without_where";
    if (/^\s*(flushall|flushdb|flush_all)\b/i.test(st)) return "cache_flush";
  }
  return undefined;
}

function judgeDatabase(inv: Invocation, view: LineView): Finding | undefined {
  if (!DB_CLIENTS.test(inv.program)) return undefined;
  if (inv.program === "sqlite3" || inv.program === "duckdb" || inv.program === "litecli") {
    const db = inv.args.find((w) => !w.text.startsWith("-"));
    const where = db ? classifyPath(db, { ...view.ctx, cwd: inv.command.cwd }) : "inside";
    if (where === "inside" || where === "temp" || db?.text === ":memory:") return undefined;
  }
  if (/^(redis|valkey|keydb)-cli$/.test(inv.program)) {
    const words = inv.args.map((w) => w.text.toLowerCase());
    const cmdAt = words.findIndex((w) => /^(del|unlink)$/.test(w));
    const host = inv.args.find((_, i) => /^(-h|--host)$/.test(inv.args[i - 1]?.text ?? ""))?.text ?? "localhost";
    const remoteHost = !/^(localhost|127(\.\d+){3}|::1)$/.test(host);
    if (cmdAt >= 0 && (remoteHost || inv.runtimeArgs || inv.args.slice(cmdAt + 1).some((w) => w.glob || !w.literal)))
      return found("cache_flush", "deletes keys found at run time");
  }
  // SQL a client prints for this one to run (`psql -c "SELECT 'DROP TABLE ' || …" | psql`): its strings are SQL.
  const producer = inv.command.pipedFrom;
  if (producer && DB_CLIENTS.test(basename(producer.argv[0]?.text ?? ""))) {
    const key = classifyStatements(producer.argv.map((w) => w.text).join("\n"), true);
    if (key) return found(key, `${inv.program} runs SQL another client generates`);
  }
  for (const text of clientInput(inv, view)) {
    const key = classifyStatements(text);
    if (key) return found(key, `${inv.program} runs: ${text.slice(0, 60)}`);
  }
  return undefined;
}
