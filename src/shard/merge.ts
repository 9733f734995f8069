/**
 * Merging the shard folders of a run (`<run>/shards/<i>-of-<N>/`, each a normal run folder) into one run
 * folder: inspection (which shard folders exist, with which config fingerprint), then a streaming merge of
 * the result files with dedup by task id. Shard folders are only read, never changed. Whether a shard has
 * finished is not read here but proved by its completion record (status.ts).
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { RunConfigSchema, formatZodIssues, type RunConfig } from "../config/run_config.js";
import { UserError } from "../core/errors.js";
import { JsonlAppender, readLines } from "../store/jsonl_file.js";
import { RUN_FILES, recordKey } from "../store/checkpoint.js";
import { configDifferences, fieldsFingerprint } from "../store/run_identity.js";
import { describeBuild, identityOf, type RecordedBuild } from "../store/build_identity.js";
import { SHARDS_DIR, formatShard, parseShardDirName, shardOfTask, type Shard } from "./assign.js";
import { COMPLETION_FILE } from "./completion.js";

/** Marker of a merged folder: a later merge may overwrite what a merge wrote, nothing else. */
export const MERGE_INFO_FILE = "merge.json";

export interface ShardFolder {
  shard: Shard;
  dir: string;
  /** run.yaml as written by the shard's latest invocation; undefined when missing or unreadable. */
  runYaml?: Record<string, unknown>;
  checkpoint?: Record<string, unknown>;
  /** Recorded `config_fingerprint`, else `fields:<sha256>` of run.yaml's comparable keys. */
  fingerprint: string;
  /**
   * The hermes-batch of the shard's latest invocation: run.yaml's record, else checkpoint.json's, else its completion
   * record's; version null for a shard of an earlier version, which recorded none.
   */
  identity: RecordedBuild;
  /** Why this folder cannot be used (it then counts as missing). */
  unusable?: string;
  /** The shard recorded inside the folder, when it disagrees with the folder name. */
  recordedShard?: string;
  /** The working folder its latest invocation started in (launch.json): a relative dataset path is relative to it. */
  launchCwd?: string;
}

export interface ShardInspection {
  shardsDir: string;
  count: number;
  folders: ShardFolder[];
  /** Indexes without a usable folder, ascending. */
  missing: number[];
  /** Shards grouped by fingerprint, largest group first. */
  fingerprintGroups: { fingerprint: string; shards: number[] }[];
  /** Usable shards grouped by the hermes-batch that ran them (version, then build), in shard order; unknown last. */
  versionGroups: VersionGroup[];
  warnings: string[];
}

/** The shards one hermes-batch ran: its version (null: not recorded) and build (null: not recorded). */
export interface VersionGroup {
  version: string | null;
  build: string | null;
  shards: number[];
}

function readYamlObject(path: string): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = YAML.parse(readFileSync(path, "utf8"));
  } catch (err) {
    return `${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message.split("\n")[0]}`;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return `${path}: not a YAML mapping`;
  return parsed as Record<string, unknown>;
}

function readJsonObject(path: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    return parsed && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function recordedShardText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (value && typeof value === "object") {
    const v = value as { index?: unknown; count?: unknown };
    if (typeof v.index === "number" && typeof v.count === "number") return `${v.index}/${v.count}`;
  }
  return undefined;
}

function loadFolder(dir: string, shard: Shard): ShardFolder {
  const folder: ShardFolder = { shard, dir, fingerprint: "", identity: { version: null, build: null } };
  const checkpointPath = join(dir, RUN_FILES.checkpoint);
  if (existsSync(checkpointPath)) folder.checkpoint = readJsonObject(checkpointPath);
  folder.identity =
    identityOf(folder.checkpoint) ?? identityOf(readJsonObject(join(dir, COMPLETION_FILE))) ?? folder.identity;
  const yamlPath = join(dir, RUN_FILES.config);
  if (!existsSync(yamlPath)) {
    folder.unusable = `no ${RUN_FILES.config} (the shard never started)`;
    return folder;
  }
  const yaml = readYamlObject(yamlPath);
  if (typeof yaml === "string") {
    folder.unusable = `unreadable ${RUN_FILES.config}: ${yaml}`;
    return folder;
  }
  folder.runYaml = yaml;
  folder.identity = identityOf(yaml) ?? folder.identity;
  const recorded = yaml.config_fingerprint ?? folder.checkpoint?.config_fingerprint;
  folder.fingerprint = typeof recorded === "string" && recorded ? recorded : fieldsFingerprint(yaml);
  const recordedShard = recordedShardText(yaml.shard ?? folder.checkpoint?.shard);
  if (recordedShard !== undefined && recordedShard !== formatShard(shard)) folder.recordedShard = recordedShard;
  return folder;
}

