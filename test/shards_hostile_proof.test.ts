/**
 * Hostile shard proofs, end to end with the built CLI and the scripted model: a shard whose only invocation ran
 * just some of its tasks (`--only`, or `--retry-failed` on a shard that never ran) wrote a completion record
 * saying `finished`, and the merge took its never-run tasks for bad rows it skipped: exit 0 with half the
 * dataset. Such a shard is unfinished, and the rerun `shards` prints (without the `--only`) completes it.
 */
import { execa } from "execa";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOfTask } from "../src/shard/assign.js";
import { cleanEnv, NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

const N = 2;
const IDS = Array.from({ length: 12 }, (_, i) => `t${i}`);
const owned = (i: number) => IDS.filter((id) => shardOfTask(id, N) === i);

describe("a shard that ran only some of its tasks is not finished", () => {
  let dir: string;
  let dataset: string;
  const run = (name: string, shard: number, extra: string[] = []) =>
    runCliInProcess(
      [
        "run",
        dataset,
        "--model",
        "scripted",
        "--run-name",
        name,
        "--output-dir",
        join(dir, "runs"),
        "--workers",
        "1",
        "--progress",
        "none",
        "--shard",
        `${shard}/${N}`,
        ...extra,
      ],
      { cwd: dir, env: NO_SCHEDULER },
    );
  let shard0: Promise<string> | undefined;
  /** Run `name` with shard 0 run in full: run once, then copied (a run's name is no part of its configuration). */
  const withShard0 = async (name: string) => {
    const source = await (shard0 ??= (async () => {
      const r = await run("shard0", 0);
      expect(r.exitCode, r.stderr).toBe(0);
      return join(dir, "runs", "shard0");
    })());
    cpSync(source, join(dir, "runs", name), { recursive: true });
  };
  const merge = (name: string) => runCliInProcess(["merge", join(dir, "runs", name)], { cwd: dir, env: NO_SCHEDULER });

  beforeAll(() => {
    expect(owned(0).length).toBeGreaterThan(1);
    expect(owned(1).length).toBeGreaterThan(1);
    dir = tempDir("hb-hostile-proof-");
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

  it("--only one task: merge exits 4 naming the shard and its never-run ids; the printed rerun completes it", async () => {
    const only = owned(1)[0]!;
    await withShard0("only");
    const partial = await run("only", 1, ["--only", only]);
    expect(partial.exitCode, partial.stderr).toBe(0);
    const m = await merge("only");
    expect(m.exitCode, `${m.stdout}\n${m.stderr}`).toBe(4);
    expect(m.stderr).toContain("shard 1/2:");
    const never = owned(1).filter((id) => id !== only);
    expect(m.stderr).toContain(never[0]!);
    expect(m.stderr).toContain(`${never.length} missing`);

    const status = await runCliInProcess(["shards", join(dir, "runs", "only")], { cwd: dir, env: NO_SCHEDULER });
    expect(status.exitCode, status.stdout).toBe(4);
    // The printed shell rerun resumes the shard, without the earlier invocation's --only.
    const rerun = status.stdout.split("\n").find((l) => l.includes("--shard 1/2 --resume"));
    expect(rerun, status.stdout).toBeDefined();
    expect(rerun).not.toContain("--only");
    const again = await execa("bash", ["-c", rerun!.trim()], {
      env: cleanEnv(NO_SCHEDULER),
      extendEnv: false,
      reject: false,
    });
    expect(again.exitCode, again.stderr).toBe(0);
    const m2 = await merge("only");
    expect(m2.exitCode, m2.stderr).toBe(0);
    const ids = readJsonl(join(dir, "runs", "only", "trajectories.jsonl")).map((e) => e.task_id as string);
    expect(ids.sort()).toEqual([...IDS].sort());
  }, 120_000);

  it("--retry-failed as a shard's first invocation runs nothing and leaves the shard unfinished", async () => {
    await withShard0("retry");
    const r = await run("retry", 1, ["--retry-failed"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const record = JSON.parse(
      readFileSync(join(dir, "runs", "retry", "shards", "0001-of-0002", "shard-complete.json"), "utf8"),
    );
    expect(record.counts.missing).toBe(owned(1).length);
    const m = await merge("retry");
    expect(m.exitCode, `${m.stdout}\n${m.stderr}`).toBe(4);
    expect(m.stderr).toContain(`${owned(1).length} missing`);
  }, 120_000);

  it("a row the run refuses (--on-bad-row skip) still lets its shard finish, as an unsharded run skips it", async () => {
    const bad = join(dir, "bad.jsonl");
    const refused = owned(1)[0]!;
    writeFileSync(
      bad,
      IDS.map((id, i) =>
        JSON.stringify({
          id,
          prompt: `Use the shell to compute ${i} * 7 and tell me the result.`,
          ...(id === refused ? { toolsets: ["no-such-toolset"] } : {}),
        }),
      ).join("\n") + "\n",
    );
    for (const i of [0, 1]) {
      const r = await runCliInProcess(
        [
          "run",
          bad,
          "--model",
          "scripted",
          "--run-name",
          "bad",
          "--output-dir",
          join(dir, "runs"),
          "--workers",
          "1",
        ].concat(["--progress", "none", "--shard", `${i}/${N}`, "--on-bad-row", "skip"]),
        { cwd: dir, env: NO_SCHEDULER },
      );
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const m = await merge("bad");
    expect(m.exitCode, m.stderr).toBe(0);
    const ids = readJsonl(join(dir, "runs", "bad", "trajectories.jsonl")).map((e) => e.task_id as string);
    expect(ids.sort()).toEqual(IDS.filter((id) => id !== refused).sort());
  }, 120_000);

  it("--max-samples with a refused row inside the slice: the shards run and merge what one run does", async () => {
    // The slice counts every row that parses, refused or not (a refusal can depend on the node), as merge does.
    const sliced = join(dir, "sliced.jsonl");
    writeFileSync(
      sliced,
      IDS.map((id, i) =>
        JSON.stringify({
          id,
          prompt: `Use the shell to compute ${i} * 7 and tell me the result.`,
          ...(i === 1 ? { toolsets: ["no-such-toolset"] } : {}),
        }),
      ).join("\n") + "\n",
    );
    const common = ["--model", "scripted", "--output-dir", join(dir, "runs"), "--workers", "1", "--progress", "none"];
    const slice = ["--on-bad-row", "skip", "--max-samples", "5"];
    const whole = await runCliInProcess(["run", sliced, ...common, "--run-name", "one", ...slice], {
      cwd: dir,
      env: NO_SCHEDULER,
    });
    expect(whole.exitCode, whole.stderr).toBe(0);
    const expected = ["t0", "t2", "t3", "t4"];
    const oneIds = readJsonl(join(dir, "runs", "one", "trajectories.jsonl")).map((e) => e.task_id as string);
    expect(oneIds.sort()).toEqual(expected);
    for (const i of [0, 1]) {
      const r = await runCliInProcess(
        ["run", sliced, ...common, "--run-name", "sl", ...slice, "--shard", `${i}/${N}`],
        {
          cwd: dir,
          env: NO_SCHEDULER,
        },
      );
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const m = await merge("sl");
    expect(m.exitCode, `${m.stdout}\n${m.stderr}`).toBe(0);
    const ids = readJsonl(join(dir, "runs", "sl", "trajectories.jsonl")).map((e) => e.task_id as string);
    expect(ids.sort()).toEqual(expected);
  }, 120_000);
});
