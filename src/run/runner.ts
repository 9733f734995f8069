/**
 * The main thread of a run: plans tasks from the dataset, feeds the Piscina pool with back-pressure,
 * writes every result (it alone owns the run files), handles Ctrl-C/SIGTERM/SIGHUP, and writes the reports.
 */
import { preflightEndpoints, requireKeys } from "../models/preflight.js";
import { runEndpoints, type ModelEndpoint } from "../models/factory.js";
import { FailureReasons } from "./failure_reasons.js";
import { formatDuration } from "./duration.js";
import {
  accessSync,
  appendFileSync,
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BroadcastChannel } from "node:worker_threads";
import pLimit from "p-limit";
import { Piscina } from "piscina";
import YAML from "yaml";
import { publicConfig, type RunConfig, SECRET_KEYS } from "../config/run_config.js";
import { HEADER_KEYS, isShowableHeaderValue, parseHeaderLine } from "../config/headers.js";
import { flagOf } from "../config/run_options.js";
import { scrubUrlCredentials } from "../core/url_credentials.js";
import { UserError, errorMessage } from "../core/errors.js";
import {
  datasetBaseName,
  formatBadRow,
  inMemorySha256,
  openDatasetSource,
  readDataset,
  readsOnce,
  type DatasetLine,
  type DatasetSource,
} from "./dataset.js";
import { getToolDefinitions, selectToolNames } from "../../tools/model_tools.js";
import { registry } from "../../tools/registry.js";
import { JsonlAppender } from "../store/jsonl_file.js";
import {
  HermesCheckpoint,
  loadRunState,
  recordKey,
  runHasResults,
  supersedeTasks,
  unscoredKeys,
  writeCheckpoint,
  RUN_FILES,
} from "../store/checkpoint.js";
import { createProgress, type ProgressCounts } from "./progress.js";
import { createToolsetPlanner, type ToolsetPlanner } from "./planner.js";
import { acquireRunLock } from "../store/run_lock.js";
import { createRedactor, secretValues } from "../store/redact.js";
import { configDifferences, configFingerprint } from "../store/run_identity.js";
import { formatShard, shardRunDir, taskInShard, type Shard } from "../shard/assign.js";
import { finishShardLedger, startShardLedger } from "./shard_ledger.js";
import { DeadEndpointWatch } from "./early_stop.js";
import type { WorkerData } from "./worker.js";
import { CANCEL_CHANNEL, type CancelMessage } from "./cancel_channel.js";
import { WORKER_RESOURCE_LIMITS, tuneHeapGrowth } from "./heap_tuning.js";
import { SandboxGates, environmentBackend, reclaimThread } from "../../tools/environments/index.js";
import { ModelGates } from "../scheduler/run_models.js";
import { removeEmptyTaskFolders, taskFoldersDir } from "./task_folders.js";
import { describeModelEvent } from "../scheduler/scheduler.js";
import { diskOption, failureEvent, specKey, type TaskOutcomeMessage, type TaskSpec } from "./task_spec.js";
import type { FailureRecord } from "../core/records.js";
import { DONE_OUTCOMES, type Outcome } from "../core/outcomes.js";
import { harborRowProblem } from "../harbor/checks.js";
import { harborDatasetSource } from "../harbor/source.js";
import { tokenTotals, tokenTotalsText, type ChatMessage } from "../core/chat.js";
import { readPrefillFile } from "../config/prefill.js";
import { loadUserAllowlist } from "../../tools/approval/allowlist.js";
import { namedNetwork, networkRefusal } from "../../tools/environments/docker_network.js";
import { mcpSecretValues, publicMcpServers } from "../config/mcp_config.js";
import type { McpServerCatalog } from "../../tools/mcp/types.js";
import { rowMcpProblem, rowMcpServersSeen, setUpMcp } from "./mcp_setup.js";

export const EXIT = { ok: 0, someFailed: 1, badInput: 2, notComparable: 3, interrupted: 130 } as const;

const KNOWN_ROW_FIELDS = new Set([
  "id",
  "prompt",
  "image",
  "docker_image",
  "cwd",
  "toolsets",
  "verify",
  "verify_files",
  "expected",
  "rubric",
  "network",
  "limits",
  "metadata",
]);

export function defaultRunName(dataset: string): string {
  return datasetBaseName(dataset) ?? (basename(dataset, extname(dataset)).replace(/[^A-Za-z0-9._-]/g, "_") || "run");
}

interface Selection {
  resume: boolean;
  only?: Set<string>;
  retryFailedOnly: boolean;
  /** Tasks whose latest attempt was an internal_error: a bug, rerun only with --retry-internal or --only. */
  heldBack: Set<string>;
  /** --retry-unscored: done results whose score is null, rerun (after countTasks: those this invocation plans). */
  unscored: Set<string>;
  /** --retry-unscored alone: nothing but those. */
  unscoredOnly: boolean;
}

/** A row's verify_files folder, beside the dataset (the current folder for a pipe); undefined when the row names none. */
function verifyFilesDir(dataset: DatasetSource, row: DatasetLine["row"]): string | undefined {
  return row.verify_files === undefined ? undefined : resolve(dataset.dir, row.verify_files);
}