/** Finds and checks `<runDir>/shards/<i>-of-<N>/`. Throws UserError when there is nothing coherent to merge. */
export function inspectShards(runDir: string): ShardInspection {
  const shardsDir = join(runDir, SHARDS_DIR);
  if (!existsSync(runDir)) throw new UserError(`run folder ${runDir} not found`);
  if (!existsSync(shardsDir)) {
    throw new UserError(
      `${runDir} has no ${SHARDS_DIR}/ folder: a sharded run writes ${SHARDS_DIR}/<i>-of-<N>/ (hermes-batch run --shard i/N, a Slurm array or a Kubernetes Indexed Job)`,
    );
  }
  const warnings: string[] = [];
  const byCount = new Map<number, { name: string; shard: Shard }[]>();
  for (const name of readdirSync(shardsDir).sort()) {
    const shard = parseShardDirName(name);
    if (!shard || !statSync(join(shardsDir, name)).isDirectory()) {
      warnings.push(`ignoring ${join(shardsDir, name)}: not a shard folder (<i>-of-<N>)`);
      continue;
    }
    const list = byCount.get(shard.count) ?? [];
    list.push({ name, shard });
    byCount.set(shard.count, list);
  }
  if (byCount.size === 0) throw new UserError(`no shard folders (<i>-of-<N>) in ${shardsDir}`);
  if (byCount.size > 1) {
    const kinds = [...byCount.entries()].map(([n, l]) => `${l.length} folder(s) of ${n} shards`).join(", ");
    throw new UserError(
      `${shardsDir} mixes shard counts (${kinds}): every shard of a run must use the same N. ` +
        `Remove the stray folders, or keep HERMES_BATCH_SHARD_COUNT set when rerunning a few array tasks`,
    );
  }
  const [count, entries] = [...byCount.entries()][0]!;
  const seen = new Map<number, string>();
  for (const e of entries) {
    const other = seen.get(e.shard.index);
    if (other) throw new UserError(`shard ${e.shard.index} has two folders in ${shardsDir}: ${other} and ${e.name}`);
    seen.set(e.shard.index, e.name);
  }

  const folders = entries
    .map((e) => loadFolder(join(shardsDir, e.name), e.shard))
    .sort((a, b) => a.shard.index - b.shard.index);
  const usable = new Set(folders.filter((f) => !f.unusable).map((f) => f.shard.index));
  for (const f of folders) if (f.unusable) warnings.push(`shard ${formatShard(f.shard)} (${f.dir}): ${f.unusable}`);
  const missing: number[] = [];
  for (let i = 0; i < count; i++) if (!usable.has(i)) missing.push(i);

  const groups = new Map<string, number[]>();
  for (const f of folders) {
    if (f.unusable) continue;
    const list = groups.get(f.fingerprint) ?? [];
    list.push(f.shard.index);
    groups.set(f.fingerprint, list);
  }
  const fingerprintGroups = [...groups.entries()]
    .map(([fingerprint, shards]) => ({ fingerprint, shards }))
    .sort((a, b) => b.shards.length - a.shards.length || a.shards[0]! - b.shards[0]!);
  return { shardsDir, count, folders, missing, fingerprintGroups, versionGroups: versionGroups(folders), warnings };
}

