/** `hermes-batch merge RUN_DIR`: joins the shard folders of a sharded run into one run folder. */
import { existsSync, mkdirSync, statSync, writeFileSync, renameSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import YAML from "yaml";
import { UserError, errorMessage } from "../core/errors.js";
import { HermesCheckpoint, RUN_FILES, loadRunState, writeCheckpoint } from "../store/checkpoint.js";
import {
  MERGE_INFO_FILE,
  configFromRunYaml,
  describeMismatch,
  formatIndexes,
  inspectShards,
  mergeShardFiles,
  type ShardInspection,
} from "../shard/merge.js";
import { formatShard } from "../shard/assign.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

const help = `Usage: hermes-batch merge RUN_DIR [--out DIR] [--force] [--allow-partial]

Merges the shards of a sharded run (RUN_DIR/shards/<i>-of-<N>/, written by \`hermes-batch run\` under a
Slurm job array, a Kubernetes Indexed Job or --shard i/N) into one run folder: trajectories.jsonl,
failed.jsonl and dropped.jsonl (one line per task: a task found in two shards is kept once, a task done in
one shard wins over a failure in another), then statistics.json, summary.csv, run.yaml, checkpoint.json
and merge.json. Shard folders are only read; merging again after rerunning shards is safe.

Checks before anything is written:
  - every shard 0..N-1 exists and has finished (else exit 1, naming the indexes to rerun with --resume);
  - every shard ran with the same config fingerprint (model, endpoint, seed, toolsets or distribution,
    max turns, prompts, environment, approval, and the content of the dataset and distribution file)
    (else exit 2, naming the shards and the settings that differ).

Options
  --out DIR          write the merged files there instead of RUN_DIR
  --allow-partial    merge the shards that exist even if some are missing or unfinished
  --force            merge despite a config mismatch, and overwrite results in the output folder that
                     were not written by an earlier merge

Exit codes: 0 merged, 1 shards missing or unfinished (nothing written), 2 bad input or config mismatch.
`;

const options = {
  out: { type: "string" },
  force: { type: "boolean" },
  "allow-partial": { type: "boolean" },
} as const;

function warn(msg: string): void {
  process.stderr.write(`warning: ${msg}\n`);
}

function rerunHint(indexes: number[], runDir: string): string {
  const list = formatIndexes(indexes, 1000);
  return (
    `rerun them with --resume (Slurm: sbatch --array=${list} … with HERMES_BATCH_SHARD_COUNT kept; ` +
    `by hand: hermes-batch run … --shard <i>/N --resume), then: hermes-batch merge ${runDir}`
  );
}

/** Refuses to overwrite results that a merge did not write (an unsharded run of the same name). */
function checkOutput(outDir: string, shardsDir: string, force: boolean): void {
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw new UserError(`--out ${outDir} is a file: the merged run needs a folder`);
  const rel = relative(shardsDir, outDir);
  if (rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep) && !/^[A-Za-z]:/.test(rel))) {
    throw new UserError(`--out ${outDir} is inside ${shardsDir}: choose a folder outside the shard folders`);
  }
  const hasResults = [RUN_FILES.trajectories, RUN_FILES.failed, RUN_FILES.dropped].some((f) => existsSync(join(outDir, f)));
  if (hasResults && !existsSync(join(outDir, MERGE_INFO_FILE)) && !force) {
    throw new UserError(`${outDir} already holds run results that no merge wrote: choose --out DIR, or pass --force to overwrite them`);
  }
}

function reportProblems(inspection: ShardInspection, allowPartial: boolean, force: boolean, runDir: string): number | undefined {
  for (const w of inspection.warnings) warn(w);
  const recorded = inspection.folders.filter((f) => f.recordedShard !== undefined && !f.unusable);
  const mismatch = inspection.fingerprintGroups.length > 1;
  const problems: string[] = [];
  if (mismatch) problems.push(`the shards ran with different configurations:\n${describeMismatch(inspection)}`);
  for (const f of recorded) problems.push(`${f.dir} holds shard ${f.recordedShard}, not ${formatShard(f.shard)} as its name says`);
  const { missing, unfinished, count } = inspection;
  if (problems.length && !force) {
    const also = missing.length ? `\nalso missing: shard(s) ${formatIndexes(missing, 1000)} of ${count}` : "";
    throw new UserError(`${problems.join("\n")}${also}\nnothing was merged (--force merges anyway)`);
  }
  for (const p of problems) warn(`${p}\n(merging anyway: --force)`);

  if (missing.length === 0 && unfinished.length === 0) return undefined;
  const lines: string[] = [];
  if (missing.length) lines.push(`missing shard(s) ${formatIndexes(missing, 1000)} of ${count}`);
  if (unfinished.length) lines.push(`unfinished shard(s) ${formatIndexes(unfinished, 1000)} of ${count} (interrupted, or still running)`);
  const toRerun = [...new Set([...missing, ...unfinished])].sort((a, b) => a - b);
  if (!allowPartial) {
    process.stderr.write(`hermes-batch merge: ${lines.join("; ")}: ${rerunHint(toRerun, runDir)}\nnothing was merged (--allow-partial merges the shards that are there)\n`);
    return 1;
  }
  warn(`${lines.join("; ")}: merging without them (--allow-partial)`);
  return undefined;
}

