/**
 * Flag rates of the dangerous-command detection over the approval corpora: per file, the share of
 * lines flagged, and the lines that went the wrong way (dangerous missed, harmless flagged) with the
 * class the detector named. Blank and # lines are skipped; a literal \n stands for a newline.
 *   npx tsx scripts/bench/approval-corpus.ts [--quiet] [fixture-name-substring ...]
 * Each file's line also gives p50/p99 of the time per command (ms); the last line gives them over all
 * commands. --quiet leaves out the per-line lists of wrong decisions. --next is accepted and changes nothing
 * (it once chose the rebuilt analyser, which is now the only one). --repeat N times each command
 * N times (after one untimed run, as every command is) and keeps its fastest run (on a loaded machine one run's p99 is the scheduler's, not the detector's).
 * With no argument every test/fixtures/approval_*_{dangerous,harmless}.txt (and the plain tables) is measured.
 * A fixture whose header holds `# workdir: /path` is measured with that working directory
 * ({cwd, defaultCwd}, as the gate passes it in real runs); without one, no working directory is given.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { detectDangerousCommand } from "../../tools/approval/detect.js";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "test", "fixtures");
const quiet = process.argv.includes("--quiet");
const repeatAt = process.argv.indexOf("--repeat");
const repeat = repeatAt > 0 ? Number(process.argv[repeatAt + 1]) : 1;
if (!Number.isInteger(repeat) || repeat < 1) {
  process.stderr.write("--repeat needs a whole number of runs (1 or more)\n");
  process.exit(2);
}
const filters = process.argv
  .slice(2)
  .filter((a, i, all) => a !== "--quiet" && a !== "--next" && a !== "--repeat" && all[i - 1] !== "--repeat");
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const timing = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return `p50 ${quantile(sorted, 0.5).toFixed(3)} ms, p99 ${quantile(sorted, 0.99).toFixed(3)} ms`;
};
const allTimes: number[] = [];

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
  const times: number[] = [];
  for (const line of lines) {
    const command = commandOf(line);
    let fastest = Infinity;
    let d = detectDangerousCommand(command, opts);
    for (let run = 0; run < repeat; run++) {
      const t0 = performance.now();
      d = detectDangerousCommand(command, opts);
      fastest = Math.min(fastest, performance.now() - t0);
    }
    times.push(fastest);
    if (d.dangerous) flagged++;
    if (d.dangerous !== wantDangerous) wrong.push(d.dangerous ? `${d.patternKey}\t${line}` : line);
  }
  const pct = ((100 * flagged) / Math.max(1, lines.length)).toFixed(1);
  process.stdout.write(
    `${file}${workdir ? ` (workdir ${workdir})` : ""}: ${flagged}/${lines.length} flagged (${pct} %)${wrong.length ? `, ${wrong.length} ${wantDangerous ? "missed" : "flagged wrongly"}` : ""}; ${timing(times)}\n`,
  );
  allTimes.push(...times);
  if (!quiet) for (const w of wrong) process.stdout.write(`    ${w}\n`);
  if (wrong.length) failed = true;
}
process.stdout.write(`all ${allTimes.length} commands: ${timing(allTimes)}\n`);
process.exitCode = failed ? 1 : 0;
