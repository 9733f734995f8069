/** `hermes-batch compare BASELINE_RUN CURRENT_RUN`: the regression gate for CI. */
import { existsSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UserError } from "../core/errors.js";
import { compareRuns } from "../report/compare.js";
import { comparisonMarkdown, comparisonText } from "../report/compare_text.js";
import { runToJUnit } from "../report/junit.js";
import { loadRunSamples } from "../report/run_samples.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

const help = `Usage: hermes-batch compare BASELINE_RUN CURRENT_RUN [options]

Compares two run folders task by task (paired by task id and epoch), using the score of each trajectory line:
newly failing and newly passing tasks first, then each run's pass rate over its scored tasks (unscored counted
apart: infrastructure failures, dropped tasks, tasks without a scorer or whose judge failed), the paired
pass-rate change with its 95 % interval (bootstrap over tasks) and a paired significance test (exact McNemar
for one epoch, paired bootstrap for several), and the token, duration and cost changes.

Options
  --max-drop P               regression (exit 1) when the paired pass rate drops by more than P points
  --significant-only         with --max-drop: gate only on a drop that is also significant (p < 0.05)
  --max-unscored N           not comparable (exit 3) when more than N paired tasks are unscored in either run
  --allow-different-dataset  compare even when a paired task has another prompt in the two runs
  --junit FILE               JUnit XML of the current run: one testcase per task, the failure says why
  --markdown FILE            a summary for a pull-request comment
  --json FILE                the full comparison as JSON

Exit codes: 0 no regression, 1 regression, 2 bad input, 3 not comparable (no task in common, another dataset,
too many unscored tasks).
`;

const options = {
  "max-drop": { type: "string" },
  "significant-only": { type: "boolean" },
  "max-unscored": { type: "string" },
  "allow-different-dataset": { type: "boolean" },
  junit: { type: "string" },
  markdown: { type: "string" },
  json: { type: "string" },
} as const;

function numberFlag(value: string | undefined, flag: string, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n))) {
    throw new UserError(`${flag} must be a ${integer ? "whole number" : "number"} ≥ 0, got '${value}'`);
  }
  return n;
}

/** An output file's folder must exist and be a folder: checked before any work, so no result is lost. */
function outputPath(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const path = resolve(value);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UserError(`${flag} ${value}: folder ${dir} does not exist`);
  if (existsSync(path) && statSync(path).isDirectory()) throw new UserError(`${flag} ${value}: is a folder`);
  return path;
}

function writeOutput(path: string, text: string, flag: string): void {
  try {
    writeFileSync(path, text);
  } catch (err) {
    throw new UserError(`${flag} ${path}: cannot write (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

export const command: Command = {
  summary: "compare two runs task by task; exit 1 on a regression (CI gate)",
  help,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, options);
    if (positionals.length !== 2) throw new UserError("compare needs two run folders: BASELINE_RUN CURRENT_RUN (see --help)");
    const maxDropPp = numberFlag(values["max-drop"], "--max-drop", false);
    const maxUnscored = numberFlag(values["max-unscored"], "--max-unscored", true);
    if (values["significant-only"] && maxDropPp === undefined) throw new UserError("--significant-only needs --max-drop P");
    const junit = outputPath(values.junit, "--junit");
    const markdown = outputPath(values.markdown, "--markdown");
    const json = outputPath(values.json, "--json");
    const [baseline, current] = await Promise.all(positionals.map((p) => loadRunSamples(p)));
    const comparison = compareRuns(baseline!, current!, {
      maxDropPp,
      significantOnly: values["significant-only"],
      maxUnscored,
      allowDifferentDataset: values["allow-different-dataset"],
    });
    for (const [run, label] of [[baseline!, "baseline"], [current!, "current"]] as const) {
      if (run.badLines) process.stderr.write(`warning: ${label} ${run.dir}: ${run.badLines} unreadable line(s) skipped\n`);
    }
    process.stdout.write(comparisonText(comparison));
    if (junit) writeOutput(junit, runToJUnit(current!), "--junit");
    if (markdown) writeOutput(markdown, comparisonMarkdown(comparison), "--markdown");
    if (json) writeOutput(json, JSON.stringify(comparison, null, 2) + "\n", "--json");
    return comparison.verdict === "not_comparable" ? 3 : comparison.verdict === "regression" ? 1 : 0;
  },
};
