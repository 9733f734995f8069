/**
 * Hostile merges, end to end with the built CLI and the scripted model: a merge into a run folder another live
 * process writes (another merge, a run) refuses and writes nothing; merging twice gives the same files.
 */
import { execa } from "execa";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_SCHEDULER, runCli, tempDir } from "./helpers/cli.js";

const N = 2;
const IDS = Array.from({ length: 8 }, (_, i) => `t${i}`);

describe("merge under hostile conditions", () => {
  let dir: string;
  let runDir: string;

  beforeAll(async () => {
    dir = tempDir("hb-hostile-merge-");
    const dataset = join(dir, "data.jsonl");
    writeFileSync(
      dataset,
      IDS.map((id, i) =>
        JSON.stringify({ id, prompt: `Use the shell to compute ${i} * 7 and tell me the result.` }),
      ).join("\n") + "\n",
    );
    runDir = join(dir, "runs", "exp");
    for (let i = 0; i < N; i++) {
      const r = await runCli(
        ["run", dataset, "--model", "scripted", "--run-name", "exp", "--output-dir", join(dir, "runs")].concat([
          "--workers",
          "1",
          "--progress",
          "none",
          "--shard",
          `${i}/${N}`,
        ]),
        { cwd: dir, env: NO_SCHEDULER },
      );
      expect(r.exitCode, r.stderr).toBe(0);
    }
  }, 120_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses to merge into a folder a live process holds, then merges once it is gone", async () => {
    const holder = execa("sleep", ["60"]);
    try {
      writeFileSync(
        join(runDir, ".lock"),
        JSON.stringify({ pid: holder.pid, host: hostname(), started: new Date().toISOString() }),
      );
      const m = await runCli(["merge", runDir], { cwd: dir, env: NO_SCHEDULER });
      expect(m.exitCode, m.stdout).toBe(2);
      expect(m.stderr).toContain("in use by another hermes-batch");
      expect(existsSync(join(runDir, "trajectories.jsonl"))).toBe(false);
      expect(existsSync(join(runDir, "merge.json"))).toBe(false);
    } finally {
      holder.kill();
      await holder.catch(() => undefined);
    }
    const m = await runCli(["merge", runDir], { cwd: dir, env: NO_SCHEDULER });
    expect(m.exitCode, m.stderr).toBe(0);
    expect(existsSync(join(runDir, ".lock"))).toBe(false);
    const first = readFileSync(join(runDir, "trajectories.jsonl"), "utf8");
    const again = await runCli(["merge", runDir], { cwd: dir, env: NO_SCHEDULER });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(readFileSync(join(runDir, "trajectories.jsonl"), "utf8")).toBe(first);
    expect(first.trim().split("\n")).toHaveLength(IDS.length);
  }, 120_000);
});
