/**
 * The main thread of a run: plans tasks from the dataset, feeds the Piscina pool with back-pressure,
 * writes every result (it alone owns the run files), handles Ctrl-C/SIGTERM/SIGHUP, and writes the reports.
 * Its phases: check the run (checkAndRun), prepare the run folder, run the tasks, record the end, exit code.
 */
import { preflightEndpoints, requireKeys } from "../models/preflight.js";
import { runEndpoints, type ModelEndpoint } from "../models/factory.js";
import { formatDuration } from "./duration.js";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, extname, join, resolve } from "node:path";
import pLimit from "p-limit";
import YAML from "yaml";
import { publicConfig, type RunConfig } from "../config/run_config.js";
import { UserError, errorMessage } from "../core/errors.js";
import { datasetBaseName, inMemorySha256, openDatasetSource, type DatasetSource } from "./dataset.js";
import {
  loadRunState,
  runHasResults,
  supersedeTasks,
  unscoredKeys,
  writeCheckpoint,
  RUN_FILES,
} from "../store/checkpoint.js";
import { createProgress, type Progress } from "./progress.js";
import { createToolsetPlanner, type ToolsetPlanner } from "./planner.js";
import { acquireRunLock } from "../store/run_lock.js";
import { driftSetsAside, setAsideDrift } from "../store/dataset_drift.js";
import { createRedactor, secretValues } from "../store/redact.js";
import { configFingerprint } from "../store/run_identity.js";
import { buildIdentity, resumeBuildWarning } from "../store/build_identity.js";
import { formatShard, shardRunDir, type Shard } from "../shard/assign.js";
import { finishShardLedger, startShardLedger } from "./shard_ledger.js";
import { environmentBackend } from "../../tools/environments/index.js";
import { removeEmptyTaskFolders, taskFoldersDir } from "./task_folders.js";
import { diskOption, specKey, type TaskOutcomeMessage, type TaskSpec } from "./task_spec.js";
import type { FailureRecord } from "../core/records.js";
import { DONE_OUTCOMES, type Outcome } from "../core/outcomes.js";
import { tokenTotals, tokenTotalsText } from "../core/chat.js";
import { namedNetwork, networkRefusal } from "../../tools/environments/docker/docker_network.js";
import { mcpSecretValues, publicMcpServers } from "../config/mcp_config.js";
import { rowMcpServersSeen } from "./mcp_setup.js";
import {
  countTasks,
  datasetIds,
  plannedTasks,
  rowProblemOf,
  type PlannedTaskList,
  type Selection,
} from "./planned_tasks.js";
import { checkConfigChange, checkOutputLocation, datasetRecord, earlierConfigChanges } from "./run_folder.js";
import { resumeCommand } from "./resume_command.js";
import { readRunInputs, type RunInputs } from "./run_inputs.js";
import { reclaimGoneThreads, removeLeftSandboxes, startRunPool, type RunPool } from "./run_pool.js";
import { createResultRecorder, type ResultRecorder } from "./result_recorder.js";
import { InFlightTasks } from "./in_flight.js";
import { createRunControl, type RunControl, type RunStop } from "./run_control.js";
import { interruptBeforeTasks, type EarlyInterrupt } from "./early_interrupt.js";

export const EXIT = { ok: 0, someFailed: 1, badInput: 2, notComparable: 3, interrupted: 130 } as const;

export function defaultRunName(dataset: string): string {
  return datasetBaseName(dataset) ?? (basename(dataset, extname(dataset)).replace(/[^A-Za-z0-9._-]/g, "_") || "run");
}

export interface RunOptions {
  /** This process's shard (from resolveShard); the run then writes <output-dir>/<run-name>/shards/<i>-of-<N>/. */
  shard?: Shard;
}

export async function runBatch(config: RunConfig, opts: RunOptions = {}): Promise<number> {
  config.run_name ??= defaultRunName(config.dataset);
  const runDir = opts.shard
    ? shardRunDir(config.output_dir, config.run_name, opts.shard)
    : resolve(config.output_dir, config.run_name);
  // Ctrl-C before the first task starts: one line, exit 130 (the run's own handlers take over at its start).
  const early = interruptBeforeTasks(runDir);
  try {
    return await checkInputsAndRun(config, runDir, opts, early);
  } finally {
    early.dispose();
  }
}

