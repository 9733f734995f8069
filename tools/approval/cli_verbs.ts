/**
 * Verbs of infrastructure, platform and database-migration CLIs, judged by what they do rather than by the
 * tool's own rule set (judge.ts has per-tool rules where a tool needs finer distinctions). Everything here is data:
 *
 * - MIGRATION_RESETS: migration tools' commands that drop or empty every table (`flyway clean`, `liquibase dropAll`,
 *   `alembic downgrade base`, `manage.py migrate APP zero`, …);
 * - PLATFORM_RESETS: hosted databases and platforms reset, wiped or taken offline (`heroku pg:reset`,
 *   `supabase db reset --linked`, `firebase firestore:delete --all-collections`, …);
 * - INFRA_CLIS with DESTRUCTIVE_VERBS: any other verb of a known infrastructure CLI that deletes, destroys, removes,
 *   purges, resets, drops, wipes, terminates, stops, disables or revokes (`az webapp stop`, `certbot delete`) — a
 *   verb this file has never seen is judged by its words (`pg:reset` → reset, `stop-instances` → stop);
 * - scale to zero (`docker service scale api=0`, `heroku ps:scale web=0`, `fly scale count 0`).
 *
 * Every CLI's global options may come before its verb (`helm --kube-context X delete`): judge.ts reads the verb
 * after them as well (afterGlobalOptions).
 */
import type { JudgedArg } from "./judge.js";

/** The non-option words, lower-cased. */
function verbWords(args: JudgedArg[]): string[] {
  return args.filter((a) => !a.text.startsWith("-")).map((a) => a.text.toLowerCase());
}

/** `pg:reset` → pg, reset; `delete-bucket` → delete, bucket; `db:migrate:undo:all` → db, migrate, undo, all. */
function parts(word: string): string[] {
  return word.split(/[:._-]+/).filter(Boolean);
}

interface Rule {
  /** The program's name (basename). */
  tool: RegExp;
  /** The subcommand words joined by blanks (`db reset`, `pg:reset database_url`). */
  verb: RegExp;
  /** Required options (any of them), lower-cased prefix match (`--linked`, `--all-collections`). */
  needs?: string[];
  /** Options that make it harmless (a target version, a dry run). */
  unless?: string[];
  key: string;
}

/** Migration tools: commands that drop every table or roll every migration back. */
const MIGRATION_RESETS: Rule[] = [
  { tool: /^flyway$/, verb: /^clean\b/, key: "sql_drop" },
  { tool: /^liquibase$/, verb: /^(?:dropall|drop-all)\b/, key: "sql_drop" },
  { tool: /^(?:alembic)$/, verb: /^downgrade base\b/, key: "sql_drop" },
  { tool: /^flask$/, verb: /^db downgrade base\b/, key: "sql_drop" },
  { tool: /^dbmate$/, verb: /^drop\b/, key: "sql_drop" },
  { tool: /^goose$/, verb: /(?:^|\s)(?:reset|down-to 0)\b/, key: "sql_drop" },
  { tool: /^migrate$/, verb: /(?:^|\s)drop\b/, key: "sql_drop" },
  { tool: /^migrate$/, verb: /(?:^|\s)down\b/, needs: ["-all"], key: "sql_drop" },
  { tool: /^sqitch$/, verb: /^revert\b/, unless: ["--to", "--to-change", "-y"], key: "sql_drop" },
  { tool: /^(?:diesel|sqlx)$/, verb: /^database (?:reset|drop)\b/, key: "sql_drop" },
  { tool: /^atlas$/, verb: /^schema clean\b/, key: "sql_drop" },
  { tool: /^(?:mikro-orm|mikro-orm-esm)$/, verb: /^(?:schema:drop|schema:fresh|migration:fresh)\b/, key: "sql_drop" },
  { tool: /^(?:sequelize|sequelize-cli)$/, verb: /^db:migrate:undo:all\b/, key: "sql_drop" },
  { tool: /^(?:console|symfony)$/, verb: /(?:^|\s)doctrine:(?:database|schema):drop\b/, key: "sql_drop" },
  { tool: /^(?:\S*manage\.py|django-admin)$/, verb: /^migrate \S+ zero\b/, key: "sql_drop" },
  { tool: /^(?:rails|rake)$/, verb: /^db:migrate version=0\b/, key: "sql_drop" },
  { tool: /^mix$/, verb: /^ecto\.rollback\b/, needs: ["--all"], key: "sql_drop" },
  { tool: /^(?:neonctl|neon)$/, verb: /^branch(?:es)? reset\b/, key: "sql_drop" },
  { tool: /^turso$/, verb: /^db (?:destroy|delete)\b/, key: "sql_drop" },
  { tool: /^pscale$/, verb: /^(?:database|branch) delete\b/, key: "sql_drop" },
];

