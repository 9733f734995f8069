/** `hermes-batch compare BASELINE_RUN CURRENT_RUN`: the regression gate for CI. */
import { existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UserError } from "../core/errors.js";
import { compareRuns } from "../report/compare.js";
import { comparisonMarkdown, comparisonText, runWarnings } from "../report/compare_text.js";
import { runToJUnit } from "../report/junit.js";
import { loadRunSamples } from "../report/run_samples.js";
import { parseCommandArgs } from "./args.js";
import { GATE_OPTIONS, gateOptions } from "./gate_flags.js";
import type { Command } from "./types.js";

const help = `Usage: hermes-batch compare BASELINE_RUN CURRENT_RUN [options]

Compares two run folders with the task as the unit (epochs are repeated measures of a task): newly failing
and newly passing tasks first, then each run's pass rate over its scored tasks (unscored counted apart:
infrastructure failures, tasks without a scorer or whose judge failed; a dropped task keeps its grade), the paired change of
the per-task pass rates with its 95 % interval and a paired test that agree with each other (exact McNemar
when both runs have one epoch, a sign-flip permutation test over tasks otherwise), the gate that applied,
and the token (agent / approver / judge), duration and cost changes.

Gates (exit 1 on a regression)
  default                    without --max-drop: a significant drop (one-sided p < 0.05), or any task that
                             passed every epoch of the baseline and failed every epoch of the current run
  --max-drop P               instead: a drop of the paired pass rate by more than P points
  --significant-only         with --max-drop: only a drop that is also significant (one-sided p < 0.05)

Options
  --max-unscored N|P%        not comparable (exit 3) when more than N tasks (or P % of the baseline's tasks)
                             are unscored in either run or missing from the current run (default 10%)
  --allow-different-dataset  compare even when a paired task has another prompt in the two runs, or another
                             grading: criteria (expected, verify, rubric), judge model, --harbor-pass-threshold
  --junit FILE               JUnit XML of the current run: a failed score is <failure>, an unscored task
                             <error> with the reason, a baseline task absent from the current run and a
                             row without a scorer <skipped>
  --markdown FILE            a summary for a pull-request comment (run text escaped)
  --json FILE                the full comparison as JSON

FILE - is stdout (one of them; the comparison's text then goes to stderr).

All output files are written before the exit code is decided, whatever the verdict.
Exit codes: 0 no regression, 1 regression, 2 bad input, 3 not comparable (no task in common, another dataset
or grader, too many unscored or missing tasks, the same run folder twice), 70 an internal error.
`;

const options = {
  ...GATE_OPTIONS,
  junit: { type: "string" },
  markdown: { type: "string" },
  json: { type: "string" },
} as const;

/** An output file's folder must exist and be a folder: checked before any work, so no result is lost. */
function outputPath(value: string | undefined, flag: string): string | undefined {
  if (value === undefined || value === "-") return value; // stdout, as export's -
  const path = resolve(value);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`${flag} ${value}: folder ${dir} does not exist`);
  if (existsSync(path) && statSync(path).isDirectory()) throw new UserError(`${flag} ${value}: is a folder`);
  return path;
}

function writeOutput(path: string, text: string, flag: string): void {
  try {
    if (path === "-") process.stdout.write(text);
    else writeFileSync(path, text);
  } catch (err) {
    throw new UserError(`${flag} ${path}: cannot write (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

export const command: Command = {
  summary: "compare two runs task by task; exit 1 on a regression (CI gate)",
  help,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (positionals.length !== 2)
      throw new UserError("compare needs two run folders: BASELINE_RUN CURRENT_RUN (see --help)");
    const gate = gateOptions(values);
    const junit = outputPath(values.junit, "--junit");
    const markdown = outputPath(values.markdown, "--markdown");
    const json = outputPath(values.json, "--json");
    // One output may go to stdout (-); the comparison's text then goes to stderr, so stdout is that output alone.
    const toStdout = (["json", "junit", "markdown"] as const).filter((f) => values[f] === "-").map((f) => `--${f}`);
    if (toStdout.length > 1)
      throw new UserError(`${toStdout.join(" and ")} both write to stdout (-): give one of them a file`);
    const [baseline, current] = await Promise.all(positionals.map((p) => loadRunSamples(p)));
    const comparison = compareRuns(baseline!, current!, gate);
    for (const line of [...runWarnings(baseline!, "baseline"), ...runWarnings(current!, "current")])
      process.stderr.write(`${line}\n`);
    (toStdout.length ? process.stderr : process.stdout).write(comparisonText(comparison));
    if (junit) writeOutput(junit, runToJUnit(current!, { baseline: baseline! }), "--junit");
    if (markdown) writeOutput(markdown, comparisonMarkdown(comparison), "--markdown");
    if (json) writeOutput(json, JSON.stringify(comparison, null, 2) + "\n", "--json");
    return comparison.verdict === "not_comparable" ? 3 : comparison.verdict === "regression" ? 1 : 0;
  },
};
