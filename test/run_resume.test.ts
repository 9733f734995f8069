/**
 * Crash safety and determinism with real child processes: SIGKILL mid-run then --resume; same seed,
 * same draws whatever the worker count; the bundled demo run end to end.
 */
import { describe, expect, it } from "vitest";
import { execa } from "execa";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, ROOT, cleanEnv, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { waitUntil } from "./helpers/wait.js";

function countLines(path: string): number {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).length : 0;
}

function dataset(dir: string, n: number): string {
  const path = join(dir, "tasks.jsonl");
  const rows = Array.from({ length: n }, (_, i) =>
    JSON.stringify({ id: `task-${i}`, prompt: `Use the shell to compute ${i} * 7 and report it.` }),
  );
  writeFileSync(path, rows.join("\n") + "\n");
  return path;
}

/** The parts of statistics.json that must not depend on interruptions or timing. */
function stableStats(s: any) {
  return {
    tasks: s.tasks,
    outcomes: s.outcomes,
    tool_statistics: s.tool_statistics,
    completed: s.completed,
    api_calls: s.api_calls.total,
    reasoning: s.reasoning_statistics,
  };
}

describe("resume after SIGKILL", () => {
  it("ends with every task exactly once and the statistics of an uninterrupted run", async () => {
    const dir = tempDir();
    const data = dataset(dir, 24);
    const common = [
      "--model",
      "scripted:150",
      "--output-dir",
      join(dir, "runs"),
      "--concurrency",
      "2",
      "--approval",
      "deny",
      "--progress",
      "log",
      "--toolsets",
      "terminal",
    ];

    const child = execa("node", [CLI, "run", data, "--run-name", "killed", ...common, "--workers", "2"], {
      cwd: ROOT,
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
    });
    const trajectories = join(dir, "runs", "killed", "trajectories.jsonl");
    await waitUntil(() => countLines(trajectories) >= 6, 60_000, 25);
    child.kill("SIGKILL");
    await child;
    const before = countLines(trajectories);
    expect(before).toBeGreaterThanOrEqual(6);
    expect(before).toBeLessThan(24);

    // One worker for the resume and the clean run: what is compared does not depend on how many threads ran it.
    const resumed = await runCliInProcess([
      "run",
      data,
      "--run-name",
      "killed",
      "--resume",
      ...common,
      "--workers",
      "1",
    ]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const ids = readJsonl(trajectories).map((e) => e.task_id);
    expect(ids).toHaveLength(24);
    expect(new Set(ids).size).toBe(24);

    const clean = await runCliInProcess(["run", data, "--run-name", "clean", ...common, "--workers", "1"]);
    expect(clean.exitCode, clean.stderr).toBe(0);
    const a = JSON.parse(readFileSync(join(dir, "runs", "killed", "statistics.json"), "utf8"));
    const b = JSON.parse(readFileSync(join(dir, "runs", "clean", "statistics.json"), "utf8"));
    expect(stableStats(a)).toEqual(stableStats(b));
  });

  it("repairs a torn last line instead of gluing the next record onto it", async () => {
    const dir = tempDir();
    const data = dataset(dir, 3);
    const args = [
      "run",
      data,
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "torn",
      "--approval",
      "deny",
      "--toolsets",
      "terminal",
    ];
    expect((await runCliInProcess([...args, "--max-samples", "2"])).exitCode).toBe(0);
    const path = join(dir, "runs", "torn", "trajectories.jsonl");
    const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
    // Simulate a crash in the middle of writing the second line.
    writeFileSync(path, `${lines[0]}\n${lines[1]!.slice(0, 40)}`);
    const r = await runCliInProcess([...args, "--resume"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const entries = readJsonl(path);
    expect(entries.map((e) => e.task_id).sort()).toEqual(["task-0", "task-1", "task-2"]);
    expect(readFileSync(`${path}.torn`, "utf8")).toBe(lines[1]!.slice(0, 40));
    // Announced once: the resume that repaired it says so, the next one has nothing to say.
    expect(
      r.stderr.match(
        /ended in a torn line \(40 bytes, left by an interrupted run\): moved to .*trajectories\.jsonl\.torn/g,
      ),
    ).toHaveLength(1);
    const again = await runCliInProcess([...args, "--resume"]);
    expect(again.stderr).not.toContain("torn line");
  });
});

describe("Ctrl-C", () => {
  it("once: stops taking tasks, finishes those in flight, exits 130 with a resume command that works", async () => {
    const dir = tempDir();
    const data = dataset(dir, 12);
    const args = [
      "run",
      data,
      "--model",
      "scripted:300",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "int",
      "--workers",
      "1",
      "--concurrency",
      "2",
      "--approval",
      "deny",
      "--progress",
      "log",
      "--toolsets",
      "terminal",
    ];
    // No SIGKILL 5 s after the Ctrl-C (execa's default): the drain may take longer on a loaded machine.
    const child = execa("node", [CLI, ...args], {
      cwd: ROOT,
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
      forceKillAfterDelay: false,
    });
    const trajectories = join(dir, "runs", "int", "trajectories.jsonl");
    await waitUntil(() => countLines(trajectories) >= 2, 60_000, 20);
    child.kill("SIGINT");
    const r = await child;
    expect(r.exitCode).toBe(130);
    const done = readJsonl(trajectories);
    expect(done.length).toBeGreaterThanOrEqual(2);
    expect(done.length).toBeLessThan(12);
    // Drained, not aborted: nothing was cancelled.
    expect(readJsonl(join(dir, "runs", "int", "failed.jsonl"))).toEqual([]);
    // `node <cli> ARGS…`, as `shards` prints its reruns: the arguments start at the third word.
    const hint = /Resume with: \S+ \S+cli\.js (.*)$/m.exec(r.stdout)![1]!;
    expect(hint).toContain("--resume");
    const resumed = await runCliInProcess(hint.split(" "));
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(new Set(readJsonl(trajectories).map((e) => e.task_id)).size).toBe(12);
    expect(readJsonl(trajectories)).toHaveLength(12);
  });
});

describe("determinism", () => {
  it("same seed gives the same toolset draws with 1 and 2 workers", async () => {
    const dir = tempDir();
    const data = dataset(dir, 16);
    const draws = async (name: string, workers: string, seed: string) => {
      const r = await runCliInProcess([
        "run",
        data,
        "--model",
        "scripted",
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        name,
        "--workers",
        workers,
        "--concurrency",
        "8",
        "--seed",
        seed,
        "--distribution",
        "balanced",
        "--approval",
        "deny",
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
      const entries = readJsonl(join(dir, "runs", name, "trajectories.jsonl"));
      return Object.fromEntries(
        entries
          .sort((x, y) => x.prompt_index - y.prompt_index)
          .map((e) => [`${e.prompt_index}:${e.task_id}`, e.toolsets_used]),
      );
    };
    const one = await draws("w1", "1", "7");
    // Two threads already split the tasks between workers (each worker thread costs ~0.4 s of CPU to start).
    const two = await draws("w2", "2", "7");
    expect(Object.keys(one)).toHaveLength(16);
    expect(two).toEqual(one);
    const other = await draws("s8", "1", "8");
    expect(other).not.toEqual(one);
  });
});

describe("the README's first command", () => {
  it("runs the bundled dataset with the scripted model end to end", async () => {
    const dir = tempDir();
    const r = await runCliInProcess([
      "run",
      "datasets/smoke.jsonl",
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "runs"),
    ]);
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const entries = readJsonl(join(dir, "runs", "smoke", "trajectories.jsonl"));
    expect(entries).toHaveLength(8);
    for (const e of entries) {
      expect(e.completed, e.task_id).toBe(true);
      expect(e.api_calls).toBeGreaterThanOrEqual(1);
    }
    const verified = entries.filter((e) => e.verify);
    expect(verified.length).toBe(3);
    for (const e of verified) expect(e.verify.passed, `${e.task_id}: ${e.verify.output}`).toBe(true);
    const stats = JSON.parse(readFileSync(join(dir, "runs", "smoke", "statistics.json"), "utf8"));
    expect(stats.verify.passed).toBe(3);
  });
});