async function checkInputsAndRun(
  config: RunConfig,
  runDir: string,
  opts: RunOptions,
  early: EarlyInterrupt,
): Promise<number> {
  const { shard } = opts;
  const inputs = await readRunInputs(config);
  // Read once here when it can be read only once (stdin, a pipe): every later pass reads that copy.
  const dataset =
    config.harbor !== undefined
      ? (await import("../harbor/source.js")).harborDatasetSource(config.harbor)
      : await openDatasetSource(config.dataset);
  if (config.max_drop !== undefined && !config.baseline)
    throw new UserError("--max-drop needs --baseline RUN_DIR (see run --help)");
  if (config.max_unscored !== undefined && !config.baseline && config.fail_under === undefined)
    throw new UserError("--max-unscored needs --baseline RUN_DIR or --fail-under PCT (see run --help)");
  if (config.baseline && shard)
    throw new UserError(
      `--baseline compares a whole run, not shard ${formatShard(shard)}: merge the shards (hermes-batch merge), then hermes-batch compare ${config.baseline} MERGED_RUN`,
    );
  if (config.allow_different_dataset && !config.baseline)
    throw new UserError("--allow-different-dataset needs --baseline RUN_DIR (see run --help)");
  if (config.significant_only && config.max_drop === undefined)
    throw new UserError("--significant-only needs --max-drop P (see run --help)");
  if (
    config.baseline &&
    !(existsSync(join(config.baseline, RUN_FILES.trajectories)) || existsSync(join(config.baseline, RUN_FILES.failed)))
  ) {
    throw new UserError(`--baseline ${config.baseline}: not a run folder (no ${RUN_FILES.trajectories})`);
  }
  // The worker threads load their modules while this thread checks the run (about as long, each): a check that
  // fails ends the pool again (it waits for them to finish loading: see startRunPool).
  const runPool = config.dry_run ? undefined : startRunPool(config, runDir, inputs);
  try {
    return await checkAndRun(config, dataset, runDir, inputs, shard, runPool, early);
  } finally {
    await runPool?.close();
  }
}

async function checkAndRun(
  config: RunConfig,
  dataset: DatasetSource,
  runDir: string,
  inputs: RunInputs,
  shard: Shard | undefined,
  runPool: RunPool | undefined,
  early: EarlyInterrupt,
): Promise<number> {
  const out = process.stdout;
  // The planner's notes wait until the run's checks passed: a refused run prints only why it was refused.
  const notes: string[] = [];
  const planner = await createToolsetPlanner(config, (m) => notes.push(m));
  // A dataset from stdin is identified by its content, as a file is: resuming needs the same rows piped in again.
  const fingerprint = await configFingerprint(config, { dataset: inMemorySha256(dataset) });
  const shardInfo: Record<string, string> = shard ? { shard: formatShard(shard) } : {};

  const hasResults = runHasResults(runDir);
  checkResultsWanted(config, runDir, shard, hasResults);
  checkOutputLocation(runDir);
  // A folder with results is locked before it is read: a --resume beside a live run neither takes its results for
  // final nor cuts the torn tail of the line it is writing, and no result can arrive between this read and the run.
  const releaseFolder = hasResults ? acquireRunLock(runDir) : undefined;
  try {
    const configChange = hasResults ? await checkConfigChange(runDir, config, fingerprint, dataset, shard) : undefined;
    let state = hasResults
      ? await loadRunState(runDir)
      : { done: new Set<string>(), doneIndices: new Set<number>(), failed: new Map(), badLines: [], tornTails: [] };
    // --allow-config-change over a changed dataset or --epochs: results that no longer describe the slice are set
    // aside (the folder is locked) and the state read again, so their tasks rerun and the statistics are honest.
    if (configChange && !config.dry_run && driftSetsAside(configChange.drift)) {
      const moved = await setAsideDrift(runDir, configChange.rows, config.epochs, configChange.drift);
      early.wrote(`${moved} result line(s) that no longer match the dataset were moved to superseded.jsonl`);
      process.stderr.write(`moved ${moved} result line(s) that no longer match the dataset to superseded.jsonl\n`);
      state = await loadRunState(runDir);
    }
    for (const t of state.tornTails) {
      early.wrote(`${t.file}'s torn last line was moved to ${t.file}.torn`);
      process.stderr.write(
        `warning: ${t.file} ended in a torn line (${t.bytes} bytes, left by an interrupted run): moved to ${t.file}.torn; its task runs again\n`,
      );
    }
    for (const b of state.badLines)
      process.stderr.write(`warning: ${b.file}:${b.line}: unreadable line kept as is (${b.error})\n`);
    const { sel, failedIds } = await resumeSelection(config, runDir, state);

    // One pass over the whole file before any task starts: bad rows are known in seconds, and the total is known.
    const networkBad = networkRefusal(config.network, config.allow_network);
    if (networkBad) throw new UserError(`--network: ${networkBad}`);
    const counted = await countAndCheckRows(config, dataset, planner, state, failedIds, sel, shard);
    const { total } = counted;
    const printNotes = () => {
      for (const m of notes) process.stderr.write(`note: ${m}\n`);
    };
    if (config.dry_run) {
      printNotes();
      printPlan(config, runDir, shard, counted, state, out);
      return EXIT.ok;
    }
    await preflightRun(config, counted, total, out);
    printNotes();
    mkdirSync(runDir, { recursive: true });
    const releaseLock = acquireRunLock(runDir);
    // A folder without results is locked only now: another invocation of the same run (a shard started twice)
    // may have run in it since it was read. Running from the stale reading would run every task again.
    if (!hasResults && runHasResults(runDir)) {
      releaseLock();
      throw new UserError(
        `run folder ${runDir} got results from another invocation while this one was starting (the same run or shard started twice?); nothing was run: ${config.resume ? "run it again" : "add --resume"} to continue it`,
      );
    }
    try {
      return await runLocked(
        config,
        runDir,
        {
          dataset,
          shard,
          shardInfo,
          fingerprint,
          sel,
          state,
          failedIds,
          total,
          planner,
          inputs,
          configChange: configChange?.what,
          countedBad: counted.bad,
          planned: counted.planned,
          early,
        },
        runPool!,
      );
    } finally {
      releaseLock();
    }
  } finally {
    releaseFolder?.();
  }
}