/** Hosted databases and platforms reset, wiped, restored over or taken offline. */
const PLATFORM_RESETS: Rule[] = [
  { tool: /^heroku$/, verb: /^pg:(?:reset|killall|backups:restore|restore)\b/, key: "sql_drop" },
  { tool: /^heroku$/, verb: /^(?:redis:cli\b.*flush|maintenance:on)\b/, key: "infra_teardown" },
  { tool: /^supabase$/, verb: /^db reset\b/, needs: ["--linked", "--db-url"], key: "sql_drop" },
  {
    tool: /^firebase$/,
    verb: /^firestore:delete\b/,
    needs: ["--all-collections", "-r", "--recursive"],
    key: "sql_drop",
  },
  { tool: /^firebase$/, verb: /^(?:database:remove|database:set|hosting:disable)\b/, key: "infra_teardown" },
  { tool: /^railway$/, verb: /^(?:down|delete)\b/, key: "infra_teardown" },
  { tool: /^wrangler$/, verb: /(?:^|\s)(?:delete|rollback)\b/, key: "infra_teardown" },
  // A CDN purge of one key or URL is routine; of everything, every cached object is fetched again from the origin.
  { tool: /^fastly$/, verb: /^purge\b/, needs: ["--all"], key: "cache_flush" },
  { tool: /^flarectl$/, verb: /^zone purge\b/, needs: ["--everything"], key: "cache_flush" },
];

/**
 * Infrastructure, platform and service CLIs: any verb among DESTRUCTIVE_VERBS is asked about. Tools with finer rules of
 * their own (kubectl, docker, terraform, git, aws's own exemptions, …) are judged in judge.ts and not listed here.
 */
export const INFRA_CLIS = new Set([
  // clouds and hosting
  "az",
  "gcloud",
  "doctl",
  "hcloud",
  "linode-cli",
  "fly",
  "flyctl",
  "heroku",
  "vercel",
  "netlify",
  "railway",
  "render",
  "supabase",
  "firebase",
  "wrangler",
  "fastly",
  "flarectl",
  "oci",
  "ibmcloud",
  "scw",
  "exo",
  "vultr-cli",
  "upctl",
  "aliyun",
  "tccli",
  "civo",
  "koyeb",
  "northflank",
  "porter",
  "qovery",
  "cf",
  "appcenter",
  "eb",
  "sam",
  "copilot",
  // databases and data platforms as a service
  "pscale",
  "neonctl",
  "neon",
  "turso",
  "upstash",
  "atlas",
  "mongocli",
  "confluent",
  "databricks",
  "snow",
  "astro",
  // certificates, DNS, secrets, identity, observability
  "certbot",
  "acme.sh",
  "lego",
  "auth0",
  "okta",
  "stripe",
  "twilio",
  "sentry-cli",
  "datadog-ci",
  "doppler",
  "infisical",
  "op",
  "bw",
  "1password",
  "vault",
  "nomad",
  "consul",
  "boundary",
  "waypoint",
  "packer",
  // git hosting and CI
  "gh",
  "glab",
  "tea",
  "circleci",
  "travis",
  "buildkite-agent",
]);

