/**
 * Every corpus line's verdict, one line each: `file<TAB>classes<TAB>command` (classes in class order, `-` for
 * none). A refactor of tools/approval/ that must not change behaviour keeps this output byte for byte:
 *   npx tsx scripts/approval-snapshot.ts > /tmp/before.tsv   # … change …
 *   npx tsx scripts/approval-snapshot.ts | diff /tmp/before.tsv -
 * Covers test/fixtures/approval_*.txt (with their `# workdir:` headers) and every rule row's flag/pass example.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { analyseCommand } from "../tools/approval/detect.js";
import { RULES } from "../tools/approval/next/rules.js";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "..", "test", "fixtures");
const commandOf = (line: string) => {
  const tab = line.indexOf("\t");
  return (tab >= 0 && /^[a-z_]+$/.test(line.slice(0, tab)) ? line.slice(tab + 1) : line).replace(/\\n/g, "\n");
};
const out: string[] = [];
const record = (source: string, command: string, cwd?: string) => {
  const opts = cwd ? { cwd, defaultCwd: cwd } : {};
  const classes = analyseCommand(command, opts).matches.map((m) => m.key);
  out.push(`${source}\t${classes.join(",") || "-"}\t${JSON.stringify(command)}`);
};
for (const file of readdirSync(fixtures)
  .filter((f) => /^approval_.*\.txt$/.test(f))
  .sort()) {
  const text = readFileSync(join(fixtures, file), "utf8");
  const cwd = /^# workdir: (\S+)\s*$/m.exec(text)?.[1];
  for (const line of text.split("\n")) if (line.trim() && !line.startsWith("#")) record(file, commandOf(line), cwd);
}
for (const rule of RULES) {
  for (const command of [...rule.flag, ...rule.pass]) record(`rule:${rule.program[0]}`, command, "/workspace");
}
process.stdout.write(`${out.join("\n")}\n`);