/**
 * The refusal of a dataset with bad rows: the first line names the first row, what to do and how many more follow
 * (each on its own line, up to 20 in all).
 */
function badRowsMessage(bad: readonly string[]): string {
  const todo = bad.length === 1 ? "fix it" : "fix them";
  const more = bad.length === 1 ? "" : `and ${bad.length - 1} more bad row${bad.length > 2 ? "s" : ""} below; `;
  const rest = bad
    .slice(1, 20)
    .map((b) => `\n  ${b}`)
    .join("");
  const cut = bad.length > 20 ? `\n  … and ${bad.length - 20} more` : "";
  return `${bad[0]} (${more}nothing was run; ${todo} or pass --on-bad-row skip)${rest}${cut}`;
}

/** A run folder with results needs a flag that says what to do with them; one without cannot be continued. */
function checkResultsWanted(config: RunConfig, runDir: string, shard: Shard | undefined, hasResults: boolean): void {
  if (
    hasResults &&
    !config.resume &&
    !config.retry_failed &&
    !config.retry_internal &&
    !config.retry_unscored &&
    !config.only &&
    !config.dry_run
  ) {
    throw new UserError(
      `run folder ${runDir} already has results: pass --resume to continue it, or choose another --run-name`,
    );
  }
  // --resume of a run that has no results yet starts it, so one command serves a first start and every requeue
  // (scheduler templates pass --resume to every array task); it says so, in case the name was mistyped.
  // Rerunning failed or named tasks of a run that is not there has nothing to do: that stays an error.
  if (!hasResults && config.resume) {
    process.stderr.write(
      `note: --resume: run folder ${runDir} has no results yet; ${config.dry_run ? "the run would start" : "starting"} it fresh\n`,
    );
  } else if (
    !shard &&
    !hasResults &&
    (config.retry_failed || config.retry_internal || config.retry_unscored || config.only)
  ) {
    const flag = config.retry_failed
      ? "--retry-failed"
      : config.retry_internal
        ? "--retry-internal"
        : config.retry_unscored
          ? "--retry-unscored"
          : "--only";
    throw new UserError(
      `${flag}: run folder ${runDir} has no results to continue (check --run-name and --output-dir; leave ${flag} out to start the run)`,
    );
  }
}

type RunState = Awaited<ReturnType<typeof loadRunState>>;

/** Which earlier results this invocation reruns (--resume, --retry-*, --only), with a note for those it leaves. */
async function resumeSelection(
  config: RunConfig,
  runDir: string,
  state: RunState,
): Promise<{ sel: Selection; failedIds: Set<string> }> {
  const internalIds = new Set([...state.failed].filter(([, f]) => f.outcome === "internal_error").map(([id]) => id));
  // --retry-internal alone reruns just those; with --resume or --retry-failed it adds them. --retry-failed alone
  // reruns only the failed tasks; with --resume, they and every task without a result.
  const internalOnly = config.retry_internal && !config.resume && !config.retry_failed;
  const failedIds = internalOnly ? internalIds : new Set(state.failed.keys());
  const sel: Selection = {
    resume: config.resume,
    only: config.only ? new Set(config.only) : undefined,
    retryFailedOnly: (config.retry_failed && !config.resume) || internalOnly,
    heldBack: config.retry_internal ? new Set() : new Set(internalIds),
    unscored: config.retry_unscored ? await unscoredKeys(runDir) : new Set(),
    unscoredOnly: config.retry_unscored && !config.resume && !config.retry_failed && !config.retry_internal,
  };
  if (sel.heldBack.size > 0 && !sel.only) {
    process.stderr.write(
      `note: ${sel.heldBack.size} task(s) ended in internal_error (a bug of hermes-batch, see events.log) and are not rerun; pass --retry-internal to rerun them\n`,
    );
  }
  // A 400/401/403/404/422 answer does not change by asking again: --resume leaves it, --retry-failed reruns it.
  const deterministicIds = [...state.failed]
    .filter(([id, f]) => !f.retryable && !internalIds.has(id))
    .map(([id]) => id);
  if (deterministicIds.length > 0 && !config.retry_failed && !sel.only) {
    for (const id of deterministicIds) sel.heldBack.add(id);
    process.stderr.write(
      `note: ${deterministicIds.length} task(s) failed with an answer that repeating will not change (400, 401, 403, 404, 422; see failed.jsonl) and are not rerun by --resume; fix the cause, then pass --retry-failed too\n`,
    );
  }
  return { sel, failedIds };
}

interface CountedTasks {
  total: number;
  draws: Map<string, number>;
  networks: Set<string>;
  /** Whether any planned task can create a sandbox (src/run/sandbox_need.ts). */
  needsSandbox: boolean;
  /** The bad rows the count found (skipped with --on-bad-row skip). */
  bad: string[];
  /** The tasks the count planned, when it kept them for the dispatch. */
  planned?: PlannedTaskList;
}

