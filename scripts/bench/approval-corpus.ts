/**
 * Flag rates of the dangerous-command detection over the approval corpora: per file, the share of
 * lines flagged, and the lines that went the wrong way (dangerous missed, harmless flagged) with the
 * class the detector named. Blank and # lines are skipped; a literal \n stands for a newline.
 *   npx tsx scripts/bench/approval-corpus.ts [fixture-name-substring ...]
 * With no argument every test/fixtures/approval_*_{dangerous,harmless}.txt (and the plain tables) is measured.
 * A fixture whose header holds `# workdir: /path` is measured with that working directory
 * ({cwd, defaultCwd}, as the gate passes it in real runs); without one, no working directory is given.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { detectDangerousCommand } from "../../tools/approval/patterns.js";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "test", "fixtures");
const filters = process.argv.slice(2);

// Curated tables carry "key<TAB>command" lines on the dangerous side.
const commandOf = (line: string) => {
  const tab = line.indexOf("\t");
  return (tab >= 0 && /^[a-z_]+$/.test(line.slice(0, tab)) ? line.slice(tab + 1) : line).replace(/\\n/g, "\n");
};

/** The `# workdir: /path` header line of a fixture, if it has one. */
export const fixtureWorkdir = (text: string): string | undefined => /^# workdir: (\S+)\s*$/m.exec(text)?.[1];

const files = readdirSync(fixtures)
  .filter((f) => /^approval_.*(dangerous|harmless)\.txt$/.test(f))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();

let failed = false;
for (const file of files) {
  const wantDangerous = file.endsWith("dangerous.txt");
  const text = readFileSync(join(fixtures, file), "utf8");
  const workdir = fixtureWorkdir(text);
  const opts = workdir ? { cwd: workdir, defaultCwd: workdir } : undefined;
  const lines = text.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"));
  const wrong: string[] = [];
  let flagged = 0;
  for (const line of lines) {
    const d = detectDangerousCommand(commandOf(line), opts);
    if (d.dangerous) flagged++;
    if (d.dangerous !== wantDangerous) wrong.push(d.dangerous ? `${d.patternKey}\t${line}` : line);
  }
  const pct = ((100 * flagged) / Math.max(1, lines.length)).toFixed(1);
  process.stdout.write(`${file}${workdir ? ` (workdir ${workdir})` : ""}: ${flagged}/${lines.length} flagged (${pct} %)${wrong.length ? `, ${wrong.length} ${wantDangerous ? "missed" : "flagged wrongly"}` : ""}\n`);
  for (const w of wrong) process.stdout.write(`    ${w}\n`);
  if (wrong.length) failed = true;
}
process.exitCode = failed ? 1 : 0;