function toSpec(
  item: DatasetLine,
  planner: ToolsetPlanner,
  epoch: number | undefined,
  dataset: DatasetSource,
): TaskSpec {
  const { row } = item;
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (!KNOWN_ROW_FIELDS.has(k)) extra[k] = v;
  return {
    index: item.index,
    id: item.id,
    line: item.line,
    prompt: row.prompt,
    toolsets: row.toolsets ?? planner.toolsetsFor(item.id, epoch ?? 0),
    image: row.image ?? row.docker_image,
    cwd: row.cwd,
    network: row.network,
    ...(row.limits !== undefined ? { limits: row.limits } : {}),
    verify: row.verify,
    ...(row.verify_files !== undefined ? { verifyFiles: verifyFilesDir(dataset, row) } : {}),
    expected: row.expected,
    rubric: row.rubric,
    metadata: row.metadata,
    extra,
    attempt: 0,
    ...(epoch !== undefined ? { epoch } : {}),
  };
}

/** Streams the dataset and yields the tasks this invocation must run. */
async function* plannedTasks(
  config: RunConfig,
  dataset: DatasetSource,
  planner: ToolsetPlanner,
  done: Set<string>,
  failed: Set<string>,
  sel: Selection,
  onBad: (msg: string) => void,
  rows = { n: 0 },
  shard?: Shard,
  rowNetworks = new Set<string>(),
  rowProblem?: (row: { cwd?: string; network?: string }) => string | undefined,
) {
  let valid = 0;
  const end = config.max_samples !== undefined ? config.offset + config.max_samples : Infinity;
  // Rows repeat a few toolset lists: each list's tools are looked up once per pass, not once per row.
  const noToolOf = new Map<string, Promise<string | undefined>>();
  const whyNoToolOnce = (toolsets: string[]) => {
    const key = toolsets.join("\n");
    let found = noToolOf.get(key);
    if (!found) noToolOf.set(key, (found = whyNoTool(toolsets)));
    return found;
  };
  for await (const item of readDataset(dataset)) {
    if (!item.ok) {
      onBad(formatBadRow(item.bad));
      continue;
    }
    const filesDir = verifyFilesDir(dataset, item.value.row);
    if (filesDir !== undefined && !(existsSync(filesDir) && statSync(filesDir).isDirectory())) {
      onBad(
        `${dataset.name}:${item.value.line}: 'verify_files' ${item.value.row.verify_files}: no such folder beside the dataset (${filesDir})`,
      );
      continue;
    }
    if (filesDir !== undefined && item.value.row.verify === undefined) {
      onBad(`${dataset.name}:${item.value.line}: 'verify_files' needs a 'verify' command to run against them`);
      continue;
    }
    const networkBad =
      item.value.row.network !== undefined && networkRefusal(item.value.row.network, config.allow_network);
    if (networkBad) {
      onBad(`${dataset.name}:${item.value.line}: 'network': ${networkBad}`);
      continue;
    }
    const harborBad = harborRowProblem(item.value.row, config, `${dataset.name}:${item.value.line}`);
    if (harborBad) {
      onBad(harborBad);
      continue;
    }
    const envProblem = rowProblem?.(item.value.row);
    if (envProblem) {
      onBad(`${dataset.name}:${item.value.line}: ${envProblem}`);
      continue;
    }
    // Before the toolsets check: the row's own servers make its mcp-<server> toolsets.
    const mcpProblem = await rowMcpProblem(config, item.value.row);
    if (mcpProblem) {
      onBad(`${dataset.name}:${item.value.line}: ${mcpProblem}`);
      continue;
    }
    const rowNetwork = namedNetwork(item.value.row.network);
    if (rowNetwork !== undefined) rowNetworks.add(rowNetwork);
    const badToolset = item.value.row.toolsets && planner.unknownToolset(item.value.row.toolsets);
    if (badToolset) {
      onBad(`${dataset.name}:${item.value.line}: unknown toolset '${badToolset}' in 'toolsets'`);
      continue;
    }
    const noTool = item.value.row.toolsets && (await whyNoToolOnce(item.value.row.toolsets));
    if (noTool) {
      onBad(
        `${dataset.name}:${item.value.line}: 'toolsets' ${item.value.row.toolsets!.join(", ")} offer no tool here: ${noTool}`,
      );
      continue;
    }
    const i = valid++;
    rows.n = valid;
    if (i < config.offset || i >= end) continue; // keep reading: bad rows further on must still be found
    const id = item.value.id;
    if (shard && !taskInShard(id, shard)) continue;
    // With --epochs K every task runs K times; each (task, epoch) is done, failed or held back on its own.
    const epochs = config.epochs > 1 ? Array.from({ length: config.epochs }, (_, e) => e) : [undefined];
    for (const epoch of epochs) {
      const key = recordKey(id, epoch);
      if (sel.only) {
        if (!sel.only.has(id)) continue;
      } else if (!sel.unscored.has(key)) {
        if (done.has(key) || sel.heldBack.has(key)) continue;
        if (sel.unscoredOnly || (sel.retryFailedOnly && !failed.has(key))) continue;
      }
      yield toSpec(item.value, planner, epoch, dataset);
    }
  }
}