/** Counts the tasks to run in one pass over the dataset, and stops on bad rows, an empty slice or unknown ids. */
async function countAndCheckRows(
  config: RunConfig,
  dataset: DatasetSource,
  planner: ToolsetPlanner,
  state: RunState,
  failedIds: Set<string>,
  sel: Selection,
  shard: Shard | undefined,
): Promise<CountedTasks> {
  const {
    n: total,
    draws,
    bad,
    rows,
    runnableRows,
    networks,
    unscoredPlanned,
    needsSandbox,
    planned,
  } = await countTasks(config, dataset, planner, state.done, failedIds, sel, shard);
  // Only the unscored results this invocation reruns (its shard, --offset, --max-samples) are superseded.
  sel.unscored = unscoredPlanned;
  if (bad.length > 0 && config.on_bad_row === "fail") throw new UserError(badRowsMessage(bad));
  if (runnableRows === 0) throw new UserError(`dataset ${dataset.name}: no valid rows`);
  if (config.offset > 0 && config.offset >= rows)
    throw new UserError(`--offset ${config.offset} is past the end of the dataset (${rows} valid row(s))`);
  if (sel.only) {
    const known = await datasetIds(dataset);
    const unknown = [...sel.only].filter((id) => !known.has(id));
    if (unknown.length)
      throw new UserError(
        `--only names task id(s) not in the dataset: ${unknown.slice(0, 10).join(", ")}${unknown.length > 10 ? ", …" : ""}`,
      );
  }
  return { total, draws, networks, needsSandbox, bad, planned };
}

/** --dry-run: what would run, and the toolset draws. */
function printPlan(
  config: RunConfig,
  runDir: string,
  shard: Shard | undefined,
  { total, draws }: CountedTasks,
  state: RunState,
  out: NodeJS.WritableStream,
): void {
  out.write(`plan for run '${config.run_name}'${shard ? ` shard ${formatShard(shard)}` : ""} → ${runDir}\n`);
  out.write(
    `  model ${config.model ?? "(none)"}, env ${config.env}, seed ${config.seed}, workers ${config.workers}, concurrency ${config.concurrency}\n`,
  );
  out.write(`  toolsets: ${config.toolsets ? config.toolsets.join(",") : `distribution '${config.distribution}'`}\n`);
  out.write(`  tasks to run: ${total} (already done: ${state.done.size}, failed earlier: ${state.failed.size})\n`);
  out.write(`  toolset draws:\n`);
  for (const [k, v] of [...draws.entries()].sort((a, b) => b[1] - a[1]))
    out.write(`    ${String(v).padStart(6)}  ${k}\n`);
}

/** The backend and the models must answer before any task spends tokens: one clear error instead of one per task. */
async function preflightRun(
  config: RunConfig,
  { networks, needsSandbox }: { networks: Set<string>; needsSandbox: boolean },
  total: number,
  out: NodeJS.WritableStream,
): Promise<void> {
  const backend = await environmentBackend(config.env);
  if (config.verify_isolated && !backend.isolatedCopies) {
    throw new UserError(
      `--verify-isolated needs an environment that can snapshot a sandbox (docker); --env ${config.env} cannot`,
    );
  }
  const runNetwork = namedNetwork(config.network);
  if (runNetwork !== undefined) networks.add(runNetwork);
  // A run whose tasks never create a sandbox does not pay for the backend's check (src/run/sandbox_need.ts).
  if (needsSandbox)
    await backend.preflightRun({
      image: config.image,
      networks: [...networks],
      options: {
        pull: config.pull,
        network: config.network,
        requireLimits: config.require_limits,
        disk: diskOption(config.disk),
      },
    });
  if (total > 0) await preflightModels(config, out);
}

/** The run's endpoints can work: a key for every remote one, and (unless --no-preflight) each one answers. */
async function preflightModels(config: RunConfig, out: NodeJS.WritableStream): Promise<void> {
  const endpoints = Object.entries(runEndpoints(config)).filter(
    (e): e is [string, ModelEndpoint] => e[1] !== undefined,
  );
  requireKeys(endpoints);
  if (config.no_preflight) return;
  await preflightEndpoints(endpoints, { warn: (line) => out.write(`warning: ${line}\n`) });
  if (config.rl_capture) {
    const { preflightTokenCapture } = await import("../models/preflight_tokens.js");
    await preflightTokenCapture(runEndpoints(config).agent, config.rl_capture, {
      warn: (line) => out.write(`warning: ${line}\n`),
    });
  }
}

interface RunPlan {
  dataset: DatasetSource;
  inputs: RunInputs;
  shard: Shard | undefined;
  shardInfo: Record<string, string>;
  fingerprint: string;
  sel: Selection;
  state: Awaited<ReturnType<typeof loadRunState>>;
  failedIds: Set<string>;
  total: number;
  planner: ToolsetPlanner;
  /** What changed since the run started, when --allow-config-change let the resume go on. */
  configChange?: string;
  /** The bad rows of the count pass (logged as skipped when the dispatch takes `planned`). */
  countedBad: string[];
  /** The tasks the count pass planned, when it kept them: the dispatch takes these instead of a second pass. */
  planned?: PlannedTaskList;
  /** Ctrl-C before the first task starts (until runTasks puts the run's own handlers in place). */
  early: EarlyInterrupt;
}

