/**
 * Merge by proof, end to end with the built CLI against a local scripted model server (127.0.0.1): a shard
 * killed with kill -9 before its first checkpoint leaves no completion record, so `merge` refuses (exit 4),
 * naming the shard and its missing ids; `--allow-partial` says exactly what it leaves out; `shards` prints
 * the rerun command, which, run as printed, completes the shard; the merge is then exactly the dataset.
 */
import { execa } from "execa";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOfTask } from "../src/shard/assign.js";
import { cleanEnv, CLI, NO_SCHEDULER, runCli, runCliInProcess, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text, type FakeOpenAI, type RecordedRequest, type Reply } from "./helpers/fake_openai.js";
import { waitUntil } from "./helpers/wait.js";
import { readJsonl } from "./helpers/jsonl.js";

const KEY = "sk-test-shard-proof-0123456789";
const N = 3;
const KILLED = 2;
const IDS = Array.from({ length: 15 }, (_, i) => `t${i}`);

describe("merge by proof: a shard killed before its first checkpoint", () => {
  let dir: string;
  let server: FakeOpenAI;
  let hang = true;
  const taskOf = (req: RecordedRequest) => /task (t\d+)/.exec(JSON.stringify(req.body?.messages ?? ""))?.[1] ?? "";
  const r: Record<string, { exitCode?: number; stdout: string; stderr: string }> = {};
  let killedLaunch = "";
  let killedState: { checkpointFinished: boolean | null; record: boolean; runYaml: boolean } = {
    checkpointFinished: true,
    record: true,
    runYaml: false,
  };
  const owned = IDS.filter((id) => shardOfTask(id, N) === KILLED);

  beforeAll(async () => {
    expect(owned.length).toBeGreaterThan(0);
    dir = tempDir("hb-proof-");
    // The killed shard's requests never get an answer while `hang` is set: it is mid-task when killed.
    server = await startFakeOpenAI(
      (req): Reply => (hang && shardOfTask(taskOf(req), N) === KILLED ? { kind: "hang" } : text(`done ${taskOf(req)}`)),
    );
    const dataset = join(dir, "data.jsonl");
    writeFileSync(dataset, IDS.map((id) => JSON.stringify({ id, prompt: `task ${id}: say done` })).join("\n") + "\n");
    const args = (i: number) => [
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--run-name",
      "exp",
      "--output-dir",
      join(dir, "runs"),
      "--toolsets",
      "todo",
      "--workers",
      "1",
      "--progress",
      "none",
      "--shard",
      `${i}/${N}`,
    ];
    const env = { ...NO_SCHEDULER, OPENAI_API_KEY: KEY };
    const [a, b] = await Promise.all([runCli(args(0), { cwd: dir, env }), runCli(args(1), { cwd: dir, env })]);
    r.s0 = a;
    r.s1 = b;
    // The third shard, killed with SIGKILL as soon as its first request is in flight (well before 5 s).
    const child = execa("node", [CLI, ...args(KILLED), "--api-key", KEY], {
      cwd: dir,
      env: cleanEnv(env),
      extendEnv: false,
      reject: false,
    });
    expect(
      await waitUntil(() => server.requests.some((q) => shardOfTask(taskOf(q), N) === KILLED), 30_000),
      "the killed shard's first request",
    ).toBe(true);
    child.kill("SIGKILL");
    await child;
    const killedDir = join(dir, "runs", "exp", "shards", `000${KILLED}-of-0003`);
    const checkpointPath = join(killedDir, "checkpoint.json");
    killedState = {
      // Written when the invocation starts (finished: false), so a kill at any point leaves no earlier "finished".
      checkpointFinished: existsSync(checkpointPath) ? JSON.parse(readFileSync(checkpointPath, "utf8")).finished : null,
      record: existsSync(join(killedDir, "shard-complete.json")),
      runYaml: existsSync(join(killedDir, "run.yaml")),
    };
    killedLaunch = readFileSync(join(killedDir, "launch.json"), "utf8");
    r.merge = await runCliInProcess(["merge", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
    r.partial = await runCliInProcess(["merge", join(dir, "runs", "exp"), "--allow-partial"], {
      cwd: dir,
      env: NO_SCHEDULER,
    });
    r.shards = await runCliInProcess(["shards", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
    r.shardsJson = await runCliInProcess(["shards", join(dir, "runs", "exp"), "--json"], {
      cwd: dir,
      env: NO_SCHEDULER,
    });
    hang = false;
    const rerun = /shell:\n\s+(cd .*)\n/.exec(r.shards.stdout)?.[1];
    expect(rerun, r.shards.stdout).toBeDefined();
    r.rerun = await execa("bash", ["-c", rerun!], { env: cleanEnv(env), extendEnv: false, reject: false });
    r.shardsAfter = await runCliInProcess(["shards", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
    r.mergeAfter = await runCliInProcess(["merge", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the killed shard left no completion record and no finished checkpoint; the others did", () => {
    expect(r.s0!.exitCode, r.s0!.stderr).toBe(0);
    expect(r.s1!.exitCode, r.s1!.stderr).toBe(0);
    const shardDir = (i: number) => join(dir, "runs", "exp", "shards", `000${i}-of-0003`);
    expect(existsSync(join(shardDir(0), "shard-complete.json"))).toBe(true);
    expect(killedState).toEqual({ checkpointFinished: false, record: false, runYaml: true });
    const launch = killedLaunch;
    expect(launch).not.toContain(KEY);
    expect(JSON.parse(launch).dropped_secret_flags).toEqual(["--api-key"]);
  });

  it("merge refuses (exit 4), naming the shard and its missing ids, and writes nothing", () => {
    expect(r.merge!.exitCode, r.merge!.stderr).toBe(4);
    expect(r.merge!.stderr).toContain(`shard ${KILLED}/${N}: killed`);
    expect(r.merge!.stderr).toContain(`missing ids: ${owned.join(", ")}`);
    expect(r.merge!.stderr).toContain("nothing was merged");
    expect(r.merge!.stdout).toBe("");
  });

  it("--allow-partial merges what is there and says exactly which shard and ids it leaves out", () => {
    expect(r.partial!.exitCode, r.partial!.stderr).toBe(4);
    expect(r.partial!.stdout).toContain(`merged a PARTIAL run (--allow-partial)`);
    expect(r.partial!.stdout).toContain(`left out: ${owned.length} task(s) of shard(s) ${KILLED}`);
    expect(r.partial!.stdout).toContain(`missing ids: ${owned.join(", ")}`);
    expect(r.partial!.stdout).not.toMatch(/merged all/);
    expect(r.partial!.stderr).not.toMatch(/merging without them/);
  });

  it("shards shows the table and the exact rerun command, which completes the shard", () => {
    expect(r.shards!.exitCode).toBe(4);
    expect(r.shards!.stdout).toMatch(
      new RegExp(`${KILLED}/${N}\\s+${owned.length}\\s+0\\s+0\\s+${owned.length}\\s+\\S+\\s+killed`),
    );
    expect(r.shards!.stdout).toContain(`--shard ${KILLED}/${N} --resume`);
    expect(r.shards!.stdout).toContain("--output-dir");
    expect(r.shards!.stdout).not.toContain(KEY);
    expect(r.rerun!.exitCode, String(r.rerun!.stderr)).toBe(0);
    expect(r.shardsAfter!.exitCode, r.shardsAfter!.stdout).toBe(0);
    expect(r.shardsAfter!.stdout).toContain(`${N} of ${N} shard(s) finished`);
  });

  it("shards --json gives the same status for tools", () => {
    expect(r.shardsJson!.exitCode).toBe(4);
    const j = JSON.parse(r.shardsJson!.stdout);
    expect(j.shard_count).toBe(N);
    expect(j.shards.map((x: { state: string }) => x.state)).toEqual(["finished", "finished", "killed"]);
    expect(j.shards[KILLED]).toMatchObject({ owned: owned.length, done: 0, failed: [], missing: owned });
    expect(j.rerun.shell[0]).toContain(`--shard ${KILLED}/${N} --resume`);
  });

  it("merged after the rerun: exactly the dataset's ids, once each", () => {
    expect(r.mergeAfter!.exitCode, r.mergeAfter!.stderr).toBe(0);
    expect(r.mergeAfter!.stdout).toContain(`merged all ${N} shard(s)`);
    const ids = readJsonl(join(dir, "runs", "exp", "trajectories.jsonl")).map((e) => e.task_id);
    expect([...ids].sort()).toEqual([...IDS].sort());
    const cp = JSON.parse(readFileSync(join(dir, "runs", "exp", "checkpoint.json"), "utf8"));
    expect(cp).toMatchObject({ done: IDS.length, failed: 0, finished: true });
  });
});

describe("early stop per shard: the single run's rule (the endpoint dies mid-run), recorded and shown", () => {
  let dir: string;
  let server: FakeOpenAI;
  const DEAD = 1;
  const taskOf = (req: RecordedRequest) => /task (t\d+)/.exec(JSON.stringify(req.body?.messages ?? ""))?.[1] ?? "";
  const r: Record<string, { exitCode?: number; stdout: string; stderr: string }> = {};
  const ids = Array.from({ length: 12 }, (_, i) => `t${i}`);
  const dead = ids.filter((id) => shardOfTask(id, 2) === DEAD);

  beforeAll(async () => {
    expect(dead.length).toBeGreaterThan(3);
    dir = tempDir("hb-early-");
    // Shard 1's endpoint works for its first 2 tasks, then dies: every later request gets the same server error.
    let answered = 0;
    server = await startFakeOpenAI((req): Reply => {
      if (shardOfTask(taskOf(req), 2) !== DEAD) return text("done");
      return ++answered <= 2
        ? text("done")
        : { kind: "json", status: 500, body: { error: { message: "upstream dead" } } };
    });
    const dataset = join(dir, "data.jsonl");
    writeFileSync(dataset, ids.map((id) => JSON.stringify({ id, prompt: `task ${id}: say done` })).join("\n") + "\n");
    const run = (i: number) =>
      runCli(
        [
          "run",
          dataset,
          "--model",
          "m",
          "--base-url",
          server.baseURL,
          "--run-name",
          "exp",
          "--output-dir",
          join(dir, "runs"),
          "--toolsets",
          "todo",
          "--workers",
          "1",
          "--concurrency",
          "1",
          "--max-retries",
          "0",
          "--stop-after-failures",
          "2",
          "--progress",
          "none",
          "--shard",
          `${i}/2`,
        ],
        { cwd: dir, env: NO_SCHEDULER },
      );
    [r.s0, r.s1] = await Promise.all([run(0), run(1)]);
    r.shards = await runCliInProcess(["shards", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
    r.merge = await runCliInProcess(["merge", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the shard stops after 2 equal model errors in a row and says so in its completion record", () => {
    expect(r.s0!.exitCode, r.s0!.stderr).toBe(0);
    expect(r.s1!.exitCode).toBe(1);
    expect(r.s1!.stdout).toContain("stopped early: 2 tasks in a row all failed with the same model error");
    const rec = JSON.parse(
      readFileSync(join(dir, "runs", "exp", "shards", "0001-of-0002", "shard-complete.json"), "utf8"),
    );
    expect(rec.state).toBe("stopped_early");
    expect(rec.stopped_early.after_failures).toBe(2);
    expect(rec.stopped_early.what).toBe("2 tasks in a row");
    expect(rec.counts.done).toBe(2);
    expect(rec.stopped_early.reason).toContain("upstream dead");
    expect(rec.counts.failed + rec.counts.missing).toBe(dead.length - 2);
    expect(rec.counts.missing).toBeGreaterThan(0);
  });

  it("shards and merge name it, with the reason and its ids", () => {
    expect(r.shards!.exitCode).toBe(4);
    expect(r.shards!.stdout).toMatch(/1\/2\s+\d+\s+2\s+\d+\s+\d+\s+\S+\s+stopped_early \(.*upstream dead/);
    expect(r.merge!.exitCode).toBe(4);
    expect(r.merge!.stderr).toContain("shard 1/2: stopped_early — stopped early: 2 tasks in a row all failed with:");
    expect(r.merge!.stderr).toMatch(/missing ids: t\d+/);
    expect(r.merge!.stderr).toMatch(/failed ids: t\d+/);
  });
});

describe("shards of a dataset read from stdin", () => {
  it("record their ids from the copy they read; merge, unable to read '-', proves completion from the records", async () => {
    const dir = tempDir("hb-stdin-shards-");
    try {
      const ids = Array.from({ length: 8 }, (_, i) => `s${i}`);
      const data = ids.map((id) => JSON.stringify({ id, prompt: `say ${id}` })).join("\n") + "\n";
      const run = (i: number) =>
        execa(
          "node",
          [
            CLI,
            "run",
            "-",
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
            `${i}/2`,
          ],
          {
            cwd: dir,
            env: cleanEnv(NO_SCHEDULER),
            extendEnv: false,
            reject: false,
            input: data,
          },
        );
      const shards = await Promise.all([run(0), run(1)]);
      for (const s of shards) expect(s.exitCode, String(s.stderr)).toBe(0);
      const rec = JSON.parse(
        readFileSync(join(dir, "runs", "exp", "shards", "0000-of-0002", "shard-complete.json"), "utf8"),
      );
      expect(rec.owned_ids).toEqual(ids.filter((id) => shardOfTask(id, 2) === 0));
      const merged = await runCliInProcess(["merge", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
      expect(merged.exitCode, merged.stderr).toBe(0);
      expect(merged.stderr).toContain("each shard's own record of its task ids is used");
      expect(
        readJsonl(join(dir, "runs", "exp", "trajectories.jsonl"))
          .map((e) => e.task_id)
          .sort(),
      ).toEqual(ids);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("a finished shard with a failed task", () => {
  it("shards prints the --retry-failed rerun; run as printed, the next merge is complete (exit 1 → 0)", async () => {
    const dir = tempDir("hb-retry-shards-");
    let broken = true;
    const server = await startFakeOpenAI((req): Reply => {
      const id = /task (t\d+)/.exec(JSON.stringify(req.body?.messages ?? ""))?.[1] ?? "";
      return broken && id === "t3"
        ? { kind: "json", status: 500, body: { error: { message: "flaky" } } }
        : text("done");
    });
    try {
      const ids = Array.from({ length: 8 }, (_, i) => `t${i}`);
      const dataset = join(dir, "data.jsonl");
      writeFileSync(dataset, ids.map((id) => JSON.stringify({ id, prompt: `task ${id}: say done` })).join("\n") + "\n");
      const run = (i: number) =>
        runCli(
          [
            "run",
            dataset,
            "--model",
            "m",
            "--base-url",
            server.baseURL,
            "--run-name",
            "exp",
            "--output-dir",
            join(dir, "runs"),
            "--toolsets",
            "todo",
            "--workers",
            "1",
            "--max-retries",
            "0",
            "--progress",
            "none",
            "--shard",
            `${i}/2`,
          ],
          { cwd: dir, env: NO_SCHEDULER },
        );
      await Promise.all([run(0), run(1)]);
      const first = await runCliInProcess(["merge", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
      expect(first.exitCode, first.stderr).toBe(1);
      expect(first.stdout).toContain(`shard ${shardOfTask("t3", 2)}/2: t3`);
      const shards = await runCliInProcess(["shards", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
      expect(shards.exitCode).toBe(0);
      expect(shards.stdout).toContain("t3 (model_error)");
      const rerun = /shell:\n\s+(cd .*)(?:\n|$)/.exec(shards.stdout)?.[1];
      expect(rerun, shards.stdout).toContain(`--shard ${shardOfTask("t3", 2)}/2 --retry-failed`);
      broken = false;
      const again = await execa("bash", ["-c", rerun!], {
        env: cleanEnv(NO_SCHEDULER),
        extendEnv: false,
        reject: false,
      });
      expect(again.exitCode, String(again.stderr)).toBe(0);
      const merged = await runCliInProcess(["merge", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
      expect(merged.exitCode, merged.stdout + merged.stderr).toBe(0);
      expect(
        readJsonl(join(dir, "runs", "exp", "trajectories.jsonl"))
          .map((e) => e.task_id)
          .sort(),
      ).toEqual(ids);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
