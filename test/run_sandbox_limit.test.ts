/**
 * Done-when test for run-wide sandbox gates, with real Docker: a CLI run (in the test process) with 2 worker
 * threads and 6 loops in flight, `--max-sandboxes 3 --prewarm 1`, on tasks that keep their container busy. A
 * recorder follows the engine's events for the run's containers (each creation and removal): the peak is at most 3
 * and reaches 3. Split per thread and rounded up (the old way), 2 threads would have allowed 2 + 2 = 4.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { join } from "node:path";
import { listLabelledContainers, removeContainersByLabel } from "../tools/environments/docker/docker.js";
import {
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { watchLiveContainers } from "./helpers/docker_events.js";

/** Each task: one command that keeps its container busy for two seconds, then a final answer. */
function busyTask(req: RecordedRequest): Reply {
  const turn = (req.body.messages as { role: string }[]).filter((m) => m.role === "assistant").length;
  return turn === 0 ? toolCalls([{ name: "terminal", arguments: { command: "sleep 2; echo busy" } }]) : text("done");
}

describe("run-wide --max-sandboxes across worker threads (Docker)", () => {
  let server: FakeOpenAI;
  let image: string;
  const runName = uniqueRunName("maxsb");

  beforeAll(async () => {
    ({ image } = await ensureDockerTestImages());
    server = await startFakeOpenAI(busyTask);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await removeContainersByLabel({ run: runName });
  });

  it("never has more live containers than --max-sandboxes, warm ones included, and reaches the bound", async () => {
    const dir = tempDir();
    const rows = Array.from({ length: 8 }, (_, i) =>
      JSON.stringify({ id: `busy-${i}`, prompt: `keep the sandbox busy ${i}` }),
    );
    const dataset = join(dir, "busy.jsonl");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(dataset, rows.join("\n") + "\n");

    // Sandboxes only: image probes (never started, no permit) are not sandboxes.
    const recorder = await watchLiveContainers(runName);
    const r = await runCliInProcess(
      [
        "run",
        dataset,
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--env",
        "docker",
        "--image",
        image,
        "--toolsets",
        "terminal",
        "--workers",
        "2",
        "--concurrency",
        "6",
        "--max-sandboxes",
        "3",
        "--prewarm",
        "1",
        "--run-name",
        runName,
        "--output-dir",
        join(dir, "runs"),
        "--approval",
        "deny",
        "--progress",
        "none",
      ],
      { timeoutMs: 240_000 },
    );
    recorder.stop();

    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const entries = readJsonl(join(dir, "runs", runName, "trajectories.jsonl"), { mustExist: true });
    expect(entries).toHaveLength(8);
    for (const e of entries) {
      const out = JSON.parse(e.messages.find((m: { role: string }) => m.role === "tool").content);
      expect(out.output, e.task_id).toContain("busy");
    }
    // The recorder saw every task's container come (warm ones may have been made ahead: at least 8).
    expect(recorder.created).toBeGreaterThanOrEqual(8);
    expect(recorder.peak).toBeLessThanOrEqual(3);
    expect(recorder.peak).toBe(3);
    expect(await listLabelledContainers({ run: runName })).toEqual([]);
  }, 300_000);
});
