/** `hermes-batch score RUN_DIR [--dataset FILE]`: recompute a finished run's scores without running its agents again. */
import { appendFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import YAML from "yaml";
import { UserError, errorMessage } from "../core/errors.js";
import { RunConfigSchema } from "../config/run_options.js";
import { SECRET_KEYS, resolveRunConfig, type RunConfig } from "../config/run_config.js";
import { HEADER_KEYS } from "../config/headers.js";
import { flagsToConfigValues, runArgOptions } from "../config/run_flags.js";
import { parseCommandArgs, parseIntFlag, splitList } from "./args.js";
import type { Command } from "./types.js";

const help = `Usage: hermes-batch score RUN_DIR [--dataset FILE] [options]

Recomputes the score of every task in RUN_DIR/trajectories.jsonl from its saved final answer, without running
the agent again: "expected" is matched again, "rubric" is graded again by the judge model, "verify" runs again
only in a task folder the run kept (--keep-workspaces with --env local or host); otherwise a row's verify result
stays the one the run recorded (same command), or the task is unscored with that reason (the row's command
changed, or the run never ran one). The scoring fields (expected, rubric, verify, verify_files) come from
--dataset FILE when given (to re-score with corrected answers), else from the dataset recorded in run.yaml.
Every task id of the run must have a row there. Failed and dropped tasks are left as they are.

trajectories.jsonl is rewritten whole and atomically (a temporary file in the run folder, fsync, rename): an
interruption (Ctrl-C, a kill) at any point leaves either the original file or the complete new one. Then
statistics.json, summary.csv and atif.jsonl are rebuilt as at the end of a run (and report.html, when the run has one).
Each line's "judge" and "judge_usage" become those of the new judge call (cost_usd too, with prices).

Options
  --dataset FILE            the rows to score against (default: run.yaml's dataset)
  --judge-model M           the model that grades rows with a "rubric" (default: the run's judge model, else
                            its model; the scripted demo has no judge unless one is named)
  --judge-base-url URL      the judge's endpoint (default: the run's, else --base-url)
  --judge-api-key K         the judge's key (default: --api-key when the judge is on the run's host)
  --judge-header 'N: V'     an HTTP header on the judge's requests (repeatable)
  --base-url URL            the run's endpoint, the judge's default (default: the run's)
  --api-key K               the run's endpoint key (default: $OPENROUTER_API_KEY for OpenRouter, else
                            $OPENAI_API_KEY); never written
  --header 'N: V'           an HTTP header sent to the judge when it is on the run's host (repeatable)
  --max-retries N           retries of a judge request (default: the run's)
  --request-timeout SEC     per judge request (default: the run's)
  --no-preflight            skip the judge's GET /models check before the first task
  --scorers a,b             compute only these again (expected, rubric, verify); the others keep the run's
                            result and judge call (e.g. --scorers expected: new answers, no judge tokens)
  --concurrency N           tasks scored at once, i.e. judge calls in flight (default 8)

It prints how many tasks were re-scored, how many changed pass → fail and fail → pass, how many are unscored
(and why), the judge's tokens, and the new pass rate.

Exit codes: 0 re-scored, every task that names a scorer decided; 1 re-scored (files written) but some task is
unscored (judge failed or answered garbage, verify could not run): score again, or rerun those tasks with
run --resume --retry-unscored; 2 bad input (not a run folder, no dataset, dataset rows missing for some task
ids: they are named; nothing is written); 130 interrupted (trajectories.jsonl unchanged).
`;

/** The run options `score` takes, by config key: the judge's endpoint and its defaults. */
const RUN_KEYS = [
  "judge_model",
  "judge_base_url",
  "judge_api_key",
  "judge_headers",
  "base_url",
  "api_key",
  "headers",
  "max_retries",
  "request_timeout",
  "no_preflight",
] as const;
/** Keys of run.yaml that describe how that invocation was started, not the run: not carried over. */
const INVOCATION_KEYS = new Set([
  "resume",
  "retry_failed",
  "retry_internal",
  "retry_unscored",
  "only",
  "dry_run",
  "baseline",
  "max_drop",
  "fail_under",
  "allow_config_change",
]);

function scoreArgOptions() {
  const all = runArgOptions();
  const options: Record<string, { type: "string" | "boolean"; multiple?: boolean }> = {};
  for (const key of RUN_KEYS) {
    const flag = key === "judge_headers" ? "judge-header" : key === "headers" ? "header" : key.replace(/_/g, "-");
    options[flag] = all[flag]!;
  }
  return {
    ...options,
    dataset: { type: "string" as const },
    concurrency: { type: "string" as const },
    scorers: { type: "string" as const },
  };
}

/** The run's recorded configuration (secrets and header values are not in run.yaml) with this invocation's flags over it. */
function scoreConfig(runDir: string, flags: Record<string, unknown>): { config: RunConfig; recordedDataset?: string } {
  const path = join(runDir, "run.yaml");
  if (!existsSync(path)) throw new UserError(`${runDir}: not a run folder (no run.yaml)`);
  let recorded: Record<string, unknown>;
  try {
    recorded = (YAML.parse(readFileSync(path, "utf8")) ?? {}) as Record<string, unknown>;
  } catch (err) {
    throw new UserError(`${path}: unreadable (${errorMessage(err).split("\n")[0]})`);
  }
  const known = new Set(Object.keys(RunConfigSchema.shape));
  const skip = new Set<string>([...SECRET_KEYS, ...HEADER_KEYS, ...INVOCATION_KEYS]);
  const base: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(recorded))
    if (known.has(k) && !skip.has(k) && v !== undefined && v !== null) base[k] = v;
  let recordedDataset = typeof recorded.dataset === "string" ? recorded.dataset : undefined;
  // A relative path is relative to where the run started: found from the run folder when run.yaml's relative
  // output_dir is the tail of the folder the run folder is in (runs/NAME started in the folder above runs/).
  const recordedOut = typeof recorded.output_dir === "string" ? recorded.output_dir : undefined;
  if (
    recordedDataset &&
    !isAbsolute(recordedDataset) &&
    !existsSync(recordedDataset) &&
    recordedOut &&
    !isAbsolute(recordedOut) &&
    recorded.shard === undefined
  ) {
    const parent = dirname(resolve(runDir));
    const tail = resolve("/", recordedOut);
    if (tail !== "/" && parent.endsWith(tail)) {
      const candidate = join(parent.slice(0, parent.length - tail.length) || "/", recordedDataset);
      if (existsSync(candidate)) recordedDataset = candidate;
    }
  }
  // Task folders are found from where the run folder is now: <output-dir>/<run> or <output-dir>/<run>/shards/<i>-of-<N>.
  const abs = resolve(runDir);
  base.output_dir = recorded.shard !== undefined ? resolve(abs, "..", "..", "..") : dirname(abs);
  base.dataset ??= "(unknown)";
  base.run_name ??= /^[A-Za-z0-9._-]+$/.test(basename(abs)) ? basename(abs) : undefined;
  let config: RunConfig;
  try {
    config = resolveRunConfig({ ...base, ...flags });
  } catch (err) {
    throw new UserError(`${path} with the flags given: ${errorMessage(err)}`);
  }
  return { config, recordedDataset };
}

