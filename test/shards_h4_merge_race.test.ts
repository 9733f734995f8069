/**
 * A shard that starts again while the merge streams its files (a Slurm rerun submitted while the previous merge job
 * runs): the merge proved the shard finished, then copied files that a new invocation was changing (`--only` moves a
 * task's line to superseded.jsonl), and wrote a run it called complete (exit 0, `finished: true`) without that task.
 * The shard's trajectories.jsonl is a FIFO here, so the test decides what each read sees and when: the first read
 * (the proof) sees every line, then the record is moved aside as a new invocation does, then the second read (the
 * copy) misses one task. The merge must notice that the shard changed under it and write nothing.
 */
import { execa } from "execa";
import { closeSync, constants, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, cleanEnv, NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";

const N = 2;
const IDS = Array.from({ length: 8 }, (_, i) => `t${i}`);

/** Opens the FIFO for writing in a child (an open blocks until the reader opens it), writes `text`, closes it. */
async function feed(fifo: string, text: string): Promise<void> {
  const content = join(fifo, "..", `feed-${Date.now()}-${Math.random()}.txt`);
  writeFileSync(content, text);
  // A reader that stops before the end (the merge gave up on the shard) leaves cat a SIGPIPE (exit 141): the
  // merge's own exit code and output say what it decided.
  await execa("sh", ["-c", `cat "$1" > "$2"`, "sh", content, fifo], { timeout: 30_000, reject: false });
  rmSync(content, { force: true });
}

describe.runIf(process.platform !== "win32")("a shard that changes while the merge copies it", () => {
  let dir: string;
  let runDir: string;
  const shardDir = join("shards", `0001-of-000${N}`);

  beforeAll(async () => {
    dir = tempDir("hb-h4-race-");
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

  it("merge exits 4 and writes nothing", async () => {
    const folder = join(runDir, shardDir);
    const full = readFileSync(join(folder, "trajectories.jsonl"), "utf8");
    const lines = full.split("\n").filter(Boolean);
    expect(lines.length).toBeGreaterThan(1);
    const fifo = join(folder, "trajectories.jsonl");
    rmSync(fifo);
    await execa("mkfifo", [fifo]);
    const merge = execa("node", [CLI, "merge", runDir], {
      cwd: dir,
      env: cleanEnv(NO_SCHEDULER),
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    try {
      await feed(fifo, full); // the proof: every task has its result
      // A new invocation with --only: the record moved aside, then the chosen task's line moved out.
      renameSync(join(folder, "shard-complete.json"), join(folder, "shard-complete.previous.json"));
      await feed(fifo, `${lines.slice(1).join("\n")}\n`);
    } finally {
      // Never leave the merge blocked on the FIFO: until it ends, a reader waiting (a later read, as late as a
      // loaded machine makes it) gets an empty file.
      let ended = false;
      void merge.finally(() => {
        ended = true;
      });
      while (!ended) {
        try {
          closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        } catch {
          // no reader waiting
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const r = await merge;
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(4);
    expect(r.stderr).toContain("shard 1/2");
    expect(r.stderr).toContain("changed while");
    expect(existsSync(join(runDir, "trajectories.jsonl"))).toBe(false);
    expect(existsSync(join(runDir, "merge.json"))).toBe(false);
  }, 90_000);
});