export const command: Command = {
  summary: "merge the shard folders of a sharded run (Slurm array, Kubernetes Indexed Job) into one",
  help,
  async run(argv) {
    const { values: v, positionals } = parseCommandArgs(argv, options);
    if (positionals.length !== 1) throw new UserError(`expected one RUN_DIR, got ${positionals.length ? positionals.join(" ") : "none"} (see --help)`);
    const runDir = resolve(positionals[0]!);
    const outDir = resolve(v.out ?? runDir);
    const force = v.force ?? false;
    const allowPartial = v["allow-partial"] ?? false;

    const inspection = inspectShards(runDir);
    const stop = reportProblems(inspection, allowPartial, force, positionals[0]!);
    if (stop !== undefined) return stop;
    const usable = inspection.folders.filter((f) => !f.unusable);
    if (usable.length === 0) throw new UserError(`no usable shard in ${inspection.shardsDir}`);

    const first = usable[0]!;
    const { config, ignored } = configFromRunYaml(first.runYaml!, join(first.dir, RUN_FILES.config));
    if (ignored.length) warn(`${join(first.dir, RUN_FILES.config)}: ignoring invalid value(s) of ${ignored.join(", ")} for the reports`);
    checkOutput(outDir, inspection.shardsDir, force);
    mkdirSync(outDir, { recursive: true });

    const counts = await mergeShardFiles(usable, outDir, inspection.count);
    if (counts.badLines) {
      warn(`skipped ${counts.badLines} unreadable line(s) or line(s) without task_id, e.g. ${counts.badLineExamples.slice(0, 3).join(", ")}`);
    }
    const duplicates = counts.duplicateDone + counts.duplicateFailed + counts.failedButDoneElsewhere;
    if (duplicates) {
      warn(
        `${duplicates} duplicate line(s) skipped (${counts.tasksInSeveralShards} task(s) found in more than one shard; the first ` +
          `result was kept, a done result wins over a failure): shards should never share a task — were folders copied between runs?`,
      );
    }
    if (counts.misplaced) warn(`${counts.misplaced} line(s) are in a shard their task id does not hash to (a renamed folder, or a different shard count?)`);

    // Plugins add tools to the statistics' tool list; the merge still works without them.
    try {
      const { ensureToolsLoaded } = await import("../../tools/model_tools.js");
      await ensureToolsLoaded({ packages: config.plugins });
    } catch (err) {
      warn(`could not load every tool for the statistics' tool list: ${errorMessage(err)}`);
    }
    const { writeRunReports } = await import("../report/reports.js");
    const report = await writeRunReports(outDir, config);

    const fingerprints = inspection.fingerprintGroups.map((g) => g.fingerprint);
    const merged = usable.map((f) => f.shard.index);
    const yaml: Record<string, unknown> = { ...first.runYaml };
    delete yaml.shard;
    writeFileSync(join(outDir, RUN_FILES.config), YAML.stringify(yaml));
    writeCheckpoint(outDir, {
      run_name: config.run_name,
      done: report.done,
      failed: report.failed,
      dropped: report.dropped,
      merged_shards: `${merged.length}/${inspection.count}`,
      config_fingerprint: fingerprints.length === 1 ? fingerprints[0] : null,
      finished: inspection.missing.length === 0 && inspection.unfinished.length === 0,
    }, new HermesCheckpoint(config.batch_size ?? 10, (await loadRunState(outDir)).doneIndices));
    const info = {
      merged_at: new Date().toISOString(),
      shards_dir: inspection.shardsDir,
      shard_count: inspection.count,
      merged_shards: merged,
      missing_shards: inspection.missing,
      unfinished_shards: inspection.unfinished,
      config_fingerprints: inspection.fingerprintGroups,
      tasks: report,
      lines: { trajectories: counts.trajectories, failed: counts.failed, dropped: counts.dropped },
      duplicates: {
        done: counts.duplicateDone,
        failed_in_two_shards: counts.duplicateFailed,
        failed_but_done_elsewhere: counts.failedButDoneElsewhere,
        tasks_in_several_shards: counts.tasksInSeveralShards,
      },
      misplaced_lines: counts.misplaced,
      bad_lines: counts.badLines,
    };
    const infoPath = join(outDir, MERGE_INFO_FILE);
    writeFileSync(`${infoPath}.tmp`, JSON.stringify(info, null, 2) + "\n");
    renameSync(`${infoPath}.tmp`, infoPath);

    const out = process.stdout;
    out.write(`merged ${merged.length} of ${inspection.count} shard(s) from ${inspection.shardsDir} → ${outDir}\n`);
    out.write(`  tasks: ${report.done} done, ${report.failed} failed, ${report.dropped} dropped\n`);
    out.write(`  duplicates skipped: ${duplicates}${duplicates ? ` (${counts.tasksInSeveralShards} task(s) in more than one shard)` : ""}\n`);
    out.write(`  config fingerprint: ${fingerprints.length === 1 ? `${fingerprints[0]} (all shards agree)` : `${fingerprints.length} different (merged with --force)`}\n`);
    if (report.failed > 0) out.write(`  ${report.failed} task(s) failed: rerun their shards with --retry-failed, then merge again\n`);
    return 0;
  },
};