/** completed / (done + failed) over the whole run folder, from statistics.json's outcome counts. */
async function completionRate(
  runDir: string,
  report: { done: number; failed: number; dropped: number },
): Promise<number | null> {
  const total = report.done + report.failed + report.dropped;
  if (total === 0) return null;
  const stats = JSON.parse(readFileSync(join(runDir, RUN_FILES.statistics), "utf8")) as {
    outcomes?: Record<string, number>;
  };
  return (stats.outcomes?.completed ?? 0) / total;
}

/** The run folder's log: events.log lines, redacted; the shard's ledger when this is a shard. */
interface RunLog {
  events: string;
  logEvent: (msg: string, at?: Date) => void;
  redact: (text: string) => string;
  shardLedger: ReturnType<typeof startShardLedger> | undefined;
}

/** What running the tasks left: the recorded results and why the run stopped. */
interface TasksRun {
  recorder: ResultRecorder;
  stop: RunStop;
}

type RunReport = Awaited<ReturnType<typeof import("../report/reports.js").writeRunReports>>;

async function runLocked(config: RunConfig, runDir: string, plan: RunPlan, runPool: RunPool): Promise<number> {
  const startedAt = new Date();
  plan.early.wrote(`${join(runDir, RUN_FILES.config)} was written, no task result`);
  const log = await prepareRunFolder(config, runDir, plan);
  const tasks = await runTasks(config, runDir, plan, runPool, log);
  const report = await recordRunEnd(config, runDir, plan, runPool, log, tasks, startedAt);
  await printRunSummary(config, runDir, log, tasks, report, startedAt);
  return await runExitCode(config, runDir, plan.shard, log, tasks, report);
}

/** Prepare: earlier results the invocation reruns moved aside, run.yaml written, the shard ledger and log opened. */
async function prepareRunFolder(config: RunConfig, runDir: string, plan: RunPlan): Promise<RunLog> {
  const { dataset, shard, shardInfo, fingerprint, sel, state, total, inputs, configChange } = plan;
  if (config.only) {
    const moved = await supersedeTasks(runDir, new Set(config.only));
    if (moved) process.stderr.write(`moved ${moved} earlier result(s) of the --only tasks to superseded.jsonl\n`);
  }
  if (sel.unscored.size > 0) {
    // The rerun's line replaces the unscored one: moved out first, so no reader ever sees two results of a task.
    const moved = await supersedeTasks(runDir, sel.unscored, { byKey: true });
    if (moved)
      process.stderr.write(
        `moved ${moved} unscored result(s) to superseded.jsonl; rerunning them (--retry-unscored)\n`,
      );
  }
  // Another hermes-batch wrote the folder (an upgrade mid-run): said and logged, never refused (read before run.yaml is rewritten).
  const buildChange = resumeBuildWarning(runDir);
  const previousChanges = configChange ? earlierConfigChanges(runDir) : [];
  const changes = configChange ? [...previousChanges, { at: new Date().toISOString(), changed: configChange }] : [];
  writeFileSync(
    join(runDir, RUN_FILES.config),
    YAML.stringify({
      ...publicConfig(config),
      ...(inputs.mcp ? { mcp_servers: publicMcpServers(inputs.mcp.map((c) => c.config)) } : {}),
      ...datasetRecord(dataset),
      config_fingerprint: fingerprint,
      ...buildIdentity(),
      ...shardInfo,
      ...(changes.length ? { allowed_config_changes: changes } : {}),
    }),
  );
  // A shard's completion record is moved aside now and written again only at the end (src/run/shard_ledger.ts).
  const shardLedger = shard ? startShardLedger(config, runDir, shard, fingerprint) : undefined;
  const events = join(runDir, RUN_FILES.events);
  const redact = createRedactor([
    ...secretValues(config),
    ...mcpSecretValues([...(inputs.mcp ?? []).map((c) => c.config), ...rowMcpServersSeen()]),
  ]);
  const logEvent = (msg: string, at = new Date()) => appendFileSync(events, `${at.toISOString()} ${redact(msg)}\n`);
  logEvent(`start: ${total} task(s) to run, ${state.done.size} already done`);
  if (configChange) logEvent(`resumed with a changed configuration (--allow-config-change): ${configChange}`);
  if (buildChange) {
    process.stderr.write(`warning: ${buildChange}\n`);
    logEvent(`warning: ${buildChange}`);
  }
  return { events, logEvent, redact, shardLedger };
}

