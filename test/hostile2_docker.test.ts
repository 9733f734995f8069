/**
 * A hostile tester's second round, Docker, end to end through the built CLI with a scripted agent:
 * - read_file of a FIFO, or of a link the agent made to /dev/zero or /dev/urandom (the tool blocks only those literal
 *   paths): the harness reads a file with an exec whose whole output it keeps in memory, without a time limit, so
 *   a FIFO held the task until its --task-timeout (then a `timeout` in failed.jsonl, out of the pass rate) and
 *   /dev/zero grew the harness's memory without bound. The read fails at once and the task is graded. write_file
 *   to a FIFO held the task the same way.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI, type ToolCallSpec } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const term = (command: string): ToolCallSpec => ({ name: "terminal", arguments: { command } });
const read = (path: string): ToolCallSpec => ({ name: "read_file", arguments: { path } });

const SCRIPTS: Record<string, ToolCallSpec[]> = {
  // The FIFO first: before the fix the task hangs there, and never reaches the endless reads.
  devlink: [
    term("mkfifo fifo && ln -s /dev/zero zero && ln -s /dev/urandom rnd && echo made"),
    read("fifo"),
    read("zero"),
    read("rnd"),
    { name: "write_file", arguments: { path: "fifo", content: "x" } },
    term("echo still-here"),
  ],
  honest: [term("echo 42 > answer.txt"), read("answer.txt")],
};

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI(scriptedPerTask((id) => SCRIPTS[id]!));
});

afterAll(async () => {
  await server?.close();
});

describe("read_file and write_file in Docker of a FIFO or a link to an endless device", () => {
  it("fails at once and the task is graded, not held until its timeout", { timeout: 300_000 }, async () => {
    const { image } = await ensureDockerTestImages();
    const dir = tempDir("hb-hostile2-docker-");
    const rows = [
      { id: "devlink", verify: "false" },
      { id: "honest", verify: "grep -qx 42 answer.txt" },
    ].map((r) => JSON.stringify({ ...r, prompt: `task:${r.id}`, toolsets: ["terminal", "file"] }));
    writeFileSync(join(dir, "d.jsonl"), rows.join("\n") + "\n");
    const name = uniqueRunName("hostile2");
    const started = Date.now();
    const r = await runCli(
      [
        "run",
        join(dir, "d.jsonl"),
        "--model",
        "agent",
        "--base-url",
        server.baseURL,
        "--api-key",
        "k",
        "--approval",
        "allow",
        "--env",
        "docker",
        "--image",
        image,
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        name,
        "--progress",
        "none",
        "--concurrency",
        "2",
        "--task-timeout",
        "60",
      ],
      { timeoutMs: 280_000 },
    );
    expect(r.stderr).not.toMatch(/internal error/);
    const lines = new Map<string, any>();
    for (const f of ["trajectories.jsonl", "failed.jsonl"])
      for (const l of readJsonl(join(dir, "runs", name, f))) lines.set(l.task_id, l);
    const line = lines.get("devlink");
    expect(line, `${r.stdout}\n${r.stderr}`).toBeDefined();
    expect(line.outcome, line.error).toBe("completed");
    expect(line.verify).toMatchObject({ passed: false, exit_code: 1 });
    expect(line.score.passed).toBe(false);
    const results = line.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
    expect(results).toHaveLength(6);
    for (const res of results.slice(1, 5)) expect(res.error, JSON.stringify(res).slice(0, 300)).toBeTruthy();
    expect(results[5].output).toBe("still-here");
    expect(Date.now() - started).toBeLessThan(50_000);
    // A regular file still reads.
    const honest = lines.get("honest");
    expect(JSON.parse(honest.messages.filter((m: any) => m.role === "tool")[1].content).content).toMatch(/42/);
    expect(honest.verify).toMatchObject({ passed: true });
  });
});