async function countTasks(
  config: RunConfig,
  dataset: DatasetSource,
  planner: ToolsetPlanner,
  done: Set<string>,
  failed: Set<string>,
  sel: Selection,
  shard?: Shard,
) {
  const backend = await environmentBackend(config.env);
  const rowProblem = backend.rowProblem?.bind(backend);
  let n = 0;
  const draws = new Map<string, number>();
  const bad: string[] = [];
  const rows = { n: 0 };
  const networks = new Set<string>();
  const unscoredPlanned = new Set<string>();
  for await (const spec of plannedTasks(
    config,
    dataset,
    planner,
    done,
    failed,
    sel,
    (m) => bad.push(m),
    rows,
    shard,
    networks,
    rowProblem,
  )) {
    n++;
    if (sel.unscored.has(recordKey(spec.id, spec.epoch))) unscoredPlanned.add(recordKey(spec.id, spec.epoch));
    const key = spec.toolsets.join("+") || "(none)";
    draws.set(key, (draws.get(key) ?? 0) + 1);
  }
  return { n, draws, bad, rows: rows.n, networks, unscoredPlanned };
}

export interface RunOptions {
  /** This process's shard (from resolveShard); the run then writes <output-dir>/<run-name>/shards/<i>-of-<N>/. */
  shard?: Shard;
}

/**
 * Sandboxes only the worker threads could have removed (they are terminated without async clean-up): unused
 * warm ones at the end of the run, or a crashed worker's task sandbox.
 */
async function removeLeftSandboxes(
  config: RunConfig,
  taskId: string | undefined,
  gates: SandboxGates,
  log: (m: string) => void,
): Promise<void> {
  const what =
    taskId === undefined ? "unused warm sandbox(es)" : `sandbox(es) of task ${taskId} left by the crashed worker`;
  try {
    const backend = await environmentBackend(config.env);
    const n =
      taskId === undefined
        ? await backend.afterRun(config.run_name!, { gates })
        : (await backend.removeLeftovers({ run: config.run_name!, task: taskId })).removed.length;
    if (n) log(`removed ${n} ${what}`);
  } catch (err) {
    log(`could not remove the ${what}: ${errorMessage(err)}`);
  }
}

/** A resumed run with other settings (seed, model, dataset content…) mixes two experiments: say so. */
/**
 * A resume whose dataset, model or settings changed would mix two experiments in one run folder: it stops
 * (exit 3) naming what changed, unless --allow-config-change, which is then recorded. Returns the change.
 */
function checkConfigChange(runDir: string, config: RunConfig, fingerprint: string): string | undefined {
  const path = join(runDir, RUN_FILES.config);
  if (!existsSync(path)) return;
  let previous: Record<string, unknown>;
  try {
    previous = (YAML.parse(readFileSync(path, "utf8")) ?? {}) as Record<string, unknown>;
  } catch (err) {
    // The check only warns, so an unreadable run.yaml (hand-edited, torn) must not stop the resume either.
    process.stderr.write(
      `warning: ${path}: cannot compare with the earlier configuration (${errorMessage(err).split("\n")[0]})\n`,
    );
    return;
  }
  if (previous.config_fingerprint === undefined || previous.config_fingerprint === fingerprint) return;
  // Growing the slice (--max-samples, --offset) is what resuming is for; everything else changes the experiment.
  const all = configDifferences(previous, publicConfig(config));
  const diffs = all.filter((d) => !/^(max_samples|offset) /.test(d));
  if (all.length > 0 && diffs.length === 0) return;
  const what = diffs.length ? diffs.join("; ") : "the dataset or a referenced file changed";
  if (!config.allow_config_change) {
    throw new UserError(
      `${runDir} was started with a different configuration (${what}); resuming would mix both: use another --run-name, or --allow-config-change to go on knowingly`,
      3,
    );
  }
  process.stderr.write(
    `warning: ${runDir} was started with a different configuration (${what}); going on (--allow-config-change)\n`,
  );
  return what;
}

/** Files beside the config that every worker needs: read and checked once, here. */
interface RunInputs {
  prefill?: ChatMessage[];
  allowlist: string[];
  /** The --mcp-config servers with the tools each offered (listed once, here). */
  mcp?: McpServerCatalog[];
}

async function readRunInputs(config: RunConfig): Promise<RunInputs> {
  const prefill = config.prefill_messages_file ? readPrefillFile(config.prefill_messages_file) : undefined;
  let allowlist: string[];
  try {
    allowlist = await loadUserAllowlist();
  } catch (err) {
    throw new UserError(`command allowlist: ${errorMessage(err).split("\n")[0]}`);
  }
  // Before the planner checks toolsets: the servers' mcp-<server> toolsets must be known by then.
  const mcp = await setUpMcp(config);
  return { prefill, allowlist, ...(mcp ? { mcp } : {}) };
}

