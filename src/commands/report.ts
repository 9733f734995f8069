/** `hermes-batch report RUN_DIR [--baseline RUN_DIR] [-o FILE]`: one self-contained HTML file. */
import { existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { UserError } from "../core/errors.js";
import { buildReportModel } from "../report/html/report_data.js";
import { reportHtml } from "../report/html/page.js";
import { RUN_FILES } from "../store/checkpoint.js";
import { checkRunFiles, nonEmptyPath, parseCommandArgs } from "./args.js";
import { GATE_OPTIONS, gateOptions } from "./gate_flags.js";
import type { Command } from "./types.js";

const help = `Usage: hermes-batch report RUN_DIR [--baseline RUN_DIR [gate flags]] [-o FILE]

Writes one HTML file that works offline (every asset inline, no remote load): the run's header, outcomes and
scores (pass rate with its interval, pass@k, by group, unscored count), charts (tool calls and errors per tool,
turns, tokens and duration per task, approval decisions, failures), a task table with search, filters and
sorting, and each task's conversation turn by turn (link: report.html#task=ID).

Options
  --baseline RUN_DIR   compare with an earlier run: newly failing and newly passing tasks first, deltas, and
                       the two trajectories of a task side by side
  -o, --out FILE       where to write (default RUN_DIR/report.html; - for stdout)
  --max-drop P, --significant-only, --max-unscored N|P%, --allow-different-dataset
                       with --baseline: the gate CI's \`compare\` applies (see compare --help), so the page's
                       verdict is the one that gate gives; without them, compare's default gate
`;

const options = {
  ...GATE_OPTIONS,
  baseline: { type: "string" },
  out: { type: "string", short: "o" },
} as const;

/** Every file of the run folders that a report or the live view reads (src/commands/args.ts checkRunFiles). */
export function runFilePaths(...dirs: (string | undefined)[]): string[] {
  return dirs.flatMap((d) => (d === undefined ? [] : Object.values(RUN_FILES).map((name) => join(d, name))));
}

/** The output file's folder must exist: checked before the run is read. */
export function reportOutputPath(value: string): string {
  const path = resolve(value);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`-o ${value}: folder ${dir} does not exist`);
  if (existsSync(path) && statSync(path).isDirectory()) throw new UserError(`-o ${value}: is a folder`);
  return path;
}

export const command: Command = {
  summary: "one self-contained HTML report of a run (optionally against a baseline run)",
  help,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (positionals.length !== 1) throw new UserError("report needs one run folder: RUN_DIR (see --help)");
    const runDir = positionals[0]!;
    for (const dir of [runDir, values.baseline]) {
      if (dir !== undefined && (!existsSync(dir) || !statSync(dir).isDirectory()))
        throw new UserError(`${dir}: no such run folder`);
    }
    checkRunFiles(runFilePaths(runDir, values.baseline));
    // `-o -`: the page on stdout, as export's `-` (the count line then goes to stderr).
    const given = nonEmptyPath(values.out, "-o", "file");
    const out = given === "-" ? "-" : reportOutputPath(given ?? join(runDir, "report.html"));
    const gate = gateOptions(values);
    const gateFlag = Object.keys(GATE_OPTIONS).find((f) => values[f as keyof typeof GATE_OPTIONS] !== undefined);
    if (gateFlag && values.baseline === undefined) throw new UserError(`--${gateFlag} needs --baseline RUN_DIR`);
    const model = await buildReportModel(runDir, values.baseline, gate);
    const html = reportHtml(model);
    try {
      if (out === "-") process.stdout.write(html);
      else writeFileSync(out, html);
    } catch (err) {
      throw new UserError(`-o ${out}: cannot write (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    for (const run of [model.run, model.baseline?.run]) {
      if (run?.bad_lines) process.stderr.write(`warning: ${run.dir}: ${run.bad_lines} unreadable line(s) skipped\n`);
    }
    // Tasks are tasks: with epochs, one row per task and epoch, counted apart.
    const tasks = new Set(model.rows.map((r) => r.id)).size;
    const epochs = model.rows.reduce((k, r) => Math.max(k, r.ep + 1), 1);
    const count =
      epochs > 1 ? `${tasks} task(s) × ${epochs} epochs (${model.rows.length} results)` : `${tasks} task(s)`;
    (out === "-" ? process.stderr : process.stdout).write(
      `report: ${count}, ${(Buffer.byteLength(html) / 1024).toFixed(0)} kB → ${out === "-" ? "stdout" : out}\n`,
    );
    return 0;
  },
};
