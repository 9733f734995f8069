/**
 * The run folder before a run writes to it: where it may be, whether a resume changed the experiment, and the
 * run.yaml that records the configuration.
 */
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import YAML from "yaml";
import { publicConfig, type RunConfig } from "../config/run_config.js";
import { UserError, errorMessage } from "../core/errors.js";
import { inMemorySha256, readDataset, type DatasetSource } from "./dataset.js";
import { RUN_FILES } from "../store/checkpoint.js";
import { configDifferences } from "../store/run_identity.js";
import { datasetDrift, describeDrift, type DatasetDrift, type SliceRow } from "../store/dataset_drift.js";
import { scoringCriteria } from "../score/criteria.js";
import { sliceCounter, taskInShard, type Shard } from "../shard/assign.js";

/** A resume whose configuration changed: what changed, and how the results differ from the dataset slice now. */
export interface ConfigChange {
  what: string;
  drift: DatasetDrift;
  /** The rows of the slice this invocation plans (ids of the whole --offset/--max-samples slice, its shard's only). */
  rows: Map<string, SliceRow>;
}

/**
 * The rows of the run's slice as a result is compared with them: every row that parses counts for --offset and
 * --max-samples (as the planner counts them), a shard keeps its own ids.
 */
export async function sliceRows(
  config: RunConfig,
  dataset: DatasetSource,
  shard: Shard | undefined,
): Promise<Map<string, SliceRow>> {
  const rows = new Map<string, SliceRow>();
  const inSlice = sliceCounter(config);
  for await (const item of readDataset(dataset)) {
    if (!item.ok || !inSlice()) continue;
    const { id, row, index } = item.value;
    if (shard && !taskInShard(id, shard)) continue;
    rows.set(id, {
      index,
      prompt: row.prompt,
      criteria: scoringCriteria({
        expected: row.expected,
        verify: row.verify,
        rubric: row.rubric,
        verifyFiles: row.verify_files === undefined ? undefined : resolve(dataset.dir, row.verify_files),
      }),
    });
  }
  return rows;
}

/**
 * A resume whose dataset, model or settings changed would mix two experiments in one run folder: it stops
 * (exit 3) naming what changed, unless --allow-config-change, which is then recorded. Returns the change.
 */
export async function checkConfigChange(
  runDir: string,
  config: RunConfig,
  fingerprint: string,
  dataset: DatasetSource,
  shard?: Shard,
): Promise<ConfigChange | undefined> {
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
  // The results against the rows given now: what a changed dataset (or --epochs) means for this run folder.
  const rows = await sliceRows(config, dataset, shard);
  const drift = await datasetDrift(runDir, rows, config.epochs);
  const driftText = describeDrift(drift);
  const what = diffs.length ? diffs.join("; ") : "the dataset or a referenced file changed";
  const detail = driftText ? `: ${driftText}` : "";
  if (!config.allow_config_change) {
    const regrade =
      drift.criteriaChanged.length > 0
        ? `; to grade results again against changed criteria without rerunning them: hermes-batch score ${runDir} --dataset FILE`
        : "";
    throw new UserError(
      `${runDir} was started with a different configuration (${what})${detail}; resuming would mix both: use another --run-name, or --allow-config-change to go on knowingly (results that no longer match the dataset are then moved to superseded.jsonl and their tasks rerun)${regrade}`,
      3,
    );
  }
  process.stderr.write(
    `warning: ${runDir} was started with a different configuration (${what})${detail}; going on (--allow-config-change)\n`,
  );
  return { what: driftText ? `${what}: ${driftText}` : what, drift, rows };
}

/**
 * The run folder and its result files must be what they claim before anything runs: a folder (not a file),
 * outside /proc and /sys (where a recursive mkdir never returns), and its result files plain files.
 */
export function checkOutputLocation(runDir: string): void {
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
export function earlierConfigChanges(runDir: string): { at: string; changed: string }[] {
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
export function datasetRecord(dataset: DatasetSource): Record<string, string> {
  const sha256 = inMemorySha256(dataset);
  return sha256 === undefined ? {} : { dataset: dataset.name, dataset_sha256: sha256 };
}