export const command: Command = {
  summary: "recompute a run's scores from its saved trajectories (corrected dataset, another judge)",
  help,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, scoreArgOptions());
    if (positionals.length !== 1) throw new UserError("score needs one run folder: RUN_DIR (see --help)");
    const runDir = positionals[0]!;
    if (!existsSync(runDir) || !statSync(runDir).isDirectory()) throw new UserError(`${runDir}: no such run folder`);
    if (!existsSync(join(runDir, "trajectories.jsonl")))
      throw new UserError(`${runDir}: not a run folder (no trajectories.jsonl)`);
    const concurrency = parseIntFlag(values.concurrency as string | undefined, "--concurrency", 1) ?? 8;
    const { flags } = flagsToConfigValues(
      values as Record<string, string | boolean | (string | boolean)[] | undefined>,
    );
    const { config, recordedDataset } = scoreConfig(runDir, flags);
    const { RESCORABLE_SCORERS } = await import("../run/rescore.js");
    type Name = (typeof RESCORABLE_SCORERS)[number];
    let only: Set<Name> | undefined;
    if (values.scorers !== undefined) {
      const names = splitList(values.scorers as string) ?? [];
      const unknown = names.filter((n) => !(RESCORABLE_SCORERS as readonly string[]).includes(n));
      if (unknown.length || names.length === 0)
        throw new UserError(
          `--scorers ${values.scorers as string}: name one or more of ${RESCORABLE_SCORERS.join(", ")}`,
        );
      only = new Set(names as Name[]);
    }

    let dataset = values.dataset as string | undefined;
    if (dataset === undefined) {
      if (!recordedDataset || recordedDataset === "-" || recordedDataset.startsWith("/dev/")) {
        throw new UserError(
          `${runDir}/run.yaml records no dataset file to read again${recordedDataset ? ` (${recordedDataset})` : ""}: pass --dataset FILE`,
        );
      }
      if (!existsSync(recordedDataset)) {
        throw new UserError(
          `the run's dataset ${recordedDataset} (recorded in run.yaml) is not found, from here or from where the run started: pass --dataset FILE`,
        );
      }
      dataset = recordedDataset;
    } else if (!existsSync(dataset)) {
      throw new UserError(`--dataset ${dataset}: file not found`);
    }

    const { readDataset, formatBadRow, recordedDatasetSource } = await import("../run/dataset.js");
    const rows = new Map<string, import("../run/dataset.js").DatasetLine>();
    const bad: string[] = [];
    for await (const item of readDataset(await recordedDatasetSource(dataset))) {
      if (item.ok) rows.set(item.value.id, item.value);
      else bad.push(formatBadRow(item.bad));
    }
    if (bad.length)
      throw new UserError(
        `${bad.length} bad row(s) in ${dataset} (nothing was re-scored):\n  ${bad.slice(0, 20).join("\n  ")}${bad.length > 20 ? `\n  … and ${bad.length - 20} more` : ""}`,
      );

    const { missingRows, rescoreRun, RescoreInterrupted } = await import("../run/rescore.js");
    const { missing, lines } = await missingRows(runDir, rows);
    if (missing.length) {
      throw new UserError(
        `${missing.length} task id(s) of the run have no row in ${dataset} (nothing was re-scored): ${missing.slice(0, 20).join(", ")}${missing.length > 20 ? ", …" : ""}`,
      );
    }

    const { acquireRunLock } = await import("../store/run_lock.js");
    const release = acquireRunLock(runDir);
    const abort = new AbortController();
    let interrupted = false;
    const onSignal = () => {
      interrupted = true;
      abort.abort(new Error("interrupted"));
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    process.on("SIGHUP", onSignal);
    const startedAt = new Date();
    let replaced = false;
    try {
      // A judge only when a row of the run asks for one.
      const ids = new Set<string>();
      const { readJsonl } = await import("../store/jsonl_file.js");
      for await (const l of readJsonl<{ task_id?: unknown }>(join(runDir, "trajectories.jsonl")))
        if (typeof l.value?.task_id === "string") ids.add(l.value.task_id);
      const needsJudge = (!only || only.has("rubric")) && [...ids].some((id) => rows.get(id)?.row.rubric !== undefined);
      const { runEndpoints } = await import("../models/factory.js");
      let judge: import("../core/chat.js").ChatModel | undefined;
      let gates: import("../scheduler/run_models.js").ModelGates | undefined;
      if (needsJudge) {
        const endpoint = runEndpoints(config).judge;
        if (endpoint) {
          const { preflightEndpoints, requireKeys } = await import("../models/preflight.js");
          requireKeys([["judge", endpoint]]);
          if (!config.no_preflight)
            await preflightEndpoints([["judge", endpoint]], {
              warn: (line) => process.stderr.write(`warning: ${line}\n`),
              signal: abort.signal,
            });
          const { ModelGates, createRunModels } = await import("../scheduler/run_models.js");
          gates = ModelGates.create(config);
          judge = (await createRunModels(config, gates)).forTask().judge;
        } else {
          process.stderr.write(
            "note: no judge model (the run used the scripted demo model): rubric rows are unscored; pass --judge-model\n",
          );
        }
      }
      const { createRedactor, secretValues } = await import("../store/redact.js");
      const redact = createRedactor(secretValues(config));
      const datasetDir = dirname(resolve(dataset));
      let summary: Awaited<ReturnType<typeof rescoreRun>>;
      try {
        summary = await rescoreRun({
          runDir,
          config,
          rows,
          verifyFilesDir: (row) => (row.verify_files === undefined ? undefined : resolve(datasetDir, row.verify_files)),
          judge,
          ...(only ? { scorers: only } : {}),
          concurrency,
          signal: abort.signal,
          redact,
        });
      } catch (err) {
        if (err instanceof RescoreInterrupted || interrupted) {
          process.stdout.write(`interrupted: nothing re-scored, ${join(runDir, "trajectories.jsonl")} unchanged\n`);
          return 130;
        }
        throw err;
      }
      replaced = true;
      // The files are replaced: from here on an interruption no longer matters, the reports follow the new lines.
      const { scoresLine, writeRunReports } = await import("../report/reports.js");
      let totalPrompts: number | undefined;
      try {
        const prev = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8")) as { total_prompts?: unknown };
        if (typeof prev.total_prompts === "number") totalPrompts = prev.total_prompts;
      } catch {
        // no earlier statistics: rebuilt without the planned total
      }
      const report = await writeRunReports(runDir, config, {
        startedAt,
        totalPrompts,
        ...(gates ? { modelCalls: gates.counts() } : {}),
      });
      const htmlPath = join(runDir, "report.html");
      if (existsSync(htmlPath)) {
        // The run's HTML report follows the new scores too (rewritten as `hermes-batch report` writes it).
        try {
          const [{ buildReportModel }, { reportHtml }] = await Promise.all([
            import("../report/html/report_data.js"),
            import("../report/html/page.js"),
          ]);
          writeFileSync(`${htmlPath}.tmp`, reportHtml(await buildReportModel(runDir)));
          renameSync(`${htmlPath}.tmp`, htmlPath);
        } catch (err) {
          process.stderr.write(
            `warning: ${htmlPath} could not be rebuilt (${errorMessage(err)}); run: hermes-batch report ${runDir}\n`,
          );
        }
      }
      const list = (keys: string[]) =>
        keys.length ? ` (${keys.slice(0, 10).join(", ")}${keys.length > 10 ? ", …" : ""})` : "";
      const out: string[] = [
        `re-scored ${summary.rescored} of ${lines} task line(s) in ${runDir} against ${dataset}${values.dataset === undefined ? " (run.yaml's dataset)" : ""}`,
        `  pass → fail: ${summary.passToFail.length}${list(summary.passToFail)}`,
        `  fail → pass: ${summary.failToPass.length}${list(summary.failToPass)}`,
        `  unscored: ${summary.unscored.length}${list(summary.unscored.map((u) => u.key))}`,
        ...summary.unscored.slice(0, 5).map((u) => redact(`    ${u.key}: ${u.reason}`)),
        ...(summary.noScorer ? [`  no scorer in the row: ${summary.noScorer}`] : []),
        ...(summary.verifyRerun ? [`  verify run again in the kept task folder: ${summary.verifyRerun}`] : []),
        ...(summary.verifyKept
          ? [
              `  verify not run again (no kept task folder; the run's result is used where the command is the same): ${summary.verifyKept}`,
            ]
          : []),
        ...(summary.badLines ? [`  unreadable line(s) copied unchanged: ${summary.badLines}`] : []),
        `  judge tokens: ${summary.judgeUsage.total_tokens.toLocaleString("en-US")}`,
        report.scores ? scoresLine(report.scores) : "scores: no row of the run names a scorer",
      ];
      process.stdout.write(out.join("\n") + "\n");
      appendFileSync(
        join(runDir, "events.log"),
        redact(
          `${new Date().toISOString()} score: re-scored ${summary.rescored} line(s) against ${resolve(dataset)}: ${summary.passToFail.length} pass→fail, ${summary.failToPass.length} fail→pass, ${summary.unscored.length} unscored, ${summary.judgeUsage.total_tokens} judge tokens\n`,
        ),
      );
      if (report.atifError) process.stderr.write(`error: ${report.atifError}\n`);
      if (summary.unscored.length) {
        process.stdout.write(
          `${summary.unscored.length} task(s) unscored: run score again, or rerun them with: hermes-batch run … --resume --retry-unscored\n`,
        );
        return 1;
      }
      return report.atifError ? 1 : 0;
    } catch (err) {
      // Interrupted before the rename (while checking the judge, say): nothing was written.
      if (interrupted && !replaced) {
        process.stdout.write(`interrupted: nothing re-scored, ${join(runDir, "trajectories.jsonl")} unchanged\n`);
        return 130;
      }
      throw err;
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      process.off("SIGHUP", onSignal);
      release();
    }
  },
};
