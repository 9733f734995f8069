/**
 * A hostile tester's second round, `--env singularity` (test/fixtures/fake-apptainer as `apptainer`, with
 * APPTAINER_FAKE_CONTAIN=1, as in run_singularity_links.test.ts): the harness reads and writes a task's files from
 * the host when they lie inside the bound folder. A FIFO the agent made there was opened by the host: the open
 * blocks until a writer (or reader) comes, in one of the process's four libuv threads, for good. Five parallel
 * read_file calls of FIFOs took every such thread: the task, and every file operation of the run after it (its
 * results included), never ended. A FIFO (or any file but a regular one) is refused at once now. `--env host` read
 * and wrote the task's files the same way (no sandbox there, but the run must still end).
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli } from "./helpers/cli.js";
import { startFakeOpenAI, taskTurn, text, toolCalls, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const FIFOS = ["f1", "f2", "f3", "f4", "f5"];

let base: string;
let server: FakeOpenAI;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "hb-hostile2-sing-"));
  chmodSync(base, 0o755);
  mkdirSync(join(base, "bin"));
  symlinkSync(join(ROOT, "test", "fixtures", "fake-apptainer"), join(base, "bin", "apptainer"));
  server = await startFakeOpenAI((req) => {
    const { turn } = taskTurn(req);
    if (turn === 0)
      return toolCalls([{ name: "terminal", arguments: { command: `mkfifo ${FIFOS.join(" ")} && echo made` } }]);
    if (turn === 1) return toolCalls(FIFOS.map((path) => ({ name: "read_file", arguments: { path } })));
    if (turn === 2) return toolCalls([{ name: "write_file", arguments: { path: "f1", content: "x" } }]);
    if (turn === 3) return toolCalls([{ name: "terminal", arguments: { command: "echo still-here" } }]);
    return text("done");
  });
});

afterAll(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("--env singularity and FIFOs in the task folder", () => {
  it("read_file and write_file of a FIFO fail at once; the run ends", { timeout: 150_000 }, async () => {
    writeFileSync(
      join(base, "d.jsonl"),
      `${JSON.stringify({ id: "fifo", prompt: "task:fifo", verify: "false", toolsets: ["terminal", "file"] })}\n`,
    );
    const r = await runCli(
      [
        "run",
        join(base, "d.jsonl"),
        "--model",
        "agent",
        "--base-url",
        server.baseURL,
        "--api-key",
        "k",
        "--approval",
        "allow",
        "--env",
        "singularity",
        "--image",
        "docker://debian:bookworm",
        "--output-dir",
        join(base, "runs"),
        "--run-name",
        "fifo",
        "--progress",
        "none",
        "--task-timeout",
        "30",
      ],
      {
        timeoutMs: 90_000,
        env: {
          PATH: `${join(base, "bin")}:${process.env.PATH}`,
          APPTAINER_FAKE_CONTAIN: "1",
          APPTAINER_FAKE_STATE: join(base, "state"),
          APPTAINER_CACHEDIR: join(base, "cache"),
        },
      },
    );
    expect(r.timedOut, "the run did not end").toBe(false);
    expect(r.stderr).not.toMatch(/internal error/);
    const [line] = [
      ...readJsonl(join(base, "runs", "fifo", "trajectories.jsonl")),
      ...readJsonl(join(base, "runs", "fifo", "failed.jsonl")),
    ];
    expect(line, `${r.stdout}\n${r.stderr}`).toBeDefined();
    expect(line.outcome, line.error).toBe("completed");
    const results = line.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
    expect(results).toHaveLength(8);
    for (const res of results.slice(1, 7)) expect(res.error, JSON.stringify(res).slice(0, 300)).toBeTruthy();
    expect(results[7].output).toBe("still-here");
  });
});

describe("--env host and FIFOs in the task folder", () => {
  it("read_file and write_file of a FIFO fail at once; the run ends", { timeout: 150_000 }, async () => {
    writeFileSync(
      join(base, "h.jsonl"),
      `${JSON.stringify({ id: "fifo", prompt: "task:fifo", verify: "false", toolsets: ["terminal", "file"] })}\n`,
    );
    const r = await runCli(
      [
        "run",
        join(base, "h.jsonl"),
        "--model",
        "agent",
        "--base-url",
        server.baseURL,
        "--api-key",
        "k",
        "--approval",
        "allow",
        "--env",
        "host",
        "--output-dir",
        join(base, "runs"),
        "--run-name",
        "host",
        "--progress",
        "none",
        "--task-timeout",
        "30",
      ],
      { timeoutMs: 90_000 },
    );
    expect(r.timedOut, "the run did not end").toBe(false);
    const [line] = [
      ...readJsonl(join(base, "runs", "host", "trajectories.jsonl")),
      ...readJsonl(join(base, "runs", "host", "failed.jsonl")),
    ];
    expect(line, `${r.stdout}\n${r.stderr}`).toBeDefined();
    expect(line.outcome, line.error).toBe("completed");
    const results = line.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
    expect(results).toHaveLength(8);
    for (const res of results.slice(1, 7)) expect(res.error, JSON.stringify(res).slice(0, 300)).toBeTruthy();
    expect(results[7].output).toBe("still-here");
  });
});