/** Usable shards by (version, build): known versions first, in the order of their first shard; unknown last. */
function versionGroups(folders: ShardFolder[]): VersionGroup[] {
  const groups = new Map<string, VersionGroup>();
  for (const f of folders) {
    if (f.unusable) continue;
    const key = JSON.stringify([f.identity.version, f.identity.build]);
    const g = groups.get(key) ?? { version: f.identity.version, build: f.identity.build, shards: [] };
    g.shards.push(f.shard.index);
    groups.set(key, g);
  }
  return [...groups.values()].sort(
    (a, b) => Number(a.version === null) - Number(b.version === null) || a.shards[0]! - b.shards[0]!,
  );
}

/**
 * What the shards' hermes-batch versions mean for a merge: `mismatch` (refused unless --force) when shards name
 * different versions; `notes` (warnings) for shards that recorded none beside others that did, and for one version
 * built from different code; `version`/`build` for the merged run (`0.1.0, 0.2.0` when forced; null if unknown).
 */
export function versionCheck(inspection: ShardInspection): {
  mismatch?: string;
  notes: string[];
  version: string | null;
  build: string | null;
} {
  const groups = inspection.versionGroups;
  const known = groups.filter((g) => g.version !== null);
  const versions = [...new Set(known.map((g) => g.version!))];
  const shardsOf = (version: string | null) =>
    groups
      .filter((g) => g.version === version)
      .flatMap((g) => g.shards)
      .sort((a, b) => a - b);
  const notes: string[] = [];
  let mismatch: string | undefined;
  if (versions.length > 1) {
    mismatch = `the shards were run by different hermes-batch versions:\n${versions
      .map((v) => `  ${v}: shard(s) ${formatIndexes(shardsOf(v))}`)
      .join("\n")}`;
  }
  const unknown = shardsOf(null);
  if (unknown.length && known.length) {
    notes.push(
      `shard(s) ${formatIndexes(unknown)} recorded no hermes-batch version (run by a version before versions were recorded); the others by ${versions.join(", ")}`,
    );
  }
  for (const v of versions) {
    const builds = known.filter((g) => g.version === v && g.build !== null);
    if (new Set(builds.map((g) => g.build)).size > 1) {
      notes.push(
        `the shards were run by different builds of hermes-batch ${v} (the same version, other code: another checkout or install):\n${builds
          .map((g) => `  build ${g.build}: shard(s) ${formatIndexes(g.shards)}`)
          .join("\n")}`,
      );
    }
  }
  const builds = [...new Set(known.map((g) => g.build))];
  return {
    mismatch,
    notes,
    version: versions.length ? versions.join(", ") : null,
    build: versions.length === 1 && unknown.length === 0 && builds.length === 1 ? builds[0]! : null,
  };
}

/** A version group for merge.json and the summary: `0.1.0 (build …)`. */
export function describeVersionGroup(g: VersionGroup): string {
  return describeBuild({ version: g.version, build: g.build }, true);
}

export function formatIndexes(indexes: number[], max = 40): string {
  const shown = indexes.slice(0, max).join(",");
  return indexes.length > max ? `${shown},… (${indexes.length} in all)` : shown;
}

/** A human description of a fingerprint mismatch, naming shards and differing keys. */
export function describeMismatch(inspection: ShardInspection): string {
  const byIndex = new Map(inspection.folders.map((f) => [f.shard.index, f]));
  const [first, ...others] = inspection.fingerprintGroups;
  const ref = byIndex.get(first!.shards[0]!)!;
  const lines = [`  ${first!.fingerprint.slice(0, 23)}…: shard(s) ${formatIndexes(first!.shards)}`];
  for (const g of others) {
    const rep = byIndex.get(g.shards[0]!)!;
    const diffs = configDifferences(ref.runYaml!, rep.runYaml!);
    const why = diffs.length
      ? `differ from shard ${ref.shard.index} in: ${diffs.join(", ")}`
      : `same settings as shard ${ref.shard.index}, so the content of the dataset, distribution file or prefill file, or the ephemeral system prompt differs (or a shard predates fingerprints)`;
    lines.push(`  ${g.fingerprint.slice(0, 23)}…: shard(s) ${formatIndexes(g.shards)}: ${why}`);
  }
  return lines.join("\n");
}

