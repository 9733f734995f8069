/** `hermes-batch merge RUN_DIR`: joins the shard folders of a sharded run into one run folder, by proof. */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import YAML from "yaml";
import { UserError, errorMessage } from "../core/errors.js";
import { HermesCheckpoint, RUN_FILES, recordKey, writeCheckpoint } from "../store/checkpoint.js";
import { readJsonl } from "../store/jsonl_file.js";
import {
  MERGE_INFO_FILE,
  configFromRunYaml,
  describeMismatch,
  formatIndexes,
  inspectShards,
  mergeShardFiles,
  type ShardInspection,
  versionCheck,
} from "../shard/merge.js";
import { buildIdentity } from "../store/build_identity.js";
import { formatShard } from "../shard/assign.js";
import { ownershipByShard } from "../shard/results.js";
import { listKeys, shardProof, shardStatuses, unfinishedShards, type ShardStatus } from "../shard/status.js";
import { rerunCommands, rerunText } from "../shard/rerun.js";
import type { ModelCalls } from "../shard/completion.js";
import type { ModelCallCounts } from "../scheduler/run_models.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

export const MERGE_EXIT = { merged: 0, someFailed: 1, badInput: 2, incomplete: 4 } as const;

/** Shards whose completion record or lock changed while the merge copied their files. */
class ShardsChanged extends Error {
  constructor(readonly shards: number[]) {
    super(`shard(s) ${shards.join(",")} changed while merging`);
  }
}

const help = `Usage: hermes-batch merge RUN_DIR [--out DIR] [--dataset FILE] [--force] [--allow-partial]

Merges the shards of a sharded run (RUN_DIR/shards/<i>-of-<N>/, written by \`hermes-batch run\` under a
Slurm job array, a Kubernetes Indexed Job or --shard i/N) into one run folder: trajectories.jsonl,
failed.jsonl and dropped.jsonl (each task's results once, from the shard that owns it; lines of tasks a
shard does not own are left out and named), then statistics.json, summary.csv, atif.jsonl, run.yaml,
checkpoint.json and merge.json, as an unsharded run over the same tasks writes them. Shard folders are
only read; merging again after rerunning shards is safe.

Merge by proof: which task ids belong to each shard is recomputed from the dataset (a hash of the id);
a shard is finished only when its own completion record (shard-complete.json, written once at the end
of the shard's run) says so and every task it owns has a result. Before anything is written:
  - every shard 0..N-1 is finished: a missing folder, a shard without its completion record (killed, or
    still running), an interrupted one or one that stopped early → exit 4, naming each shard, its state
    and the task ids it is missing (\`hermes-batch shards RUN_DIR\` prints the commands that rerun them);
  - every shard ran with the same config fingerprint (model, endpoint, seed, toolsets or distribution,
    max turns, prompts, environment, approval, and the content of the dataset and distribution file)
    (else exit 2, naming the shards and the settings that differ);
  - every shard was run by the same hermes-batch version (else exit 2, naming the shards and versions);
    shards of one version built from other code, or of an earlier version that recorded none, merge
    with a warning naming them.

Options
  --out DIR          write the merged files there instead of RUN_DIR
  --dataset FILE     the dataset, when the path in the shards' run.yaml cannot be read from here
  --allow-partial    merge what the shard folders hold even if shards are unfinished; says which shards
                     and task ids are left out (the exit code is still 4)
  --force            merge despite a config or version mismatch, and overwrite results in the output folder that
                     the last merge of these shards did not write (an unsharded run, another run's merge,
                     a run --retry-failed in the merged folder since)

Exit codes: 0 merged, every task done; 1 merged, every task has a result but some failed (named with
their shards: rerun those shards with --retry-failed); 2 bad input or config mismatch; 4 incomplete:
shards missing, unfinished or stopped early (nothing written, unless --allow-partial).
`;

const options = {
  out: { type: "string" },
  dataset: { type: "string" },
  force: { type: "boolean" },
  "allow-partial": { type: "boolean" },
} as const;

function warn(msg: string): void {
  process.stderr.write(`warning: ${msg}\n`);
}

