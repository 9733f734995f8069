/**
 * The tasks an invocation runs, streamed from the dataset: each row checked (bad rows reported, not run), the
 * slice, shard and resume selection applied, each (task, epoch) turned into a TaskSpec.
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { RunConfig } from "../config/run_config.js";
import { formatBadRow, readDataset, type DatasetLine, type DatasetSource } from "./dataset.js";
import { getOfferedToolNames, selectToolNames } from "../../tools/model_tools.js";
import { registry } from "../../tools/registry.js";
import { recordKey } from "../store/checkpoint.js";
import type { ToolsetPlanner } from "./planner.js";
import { sliceCounter, taskInShard, type Shard } from "../shard/assign.js";
import { environmentBackend } from "../../tools/environments/index.js";
import type { TaskSpec } from "./task_spec.js";
import { namedNetwork, networkRefusal } from "../../tools/environments/docker/docker_network.js";
import { rowMcpProblem } from "./mcp_setup.js";
import { SandboxNeed } from "./sandbox_need.js";

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

export interface Selection {
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

interface RowCheck {
  config: RunConfig;
  dataset: DatasetSource;
  planner: ToolsetPlanner;
  /** Filled with the named networks of rows that pass the checks before the toolsets one. */
  rowNetworks: Set<string>;
  rowProblem?: (row: { cwd?: string; network?: string }) => string | undefined;
  whyNoToolOnce: (toolsets: string[]) => Promise<string | undefined>;
}

/** Why a valid row cannot run here (one line naming dataset:line), or undefined. */
async function rowRefusal(item: DatasetLine, check: RowCheck): Promise<string | undefined> {
  const { config, dataset, planner, rowNetworks, rowProblem, whyNoToolOnce } = check;
  const filesDir = verifyFilesDir(dataset, item.row);
  if (filesDir !== undefined && !(existsSync(filesDir) && statSync(filesDir).isDirectory())) {
    return `${dataset.name}:${item.line}: 'verify_files' ${item.row.verify_files}: no such folder beside the dataset (${filesDir})`;
  }
  if (filesDir !== undefined && item.row.verify === undefined) {
    return `${dataset.name}:${item.line}: 'verify_files' needs a 'verify' command to run against them`;
  }
  const networkBad = item.row.network !== undefined && networkRefusal(item.row.network, config.allow_network);
  if (networkBad) {
    return `${dataset.name}:${item.line}: 'network': ${networkBad}`;
  }
  // The Harbor checks (and their TOML and YAML parsers) load only for a run that has a Harbor row or --model oracle.
  const harborBad =
    item.row.harbor === undefined && config.model !== "oracle"
      ? undefined
      : (await import("../harbor/checks.js")).harborRowProblem(item.row, config, `${dataset.name}:${item.line}`);
  if (harborBad) {
    return harborBad;
  }
  const envProblem = rowProblem?.(item.row);
  if (envProblem) {
    return `${dataset.name}:${item.line}: ${envProblem}`;
  }
  // Before the toolsets check: the row's own servers make its mcp-<server> toolsets.
  const mcpProblem = await rowMcpProblem(config, item.row);
  if (mcpProblem) {
    return `${dataset.name}:${item.line}: ${mcpProblem}`;
  }
  const rowNetwork = namedNetwork(item.row.network);
  if (rowNetwork !== undefined) rowNetworks.add(rowNetwork);
  const badToolset = item.row.toolsets && planner.unknownToolset(item.row.toolsets);
  if (badToolset) {
    return `${dataset.name}:${item.line}: unknown toolset '${badToolset}' in 'toolsets'`;
  }
  const noTool = item.row.toolsets && (await whyNoToolOnce(item.row.toolsets));
  if (noTool) {
    return `${dataset.name}:${item.line}: 'toolsets' ${item.row.toolsets!.join(", ")} offer no tool here: ${noTool}`;
  }
  return undefined;
}

