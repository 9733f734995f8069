/**
 * Hostile run folders, end to end with the built CLI and the scripted model: a result line present twice
 * (a hand-merged file, a line written again after a crash) counts once in every report; a run folder in use by
 * another live invocation is neither read nor changed by a second one (the lock comes before the resume's repair).
 */
import { execa } from "execa";
import { appendFileSync, existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

const IDS = Array.from({ length: 5 }, (_, i) => `t${i}`);

describe("run folders under hostile conditions", () => {
  let dir: string;
  let dataset: string;
  const run = (name: string, extra: string[] = []) =>
    runCliInProcess(
      ["run", dataset, "--model", "scripted", "--run-name", name, "--output-dir", join(dir, "runs")].concat([
        "--workers",
        "1",
        "--progress",
        "none",
        ...extra,
      ]),
      { cwd: dir, env: NO_SCHEDULER },
    );

  beforeAll(() => {
    dir = tempDir("hb-hostile-store-");
    dataset = join(dir, "data.jsonl");
    writeFileSync(
      dataset,
      IDS.map((id, i) =>
        JSON.stringify({ id, prompt: `Use the shell to compute ${i} * 7 and tell me the result.` }),
      ).join("\n") + "\n",
    );
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a trajectory line present twice counts once: statistics, summary.csv, atif.jsonl, checkpoint", async () => {
    expect((await run("dup")).exitCode).toBe(0);
    const folder = join(dir, "runs", "dup");
    const before = JSON.parse(readFileSync(join(folder, "statistics.json"), "utf8"));
    const lines = readFileSync(join(folder, "trajectories.jsonl"), "utf8").split("\n").filter(Boolean);
    appendFileSync(join(folder, "trajectories.jsonl"), `${lines[0]}\n${lines[2]}\n`);
    const r = await run("dup", ["--resume"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`(${IDS.length} done in total)`);
    const after = JSON.parse(readFileSync(join(folder, "statistics.json"), "utf8"));
    for (const k of ["completed", "partial", "completion_rate", "tool_statistics", "tokens", "total_prompts"])
      expect(after[k], k).toEqual(before[k]);
    const csv = readFileSync(join(folder, "summary.csv"), "utf8").trim().split("\n");
    expect(csv).toHaveLength(IDS.length + 1);
    expect(readJsonl(join(folder, "atif.jsonl"))).toHaveLength(IDS.length);
    expect(JSON.parse(readFileSync(join(folder, "checkpoint.json"), "utf8")).done).toBe(IDS.length);
  }, 120_000);

  it("a --resume of a folder another live invocation holds changes nothing in it", async () => {
    expect((await run("locked")).exitCode).toBe(0);
    const folder = join(dir, "runs", "locked");
    // The other invocation is mid-write: its last line has no newline yet.
    const tail = '{"prompt_index":9,"task_id":"being-written","conv';
    appendFileSync(join(folder, "trajectories.jsonl"), tail);
    const holder = execa("sleep", ["60"]);
    try {
      writeFileSync(
        join(folder, ".lock"),
        JSON.stringify({
          pid: holder.pid,
          host: (await import("node:os")).hostname(),
          started: new Date().toISOString(),
        }),
      );
      const trajectories = readFileSync(join(folder, "trajectories.jsonl"), "utf8");
      const r = await run("locked", ["--resume"]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain("in use by another hermes-batch");
      expect(readFileSync(join(folder, "trajectories.jsonl"), "utf8")).toBe(trajectories);
      expect(existsSync(join(folder, "trajectories.jsonl.torn"))).toBe(false);
    } finally {
      holder.kill();
      await holder.catch(() => undefined);
    }
  }, 120_000);

  it("a lock file being written (still empty) is not taken for a dead one", async () => {
    expect((await run("young")).exitCode).toBe(0);
    const folder = join(dir, "runs", "young");
    writeFileSync(join(folder, ".lock"), "");
    const r = await run("young", ["--resume"]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("in use");
    expect(existsSync(join(folder, ".lock"))).toBe(true);
    // Left long ago by a writer that died mid-write: taken over.
    const old = new Date(Date.now() - 120_000);
    utimesSync(join(folder, ".lock"), old, old);
    const later = await run("young", ["--resume"]);
    expect(later.exitCode, later.stderr).toBe(0);
    expect(existsSync(join(folder, ".lock"))).toBe(false);
  }, 120_000);
});