/** The output folder must be a folder outside the shard folders. */
function checkOutput(outDir: string, shardsDir: string): void {
  if (existsSync(outDir) && !statSync(outDir).isDirectory())
    throw new UserError(`--out ${outDir} is a file: the merged run needs a folder`);
  const rel = relative(shardsDir, outDir);
  if (rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep) && !/^[A-Za-z]:/.test(rel))) {
    throw new UserError(`--out ${outDir} is inside ${shardsDir}: choose a folder outside the shard folders`);
  }
}

/** The result files a merge writes, whose content merge.json records so that a later merge knows them for its own. */
const MERGED_RESULT_FILES = [RUN_FILES.trajectories, RUN_FILES.failed, RUN_FILES.dropped, RUN_FILES.rl] as const;

/** sha256 of each merged result file as it is now (null: absent). */
async function resultDigests(outDir: string): Promise<Record<string, string | null>> {
  const { fileSha256 } = await import("../store/run_identity.js");
  const out: Record<string, string | null> = {};
  for (const f of MERGED_RESULT_FILES) {
    const path = join(outDir, f);
    out[f] = existsSync(path) ? await fileSha256(path, f) : null;
  }
  return out;
}

/**
 * Refuses to overwrite results that no merge wrote: an unsharded run of the same name, another run's merge (`--out`),
 * or results added to the merged folder since this run's last merge (a `run --retry-failed` or `--resume` in it: the
 * merged folder is a run folder). Called with the output folder locked, so nothing is added between check and write.
 */
async function checkOverwrite(outDir: string, shardsDir: string, force: boolean): Promise<void> {
  const hasResults = [RUN_FILES.trajectories, RUN_FILES.failed, RUN_FILES.dropped].some((f) =>
    existsSync(join(outDir, f)),
  );
  if (!hasResults || force) return;
  const how = "choose --out DIR, or pass --force to overwrite them";
  const infoPath = join(outDir, MERGE_INFO_FILE);
  if (!existsSync(infoPath)) throw new UserError(`${outDir} already holds run results that no merge wrote: ${how}`);
  let info: { shards_dir?: unknown; merged_at?: unknown; written?: unknown };
  try {
    info = JSON.parse(readFileSync(infoPath, "utf8")) as typeof info;
  } catch (err) {
    throw new UserError(`${infoPath} is unreadable (${errorMessage(err)}), so its results may be no merge's: ${how}`);
  }
  if (typeof info?.shards_dir === "string" && resolve(info.shards_dir) !== resolve(shardsDir)) {
    throw new UserError(
      `${outDir} holds the merge of another run (${info.shards_dir}), not of ${shardsDir}: merging there would replace its results; ${how}`,
    );
  }
  // merge.json of an earlier version records no digests: its results are taken for that merge's.
  if (!info.written || typeof info.written !== "object") return;
  const written = info.written as Record<string, unknown>;
  const now = await resultDigests(outDir);
  const changed = MERGED_RESULT_FILES.filter((f) => (written[f] ?? null) !== now[f]);
  if (changed.length) {
    throw new UserError(
      `${outDir}: ${changed.join(", ")} changed since the merge of ${String(info.merged_at)} wrote them (a run --retry-failed ` +
        `or --resume in the merged folder, or an edit): merging again would replace those results with the shards'. ` +
        `Rerun the shards instead (hermes-batch shards prints how), or ${how}`,
    );
  }
}

/** Configuration problems (settings, shard, hermes-batch version): exit 2 unless --force. */
function checkConfigs(inspection: ShardInspection, force: boolean): void {
  for (const w of inspection.warnings) warn(w);
  const recorded = inspection.folders.filter((f) => f.recordedShard !== undefined && !f.unusable);
  const problems: string[] = [];
  if (inspection.fingerprintGroups.length > 1)
    problems.push(`the shards ran with different configurations:\n${describeMismatch(inspection)}`);
  // Another version of hermes-batch may run, grade or record a task differently: one run's numbers from two
  // versions are refused as a config mismatch is. Another build of one version, or an unknown version, is said.
  const versions = versionCheck(inspection);
  if (versions.mismatch) problems.push(versions.mismatch);
  for (const note of versions.notes) warn(note);
  for (const f of recorded)
    problems.push(`${f.dir} holds shard ${f.recordedShard}, not ${formatShard(f.shard)} as its name says`);
  if (problems.length && !force)
    throw new UserError(`${problems.join("\n")}\nnothing was merged (--force merges anyway)`);
  for (const p of problems) warn(`${p}\n(merging anyway: --force)`);
}