/** Run the agents: every planned task through the pool, each result recorded as it comes; files closed at the end. */
async function runTasks(
  config: RunConfig,
  runDir: string,
  plan: RunPlan,
  runPool: RunPool,
  log: RunLog,
): Promise<TasksRun> {
  const { shardInfo, fingerprint, state, total } = plan;
  const { logEvent } = log;
  const progress = createProgress(config.progress);
  const { modelGates, sandboxGates } = runPool;
  const modelCounts = () => ({ model: modelGates.counts() });
  const recorder = createResultRecorder(config, runDir, state.doneIndices, {
    progress,
    logEvent,
    redact: log.redact,
    modelCounts,
    observe: (msg) => control.observe(msg),
  });
  progress.start(total);
  const threadsGone = reclaimGoneThreads(config, runPool, logEvent);
  plan.early.dispose();
  const control = createRunControl(runDir, config.stop_after_failures, progress, logEvent);
  const { counts, hermesCheckpoint } = recorder;
  // Written at once, then every 5 s: a checkpoint.json an earlier invocation left saying `finished: true` must not
  // outlive this invocation's start (a kill before its first tick would leave it claiming the run finished).
  const saveCheckpoint = () =>
    writeCheckpoint(
      runDir,
      {
        run_name: config.run_name,
        ...counts,
        previously_done: state.done.size,
        total,
        config_fingerprint: fingerprint,
        ...shardInfo,
        finished: false,
      },
      hermesCheckpoint,
    );
  saveCheckpoint();
  const checkpointTimer = setInterval(saveCheckpoint, 5_000);
  checkpointTimer.unref();
  // Retries and limit changes show while tasks are still running (a 429 storm finishes nothing for a while).
  const modelTimer = setInterval(() => progress.update({ ...counts, ...modelCounts() }), 2_000);
  modelTimer.unref();

  const inFlight = new InFlightTasks();
  let dispatchError: unknown;
  try {
    await dispatchTasks(config, plan, runPool, { log, progress, control, recorder, inFlight });
  } catch (err) {
    dispatchError = err;
  } finally {
    clearInterval(checkpointTimer);
    clearInterval(modelTimer);
    progress.stop();
    recorder.close();
    control.dispose();
    await runPool.close();
    await Promise.allSettled([...threadsGone]);
    await removeLeftSandboxes(config, undefined, sandboxGates, logEvent);
    removeEmptyTaskFolders(config.output_dir, runDir);
  }
  if (dispatchError !== undefined) {
    try {
      logEvent(`stopped: ${errorMessage(dispatchError)}`);
    } catch {
      // events.log cannot be written either (a full disk): the error itself is what the run reports
    }
    throw dispatchError;
  }
  return { recorder, stop: control.stop };
}

interface Dispatch {
  log: RunLog;
  progress: Progress;
  control: RunControl;
  recorder: ResultRecorder;
  inFlight: InFlightTasks;
}

/** Feeds the pool with back-pressure (at most --concurrency tasks in flight) until the plan ends or the run stops. */
async function dispatchTasks(config: RunConfig, plan: RunPlan, runPool: RunPool, d: Dispatch): Promise<void> {
  const { dataset, shard, sel, state, failedIds, planner } = plan;
  const { stop } = d.control;
  const submit = taskSubmitter(config, runPool, d);
  try {
    const badRows: string[] = plan.planned ? plan.countedBad : [];
    const specs =
      plan.planned?.take() ??
      plannedTasks(
        config,
        dataset,
        planner,
        state.done,
        failedIds,
        sel,
        (m) => badRows.push(m),
        undefined,
        shard,
        undefined,
        await rowProblemOf(config),
      );
    for await (const spec of specs) {
      while (d.inFlight.size >= config.concurrency && !stop.stopping) await d.inFlight.next();
      // A task the run stopped before: left for a --resume.
      if (stop.stopping) {
        stop.leftTasks = true;
        break;
      }
      submit(spec);
    }
    for (const b of badRows) d.log.logEvent(`skipped bad row: ${b}`);
    if (badRows.length) d.progress.log(`skipped ${badRows.length} bad row(s); see ${d.log.events}`);
    while (d.inFlight.size) await d.inFlight.next();
    // A signal that came when every task was already in flight (or done): the drain finished them all, and the run
    // is complete; it is not sent to a --resume that has nothing to do.
    if (stop.interrupted && !stop.leftTasks) {
      stop.interrupted = false;
      d.progress.log("interrupt: no task was left to stop; the run is complete");
      d.log.logEvent("interrupt: no task was left to stop; the run is complete");
    }
  } catch (err) {
    // Reading the dataset or writing failed: stop, and let the tasks in flight end before the files close.
    stop.stopping = true;
    d.control.abortAll();
    await d.inFlight.settled();
    throw err;
  }
}

/**
 * Runs one task in the pool and records its result. A worker thread that dies under a task is retried once on a
 * fresh worker (such retries one at a time, so the task that kills its worker dies alone), then recorded failed.
 */
function taskSubmitter(config: RunConfig, runPool: RunPool, d: Dispatch): (spec: TaskSpec) => Promise<void> {
  const { pool, sandboxGates } = runPool;
  const { inFlight, recorder } = d;
  const { logEvent } = d.log;
  const write = recorder.write;
  const crashRetries = pLimit(1);
  const submit = (spec: TaskSpec): Promise<void> => {
    const run = (): Promise<TaskOutcomeMessage> => pool.run(spec);
    const p: Promise<void> = (spec.attempt > 0 ? crashRetries(run) : run()).then(
      (msg: TaskOutcomeMessage) => write(msg, spec.index),
      async (err: unknown) => {
        // The worker thread died under this task: its `finally` never ran, so remove its sandbox here.
        await removeLeftSandboxes(config, specKey(spec), sandboxGates, logEvent);
        // Retry once on a fresh worker, then record it.
        if (spec.attempt === 0 && !d.control.stop.stopping) {
          logEvent(`task ${spec.id}: worker crashed (${errorMessage(err)}); retrying once`);
          const retry = submit({ ...spec, attempt: 1 });
          return retry;
        }
        write(crashedWorkerResult(spec, err), spec.index);
      },
    );
    inFlight.add(p);
    return p;
  };
  return submit;
}