export async function runBatch(config: RunConfig, opts: RunOptions = {}): Promise<number> {
  const { shard } = opts;
  const inputs = await readRunInputs(config);
  config.run_name ??= defaultRunName(config.dataset);
  const runDir = shard
    ? shardRunDir(config.output_dir, config.run_name, shard)
    : resolve(config.output_dir, config.run_name);
  // Read once here when it can be read only once (stdin, a pipe): every later pass reads that copy.
  const dataset =
    config.harbor !== undefined ? harborDatasetSource(config.harbor) : await openDatasetSource(config.dataset);
  if (config.max_drop !== undefined && !config.baseline)
    throw new UserError("--max-drop needs --baseline RUN_DIR (see run --help)");
  if (config.max_unscored !== undefined && !config.baseline)
    throw new UserError("--max-unscored needs --baseline RUN_DIR (see run --help)");
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
    return await checkAndRun(config, dataset, runDir, inputs, shard, runPool);
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
): Promise<number> {
  const out = process.stdout;
  const planner = await createToolsetPlanner(config, (m) => process.stderr.write(`note: ${m}\n`));
  // A dataset from stdin is identified by its content, as a file is: resuming needs the same rows piped in again.
  const fingerprint = await configFingerprint(config, { dataset: inMemorySha256(dataset) });
  const shardInfo: Record<string, string> = shard ? { shard: formatShard(shard) } : {};

  const hasResults = runHasResults(runDir);
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
  checkOutputLocation(runDir);
  const configChange = hasResults ? checkConfigChange(runDir, config, fingerprint) : undefined;
  const state = hasResults
    ? await loadRunState(runDir)
    : { done: new Set<string>(), doneIndices: new Set<number>(), failed: new Map(), badLines: [], tornTails: [] };
  for (const t of state.tornTails) {
    process.stderr.write(
      `warning: ${t.file} ended in a torn line (${t.bytes} bytes, left by an interrupted run): moved to ${t.file}.torn; its task runs again\n`,
    );
  }
  for (const b of state.badLines)
    process.stderr.write(`warning: ${b.file}:${b.line}: unreadable line kept as is (${b.error})\n`);
  const internalIds = new Set([...state.failed].filter(([, f]) => f.outcome === "internal_error").map(([id]) => id));
  // --retry-internal alone reruns just those; with --resume or --retry-failed it adds them.
  const internalOnly = config.retry_internal && !config.resume && !config.retry_failed;
  const failedIds = internalOnly ? internalIds : new Set(state.failed.keys());
  const sel: Selection = {
    resume: config.resume,
    only: config.only ? new Set(config.only) : undefined,
    retryFailedOnly: config.retry_failed || internalOnly,
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
      `note: ${deterministicIds.length} task(s) failed with an answer that repeating will not change (400, 401, 403, 404, 422; see failed.jsonl) and are not rerun by --resume; fix the cause, then pass --retry-failed\n`,
    );
  }

  // One pass over the whole file before any task starts: bad rows are known in seconds, and the total is known.
  const networkBad = networkRefusal(config.network, config.allow_network);
  if (networkBad) throw new UserError(`--network: ${networkBad}`);
  const {
    n: total,
    draws,
    bad,
    rows,
    networks,
    unscoredPlanned,
  } = await countTasks(config, dataset, planner, state.done, failedIds, sel, shard);
  // Only the unscored results this invocation reruns (its shard, --offset, --max-samples) are superseded.
  sel.unscored = unscoredPlanned;
  if (bad.length > 0 && config.on_bad_row === "fail") {
    const shown = bad.slice(0, 20).join("\n  ");
    const more = bad.length > 20 ? `\n  … and ${bad.length - 20} more` : "";
    throw new UserError(
      `${bad.length} bad row(s) in the dataset (nothing was run; fix them or pass --on-bad-row skip):\n  ${shown}${more}`,
    );
  }
  if (rows === 0) throw new UserError(`dataset ${dataset.name}: no valid rows`);
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
  if (config.dry_run) {
    out.write(`plan for run '${config.run_name}'${shard ? ` shard ${formatShard(shard)}` : ""} → ${runDir}\n`);
    out.write(
      `  model ${config.model ?? "(none)"}, env ${config.env}, seed ${config.seed}, workers ${config.workers}, concurrency ${config.concurrency}\n`,
    );
    out.write(`  toolsets: ${config.toolsets ? config.toolsets.join(",") : `distribution '${config.distribution}'`}\n`);
    out.write(`  tasks to run: ${total} (already done: ${state.done.size}, failed earlier: ${state.failed.size})\n`);
    out.write(`  toolset draws:\n`);
    for (const [k, v] of [...draws.entries()].sort((a, b) => b[1] - a[1]))
      out.write(`    ${String(v).padStart(6)}  ${k}\n`);
    return EXIT.ok;
  }

  // The backend must answer before any task spends tokens: one clear error instead of one per task.
  const backend = await environmentBackend(config.env);
  if (config.verify_isolated && !backend.isolatedCopies) {
    throw new UserError(
      `--verify-isolated needs an environment that can snapshot a sandbox (docker); --env ${config.env} cannot`,
    );
  }
  const runNetwork = namedNetwork(config.network);
  if (runNetwork !== undefined) networks.add(runNetwork);
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
  mkdirSync(runDir, { recursive: true });
  const releaseLock = acquireRunLock(runDir);
  try {
    return await runLocked(
      config,
      runDir,
      { dataset, shard, shardInfo, fingerprint, sel, state, failedIds, total, planner, inputs, configChange },
      runPool!,
    );
  } finally {
    releaseLock();
  }
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