/**
 * A RunConfig from a shard's run.yaml, for the reports, which need only a few keys: keys the schema does
 * not know, and values it rejects (a run.yaml from another version), are left out and listed in `ignored`.
 */
export function configFromRunYaml(
  runYaml: Record<string, unknown>,
  where: string,
): { config: RunConfig; ignored: string[] } {
  const known = new Set(Object.keys(RunConfigSchema.shape));
  const picked: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(runYaml)) if (known.has(k) && v !== null) picked[k] = v;
  const ignored: string[] = [];
  let parsed = RunConfigSchema.safeParse(picked);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path[0];
      if (typeof key === "string" && key !== "dataset" && key in picked) {
        delete picked[key];
        ignored.push(key);
      }
    }
    parsed = RunConfigSchema.safeParse(picked);
  }
  if (!parsed.success) throw new UserError(formatZodIssues(parsed.error, where, picked));
  return { config: parsed.data, ignored };
}

// ---------- the streaming merge ----------

export interface MergeCounts {
  /** Lines written to each merged file. */
  trajectories: number;
  failed: number;
  dropped: number;
  /** Trajectory/dropped lines skipped because the task was already done (in any shard). */
  duplicateDone: number;
  /** failed.jsonl lines skipped because the task was done in another shard ("done wins"). */
  failedButDoneElsewhere: number;
  /** failed.jsonl lines skipped because the task had already failed in another shard. */
  duplicateFailed: number;
  /** Distinct task ids that appeared in more than one shard. */
  tasksInSeveralShards: number;
  /**
   * Lines left out because the shard does not own their task: its id hashes to another shard (a folder copied
   * between runs, a different N), or the dataset slice has no such task (a row removed since). Only the owning
   * shard's result of a task counts, as only its folder is proved complete.
   */
  misplaced: number;
  notInDataset: number;
  /** `path:line (task id)` of some left-out lines. */
  leftOutExamples: string[];
  /** Unparsable lines or lines without a task_id (e.g. a torn last line of a crashed shard), skipped. */
  badLines: number;
  badLineExamples: string[];
}

/** A line's task id, and its result key (the id with its epoch, for runs with --epochs). */
function taskOf(text: string): { id: string; key: string } | undefined {
  try {
    const v = JSON.parse(text) as { task_id?: unknown; epoch?: unknown } | null;
    const id = v?.task_id;
    if (typeof id !== "string" || !id) return undefined;
    return { id, key: recordKey(id, typeof v?.epoch === "number" ? v.epoch : undefined) };
  } catch {
    return undefined;
  }
}

type ResultFile = typeof RUN_FILES.trajectories | typeof RUN_FILES.failed | typeof RUN_FILES.dropped;

/**
 * Streams every shard's trajectories.jsonl, dropped.jsonl, then failed.jsonl into `outDir` (lines copied
 * byte for byte). Memory: one map entry per task id. Each file is written to a temporary name and renamed
 * into place once all three are complete.
 */