/** The failed result of a task whose worker thread died under it twice. */
function crashedWorkerResult(spec: TaskSpec, err: unknown): TaskOutcomeMessage {
  return {
    taskId: spec.id,
    kind: "failed",
    outcome: "environment_error",
    tokens: { agent: 0, approver: 0, judge: 0 },
    error: `worker crashed: ${errorMessage(err)}`,
    line: JSON.stringify({
      prompt_index: spec.index,
      task_id: spec.id,
      outcome: "environment_error",
      completed: false,
      partial: false,
      error: `worker crashed: ${errorMessage(err)}`,
      toolsets_used: spec.toolsets,
      metadata: { attempt: spec.attempt, dataset_line: spec.line, timestamp: new Date().toISOString() },
    } satisfies FailureRecord),
  };
}

/** Record the end: the reports, the final checkpoint, the shard's completion record, the end line in events.log. */
async function recordRunEnd(
  config: RunConfig,
  runDir: string,
  plan: RunPlan,
  runPool: RunPool,
  log: RunLog,
  { recorder, stop }: TasksRun,
  startedAt: Date,
): Promise<RunReport> {
  const { dataset, shard, shardInfo, fingerprint, state, total } = plan;
  const { modelGates } = runPool;
  const { counts } = recorder;
  // The report modules load only now: the run's start-up does not pay for them.
  const { writeRunReports } = await import("../report/reports.js");
  const report = await writeRunReports(runDir, config, {
    startedAt,
    totalPrompts: total + state.done.size,
    modelCalls: modelGates.counts(),
    ownTrajectoriesFrom: recorder.ownTrajectoriesFrom,
  });
  writeCheckpoint(
    runDir,
    {
      run_name: config.run_name,
      done: report.done,
      failed: report.failed,
      dropped: report.dropped,
      total_in_dataset_slice: report.done + report.failed + report.dropped,
      config_fingerprint: fingerprint,
      ...shardInfo,
      finished: !stop.interrupted,
    },
    recorder.hermesCheckpoint,
  );
  if (log.shardLedger)
    await finishShardLedger(log.shardLedger, config, runDir, shard!, {
      dataset,
      interrupted: stop.interrupted,
      earlyStop: stop.earlyStop,
      earlyStopWhat: stop.earlyStopWhat,
      thisTime: { done: counts.done, failed: counts.failed, dropped: counts.dropped },
      modelCalls: modelGates.counts(),
      redact: log.redact,
    });
  log.logEvent(`end: ${counts.done} done, ${counts.failed} failed, ${counts.dropped} dropped in this invocation`);
  return report;
}

/** The run's lines on stdout: each outcome by its name (a max_turns or partial task is never called completed). */
async function printRunSummary(
  config: RunConfig,
  runDir: string,
  { redact }: RunLog,
  { recorder }: TasksRun,
  report: RunReport,
  startedAt: Date,
): Promise<void> {
  const { scoresLine } = await import("../report/reports.js");
  const out = process.stdout;
  const { counts, outcomesThisTime, tokensBy, failureReasons, approverFailures } = recorder;
  const n = (o: string) => outcomesThisTime.get(o) ?? 0;
  const failedKinds = [...outcomesThisTime].filter(([o, k]) => k > 0 && !DONE_OUTCOMES.has(o as Outcome));
  const parts = [
    `${n("completed")} completed`,
    ...(n("max_turns") ? [`${n("max_turns")} max_turns`] : []),
    ...(n("partial") ? [`${n("partial")} partial`] : []),
    ...(n("time_limit") ? [`${n("time_limit")} time_limit`] : []),
    ...(n("resource_limit") ? [`${n("resource_limit")} resource_limit`] : []),
    `${counts.failed} failed${failedKinds.length ? ` (${failedKinds.map(([o, k]) => `${k} ${o}`).join(", ")})` : ""}`,
    `${counts.dropped} dropped`,
  ];
  out.write(`\nrun '${config.run_name}': ${parts.join(", ")} this time (${report.done} done in total) → ${runDir}\n`);
  out.write(
    `${tokenTotalsText(tokenTotals(tokensBy.agent, tokensBy.approver, tokensBy.judge))}, ${formatDuration(Date.now() - startedAt.getTime())} this time\n`,
  );
  if (counts.failed > 0) out.write(redact(`failures by reason:\n${failureReasons.summary().join("\n")}\n`));
  if (config.keep_workspaces && existsSync(taskFoldersDir(config.output_dir, runDir)))
    out.write(`task folders kept in ${taskFoldersDir(config.output_dir, runDir)}\n`);
  if (report.scores) out.write(`${scoresLine(report.scores)}\n`);
  if (report.atifError) out.write(`error: ${report.atifError}\n`);
  if (approverFailures.count > 0) {
    out.write(
      redact(
        `approver failures: ${approverFailures.count} (each command denied, fail-closed); first: ${approverFailures.first}\n`,
      ),
    );
  }
}