/**
 * Verbs (or parts of a verb: `pg:reset`, `stop-instances`, `delete_app`) that destroy, empty, stop or cut off.
 * Not `restart` (the service comes back), not `purge` of one named item on a CDN (judged by `--all` above).
 */
const DESTRUCTIVE_VERBS =
  /^(?:destroy|delete|remove|rm|del|purge|reset|drop|wipe|erase|terminate|stop|disable|revoke|deregister|unregister|truncate|flush|kill|uninstall|deactivate|suspend|shutdown|poweroff|power-off|halt|decommission|nuke|teardown)$/;
/** Words that make the command a read or a listing (`az webapp list-deleted`, `gcloud … describe`, `certbot certificates`). */
const READ_VERBS =
  /^(?:list|ls|show|get|describe|status|info|view|inspect|logs?|history|whoami|version|help|search|watch|tail|browse|open|diff|plan|validate|check|test|explain|print|export|download|cat|read)$/;

function matchRule(r: Rule, name: string, words: string[], low: string[]): boolean {
  if (!r.tool.test(name)) return false;
  if (!r.verb.test(words.join(" "))) return false;
  const opt = (o: string) => low.some((a) => a === o || a.startsWith(o + "="));
  if (r.needs && !r.needs.some(opt)) return false;
  if (r.unless && r.unless.some(opt)) return false;
  return true;
}

/** Scaling a service, app or group to nothing: `scale api=0`, `ps:scale web=0`, `scale count 0`, `--replicas 0`. */
function scalesToZero(words: string[], texts: string[]): boolean {
  const scale = words.findIndex((w) => parts(w).includes("scale") || w === "resize");
  if (scale < 0) return false;
  const rest = texts.slice(texts.findIndex((t) => t.toLowerCase() === words[scale]) + 1);
  if (rest.some((t) => /^[\w.-]+=0+$/.test(t) && !/^--/.test(t))) return true;
  if (
    rest.some(
      (t, k) =>
        /^(?:count|--count|--replicas|--instances|--size|--num-nodes|--desired|--min|--max|-n|-r)$/i.test(
          rest[k - 1] ?? "",
        ) && /^0+$/.test(t),
    )
  )
    return true;
  return rest.some((t) => /^--(?:count|replicas|instances|size|num-nodes|desired)=0+$/i.test(t));
}

/**
 * Effect classes of a CLI invocation judged by its verbs; empty when nothing here applies. `generic`: only the
 * destructive-verb rule of INFRA_CLIS (judge.ts asks for it when no rule of the tool's own found anything).
 */
export function cliVerbEffects(name: string, args: JudgedArg[], generic = false): string[] {
  const texts = args.map((a) => a.text);
  const low = texts.map((t) => t.toLowerCase());
  if (low.some((t) => /^--(?:help|dry-run|dryrun|what-if|noop)$/.test(t))) return [];
  const words = verbWords(args);
  const out: string[] = [];
  if (!generic) {
    for (const r of [...MIGRATION_RESETS, ...PLATFORM_RESETS])
      if (matchRule(r, name, words, low) && !out.includes(r.key)) out.push(r.key);
    if (scalesToZero(words, texts)) out.push("cluster_teardown");
  } else if (INFRA_CLIS.has(name)) {
    // A verb with a rule of its own above (`supabase db reset` without --linked: the local development database) is judged there.
    if ([...MIGRATION_RESETS, ...PLATFORM_RESETS].some((r) => r.tool.test(name) && r.verb.test(words.join(" "))))
      return out;
    const verbs = words.slice(0, 4).filter((w) => !/[/=@]|^\d/.test(w));
    const pieces = [...verbs, ...verbs.flatMap(parts)];
    if (!pieces.some((p) => READ_VERBS.test(p)) && pieces.some((p) => DESTRUCTIVE_VERBS.test(p)))
      out.push("infra_teardown");
  }
  return out;
}