/** The dataset the shards ran over, as a path readable from here, or undefined. */
export function datasetPath(inspection: ShardInspection, override: string | undefined): string | undefined {
  if (override !== undefined) {
    if (!existsSync(override)) throw new UserError(`--dataset ${override}: file not found`);
    return resolve(override);
  }
  for (const f of inspection.folders) {
    const d = f.runYaml?.dataset;
    if (typeof d !== "string") continue;
    if (isAbsolute(d)) {
      if (existsSync(d)) return d;
      continue;
    }
    const cwd = f.launchCwd;
    for (const base of [cwd, process.cwd()]) if (base && existsSync(resolve(base, d))) return resolve(base, d);
  }
  return undefined;
}

/** Per shard, what is not done, in lines a person (and a test) can act on. */
export function describeShard(s: ShardStatus, count: number): string {
  const head = `shard ${s.index}/${count}: ${s.state}${s.why ? ` — ${s.why}` : ""}`;
  const owned = s.owned
    ? `${s.owned.length} task(s) owned, ${s.done + s.dropped} done`
    : "owned tasks unknown (dataset unreadable, no record)";
  const lines = [`  ${head}`, `    ${owned}, ${s.failed.length} failed, ${s.missing.length} missing`];
  if (s.missing.length) lines.push(`    missing ids: ${listKeys(s.missing)}`);
  if (s.failed.length) lines.push(`    failed ids: ${listKeys(s.failed.map((f) => f.key))}`);
  return lines.join("\n");
}

function sumModelCalls(list: ModelCalls[]): ModelCalls | undefined {
  if (list.length === 0) return undefined;
  const out: ModelCalls = {
    calls: 0,
    retries: 0,
    rate_limited: 0,
    failed_calls: 0,
    limit_decreases: 0,
    limit_increases: 0,
    endpoints: {},
  };
  for (const m of list) {
    for (const k of ["calls", "retries", "rate_limited", "failed_calls", "limit_decreases", "limit_increases"] as const)
      out[k] += m[k];
    for (const [ep, c] of Object.entries(m.endpoints)) {
      const prev = out.endpoints[ep] as Record<string, number> | undefined;
      const cur = c as Record<string, unknown>;
      if (!prev) out.endpoints[ep] = { ...cur };
      else
        for (const [k, v] of Object.entries(cur))
          if (typeof v === "number") prev[k] = (typeof prev[k] === "number" ? prev[k] : 0) + v;
    }
  }
  return out;
}

/** Everything `merge` and `shards` know about a run's shards. */
export async function loadShardStatuses(runDir: string, datasetOverride?: string) {
  const inspection = inspectShards(runDir);
  const { readLaunch } = await import("../shard/completion.js");
  for (const f of inspection.folders) f.launchCwd = readLaunch(f.dir)?.cwd;
  const dataset = datasetPath(inspection, datasetOverride);
  const first = inspection.folders.find((f) => !f.unusable && f.runYaml);
  const slice = (first?.runYaml ?? {}) as { offset?: number; max_samples?: number; epochs?: number };
  let owned: string[][] | undefined;
  let datasetNote: string | undefined;
  if (dataset) {
    const { readDataset, recordedDatasetSource } = await import("../run/dataset.js");
    owned = await ownershipByShard(readDataset(await recordedDatasetSource(dataset)), inspection.count, {
      offset: typeof slice.offset === "number" ? slice.offset : 0,
      max_samples: typeof slice.max_samples === "number" ? slice.max_samples : undefined,
    });
  } else {
    datasetNote = `cannot read the dataset ${String(first?.runYaml?.dataset ?? "(none recorded)")} from here: each shard's own record of its task ids is used, and a shard without a record cannot be checked (pass --dataset FILE)`;
  }
  const epochs = typeof slice.epochs === "number" && slice.epochs > 1 ? slice.epochs : 1;
  const statuses = await shardStatuses(inspection, owned, epochs);
  return { inspection, statuses, dataset, datasetNote, epochs };
}