export async function mergeShardFiles(
  folders: ShardFolder[],
  outDir: string,
  count: number,
  /** Per shard index, the result keys it owns (from the dataset or its record); absent: the id hash alone decides. */
  ownedKeys?: ReadonlyMap<number, ReadonlySet<string>>,
  /** Called once every file is copied, before any is renamed into place: throws to write nothing. */
  beforeRename?: () => void,
): Promise<MergeCounts> {
  const counts: MergeCounts = {
    trajectories: 0,
    failed: 0,
    dropped: 0,
    duplicateDone: 0,
    failedButDoneElsewhere: 0,
    duplicateFailed: 0,
    tasksInSeveralShards: 0,
    misplaced: 0,
    notInDataset: 0,
    leftOutExamples: [],
    badLines: 0,
    badLineExamples: [],
  };
  const doneIn = new Map<string, number>();
  const failedIn = new Map<string, number>();
  const multiShard = new Set<string>();
  const order = [...folders].sort((a, b) => a.shard.index - b.shard.index);
  const tmp = (name: ResultFile) => join(outDir, `${name}.merge-tmp`);
  const names: ResultFile[] = [RUN_FILES.trajectories, RUN_FILES.dropped, RUN_FILES.failed];
  const writers = new Map<ResultFile, JsonlAppender>();
  try {
    for (const name of names) {
      rmSync(tmp(name), { force: true }); // a crashed earlier merge must not be appended to
      writers.set(name, new JsonlAppender(tmp(name), 0));
    }
    for (const name of names) {
      const out = writers.get(name)!;
      for (const folder of order) {
        const here = folder.shard.index;
        const path = join(folder.dir, name);
        for await (const { line, text } of readLines(path)) {
          const task = taskOf(text);
          if (task === undefined) {
            counts.badLines++;
            if (counts.badLineExamples.length < 10) counts.badLineExamples.push(`${path}:${line}`);
            continue;
          }
          // Shards are assigned by task id (every epoch of a task in one shard); results are kept per (task, epoch),
          // and only from the shard that owns the task: another shard's copy (first in shard order) must not
          // replace the owner's own result, and a task the dataset does not have is no result of this run.
          const foreign = shardOfTask(task.id, count) !== here;
          const owned = ownedKeys?.get(here);
          if (foreign || (owned !== undefined && !owned.has(task.key))) {
            if (foreign) counts.misplaced++;
            else counts.notInDataset++;
            if (counts.leftOutExamples.length < 10) counts.leftOutExamples.push(`${path}:${line} (${task.id})`);
            continue;
          }
          const id = task.key;
          if (name === RUN_FILES.failed) {
            const doneShard = doneIn.get(id);
            if (doneShard !== undefined && doneShard !== here) {
              counts.failedButDoneElsewhere++;
              multiShard.add(id);
              continue;
            }
            const failedShard = failedIn.get(id);
            if (failedShard !== undefined && failedShard !== here) {
              counts.duplicateFailed++;
              multiShard.add(id);
              continue;
            }
            // Several failed attempts of a task in its own shard are its history, kept as in any run folder.
            failedIn.set(id, here);
            out.appendLine(text);
            counts.failed++;
          } else {
            const doneShard = doneIn.get(id);
            if (doneShard !== undefined) {
              counts.duplicateDone++;
              if (doneShard !== here) multiShard.add(id);
              continue;
            }
            doneIn.set(id, here);
            out.appendLine(text);
            if (name === RUN_FILES.trajectories) counts.trajectories++;
            else counts.dropped++;
          }
        }
      }
    }
    for (const w of writers.values()) w.close();
    await mergeRlFiles(order, outDir, (key, shard) => doneIn.get(key) === shard || failedIn.get(key) === shard);
    beforeRename?.();
  } catch (err) {
    for (const [name, w] of writers) {
      w.close();
      rmSync(tmp(name), { force: true });
    }
    rmSync(`${join(outDir, RUN_FILES.rl)}.merge-tmp`, { force: true });
    throw err;
  }
  for (const name of names) renameSync(tmp(name), join(outDir, name));
  if (existsSync(`${join(outDir, RUN_FILES.rl)}.merge-tmp`))
    renameSync(`${join(outDir, RUN_FILES.rl)}.merge-tmp`, join(outDir, RUN_FILES.rl));
  counts.tasksInSeveralShards = multiShard.size;
  return counts;
}

/**
 * rl.jsonl (`--rl-capture`) follows the results: a shard's line is kept when that shard's result of the task
 * and epoch was kept. Written to `rl.jsonl.merge-tmp` only when some shard has the file.
 */
async function mergeRlFiles(
  order: ShardFolder[],
  outDir: string,
  kept: (key: string, shard: number) => boolean,
): Promise<void> {
  const sources = order.filter((f) => existsSync(join(f.dir, RUN_FILES.rl)));
  if (!sources.length) return;
  const tmp = `${join(outDir, RUN_FILES.rl)}.merge-tmp`;
  rmSync(tmp, { force: true });
  const out = new JsonlAppender(tmp, 0);
  try {
    for (const folder of sources) {
      for await (const { text } of readLines(join(folder.dir, RUN_FILES.rl))) {
        const task = taskOf(text);
        if (task && kept(task.key, folder.shard.index)) out.appendLine(text);
      }
    }
  } finally {
    out.close();
  }
}
