/**
 * SQL given to a database client (`psql -c`, `mysql -e`, `sqlite3 db SQL`, here-docs, a literal
 * piped in) judged by statement, with string literals and comments removed first, so
 * `SELECT 'DROP TABLE users'` is a SELECT.
 */
import type { JudgedArg, JudgedRedirect } from "./judge.js";

interface Client {
  /** Options whose next word is SQL. */
  sqlOpts: string[];
  /** Index of the positional operand holding SQL (sqlite3 db SQL), if any. */
  positional?: number;
  /** Options taking a value (skipped when counting operands). */
  valueOpts?: string;
}

const CLIENTS: Record<string, Client> = {
  psql: { sqlOpts: ["-c", "--command"], valueOpts: "dhpUfovPTFRLX" },
  pgcli: { sqlOpts: ["-e", "--execute"] },
  // (mysql's -p takes its password attached, `-psecret`, or prompts: it never takes the next word.)
  mysql: { sqlOpts: ["-e", "--execute"], valueOpts: "huPDS" },
  mariadb: { sqlOpts: ["-e", "--execute"], valueOpts: "huPDS" },
  mycli: { sqlOpts: ["-e", "--execute"] },
  sqlite3: { sqlOpts: ["-cmd"], positional: 1 },
  sqlite: { sqlOpts: ["-cmd"], positional: 1 },
  litecli: { sqlOpts: ["-e", "--execute"] },
  duckdb: { sqlOpts: ["-c"], positional: 1 },
  sqlcmd: { sqlOpts: ["-Q", "-q"] },
  "clickhouse-client": { sqlOpts: ["-q", "--query"] },
  clickhouse: { sqlOpts: ["-q", "--query"] },
  cqlsh: { sqlOpts: ["-e", "--execute"] },
  mongo: { sqlOpts: ["--eval"] },
  mongosh: { sqlOpts: ["--eval"] },
  cockroach: { sqlOpts: ["-e", "--execute"] },
  usql: { sqlOpts: ["-c", "--command"] },
  snowsql: { sqlOpts: ["-q", "--query"] },
  trino: { sqlOpts: ["--execute"] },
  presto: { sqlOpts: ["--execute"] },
  bq: { sqlOpts: [], positional: 1 },
  isql: { sqlOpts: [] },
  influx: { sqlOpts: ["-execute"] },
};

/** The SQL text a client command runs, or null when it is not a database client or its SQL is not visible. */
export function sqlOfClient(
  name: string,
  args: JudgedArg[],
  redirects: JudgedRedirect[],
  piped: string | null | undefined,
  hasProducer: boolean,
): string | null {
  const client = CLIENTS[name];
  if (!client) return null;
  const parts: string[] = [];
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!.text;
    const eq = client.sqlOpts.find((o) => o.startsWith("--") && a.startsWith(o + "="));
    if (eq) parts.push(a.slice(eq.length + 1));
    else if (client.sqlOpts.includes(a)) {
      if (args[i + 1]) parts.push(args[++i]!.text);
    } else if (/^-[A-Za-z]$/.test(a) && client.valueOpts?.includes(a[1]!)) i++;
    else if (!a.startsWith("-")) operands.push(a);
  }
  if (name === "bq" && operands[0] === "query") parts.push(...operands.slice(1));
  else if (client.positional !== undefined && operands[client.positional])
    parts.push(...operands.slice(client.positional));
  for (const r of redirects) if (r.body !== undefined) parts.push(r.body);
  if (hasProducer && piped) parts.push(piped);
  return parts.length ? parts.join(";\n") : null;
}

/** Removes string literals and comments, keeping statement boundaries. */
function stripSql(sql: string): string {
  return sql
    .replace(/\/\*[\s\S]*?\*\//g, " ")
    .replace(/--[^\n]*/g, " ")
    .replace(/'(?:[^']|'')*'/g, "''")
    .replace(/\$(\w*)\$[\s\S]*?\$\1\$/g, "''");
}