/** Streams the dataset and yields the tasks this invocation must run. */
export async function* plannedTasks(
  config: RunConfig,
  dataset: DatasetSource,
  planner: ToolsetPlanner,
  done: Set<string>,
  failed: Set<string>,
  sel: Selection,
  onBad: (msg: string) => void,
  rows = { n: 0, runnable: 0 },
  shard?: Shard,
  rowNetworks = new Set<string>(),
  rowProblem?: (row: { cwd?: string; network?: string }) => string | undefined,
) {
  const inSlice = sliceCounter(config);
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
    // The slice counts every row that parses, refused or not (sliceCounter).
    const sliced = inSlice();
    rows.n++;
    const refusal = await rowRefusal(item.value, { config, dataset, planner, rowNetworks, rowProblem, whyNoToolOnce });
    if (refusal) {
      onBad(refusal);
      continue;
    }
    rows.runnable++;
    if (!sliced) continue; // keep reading: bad rows further on must still be found
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

/**
 * Up to this many tasks, the count pass keeps the tasks it planned and the run dispatches those (see
 * `PlannedTaskList`); above it, or when the dataset's rows were not kept (readDataset), the run plans them again.
 */
const KEEP_PLANNED_MAX = 65_536;

/** The tasks a count pass planned, handed to the dispatch once: each is dropped as it is taken. */
export class PlannedTaskList {
  private at = 0;
  constructor(private readonly specs: (TaskSpec | undefined)[]) {}
  *take(): Generator<TaskSpec> {
    while (this.at < this.specs.length) {
      const spec = this.specs[this.at]!;
      this.specs[this.at++] = undefined;
      yield spec;
    }
  }
}

/** The environment's own check of a row (a local sandbox's cwd), the same for every pass over the dataset. */
export async function rowProblemOf(
  config: RunConfig,
): Promise<((row: { cwd?: string; network?: string }) => string | undefined) | undefined> {
  const backend = await environmentBackend(config.env);
  return backend.rowProblem?.bind(backend);
}

export async function countTasks(
  config: RunConfig,
  dataset: DatasetSource,
  planner: ToolsetPlanner,
  done: Set<string>,
  failed: Set<string>,
  sel: Selection,
  shard?: Shard,
) {
  const rowProblem = await rowProblemOf(config);
  let n = 0;
  const draws = new Map<string, number>();
  const bad: string[] = [];
  const rows = { n: 0, runnable: 0 };
  const networks = new Set<string>();
  const unscoredPlanned = new Set<string>();
  const sandboxNeed = new SandboxNeed(config);
  let specs: TaskSpec[] | undefined = [];
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
    if (specs && specs.push(spec) > KEEP_PLANNED_MAX) specs = undefined;
    sandboxNeed.add(spec);
    if (sel.unscored.has(recordKey(spec.id, spec.epoch))) unscoredPlanned.add(recordKey(spec.id, spec.epoch));
    const key = spec.toolsets.join("+") || "(none)";
    draws.set(key, (draws.get(key) ?? 0) + 1);
  }
  // Kept only when the dataset's rows were (a small dataset, read to its end): a second pass would read those same
  // rows and plan the same tasks again, its row checks and all (and TurboFan would compile the planning code again:
  // its first optimised code is dropped when the first pass ends).
  const planned = specs && dataset.parsed ? new PlannedTaskList(specs) : undefined;
  return {
    n,
    draws,
    bad,
    rows: rows.n,
    runnableRows: rows.runnable,
    networks,
    unscoredPlanned,
    needsSandbox: await sandboxNeed.any(),
    planned,
  };
}

async function whyNoTool(toolsets: string[]): Promise<string | undefined> {
  if ((await getOfferedToolNames({ enabledToolsets: toolsets })).length > 0) return undefined;
  const names = selectToolNames({ enabledToolsets: toolsets });
  if (names.length === 0) return "they hold no tool";
  const avail = await registry.availability(names);
  return names.map((n) => `${n}: ${avail.get(n)?.reason ?? "unavailable"}`).join("; ");
}

/** Every valid row's task id (for --only). */
export async function datasetIds(dataset: DatasetSource): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const item of readDataset(dataset)) if (item.ok) ids.add(item.value.id);
  return ids;
}