/** Why a row's own toolsets would give the model no tool at all (each tool's reason), or undefined. */
async function whyNoTool(toolsets: string[]): Promise<string | undefined> {
  if ((await getToolDefinitions({ enabledToolsets: toolsets })).length > 0) return undefined;
  const names = selectToolNames({ enabledToolsets: toolsets });
  if (names.length === 0) return "they hold no tool";
  const avail = await registry.availability(names);
  return names.map((n) => `${n}: ${avail.get(n)?.reason ?? "unavailable"}`).join("; ");
}

/** Every valid row's task id (for --only). */
async function datasetIds(dataset: DatasetSource): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const item of readDataset(dataset)) if (item.ok) ids.add(item.value.id);
  return ids;
}

/**
 * The run folder and its result files must be what they claim before anything runs: a folder (not a file),
 * outside /proc and /sys (where a recursive mkdir never returns), and its result files plain files.
 */
function checkOutputLocation(runDir: string): void {
  if (/^\/(proc|sys)(\/|$)/.test(runDir))
    throw new UserError(`--output-dir: ${runDir} is inside a kernel file system; choose a real folder`);
  let dir = runDir;
  // The nearest existing ancestor must be a writable folder.
  while (!existsSync(dir)) dir = dirname(dir);
  if (!statSync(dir).isDirectory())
    throw new UserError(`--output-dir: ${dir} is a file, not a folder (run folder ${runDir})`);
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    throw new UserError(`--output-dir: ${dir} is not writable (run folder ${runDir})`);
  }
  for (const name of [RUN_FILES.trajectories, RUN_FILES.failed, RUN_FILES.dropped]) {
    const path = join(runDir, name);
    if (existsSync(path) && !statSync(path).isFile())
      throw new UserError(`run folder ${runDir}: ${name} is not a file`);
  }
}

/** The configuration changes an earlier --allow-config-change recorded in run.yaml (kept across resumes). */
function earlierConfigChanges(runDir: string): { at: string; changed: string }[] {
  try {
    const previous = YAML.parse(readFileSync(join(runDir, RUN_FILES.config), "utf8")) as {
      allowed_config_changes?: unknown;
    };
    return Array.isArray(previous?.allowed_config_changes)
      ? (previous.allowed_config_changes as { at: string; changed: string }[])
      : [];
  } catch {
    return []; // unreadable: checkConfigChange already warned about it
  }
}

/** run.yaml's record of a dataset read from stdin or a pipe: its name and the hash of what was read. */
function datasetRecord(dataset: DatasetSource): Record<string, string> {
  const sha256 = inMemorySha256(dataset);
  return sha256 === undefined ? {} : { dataset: dataset.name, dataset_sha256: sha256 };
}

/** The command line of this invocation with --resume, as the user typed it (flags, config, output dir). */
function resumeCommand(config: RunConfig, shard: Shard | undefined): string {
  const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  const typed = process.argv
    .slice(2)
    .filter((a) => a !== "--resume" && a !== "--retry-failed" && a !== "--retry-unscored");
  // A key is never printed: its place says that one must be given again (or come from the environment).
  // Header values appear only as `${VAR}` references, URL credentials as USER:PASSWORD.
  const secretFlags = new Set(SECRET_KEYS.map((k) => `--${k.replace(/_/g, "-")}`));
  const headerFlags = new Set(HEADER_KEYS.map((k) => flagOf(k)!));
  const hidden = (flag: string, value: string): string => {
    if (secretFlags.has(flag)) return "KEY";
    if (headerFlags.has(flag)) {
      const h = parseHeaderLine(value);
      return h && !isShowableHeaderValue(h[1]) ? `${h[0]}: VALUE` : value;
    }
    return scrubUrlCredentials(value, "USER:PASSWORD");
  };
  const args = typed.map((a, i) => {
    const eq = a.indexOf("=");
    if (a.startsWith("--") && eq > 0) return `${a.slice(0, eq)}=${hidden(a.slice(0, eq), a.slice(eq + 1))}`;
    return i > 0 && typed[i - 1]!.startsWith("--") ? hidden(typed[i - 1]!, a) : scrubUrlCredentials(a, "USER:PASSWORD");
  });
  if (!args.includes("--run-name")) args.push("--run-name", config.run_name!);
  if (shard && !args.includes("--shard")) args.push("--shard", formatShard(shard));
  const gaps = [
    ...(args.includes("KEY") || args.some((a) => a.endsWith("=KEY")) ? ["your key back in place of KEY"] : []),
    ...(args.some((a) => /: VALUE$/.test(a)) ? ["the header values back in place of VALUE"] : []),
    ...(args.some((a) => a.includes("USER:PASSWORD@")) ? ["the URL credentials back in place of USER:PASSWORD"] : []),
  ];
  const hints = [
    ...(gaps.length ? [`put ${gaps.join(", ")}`] : []),
    ...(readsOnce(config.dataset) ? ["pipe the same dataset into it again"] : []),
  ];
  const hint = hints.length ? ` (${hints.join("; ")})` : "";
  return `npx hermes-batch ${args.map(quote).join(" ")} --resume${hint}`;
}