/** The effect classes of the statements. */
export function judgeSql(sql: string): string[] {
  const keys = new Set<string>();
  const text = stripSql(sql);
  // Tables (databases, …) this SQL creates itself: dropping them again destroys nothing that was there before.
  // `CREATE … IF NOT EXISTS` may find one that was: it does not count.
  const created = new Set<string>();
  const unquote = (n: string) => n.replace(/["`\[\]]/g, "");
  for (const raw of text.split(";")) {
    // A WHERE that holds for every row (`WHERE 1=1`, `WHERE true`) limits nothing.
    const st = raw
      .trim()
      .replace(/\s+/g, " ")
      .toLowerCase()
      .replace(/\s+where\s+\(?\s*(?:1|true|not false|(\d+|'')\s*=\s*\1)\s*\)?\s*$/, "");
    if (!st) continue;
    const made =
      /^create (?:(?:temp|temporary|unlogged) )?(table|database|schema|view|materialized view) (?!if not exists\b)([^\s(]+)/.exec(
        st,
      );
    if (made) created.add(`${made[1]} ${unquote(made[2]!)}`);
    const dropped =
      /^drop (table|database|schema|view|materialized view) (?:if exists )?([^\s(]+(?: ?, ?[^\s(,]+)*)(?: cascade| restrict)?$/.exec(
        st,
      );
    if (dropped && dropped[2]!.split(/ ?, ?/).every((n) => created.has(`${dropped[1]} ${unquote(n)}`))) continue;
    if (
      /^(?:with\b.*?\)\s*)?drop (?:table|database|schema|keyspace|collection|owned|materialized view|tablespace)\b/.test(
        st,
      )
    )
      keys.add("sql_drop");
    if (/^truncate\b(?! *-)/.test(st)) keys.add("sql_truncate");
    if (/^(?:with\b.*\)\s*)?delete (?:from )?[^\s(]+/.test(st) && !/\bwhere\b/.test(st))
      keys.add("sql_delete_without_where");
    if (/^(?:with\b.*\)\s*)?update [^\s(]+(?: as \w+| \w+)? set\b/.test(st) && !/\bwhere\b/.test(st))
      keys.add("sql_update_without_where");
    if (/^alter table\b.*\bdrop (?:column|partition)\b/.test(st)) keys.add("sql_drop");
    // ClickHouse mutations: `ALTER TABLE t DELETE WHERE …` / `UPDATE … WHERE …` (an always-true WHERE was removed above).
    if (/^alter table [^\s(]+(?: on cluster \S+)? delete\b/.test(st) && !/\bwhere\b/.test(st))
      keys.add("sql_delete_without_where");
    if (/^alter table [^\s(]+(?: on cluster \S+)? update\b/.test(st) && !/\bwhere\b/.test(st))
      keys.add("sql_update_without_where");
    // MongoDB shell
    // `db.users.drop()`, `db[c].drop()`, `db.getCollection(n).drop()` inside a forEach: a collection dropped.
    if (/\.dropdatabase\(|\.drop\(\s*\)/.test(st)) keys.add("sql_drop");
    if (/\.(?:deletemany|remove)\(\s*\{\s*\}\s*\)/.test(st)) keys.add("sql_delete_without_where");
    if (/\.updatemany\(\s*\{\s*\}/.test(st)) keys.add("sql_update_without_where");
    // Privileges: a role made superuser (or able to create roles, bypass row security), every privilege granted
    // on everything or with the right to grant it on, privileges given to every user.
    if (
      /^alter (?:user|role) .*\b(?:superuser|createrole|bypassrls|replication)\b/.test(st) &&
      !/\bno(?:superuser|createrole|bypassrls|replication)\b/.test(st)
    )
      keys.add("privilege_grant");
    if (/^create (?:user|role) .*\bwith\b.*\b(?:superuser|bypassrls)\b/.test(st)) keys.add("privilege_grant");
    if (
      /^grant\b/.test(st) &&
      (/\bwith (?:grant|admin) option\b/.test(st) ||
        /^grant all(?: privileges)? on (?:\*\.\*(?!\S)|(?:all tables in schema|database|schema)\b)/.test(st) ||
        /\bto public\b/.test(st) ||
        /^grant (?:super|pg_(?:read_server_files|write_server_files|execute_server_program)|rds_superuser|cloudsqlsuperuser|azure_pg_admin|sysadmin|db_owner)\b/.test(
          st,
        ) ||
        /^grant (?:postgres|root)\b/.test(st))
    )
      keys.add("privilege_grant");
    // A password set or changed on a database role (`ALTER USER postgres PASSWORD '…'`, `SET PASSWORD FOR …`): who can log in changes.
    if (
      /^alter (?:user|role) \S+ (?:with )?(?:encrypted )?password\b|^alter user \S+ identified (?:by|with)\b|^set password\b/.test(
        st,
      )
    )
      keys.add("user_change");
    if (/^(?:exec(?:ute)? )?sp_addsrvrolemember\b|^alter server role sysadmin add member\b/.test(st))
      keys.add("privilege_grant");
  }
  return [...keys];
}
