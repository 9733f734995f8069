/**
 * A worker thread that dies under a task: the pool replaces it, the tasks it had in flight are retried
 * once, and a task that kills its worker every time is recorded as failed — the run goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { runCli, tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { readJsonl } from "./helpers/jsonl.js";
import { listLabelledContainers, removeContainersByLabel } from "../tools/environments/docker/docker.js";

const CRASH_PLUGIN = `
const { registry } = globalThis.hermesBatch;
registry.register({
  name: "crash_worker",
  toolset: "crashy",
  schema: { name: "crash_worker", description: "Ends the worker thread (test only).", parameters: { type: "object", properties: {} } },
  handler: () => { process.exit(3); },
});
`;

describe("worker crash", () => {
  let server: FakeOpenAI;
  beforeAll(async () => {
    server = await startFakeOpenAI((req: RecordedRequest): Reply => {
      const prompt: string = req.body.messages.find((m: any) => m.role === "user").content;
      const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
      if (turn > 0) return text("fine");
      if (prompt.includes("crash")) return toolCalls([{ name: "crash_worker", arguments: {} }]);
      // Slow enough that the other tasks are still in flight when the crash happens.
      return new Promise((resolve) =>
        setTimeout(() => resolve(toolCalls([{ name: "terminal", arguments: { command: "echo ok" } }])), 300),
      ) as unknown as Reply;
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it("retries in-flight tasks once on a fresh worker and records the task that always crashes", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".hermes-batch", "plugins"), { recursive: true });
    writeFileSync(join(dir, ".hermes-batch", "plugins", "crash.mjs"), CRASH_PLUGIN);
    const rows = [
      { id: "boom", prompt: "crash now" },
      ...Array.from({ length: 5 }, (_, i) => ({ id: `ok-${i}`, prompt: `normal task ${i}` })),
    ];
    writeFileSync(join(dir, "d.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const r = await runCli(
      [
        "run",
        "d.jsonl",
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--toolsets",
        "crashy,terminal",
        "--workers",
        "1",
        "--concurrency",
        "6",
        "--approval",
        "allow",
        "--progress",
        "none",
      ],
      { cwd: dir },
    );
    expect(r.exitCode, r.stderr).toBe(1);
    const done = readJsonl(join(dir, "runs", "d", "trajectories.jsonl"))
      .map((e) => e.task_id)
      .sort();
    // On a failure, where the other tasks went (it failed once in a loaded CI run, with an empty stderr).
    const files = ["failed.jsonl", "dropped.jsonl", "events.log"].map(
      (f) =>
        `${f}:\n${existsSync(join(dir, "runs", "d", f)) ? readFileSync(join(dir, "runs", "d", f), "utf8").slice(0, 4000) : "(none)"}`,
    );
    expect(done, `${r.stdout}\n${r.stderr}\n${files.join("\n")}`).toEqual(["ok-0", "ok-1", "ok-2", "ok-3", "ok-4"]);
    const failed = readJsonl(join(dir, "runs", "d", "failed.jsonl"));
    expect(failed.map((f) => f.task_id)).toEqual(["boom"]);
    expect(failed[0].outcome).toBe("environment_error");
    expect(failed[0].error).toMatch(/worker crashed/);
    expect(readFileSync(join(dir, "runs", "d", "events.log"), "utf8")).toMatch(
      /task boom: worker crashed .*retrying once/,
    );
  });
});

describe("worker crash with --env docker", () => {
  let server: FakeOpenAI;
  let image: string;
  const runName = uniqueRunName("crash-docker");
  beforeAll(async () => {
    ({ image } = await ensureDockerTestImages());
    // First a command (the task's container starts), then the tool that kills the worker thread.
    server = await startFakeOpenAI((req: RecordedRequest): Reply => {
      const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
      if (turn === 0) return toolCalls([{ name: "terminal", arguments: { command: "echo in the box" } }]);
      if (turn === 1) return toolCalls([{ name: "crash_worker", arguments: {} }]);
      return text("fine");
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await removeContainersByLabel({ run: runName });
  });

  it("the main thread removes the crashed task's container through the backend, after each crash", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, ".hermes-batch", "plugins"), { recursive: true });
    writeFileSync(join(dir, ".hermes-batch", "plugins", "crash.mjs"), CRASH_PLUGIN);
    writeFileSync(join(dir, "d.jsonl"), JSON.stringify({ id: "boom", prompt: "crash in a container" }) + "\n");
    const r = await runCli(
      [
        "run",
        "d.jsonl",
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--toolsets",
        "crashy,terminal",
        "--workers",
        "1",
        "--env",
        "docker",
        "--image",
        image,
        "--run-name",
        runName,
        "--approval",
        "allow",
        "--progress",
        "none",
      ],
      { cwd: dir, timeoutMs: 180_000 },
    );
    expect(r.exitCode, r.stderr).toBe(1);
    expect(readJsonl(join(dir, "runs", runName, "failed.jsonl")).map((f) => f.task_id)).toEqual(["boom"]);
    const events = readFileSync(join(dir, "runs", runName, "events.log"), "utf8");
    // After the first crash and after the retry's, the dead thread's `finally` never ran: the main thread removed
    // its container (by task, or by the thread that started it) and returned the sandbox permit it held.
    expect(events).toMatch(
      /removed 1 sandbox\(es\) of task boom left by the crashed worker|worker thread \d+ gone: removed 1 sandbox/,
    );
    expect(
      events.match(/worker thread \d+ gone: removed \d sandbox\(es\), returned 1 sandbox permit\(s\)/g),
    ).toHaveLength(2);
    expect(await listLabelledContainers({ run: runName })).toEqual([]);
  }, 240_000);
});
