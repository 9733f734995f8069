/**
 * SIGTERM while a shard records its end (Slurm's time-limit warning, `scancel`, a requeue, a Kubernetes eviction
 * arriving after the last task): the run's signal handlers are gone by then, so Node's default action killed the
 * process between its last result and its completion record. Every task had its result, yet the shard had no record:
 * `shards` and the merge job called it killed (exit 4) and a rerun was needed. The shard now finishes recording its
 * end (a second signal still stops it at once).
 */
import { execa } from "execa";
import { existsSync, mkdirSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, cleanEnv, NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";

const TASKS = 300;
// Long answers: the end's report pass over trajectories.jsonl takes a while, and the signal lands in it.
const ANSWER = "x".repeat(40_000);

describe("a signal while a shard records its end", () => {
  let dir: string;
  let server: FakeOpenAI;

  beforeAll(async () => {
    dir = tempDir("hb-h4-signal-end-");
    server = await startFakeOpenAI(() => text(ANSWER));
    writeFileSync(
      join(dir, "data.jsonl"),
      Array.from({ length: TASKS }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `task t${i}` })).join("\n") + "\n",
    );
  });

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the shard `name` and sends `signals` SIGTERMs once its end's reports start (50 ms apart). */
  async function runSignalledAtEnd(name: string, signals: number) {
    const shardDir = join(dir, "runs", name, "shards", "0000-of-0001");
    mkdirSync(shardDir, { recursive: true });
    const child = execa(
      "node",
      [
        CLI,
        "run",
        "data.jsonl",
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--workers",
        "1",
        "--progress",
        "none",
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        name,
        "--shard",
        "0/1",
      ],
      {
        cwd: dir,
        env: cleanEnv({ ...NO_SCHEDULER, OPENAI_API_KEY: "sk-test" }),
        extendEnv: false,
        reject: false,
        timeout: 120_000,
        // execa's kill() sends SIGKILL 5 s after the SIGTERM by default: on a loaded machine the shard's end can take
        // longer, and that SIGKILL, not the harness, would cut its record.
        forceKillAfterDelay: false,
      },
    );
    let signalled = false;
    // summary.csv.tmp appears when the end's reports start, after the last task's result.
    const watcher = watch(shardDir, (_event, file) => {
      if (signalled || file !== "summary.csv.tmp") return;
      signalled = true;
      child.kill("SIGTERM");
      if (signals > 1) setTimeout(() => child.kill("SIGTERM"), 50);
    });
    const r = await child;
    watcher.close();
    expect(signalled).toBe(true);
    const lines = readFileSync(join(shardDir, "trajectories.jsonl"), "utf8").split("\n").filter(Boolean);
    expect(lines).toHaveLength(TASKS);
    return { r, shardDir };
  }

  it("leaves a finished completion record: shards exit 0", async () => {
    const { r, shardDir } = await runSignalledAtEnd("exp", 1);
    expect(existsSync(join(shardDir, "shard-complete.json")), `${r.signal ?? r.exitCode}\n${r.stderr}`).toBe(true);
    expect(r.stderr).toContain("SIGTERM while the shard records its end");
    const record = JSON.parse(readFileSync(join(shardDir, "shard-complete.json"), "utf8"));
    expect(record.state).toBe("finished");
    expect(record.counts).toMatchObject({ done: TASKS, missing: 0 });
    const shards = await runCliInProcess(["shards", join(dir, "runs", "exp")], { cwd: dir, env: NO_SCHEDULER });
    expect(shards.exitCode, shards.stdout).toBe(0);
  }, 150_000);

  it("a second signal stops it at once, without a record", async () => {
    const { r, shardDir } = await runSignalledAtEnd("twice", 2);
    expect(r.signal, r.stderr).toBe("SIGTERM");
    expect(existsSync(join(shardDir, "shard-complete.json"))).toBe(false);
  }, 150_000);
});