/**
 * With --fail-under: why the finished results whose row names a scorer are too often undecided by it (a judge
 * that answers garbage, a verify that cannot run) for their pass rate to be a verdict; undefined within
 * --max-unscored (default 10 %, as `compare`'s).
 */
async function undecidedOverLimit(config: RunConfig, report: RunReport): Promise<string | undefined> {
  if (report.undecided === 0) return undefined;
  const { DEFAULT_MAX_UNSCORED, describeUnscoredLimit, unscoredLimitOf } = await import("../report/compare.js");
  const limit = (await import("./baseline_gate.js")).maxUnscoredOf(config) ?? DEFAULT_MAX_UNSCORED;
  if (report.undecided <= unscoredLimitOf(limit, report.withScorer)) return undefined;
  return `${report.undecided} of ${report.withScorer} scored row result(s) undecided by their scorer, more than --max-unscored ${describeUnscoredLimit(limit)} (in summary.csv: scorers named, passed empty)`;
}

/**
 * What to run once the endpoint is fixed. --resume leaves the tasks that failed with an answer repeating will not
 * change (400, 401, 403, 404, 422: see resumeSelection); --resume --retry-failed reruns those too and starts the
 * tasks never started.
 */
async function rerunAfterEarlyStop(config: RunConfig, runDir: string, shard: Shard | undefined): Promise<string> {
  if (config.retry_failed && !config.resume)
    return `fix the endpoint, model or key, then: ${resumeCommand(config, shard, "--retry-failed")}\n`;
  const { failed } = await loadRunState(runDir);
  const left = [...failed.values()].filter((f) => !f.retryable && f.outcome !== "internal_error").length;
  if (left === 0 || config.retry_failed)
    return `fix the endpoint, model or key, then: ${resumeCommand(config, shard)}\n`;
  return `fix the endpoint, model or key, then (--retry-failed: the ${left} task(s) that failed with a 4xx, which --resume alone leaves, run again too): ${resumeCommand(config, shard, "--resume --retry-failed")}\n`;
}

/** The exit code, with the line that explains it: interrupted, stopped early, the CI gates, failed tasks. */
async function runExitCode(
  config: RunConfig,
  runDir: string,
  shard: Shard | undefined,
  { redact }: RunLog,
  { stop }: TasksRun,
  report: RunReport,
): Promise<number> {
  const out = process.stdout;
  if (stop.interrupted) {
    out.write(`interrupted. Resume with: ${resumeCommand(config, shard)}\n`);
    return EXIT.interrupted;
  }
  if (stop.earlyStop !== undefined) {
    out.write(
      `stopped early: ${stop.earlyStopWhat} all failed with the same model error (the rest were not started):\n  ${redact(stop.earlyStop)}\n` +
        (await rerunAfterEarlyStop(config, runDir, shard)),
    );
    return EXIT.someFailed;
  }
  // The CI gate in one step: this run against the baseline, as `hermes-batch compare` does. Its verdict is the
  // exit code: tasks that failed for infrastructure reasons are judged by --max-unscored (exit 3), not exit 1.
  const gateExit = config.baseline
    ? await (await import("./baseline_gate.js")).baselineGate(config, runDir, out)
    : undefined;
  if (gateExit !== undefined && gateExit !== EXIT.ok) return gateExit;
  if (config.fail_under !== undefined) {
    // A pass rate over the few rows a broken judge or verify could decide is no verdict: held to --max-unscored.
    const undecided = await undecidedOverLimit(config, report);
    if (undecided) {
      out.write(`--fail-under ${config.fail_under} %: no verdict, ${undecided}\n`);
      return EXIT.someFailed;
    }
    // On the pass rate once rows are scored, else on the completion rate of the whole run.
    const rate = report.scores?.pass_rate ?? (await completionRate(runDir, report));
    const what = report.scores ? "pass rate" : "completion rate";
    if (rate === null || rate * 100 < config.fail_under) {
      out.write(
        `${what} ${rate === null ? "unknown (nothing scored)" : `${(rate * 100).toFixed(1)} %`} is under --fail-under ${config.fail_under} %\n`,
      );
      return EXIT.someFailed;
    }
  }
  if (report.failed > 0) {
    out.write(
      `${report.failed} task(s) failed (see ${join(runDir, RUN_FILES.failed)}); rerun them with --retry-failed\n`,
    );
    if (report.internal > 0) {
      out.write(
        `${report.internal} of them ended in internal_error, a bug of hermes-batch (stack in events.log): --resume and --retry-failed leave them; --retry-internal reruns them\n`,
      );
    }
    if (gateExit === undefined) return EXIT.someFailed;
  }
  // A trajectory that gives no valid ATIF document is a bug of ours: the run says so in its exit code.
  return report.atifError ? EXIT.someFailed : EXIT.ok;
}
