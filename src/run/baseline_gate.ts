/** `run --baseline`: this run against the baseline as `hermes-batch compare` judges it; the exit code of the gate. */
import type { RunConfig } from "../config/run_config.js";
import { UserError } from "../core/errors.js";
import { compareRuns, parseUnscoredLimit, type UnscoredLimit } from "../report/compare.js";
import { comparisonText, runWarnings } from "../report/compare_text.js";
import { loadRunSamples } from "../report/run_samples.js";

/** The run's --max-unscored, parsed (undefined when not given); the config schema already refused a bad value. */
export function maxUnscoredOf(config: RunConfig): UnscoredLimit | undefined {
  if (config.max_unscored === undefined) return undefined;
  const limit = parseUnscoredLimit(config.max_unscored);
  if (limit === null)
    throw new UserError(
      `--max-unscored ${config.max_unscored}: must be a whole number of tasks or a percentage such as 10%`,
    );
  return limit;
}

/** 0 no regression, 1 a regression, 3 not comparable (the exit codes of `compare`). */
export async function baselineGate(config: RunConfig, runDir: string, out: NodeJS.WritableStream): Promise<0 | 1 | 3> {
  const maxUnscored = maxUnscoredOf(config);
  const [baseline, current] = [await loadRunSamples(config.baseline!), await loadRunSamples(runDir)];
  const comparison = compareRuns(baseline, current, {
    maxDropPp: config.max_drop,
    significantOnly: config.significant_only,
    maxUnscored,
    allowDifferentDataset: config.allow_different_dataset,
  });
  const warnings = [...runWarnings(baseline, "baseline"), ...runWarnings(current, "current")];
  out.write(
    `\ncompared with the baseline ${config.baseline}:\n${warnings.map((w) => `${w}\n`).join("")}${comparisonText(comparison)}`,
  );
  return comparison.verdict === "not_comparable" ? 3 : comparison.verdict === "regression" ? 1 : 0;
}
