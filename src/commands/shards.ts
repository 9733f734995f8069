/** `hermes-batch shards RUN_DIR`: each shard's state by proof, and the exact commands that rerun the unfinished ones. */
import { resolve } from "node:path";
import { UserError } from "../core/errors.js";
import { rerunCommands, rerunText } from "../shard/rerun.js";
import { unfinishedShards, type ShardStatus } from "../shard/status.js";
import { describeShard, loadShardStatuses } from "./merge.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

const help = `Usage: hermes-batch shards RUN_DIR [--dataset FILE] [--json]

The state of every shard of a sharded run (RUN_DIR/shards/<i>-of-<N>/): tasks it owns (recomputed from the
dataset), done, failed, missing, its last activity and its state:
  finished       its completion record (shard-complete.json) says so and every task it owns has a result
  stopped_early  the first tasks all failed with the same model error (--stop-after-failures)
  interrupted    stopped by a signal (SIGTERM, Ctrl-C), or its record disagrees with its folder
  running        its folder is locked by a live process, and it has no completion record yet (or one
                 older than the lock: it runs again)
  killed         no completion record, no live process (kill -9, scancel, out of memory, node lost)
  missing        no folder: never started
Then, for the unfinished shards, the exact command that reruns them with the same shard count, output
folder and options (recorded by each shard in launch.json): Slurm, Kubernetes and plain shell; when every
shard finished but some tasks failed, the same commands with --retry-failed for the shards that hold them.

Exit codes: 0 every shard finished, 4 some shard is not finished, 2 bad input.
`;

const options = { dataset: { type: "string" }, json: { type: "boolean" } } as const;

function ago(ms: number | undefined): string {
  if (ms === undefined) return "-";
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
}

export const command: Command = {
  summary: "status of each shard of a sharded run, and the exact commands that rerun the unfinished ones",
  help,
  async run(argv) {
    const { values: v, positionals } = parseCommandArgs(argv, options);
    if (positionals.length !== 1)
      throw new UserError(
        `expected one RUN_DIR, got ${positionals.length ? positionals.join(" ") : "none"} (see --help)`,
      );
    const { inspection, statuses, datasetNote } = await loadShardStatuses(resolve(positionals[0]!), v.dataset);
    const count = inspection.count;
    const unfinished = unfinishedShards(statuses);
    const rerun = rerunCommands(
      unfinished,
      count,
      statuses.map((s) => s.launch),
    );
    if (v.json) {
      const shard = (s: ShardStatus) => ({
        shard: s.index,
        state: s.state,
        why: s.why ?? null,
        owned: s.owned?.length ?? null,
        done: s.done + s.dropped,
        failed: s.failed.map((f) => f.key),
        missing: s.missing,
        last_activity: s.lastActivity ? new Date(s.lastActivity).toISOString() : null,
        busy_seconds: s.record?.busy_seconds ?? null,
        stopped_early: s.record?.stopped_early ?? null,
      });
      process.stdout.write(
        JSON.stringify({ shard_count: count, shards: statuses.map(shard), rerun: rerun ?? null }, null, 2) + "\n",
      );
      return unfinished.length ? 4 : 0;
    }
    const out = process.stdout;
    if (datasetNote) process.stderr.write(`warning: ${datasetNote}\n`);
    const rows = [["shard", "owned", "done", "failed", "missing", "last activity", "state"]];
    for (const s of statuses) {
      const state = s.state === "stopped_early" ? `stopped_early (${s.record?.stopped_early?.reason ?? "?"})` : s.state;
      rows.push([
        `${s.index}/${count}`,
        s.owned ? String(s.owned.length) : "?",
        String(s.done + s.dropped),
        String(s.failed.length),
        String(s.missing.length),
        ago(s.lastActivity),
        state,
      ]);
    }
    out.write(table(rows));
    const finished = statuses.length - unfinished.length;
    out.write(`\n${finished} of ${count} shard(s) finished\n`);
    if (unfinished.length) {
      out.write(`\nnot finished:\n${unfinished.map((s) => describeShard(s, count)).join("\n")}\n`);
      out.write(
        `\nrerun ${unfinished.length === 1 ? "it" : "them"} (each resumes its folder), then: hermes-batch merge ${positionals[0]}\n${rerunText(rerun)}`,
      );
      return 4;
    }
    const failed = statuses.filter((s) => s.failed.length);
    if (failed.length) {
      out.write(
        `\n${failed.reduce((n, s) => n + s.failed.length, 0)} task(s) failed in shard(s) ${failed.map((s) => s.index).join(",")}:\n`,
      );
      for (const s of failed)
        out.write(
          `  shard ${s.index}/${count}: ${s.failed
            .map((f) => `${f.key} (${f.outcome})`)
            .slice(0, 20)
            .join(", ")}${s.failed.length > 20 ? ", …" : ""}\n`,
        );
      out.write(
        `to try them again (only the failed tasks), then: hermes-batch merge ${positionals[0]}\n${rerunText(
          rerunCommands(
            failed,
            count,
            statuses.map((s) => s.launch),
            "retry-failed",
          ),
        )}`,
      );
    }
    return 0;
  },
};
