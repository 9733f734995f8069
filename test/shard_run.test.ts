/**
 * Sharded runs end to end with the built CLI (`npm test` builds first) and the key-less scripted model:
 * three shards found three ways (a 1-based Slurm array, a Kubernetes Indexed Job, --shard), merged, give
 * the same tasks, toolset draws and statistics as one unsharded run of the same config.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_SCHEDULER, ROOT, runCli, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { toolsByFirstUse } from "../src/report/statistics.js";

const DATASET = join(ROOT, "datasets", "smoke.jsonl");

describe("sharded run + merge = unsharded run", () => {
  let out: string;
  const results: Record<string, { exitCode?: number; stdout: string; stderr: string }> = {};
  const common = ["--model", "scripted", "--seed", "7", "--workers", "1", "--progress", "none"];

  beforeAll(async () => {
    out = tempDir("hb-shard-run-");
    const run = (name: string, args: string[], env: Record<string, string> = {}) =>
      runCli(["run", DATASET, "--output-dir", out, ...common, ...args], {
        cwd: out,
        env: { ...NO_SCHEDULER, ...env },
      }).then((r) => {
        results[name] = r;
      });
    await Promise.all([
      run("single", ["--run-name", "single"]),
      run("slurm", ["--run-name", "exp"], {
        SLURM_ARRAY_TASK_ID: "1",
        SLURM_ARRAY_TASK_MIN: "1",
        SLURM_ARRAY_TASK_MAX: "3",
        SLURM_ARRAY_TASK_COUNT: "3",
      }),
    ]);
    await Promise.all([
      run("k8s", ["--run-name", "exp", "--workers", "2"], { JOB_COMPLETION_INDEX: "1", HERMES_BATCH_SHARD_COUNT: "3" }),
      run("flag", ["--run-name", "exp", "--shard", "2/3"]),
    ]);
    results.merge = await runCli(["merge", join(out, "exp")], { cwd: out, env: NO_SCHEDULER });
  }, 300_000);

  afterAll(() => {
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it("each shard writes its own run folder with the config fingerprint", () => {
    for (const k of ["single", "slurm", "k8s", "flag", "merge"])
      expect(results[k]!.exitCode, `${k}: ${results[k]!.stderr} ${results[k]!.stdout}`).toBe(0);
    const fingerprints = ["0000-of-0003", "0001-of-0003", "0002-of-0003"].map((d) => {
      const yaml = YAML.parse(readFileSync(join(out, "exp", "shards", d, "run.yaml"), "utf8"));
      const cp = JSON.parse(readFileSync(join(out, "exp", "shards", d, "checkpoint.json"), "utf8"));
      expect(cp.config_fingerprint).toBe(yaml.config_fingerprint);
      expect(cp.finished).toBe(true);
      return yaml.config_fingerprint as string;
    });
    expect(fingerprints[0]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(new Set(fingerprints).size).toBe(1); // --workers 2 on one shard does not matter
    expect(existsSync(join(out, "single", "shards"))).toBe(false);
  });

  it("merged, the shards hold exactly the unsharded run's tasks with the same toolset draws and statistics", () => {
    const draws = (rows: Record<string, any>[]) =>
      Object.fromEntries(
        rows
          .map((e) => [e.task_id, `${e.prompt_index} ${e.toolsets_used.join("+")}`])
          .sort(([a], [b]) => (a < b ? -1 : 1)),
      );
    const single = readJsonl(join(out, "single", "trajectories.jsonl"), { mustExist: true });
    const merged = readJsonl(join(out, "exp", "trajectories.jsonl"), { mustExist: true });
    expect(merged).toHaveLength(single.length);
    expect(draws(merged)).toEqual(draws(single));
    const a = JSON.parse(readFileSync(join(out, "single", "statistics.json"), "utf8"));
    const b = JSON.parse(readFileSync(join(out, "exp", "statistics.json"), "utf8"));
    // Field for field what the unsharded run wrote: the same keys, the same values but for timing and model calls.
    expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
    const timing = new Set([
      "run_name",
      "started_at",
      "completed_at",
      "completed_at_utc",
      "duration_seconds",
      "model_calls",
      "durations_ms",
    ]);
    for (const key of Object.keys(a)) if (!timing.has(key)) expect(b[key], key).toEqual(a[key]);
    expect(Object.keys(b)).toEqual(Object.keys(a)); // key order too: the original's keys first, then ours
    // tool_statistics keys in first-use order over each run's own trajectories.jsonl (the merged file goes shard
    // by shard, the unsharded one in completion order), so the two orders may differ; the values do not.
    const firstUse = (rows: Record<string, any>[]) => [...new Set(rows.flatMap((e) => toolsByFirstUse(e.messages)))];
    expect(Object.keys(a.tool_statistics).length).toBeGreaterThan(0);
    expect(Object.keys(a.tool_statistics)).toEqual(firstUse(single));
    expect(Object.keys(b.tool_statistics)).toEqual(firstUse(merged));
    expect(b.model_calls.calls).toBe(a.model_calls.calls);
    // Timing from the shards' own records: first start, last end.
    const records = ["0000-of-0003", "0001-of-0003", "0002-of-0003"].map((d) =>
      JSON.parse(readFileSync(join(out, "exp", "shards", d, "shard-complete.json"), "utf8")),
    );
    expect(b.started_at).toBe(records.map((r) => r.started_at).sort()[0]);
    expect(b.completed_at_utc).toBe(
      records
        .map((r) => r.ended_at)
        .sort()
        .at(-1),
    );
    const info = JSON.parse(readFileSync(join(out, "exp", "merge.json"), "utf8"));
    expect(info.timing.busy_seconds).toBeCloseTo(
      records.reduce((s, r) => s + r.busy_seconds, 0),
      1,
    );
    // checkpoint.json and summary.csv as the unsharded run's (rows in another order).
    const cpA = JSON.parse(readFileSync(join(out, "single", "checkpoint.json"), "utf8"));
    const cpB = JSON.parse(readFileSync(join(out, "exp", "checkpoint.json"), "utf8"));
    expect(Object.keys(cpB).sort()).toEqual(
      Object.keys(cpA)
        .sort()
        .filter((k) => k !== "shard"),
    );
    for (const key of Object.keys(cpA))
      if (!["last_updated", "config_fingerprint", "run_name"].includes(key)) expect(cpB[key], key).toEqual(cpA[key]);
    const csv = (p: string) => readFileSync(p, "utf8").split("\n").filter(Boolean);
    const csvA = csv(join(out, "single", "summary.csv"));
    const csvB = csv(join(out, "exp", "summary.csv"));
    expect(csvB[0]).toBe(csvA[0]);
    const durationCol = csvA[0]!.split(",").indexOf("duration_ms");
    const strip = (l: string) =>
      l
        .split(",")
        .filter((_, i) => i !== durationCol)
        .join(",");
    expect(csvB.slice(1).map(strip).sort()).toEqual(csvA.slice(1).map(strip).sort());
    expect(results.merge!.stdout).toContain(`merged all 3 shard(s)`);
    expect(results.merge!.stdout).toContain("(all shards agree)");
  });
});