/** The run's worker pool and the run-wide gates it shares. */
interface RunPool {
  pool: Piscina;
  sandboxGates: SandboxGates;
  modelGates: ModelGates;
  /** Every worker thread the pool started (from its first one on): a gone thread's permits are reclaimed by id. */
  threadIds: Set<number>;
  /** Ends the pool once (later calls wait for the first); safe while threads are still loading their modules. */
  close(): Promise<void>;
}

/** How long an unused pool waits for its threads to finish loading before it ends them anyway. */
const POOL_LOAD_WAIT_MS = 15_000;

/** Starts the run's worker threads with the run-wide gates they share. */
function startRunPool(config: RunConfig, runDir: string, inputs: RunInputs): RunPool {
  const sandboxGates = SandboxGates.create({
    maxSandboxes: config.max_sandboxes,
    prewarm: config.prewarm,
    workers: config.workers,
  });
  // One limiter per model endpoint for the whole run: every worker thread shares its permits and its back-off.
  const modelGates = ModelGates.create(config);
  const loaded = new Int32Array(new SharedArrayBuffer(4));
  const workerData: WorkerData = {
    config,
    runDir,
    workers: config.workers,
    prefill: inputs.prefill,
    allowlist: inputs.allowlist,
    mcp: inputs.mcp,
    sandboxGates: sandboxGates.buffers,
    modelGates: modelGates.buffers,
    loaded,
  };
  const perWorker = Math.max(1, Math.ceil(config.concurrency / config.workers));
  tuneHeapGrowth();
  const pool = new Piscina({
    filename: fileURLToPath(new URL("./worker.js", import.meta.url)),
    minThreads: config.workers,
    maxThreads: config.workers,
    concurrentTasksPerWorker: perWorker,
    maxQueue: "auto",
    idleTimeout: 60_000,
    resourceLimits: WORKER_RESOURCE_LIMITS,
    workerData,
  });
  const threadIds = new Set<number>();
  pool.on("workerCreate", (worker: { id: number }) => threadIds.add(worker.id));
  let closing: Promise<void> | undefined;
  // Node 20 can abort the whole process (SIGABRT in ModuleWrap::InstantiateSync) when a worker thread is ended
  // while piscina still loads the worker module: a pool that may not have run a task waits for that first.
  const close = () =>
    (closing ??= (async () => {
      const deadline = Date.now() + POOL_LOAD_WAIT_MS;
      while (Atomics.load(loaded, 0) < config.workers && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 5));
      await pool.destroy();
    })());
  return { pool, sandboxGates, modelGates, threadIds, close };
}

