/**
 * A sharded run with a history (tasks that failed, then passed on `--retry-failed`; a row refused with
 * `--on-bad-row skip`), merged, against one uninterrupted unsharded run of the same dataset: statistics.json and
 * checkpoint.json must agree task for task. The merge counted every failed attempt of a task that later passed as
 * one more processed prompt of its batch (12 processed in a batch of 10), and counted the refused row in
 * `total_prompts`, which the unsharded run (and each shard) leaves out.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOfTask } from "../src/shard/assign.js";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { httpError, startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";

const N = 2;
const IDS = Array.from({ length: 14 }, (_, i) => `t${i}`);
const FAILING = new Set(["t1", "t4", "t8", "t11"]);

describe("merged statistics and checkpoint = one unsharded run, after a shard's failed tasks passed on retry", () => {
  let dir: string;
  let server: FakeOpenAI;
  let healed = false;
  const common = () => [
    "--model",
    "m",
    "--base-url",
    server.baseURL,
    "--api-key",
    "sk-test",
    "--seed",
    "5",
    "--workers",
    "1",
    "--progress",
    "none",
    "--max-retries",
    "0",
    "--stop-after-failures",
    "0",
    "--on-bad-row",
    "skip",
    "--output-dir",
    join(dir, "runs"),
  ];
  const run = (args: string[]) =>
    runCliInProcess(["run", join(dir, "data.jsonl"), ...common(), ...args], { cwd: dir, env: NO_SCHEDULER });
  const json = (...p: string[]) => JSON.parse(readFileSync(join(dir, "runs", ...p), "utf8"));

  beforeAll(async () => {
    // Both shards hold failing tasks.
    for (let i = 0; i < N; i++) expect(IDS.some((id) => FAILING.has(id) && shardOfTask(id, N) === i)).toBe(true);
    dir = tempDir("hb-h4-numbers-");
    server = await startFakeOpenAI((req) => {
      const prompt = JSON.stringify(req.body.messages);
      const id = /task (t\d+)/.exec(prompt)?.[1] ?? "";
      return !healed && FAILING.has(id) ? httpError(400, `refused ${id}`) : text(`done ${id}`);
    });
    const rows = IDS.map((id) => JSON.stringify({ id, prompt: `task ${id}: say done` }));
    // A row the run refuses (--on-bad-row skip): no result in any run, and no prompt of the run either.
    rows.splice(5, 0, JSON.stringify({ id: "refused", prompt: "task refused", toolsets: ["no_such_toolset"] }));
    writeFileSync(join(dir, "data.jsonl"), `${rows.join("\n")}\n`);

    for (let i = 0; i < N; i++) expect((await run(["--run-name", "exp", "--shard", `${i}/${N}`])).exitCode).toBe(1);
    healed = true;
    for (let i = 0; i < N; i++) {
      const r = await run(["--run-name", "exp", "--shard", `${i}/${N}`, "--retry-failed"]);
      expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    }
    const merge = await runCliInProcess(["merge", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
    expect(merge.exitCode, merge.stderr + merge.stdout).toBe(0);
    const single = await run(["--run-name", "single"]);
    expect(single.exitCode, single.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("statistics.json: total_prompts leaves out the refused row, as the unsharded run does", () => {
    const timing = new Set([
      "run_name",
      "started_at",
      "completed_at",
      "completed_at_utc",
      "duration_seconds",
      "model_calls",
      "durations_ms",
    ]);
    const a = json("single", "statistics.json");
    const b = json("exp", "statistics.json");
    expect(a.total_prompts).toBe(IDS.length);
    for (const key of Object.keys(a)) if (!timing.has(key)) expect(b[key], key).toEqual(a[key]);
  });

  it("checkpoint.json: each prompt counted once in its batch, by its final result", () => {
    const cpA = json("single", "checkpoint.json");
    const cpB = json("exp", "checkpoint.json");
    for (const key of ["completed_prompts", "batch_stats", "done", "failed", "dropped", "total_in_dataset_slice"])
      expect(cpB[key], key).toEqual(cpA[key]);
    for (const b of Object.values(cpB.batch_stats) as { processed: number }[])
      expect(b.processed).toBeLessThanOrEqual(10);
  });
});
