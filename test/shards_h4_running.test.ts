/**
 * Merging while a shard runs again. A shard invocation (a Slurm rerun, `--retry-failed`, `--only`) locks its folder
 * first, then counts the dataset and asks the endpoint (seconds to minutes), and only then moves its finished
 * completion record aside. In between, `shards` and `merge` took the old record for proof: `merge` exit 0 over a
 * shard that was about to change. A live lock taken after the record was written means the shard is running; a lock
 * older than the record is the finishing invocation's own (it releases it after writing the record).
 */
import { execa } from "execa";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";

const N = 2;
const IDS = Array.from({ length: 8 }, (_, i) => `t${i}`);

describe("a finished shard whose folder a live invocation has locked since", () => {
  let dir: string;
  let runDir: string;
  const shardDir = (i: number) => join(runDir, "shards", `000${i}-of-000${N}`);

  beforeAll(async () => {
    dir = tempDir("hb-h4-running-");
    const dataset = join(dir, "data.jsonl");
    writeFileSync(
      dataset,
      IDS.map((id, i) => JSON.stringify({ id, prompt: `Use the shell to compute ${i} * 7.` })).join("\n") + "\n",
    );
    runDir = join(dir, "runs", "exp");
    for (let i = 0; i < N; i++) {
      const r = await runCliInProcess(
        [
          "run",
          dataset,
          "--model",
          "scripted",
          "--run-name",
          "exp",
          "--output-dir",
          join(dir, "runs"),
          "--workers",
          "1",
          "--progress",
          "none",
          "--shard",
          `${i}/${N}`,
        ],
        { cwd: dir, env: NO_SCHEDULER },
      );
      expect(r.exitCode, r.stderr).toBe(0);
    }
  }, 120_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("is running: shards exit 4 and merge exit 4 writes nothing; the finishing invocation's own lock is not", async () => {
    const record = JSON.parse(readFileSync(join(shardDir(1), "shard-complete.json"), "utf8"));
    const holder = execa("sleep", ["60"]);
    try {
      const lock = (started: string) =>
        writeFileSync(join(shardDir(1), ".lock"), JSON.stringify({ pid: holder.pid, host: hostname(), started }));
      // Taken after the record was written: a new invocation, still counting or asking the endpoint.
      lock(new Date(Date.parse(record.ended_at) + 1000).toISOString());
      const shards = await runCliInProcess(["shards", runDir], { cwd: dir, env: NO_SCHEDULER });
      expect(shards.exitCode, shards.stdout).toBe(4);
      expect(shards.stdout).toMatch(/1\/2 .* running/);
      const merge = await runCliInProcess(["merge", runDir], { cwd: dir, env: NO_SCHEDULER });
      expect(merge.exitCode, merge.stdout).toBe(4);
      expect(merge.stderr).toContain("shard 1/2: running");
      expect(merge.stderr).toContain(`pid ${holder.pid}`);
      // Taken before the record: the invocation that wrote it, between its record and its exit.
      lock(new Date(Date.parse(record.started_at) - 1000).toISOString());
      const later = await runCliInProcess(["merge", runDir], { cwd: dir, env: NO_SCHEDULER });
      expect(later.exitCode, later.stderr).toBe(0);
    } finally {
      holder.kill();
      await holder.catch(() => undefined);
    }
  }, 60_000);
});
