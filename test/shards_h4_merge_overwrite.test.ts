/**
 * A merge overwrites only what a merge wrote. A merged run folder is a run folder: `run --retry-failed` in it reruns
 * the failed tasks there, and their new results are no merge's. A second merge (the Slurm merge job of a later
 * rerun, a user merging again) replaced them with the shards' old failures, exit 1, without a word; a merge with
 * `--out` into another run's merged folder replaced that run's results. Both now stop with exit 2 unless --force.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOfTask } from "../src/shard/assign.js";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { httpError, startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const N = 2;
const IDS = Array.from({ length: 10 }, (_, i) => `t${i}`);
const FAILING = new Set(["t2", "t5"]);

describe("merging again never discards results a merge did not write", () => {
  let dir: string;
  let server: FakeOpenAI;
  let healed = false;
  const run = (name: string, args: string[], dataset = "data.jsonl") =>
    runCliInProcess(
      [
        "run",
        join(dir, dataset),
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--api-key",
        "sk-test",
        "--workers",
        "1",
        "--progress",
        "none",
        "--max-retries",
        "0",
        "--stop-after-failures",
        "0",
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        name,
        ...args,
      ],
      { cwd: dir, env: NO_SCHEDULER },
    );
  const merge = (...args: string[]) => runCliInProcess(["merge", ...args], { cwd: dir, env: NO_SCHEDULER });
  const runDir = (name: string) => join(dir, "runs", name);

  beforeAll(async () => {
    for (let i = 0; i < N; i++) expect([...FAILING].some((id) => shardOfTask(id, N) === i)).toBe(true);
    dir = tempDir("hb-h4-overwrite-");
    server = await startFakeOpenAI((req) => {
      const id = /task (\w+)/.exec(JSON.stringify(req.body.messages))?.[1] ?? "";
      return !healed && FAILING.has(id) ? httpError(400, `refused ${id}`) : text(`done ${id}`);
    });
    writeFileSync(
      join(dir, "data.jsonl"),
      IDS.map((id) => JSON.stringify({ id, prompt: `task ${id}: say done` })).join("\n") + "\n",
    );
    writeFileSync(
      join(dir, "other.jsonl"),
      ["o1", "o2", "o3"].map((id) => JSON.stringify({ id, prompt: `task ${id}: say done` })).join("\n") + "\n",
    );
    for (let i = 0; i < N; i++) await run("exp", ["--shard", `${i}/${N}`]);
    for (let i = 0; i < N; i++) await run("other", ["--shard", `${i}/${N}`], "other.jsonl");
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a --retry-failed in the merged folder: merging again refuses (exit 2), --force overwrites", async () => {
    const first = await merge(runDir("exp"));
    expect(first.exitCode, first.stderr).toBe(1); // merged; t2 and t5 failed
    // Merging again with nothing changed is fine.
    expect((await merge(runDir("exp"))).exitCode).toBe(1);

    healed = true;
    const retry = await run("exp", ["--retry-failed"]);
    expect(retry.exitCode, retry.stderr + retry.stdout).toBe(0);
    const retried = readFileSync(join(runDir("exp"), "trajectories.jsonl"), "utf8");
    expect(
      readJsonl(join(runDir("exp"), "trajectories.jsonl"))
        .map((l) => l.task_id)
        .sort(),
    ).toEqual([...IDS].sort());

    const again = await merge(runDir("exp"));
    expect(again.exitCode, again.stdout).toBe(2);
    expect(again.stderr).toContain("changed since");
    expect(again.stderr).toContain("--force");
    expect(readFileSync(join(runDir("exp"), "trajectories.jsonl"), "utf8")).toBe(retried);
    expect(JSON.parse(readFileSync(join(runDir("exp"), "statistics.json"), "utf8")).completed).toBe(IDS.length);

    const forced = await merge(runDir("exp"), "--force");
    expect(forced.exitCode, forced.stderr).toBe(1);
    expect(readJsonl(join(runDir("exp"), "trajectories.jsonl"))).toHaveLength(IDS.length - FAILING.size);
  }, 120_000);

  it("merge --out into another run's merged folder refuses (exit 2)", async () => {
    expect((await merge(runDir("other"))).exitCode).toBe(0);
    const before = readFileSync(join(runDir("other"), "trajectories.jsonl"), "utf8");
    const into = await merge(runDir("exp"), "--out", runDir("other"));
    expect(into.exitCode, into.stdout).toBe(2);
    expect(into.stderr).toContain("another run");
    expect(readFileSync(join(runDir("other"), "trajectories.jsonl"), "utf8")).toBe(before);
  }, 60_000);
});
