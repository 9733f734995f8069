/**
 * Sharded runs end to end with the built CLI (`npm test` builds first) and the key-less scripted model:
 * three shards found three ways (a 1-based Slurm array, a Kubernetes Indexed Job, --shard), merged, give
 * the same tasks, toolset draws and statistics as one unsharded run of the same config.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli, tempDir } from "./helpers/cli.js";

const DATASET = join(ROOT, "datasets", "smoke.jsonl");
/** The test process may itself run inside a Slurm array or an Indexed Job: nothing of that may leak in. */
const NO_SCHEDULER = {
  SLURM_ARRAY_TASK_ID: "",
  SLURM_ARRAY_TASK_MIN: "",
  SLURM_ARRAY_TASK_MAX: "",
  SLURM_ARRAY_TASK_STEP: "",
  SLURM_ARRAY_TASK_COUNT: "",
  JOB_COMPLETION_INDEX: "",
  HERMES_BATCH_SHARD_COUNT: "",
};

function readJsonl(path: string): Record<string, any>[] {
  return readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

describe("sharded run + merge = unsharded run", () => {
  let out: string;
  const results: Record<string, { exitCode?: number; stdout: string; stderr: string }> = {};
  const common = ["--model", "scripted", "--seed", "7", "--workers", "1", "--progress", "none"];

  beforeAll(async () => {
    out = tempDir("hb-shard-run-");
    const run = (name: string, args: string[], env: Record<string, string> = {}) =>
      runCli(["run", DATASET, "--output-dir", out, ...common, ...args], { cwd: out, env: { ...NO_SCHEDULER, ...env } }).then((r) => {
        results[name] = r;
      });
    await Promise.all([
      run("single", ["--run-name", "single"]),
      run("slurm", ["--run-name", "exp"], { SLURM_ARRAY_TASK_ID: "1", SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_MAX: "3", SLURM_ARRAY_TASK_COUNT: "3" }),
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
    for (const k of ["single", "slurm", "k8s", "flag", "merge"]) expect(results[k]!.exitCode, `${k}: ${results[k]!.stderr}`).toBe(0);
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
      Object.fromEntries(rows.map((e) => [e.task_id, `${e.prompt_index} ${e.toolsets_used.join("+")}`]).sort(([a], [b]) => (a < b ? -1 : 1)));
    const single = readJsonl(join(out, "single", "trajectories.jsonl"));
    const merged = readJsonl(join(out, "exp", "trajectories.jsonl"));
    expect(merged).toHaveLength(single.length);
    expect(draws(merged)).toEqual(draws(single));
    const a = JSON.parse(readFileSync(join(out, "single", "statistics.json"), "utf8"));
    const b = JSON.parse(readFileSync(join(out, "exp", "statistics.json"), "utf8"));
    for (const key of ["tasks", "outcomes", "tool_statistics", "api_calls", "verify"]) expect(b[key], key).toEqual(a[key]);
    expect(results.merge!.stdout).toContain(`merged 3 of 3 shard(s)`);
    expect(results.merge!.stdout).toContain("(all shards agree)");
  });
});