export const command: Command = {
  summary: "merge the shard folders of a sharded run (Slurm array, Kubernetes Indexed Job) into one",
  help,
  async run(argv) {
    const { values: v, positionals } = parseCommandArgs(argv, options);
    if (positionals.length !== 1)
      throw new UserError(
        `expected one RUN_DIR, got ${positionals.length ? positionals.join(" ") : "none"} (see --help)`,
      );
    const runDir = resolve(positionals[0]!);
    const outDir = resolve(v.out ?? runDir);
    const force = v.force ?? false;
    const allowPartial = v["allow-partial"] ?? false;

    const { inspection, statuses, datasetNote } = await loadShardStatuses(runDir, v.dataset);
    checkConfigs(inspection, force);
    if (datasetNote) warn(datasetNote);
    const count = inspection.count;
    const unfinished = unfinishedShards(statuses);
    const leftOut = unfinished.flatMap((s) => s.missing);
    if (unfinished.length && !allowPartial) {
      const launches = statuses.map((s) => s.launch);
      process.stderr.write(
        `hermes-batch merge: ${unfinished.length} of ${count} shard(s) not finished: ${formatIndexes(
          unfinished.map((s) => s.index),
          1000,
        )}\n` +
          `${unfinished.map((s) => describeShard(s, count)).join("\n")}\n` +
          `rerun them (they resume; \`hermes-batch shards ${positionals[0]}\` shows this again):\n${rerunText(rerunCommands(unfinished, count, launches))}` +
          `then: hermes-batch merge ${positionals[0]}\nnothing was merged (--allow-partial merges what is there)\n`,
      );
      return MERGE_EXIT.incomplete;
    }
    const usable = inspection.folders.filter((f) => !f.unusable);
    if (usable.length === 0) throw new UserError(`no usable shard in ${inspection.shardsDir}`);

    const first = usable[0]!;
    const { config, ignored } = configFromRunYaml(first.runYaml!, join(first.dir, RUN_FILES.config));
    if (ignored.length)
      warn(`${join(first.dir, RUN_FILES.config)}: ignoring invalid value(s) of ${ignored.join(", ")} for the reports`);
    checkOutput(outDir, inspection.shardsDir);
    mkdirSync(outDir, { recursive: true });
    // One writer per run folder: a second merge at the same time (or a run writing there) would rename its
    // half-written files into place under this one.
    const { acquireRunLock } = await import("../store/run_lock.js");
    const releaseLock = acquireRunLock(outDir);
    try {
      await checkOverwrite(outDir, inspection.shardsDir, force);
      return await writeMerge();
    } catch (err) {
      if (!(err instanceof ShardsChanged)) throw err;
      process.stderr.write(
        `hermes-batch merge: shard(s) ${formatIndexes(err.shards, 1000)} changed while merging (${err.shards
          .map((i) => `shard ${i}/${count}`)
          .join(", ")}: its completion record or lock changed: an invocation started on it): nothing was merged; ` +
          `merge again once it has ended (\`hermes-batch shards ${positionals[0]}\` shows its state)\n`,
      );
      return MERGE_EXIT.incomplete;
    } finally {
      releaseLock();
    }
    async function writeMerge(): Promise<number> {
      const ownedKeys = new Map(statuses.flatMap((s) => (s.owned ? [[s.index, new Set(s.owned)] as const] : [])));
      // A shard that started again while its files were copied (a rerun, --only) may have changed them: nothing of
      // such a copy is written. A new invocation moves the record aside and locks the folder before it changes results.
      const changed = () =>
        statuses.filter((s) => s.proof !== undefined && s.dir !== undefined && shardProof(s.dir) !== s.proof);
      const counts = await mergeShardFiles(usable, outDir, count, ownedKeys, () => {
        if (changed().length) throw new ShardsChanged(changed().map((s) => s.index));
      });
      if (counts.badLines) {
        warn(
          `skipped ${counts.badLines} unreadable line(s) or line(s) without task_id, e.g. ${counts.badLineExamples.slice(0, 3).join(", ")}`,
        );
      }
      const duplicates = counts.duplicateDone + counts.duplicateFailed + counts.failedButDoneElsewhere;
      if (duplicates) {
        warn(
          `${duplicates} duplicate line(s) skipped (${counts.tasksInSeveralShards} task(s) found in more than one shard; the first ` +
            `result was kept, a done result wins over a failure): shards should never share a task — were folders copied between runs?`,
        );
      }
      const leftOutLines = counts.misplaced + counts.notInDataset;
      if (leftOutLines) {
        const why = [
          counts.misplaced
            ? `${counts.misplaced} in a shard their task id does not hash to (a folder copied between runs, or a different shard count?)`
            : "",
          counts.notInDataset ? `${counts.notInDataset} of task ids the dataset does not give that shard` : "",
        ].filter(Boolean);
        warn(
          `left out ${leftOutLines} result line(s) of tasks their shard does not own: ${why.join("; ")}; only the owning shard's result counts. E.g. ${counts.leftOutExamples.slice(0, 5).join(", ")}`,
        );
      }

      // Plugins add tools to the statistics' tool list; the merge still works without them.
      try {
        const { ensureToolsLoaded } = await import("../../tools/model_tools.js");
        await ensureToolsLoaded({ packages: config.plugins });
      } catch (err) {
        warn(`could not load every tool for the statistics' tool list: ${errorMessage(err)}`);
      }
      // Timing and model calls from the shards' own records: first start, last end, summed busy time.
      const records = statuses.flatMap((s) => (s.record ? [s.record] : []));
      const startedAt = records.length
        ? new Date(Math.min(...records.map((r) => Date.parse(r.started_at))))
        : undefined;
      const completedAt = records.length
        ? new Date(Math.max(...records.map((r) => Date.parse(r.ended_at))))
        : undefined;
      const busySeconds = Math.round(records.reduce((s, r) => s + r.busy_seconds, 0) * 100) / 100;
      const modelCalls = sumModelCalls(
        records.flatMap((r) => r.invocations.flatMap((i) => (i.model_calls ? [i.model_calls] : []))),
      );
      // The tasks of the slice, as an unsharded run counts them: rows a shard refused as bad rows are no task.
      const totalPrompts = statuses.every((s) => s.owned)
        ? statuses.reduce((n, s) => n + s.owned!.length - s.skipped.length, 0)
        : undefined;
      const { writeRunReports } = await import("../report/reports.js");
      const report = await writeRunReports(outDir, config, {
        startedAt,
        completedAt,
        totalPrompts,
        modelCalls: modelCalls as ModelCallCounts | undefined,
      });

      const fingerprints = inspection.fingerprintGroups.map((g) => g.fingerprint);
      const merged = usable.map((f) => f.shard.index);
      // The hermes-batch that ran the shards (a forced merge of several versions names them all), not the merge's.
      const versions = versionCheck(inspection);
      const shardIdentity = {
        hermes_batch_version: versions.version,
        ...(versions.build ? { hermes_batch_build: versions.build } : {}),
      };
      const yaml: Record<string, unknown> = { ...first.runYaml };
      delete yaml.shard;
      delete yaml.hermes_batch_version;
      delete yaml.hermes_batch_build;
      if (versions.version !== null) Object.assign(yaml, shardIdentity);
      writeFileSync(join(outDir, RUN_FILES.config), YAML.stringify(yaml));
      // The original's batch counts as one uninterrupted run over the merged files would have them: each result
      // (task and epoch) once, by its final result. failed.jsonl keeps the failed attempts of tasks that passed on a
      // later invocation (a --retry-failed, a resume after a signal), and a task failed twice was still one prompt.
      const hermes = new HermesCheckpoint(config.batch_size ?? 10);
      const recorded = new Set<string>();
      for (const [name, kind] of [
        [RUN_FILES.trajectories, "trajectory"],
        [RUN_FILES.dropped, "dropped"],
        [RUN_FILES.failed, "failed"],
      ] as const) {
        for await (const l of readJsonl<{
          prompt_index?: number;
          dropped?: string;
          task_id?: unknown;
          epoch?: unknown;
        }>(join(outDir, name))) {
          const v = l.value;
          if (typeof v?.prompt_index !== "number") continue;
          if (typeof v.task_id === "string") {
            const key = recordKey(v.task_id, typeof v.epoch === "number" ? v.epoch : undefined);
            if (recorded.has(key)) continue;
            recorded.add(key);
          }
          hermes.record(v.prompt_index, kind, v.dropped);
        }
      }
      const complete = unfinished.length === 0;
      writeCheckpoint(
        outDir,
        {
          run_name: config.run_name,
          done: report.done,
          failed: report.failed,
          dropped: report.dropped,
          total_in_dataset_slice: report.done + report.failed + report.dropped,
          config_fingerprint: fingerprints.length === 1 ? fingerprints[0] : null,
          ...shardIdentity,
          finished: complete,
        },
        hermes,
      );
      const failedByShard = statuses
        .filter((s) => s.failed.length)
        .map((s) => ({ shard: s.index, ids: s.failed.map((f) => f.key) }));
      const info = {
        merged_at: new Date().toISOString(),
        shards_dir: inspection.shardsDir,
        shard_count: count,
        complete,
        merged_shards: merged,
        missing_shards: statuses.filter((s) => s.state === "missing").map((s) => s.index),
        unfinished_shards: unfinished.map((s) => ({
          shard: s.index,
          state: s.state,
          why: s.why ?? null,
          missing_ids: s.missing,
        })),
        failed_ids: failedByShard,
        timing: {
          started_at: startedAt?.toISOString() ?? null,
          ended_at: completedAt?.toISOString() ?? null,
          busy_seconds: busySeconds,
        },
        config_fingerprints: inspection.fingerprintGroups,
        // Which hermes-batch ran which shards (version null: not recorded), and which one merged them.
        hermes_batch_versions: inspection.versionGroups,
        merged_by: buildIdentity(),
        tasks: report,
        lines: { trajectories: counts.trajectories, failed: counts.failed, dropped: counts.dropped },
        duplicates: {
          done: counts.duplicateDone,
          failed_in_two_shards: counts.duplicateFailed,
          failed_but_done_elsewhere: counts.failedButDoneElsewhere,
          tasks_in_several_shards: counts.tasksInSeveralShards,
        },
        misplaced_lines: counts.misplaced,
        not_in_dataset_lines: counts.notInDataset,
        left_out_lines: counts.misplaced + counts.notInDataset,
        bad_lines: counts.badLines,
        // What this merge wrote: a later merge overwrites these files only while they are unchanged.
        written: await resultDigests(outDir),
      };
      const infoPath = join(outDir, MERGE_INFO_FILE);
      writeFileSync(`${infoPath}.tmp`, JSON.stringify(info, null, 2) + "\n");
      renameSync(`${infoPath}.tmp`, infoPath);

      const out = process.stdout;
      if (complete) out.write(`merged all ${count} shard(s) from ${inspection.shardsDir} → ${outDir}\n`);
      else {
        out.write(
          `merged a PARTIAL run (--allow-partial) from ${inspection.shardsDir} → ${outDir}: ${count - unfinished.length} of ${count} shard(s) finished; ` +
            `left out: ${leftOut.length} task(s) of shard(s) ${formatIndexes(
              unfinished.map((s) => s.index),
              1000,
            )}\n`,
        );
        for (const s of unfinished) out.write(`${describeShard(s, count)}\n`);
      }
      out.write(`  tasks: ${report.done} done, ${report.failed} failed, ${report.dropped} dropped\n`);
      out.write(
        `  duplicates skipped: ${duplicates}${duplicates ? ` (${counts.tasksInSeveralShards} task(s) in more than one shard)` : ""}\n`,
      );
      if (leftOutLines) out.write(`  left out: ${leftOutLines} line(s) of tasks their shard does not own\n`);
      out.write(
        `  config fingerprint: ${fingerprints.length === 1 ? `${fingerprints[0]} (all shards agree)` : `${fingerprints.length} different (merged with --force)`}\n`,
      );
      out.write(
        `  hermes-batch: ${
          versions.version === null
            ? "unknown (the shards recorded no version)"
            : versions.mismatch
              ? `${versions.version} (different versions, merged with --force)`
              : `${versions.version} (${versions.notes.length ? "see the warnings above" : "all shards agree"})`
        }\n`,
      );
      if (failedByShard.length) {
        out.write(
          `  ${report.failed} task(s) failed; rerun these shards with --retry-failed (\`hermes-batch shards ${positionals[0]}\` prints the commands), then merge again:\n`,
        );
        for (const f of failedByShard) out.write(`    shard ${f.shard}/${count}: ${listKeys(f.ids)}\n`);
      }
      if (report.atifError) process.stderr.write(`error: ${report.atifError}\n`);
      if (!complete) return MERGE_EXIT.incomplete;
      return report.failed > 0 || report.atifError ? MERGE_EXIT.someFailed : MERGE_EXIT.merged;
    }
  },
};