async function runLocked(config: RunConfig, runDir: string, plan: RunPlan, runPool: RunPool): Promise<number> {
  const { dataset, shard, shardInfo, fingerprint, sel, state, failedIds, total, planner, inputs, configChange } = plan;
  const startedAt = new Date();
  const out = process.stdout;
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
  const previousChanges = configChange ? earlierConfigChanges(runDir) : [];
  const changes = configChange ? [...previousChanges, { at: new Date().toISOString(), changed: configChange }] : [];
  writeFileSync(
    join(runDir, RUN_FILES.config),
    YAML.stringify({
      ...publicConfig(config),
      ...(inputs.mcp ? { mcp_servers: publicMcpServers(inputs.mcp.map((c) => c.config)) } : {}),
      ...datasetRecord(dataset),
      config_fingerprint: fingerprint,
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

  const files = {
    trajectory: new JsonlAppender(join(runDir, RUN_FILES.trajectories)),
    failed: new JsonlAppender(join(runDir, RUN_FILES.failed)),
    dropped: new JsonlAppender(join(runDir, RUN_FILES.dropped)),
    rl: config.rl_capture ? new JsonlAppender(join(runDir, RUN_FILES.rl)) : undefined,
  };
  const counts: ProgressCounts = { done: 0, failed: 0, dropped: 0, tokens: 0 };
  // This invocation's tokens by who spent them; counts.tokens is their total (agent + approver + judge).
  const tokensBy = { agent: 0, approver: 0, judge: 0 };
  const progress = createProgress(config.progress);
  progress.start(total);

  const { pool, sandboxGates, modelGates, threadIds } = runPool;
  const modelCounts = () => ({ model: modelGates.counts() });
  // A thread that is gone cannot give back its sandbox permits: remove what it started, then return them.
  // (Piscina names a destroyed worker only by a thread id already reset to -1: compare with the live ones.)
  const threadsGone = new Set<Promise<void>>();
  pool.on("workerDestroy", () => {
    const check = new Promise<void>((r) => setImmediate(r)).then(async () => {
      const live = new Set(pool.threads.map((t) => t.threadId));
      for (const id of [...threadIds].filter((t) => !live.has(t))) {
        threadIds.delete(id);
        const modelPermits = modelGates.releaseThread(id);
        if (modelPermits) logEvent(`worker thread ${id} gone: returned ${modelPermits} model connection permit(s)`);
        try {
          const { removed, permits } = await reclaimThread(config.env, config.run_name!, id, sandboxGates);
          if (removed || permits)
            logEvent(`worker thread ${id} gone: removed ${removed} sandbox(es), returned ${permits} sandbox permit(s)`);
        } catch (err) {
          logEvent(`worker thread ${id} gone: could not remove its sandboxes: ${errorMessage(err)}`);
        }
      }
    });
    const p: Promise<void> = check.finally(() => threadsGone.delete(p));
    threadsGone.add(p);
  });

  // Ctrl-C once: stop taking tasks, let in-flight ones finish. Twice, or SIGTERM: abort them too.
  let stopping = false;
  let interrupted = false;
  const cancel = new BroadcastChannel(CANCEL_CHANNEL);
  const abortAll = () => cancel.postMessage({ type: "abort-all", runDir } satisfies CancelMessage);
  const onSigint = () => {
    interrupted = true;
    if (!stopping) {
      stopping = true;
      progress.log("interrupt: finishing the tasks in flight (Ctrl-C again to abort them)…");
      logEvent("SIGINT: draining");
    } else {
      progress.log("interrupt: aborting the tasks in flight…");
      logEvent("SIGINT: aborting");
      abortAll();
    }
  };
  // SIGHUP (the terminal closed, the ssh session dropped) ends the run like SIGTERM: nothing is left running.
  const onSigterm = (signal: NodeJS.Signals) => {
    interrupted = true;
    stopping = true;
    logEvent(`${signal}: aborting`);
    abortAll();
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  process.on("SIGHUP", onSigterm);

  // An endpoint that cannot work (bad key, unknown model, nobody listening) or dies mid-run fails every task the
  // same way: N results in a row that are all one model error stop the run (src/run/early_stop.ts).
  const deadEndpoint = new DeadEndpointWatch(config.stop_after_failures);
  let earlyStop: string | undefined;
  let earlyStopWhat = "";
  const watchForDeadEndpoint = (msg: TaskOutcomeMessage) => {
    if (earlyStop !== undefined) return;
    const fired = deadEndpoint.observe(msg);
    if (!fired) return;
    earlyStop = fired.error;
    earlyStopWhat = fired.what;
    stopping = true;
    progress.log(`stopping: ${fired.what} all failed with the same model error; finishing the tasks in flight`);
    logEvent(`stopped early: ${fired.what} all failed with: ${earlyStop}`);
  };

  const outcomesThisTime = new Map<string, number>();
  const failureReasons = new FailureReasons();
  const noUsageWarned = new Set<string>();
  const approverFailures = { count: 0, first: undefined as string | undefined };
  const hermesCheckpoint = new HermesCheckpoint(config.batch_size, state.doneIndices);
  const write = (msg: TaskOutcomeMessage, promptIndex: number) => {
    watchForDeadEndpoint(msg);
    hermesCheckpoint.record(promptIndex, msg.kind, msg.error);
    outcomesThisTime.set(msg.outcome, (outcomesThisTime.get(msg.outcome) ?? 0) + (msg.kind === "dropped" ? 0 : 1));
    for (const e of msg.modelEvents ?? []) {
      if (e.kind === "no_usage" || e.kind === "bad_usage") {
        // Once per endpoint for the whole run, on the console too.
        if (noUsageWarned.has(`${e.kind} ${e.endpoint}`)) continue;
        noUsageWarned.add(`${e.kind} ${e.endpoint}`);
        progress.log(redact(describeModelEvent(e)));
      }
      logEvent(`task ${msg.taskId}: ${describeModelEvent(e)}`, new Date(e.at));
    }
    for (const e of msg.environmentEvents ?? []) logEvent(`task ${msg.taskId}: ${e.message}`, new Date(e.at));
    if (msg.consoleNotes?.length) logEvent(`task ${msg.taskId}: printed by a library: ${msg.consoleNotes.join(" | ")}`);
    if (msg.approverErrors) {
      approverFailures.count += msg.approverErrors.count;
      approverFailures.first ??= `task ${msg.taskId}: ${msg.approverErrors.first}`;
    }
    // The rl line first: a crash between the two leaves a line a rerun supersedes (readers keep the last per
    // task and epoch), never a result without its tokens.
    if (msg.rlLine !== undefined) files.rl?.appendLine(redact(msg.rlLine));
    if (msg.rlProblems)
      logEvent(`task ${msg.taskId}: rl.jsonl line excluded, bad token data: ${msg.rlProblems.join("; ")}`);
    files[msg.kind].appendLine(redact(msg.line));
    tokensBy.agent += msg.tokens.agent;
    tokensBy.approver += msg.tokens.approver;
    tokensBy.judge += msg.tokens.judge;
    counts.tokens += msg.tokens.agent + msg.tokens.approver + msg.tokens.judge;
    if (msg.kind === "trajectory") counts.done++;
    else if (msg.kind === "dropped") counts.dropped++;
    else {
      counts.failed++;
      failureReasons.add(msg.taskId, msg.outcome, msg.error);
      logEvent(failureEvent(msg));
    }
    progress.update({ ...counts, ...modelCounts() });
  };

  const inFlight = new Set<Promise<void>>();
  // Tasks retried after a worker crash run one at a time, so the task that kills its worker dies alone
  // and cannot take the innocent ones down with it a second time.
  const crashRetries = pLimit(1);
  const submit = (spec: TaskSpec): Promise<void> => {
    const run = (): Promise<TaskOutcomeMessage> => pool.run(spec);
    const p: Promise<void> = (spec.attempt > 0 ? crashRetries(run) : run())
      .then(
        (msg: TaskOutcomeMessage) => write(msg, spec.index),
        async (err: unknown) => {
          // The worker thread died under this task: its `finally` never ran, so remove its sandbox here.
          await removeLeftSandboxes(config, specKey(spec), sandboxGates, logEvent);
          // Retry once on a fresh worker, then record it.
          if (spec.attempt === 0 && !stopping) {
            logEvent(`task ${spec.id}: worker crashed (${errorMessage(err)}); retrying once`);
            const retry = submit({ ...spec, attempt: 1 });
            return retry;
          }
          write(
            {
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
            },
            spec.index,
          );
        },
      )
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    return p;
  };

  const checkpointTimer = setInterval(() => {
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
  }, 5_000);
  checkpointTimer.unref();
  // Retries and limit changes show while tasks are still running (a 429 storm finishes nothing for a while).
  const modelTimer = setInterval(() => progress.update({ ...counts, ...modelCounts() }), 2_000);
  modelTimer.unref();

  let dispatchError: unknown;
  try {
    const badRows: string[] = [];
    for await (const spec of plannedTasks(
      config,
      dataset,
      planner,
      state.done,
      failedIds,
      sel,
      (m) => badRows.push(m),
      undefined,
      shard,
    )) {
      if (stopping) break;
      while (inFlight.size >= config.concurrency && !stopping) await Promise.race(inFlight);
      if (stopping) break;
      submit(spec);
    }
    for (const b of badRows) logEvent(`skipped bad row: ${b}`);
    if (badRows.length) progress.log(`skipped ${badRows.length} bad row(s); see ${events}`);
    while (inFlight.size) await Promise.race(inFlight);
  } catch (err) {
    // Reading the dataset or writing failed: stop, and let the tasks in flight end before the files close.
    dispatchError = err;
    stopping = true;
    abortAll();
    await Promise.allSettled([...inFlight]);
  } finally {
    clearInterval(checkpointTimer);
    clearInterval(modelTimer);
    progress.stop();
    files.trajectory.close();
    files.failed.close();
    files.dropped.close();
    files.rl?.close();
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
    process.off("SIGHUP", onSigterm);
    cancel.close();
    await runPool.close();
    await Promise.allSettled([...threadsGone]);
    await removeLeftSandboxes(config, undefined, sandboxGates, logEvent);
    removeEmptyTaskFolders(config.output_dir, runDir);
  }
  if (dispatchError !== undefined) {
    logEvent(`stopped: ${errorMessage(dispatchError)}`);
    throw dispatchError;
  }

  // The report modules load only now: the run's start-up does not pay for them.
  const { scoresLine, writeRunReports } = await import("../report/reports.js");
  const report = await writeRunReports(runDir, config, {
    startedAt,
    totalPrompts: total + state.done.size,
    modelCalls: modelGates.counts(),
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
      finished: !interrupted,
    },
    hermesCheckpoint,
  );
  if (shardLedger)
    await finishShardLedger(shardLedger, config, runDir, shard!, {
      dataset,
      interrupted,
      earlyStop,
      earlyStopWhat,
      thisTime: { done: counts.done, failed: counts.failed, dropped: counts.dropped },
      modelCalls: modelGates.counts(),
      redact,
    });
  logEvent(`end: ${counts.done} done, ${counts.failed} failed, ${counts.dropped} dropped in this invocation`);

  // Each outcome by its name: a max_turns or partial task is never called completed.
  const n = (o: string) => outcomesThisTime.get(o) ?? 0;
  const failedKinds = [...outcomesThisTime].filter(([o, k]) => k > 0 && !DONE_OUTCOMES.has(o as Outcome));
  const parts = [
    `${n("completed")} completed`,
    ...(n("max_turns") ? [`${n("max_turns")} max_turns`] : []),
    ...(n("partial") ? [`${n("partial")} partial`] : []),
    ...(n("time_limit") ? [`${n("time_limit")} time_limit`] : []),
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
  if (interrupted) {
    out.write(`interrupted. Resume with: ${resumeCommand(config, shard)}\n`);
    return EXIT.interrupted;
  }
  if (earlyStop !== undefined) {
    out.write(
      `stopped early: ${earlyStopWhat} all failed with the same model error (the rest were not started):\n  ${redact(earlyStop)}\n` +
        `fix the endpoint, model or key, then: ${resumeCommand(config, shard)}\n`,
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
