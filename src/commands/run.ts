/** `hermes-batch run DATASET`: the main job. */
import { resolveRunConfig, type RunConfig } from "../config/run_config.js";
import { UserError } from "../core/errors.js";
import { flagsToConfigValues, runArgOptions, runOptionsHelp, withOptionalValue } from "../config/run_flags.js";
import { RL_CAPTURE_MODES } from "../config/run_options.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

/** The text of `run --help`, built when asked for: most invocations never print it. */
const help = () => `Usage: hermes-batch run DATASET.jsonl [options]
       hermes-batch run - [options] < DATASET.jsonl
       hermes-batch run --harbor TASKS_DIR --env docker [options]

Runs an agent loop for every row of a JSONL dataset ({"prompt": …, "id"?, "image"?, "cwd"?, "toolsets"?, "verify"?,
"verify_files"?, "expected"?, "rubric"?, "metadata"?}), each in its own environment, and writes <output-dir>/<run-name>/:
trajectories.jsonl, failed.jsonl, dropped.jsonl, statistics.json, summary.csv, atif.jsonl, run.yaml, checkpoint.json.

DATASET may be gzip-compressed. \`-\` reads it from stdin; /dev/stdin, a FIFO and process substitution
(<(…)) work too. Such an input is read once, into memory: bad rows are named <stdin>:LINE, the run name
defaults to "stdin" ("pipe" for another descriptor), verify_files are relative to the current folder, and
run.yaml records its sha256 (dataset_sha256). --resume needs the same content piped in again (other
content stops with exit 3, as a changed file does).

${runOptionsHelp()}

Exit codes: 0 all done, 1 some tasks failed (or, with --baseline, a regression), 2 bad input or config,
3 not comparable with --baseline, 130 interrupted.
Ctrl-C once finishes the tasks in flight; twice aborts them. Then resume with --resume.
`;

export function flagsToConfig(argv: string[]): {
  flags: Record<string, unknown>;
  configPath?: string;
  shard?: string;
  shardCount?: string;
} {
  const { values, positionals } = parseCommandArgs(
    withOptionalValue(argv, "--rl-capture", RL_CAPTURE_MODES, "strict"),
    runArgOptions(),
  );
  if (positionals.length > 1)
    throw new UserError(`one dataset at a time, got ${positionals.length}: ${positionals.join(" ")}`);
  const { flags, invocation } = flagsToConfigValues(values);
  if (positionals[0] !== undefined) flags.dataset = positionals[0];
  if (flags.harbor !== undefined) {
    if (positionals[0] !== undefined)
      throw new UserError(
        `--harbor ${String(flags.harbor)} replaces DATASET: give one or the other, not ${positionals[0]} too`,
      );
    flags.dataset = flags.harbor;
  }
  return { flags, configPath: invocation.config, shard: invocation.shard, shardCount: invocation["shard-count"] };
}

export function configFromArgv(argv: string[]): RunConfig {
  const { flags, configPath } = flagsToConfig(argv);
  if (!flags.dataset && !configPath) throw new UserError("missing DATASET (see --help)");
  const config = resolveRunConfig(flags, configPath, { combinations: true });
  if (!config.model) throw new UserError("--model is required (use --model scripted for the built-in demo model)");
  if (config.approval === "interactive") {
    throw new UserError(
      "--approval interactive is for single sessions; a batch run has nobody to ask. Use smart (default), deny or allow",
    );
  }
  return config;
}

export const command: Command = {
  summary: "run an agent over every row of a JSONL dataset (the main job)",
  get help() {
    return help();
  },
  async run(argv) {
    const config = configFromArgv(argv);
    const { shard, shardCount } = flagsToConfig(argv);
    const { resolveShard } = await import("../shard/assign.js");
    const resolved = resolveShard({ shard, shardCount, env: process.env });
    const { runBatch } = await import("../run/runner.js");
    return runBatch(config, { shard: resolved });
  },
};
