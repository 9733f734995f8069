/**
 * Sandbox starts when the engine fails or is stormed, through the real CLI and the fake OpenAI server:
 * - behind a proxy that answers the first container creations and starts with 500/503/429/409 or drops the
 *   connection, every task still completes; each retry is an events.log line; nothing is left behind;
 * - a deterministic engine error (400) is not retried: the task fails with the engine's message;
 * - 32 tasks at --concurrency 32 starting at once: none fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
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
import { runCli, tempDir } from "./helpers/cli.js";
import { startFlakyDockerProxy, type FaultRule } from "./helpers/flaky_docker_proxy.js";
import { readJsonl } from "./helpers/jsonl.js";

/** Each task: one command printing its id, then a final answer. */
function echoTask(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: string }[];
  const prompt = messages.find((m) => m.role === "user")!.content;
  const turn = messages.filter((m) => m.role === "assistant").length;
  return turn === 0 ? toolCalls([{ name: "terminal", arguments: { command: `echo ran-${prompt}` } }]) : text("done");
}

const isTaskCreate = (r: { method: string; path: string; body: unknown }) =>
  r.method === "POST" &&
  r.path === "/containers/create" &&
  (r.body as { Labels?: Record<string, string> } | undefined)?.Labels?.["hermes-batch.role"] === "task";
const isStart = (r: { method: string; path: string }) =>
  r.method === "POST" && /^\/containers\/[^/]+\/start$/.test(r.path);

describe("sandbox starts against a failing or stormed engine (CLI)", () => {
  let server: FakeOpenAI;
  let image: string;
  let busybox: string;
  const runNames: string[] = [];

  beforeAll(async () => {
    ({ image, busyboxImage: busybox } = await ensureDockerTestImages());
    server = await startFakeOpenAI(echoTask);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    for (const run of runNames) await removeContainersByLabel({ run });
  });

  async function run(tasks: number, extra: string[], env: Record<string, string> = {}, timeoutMs = 240_000) {
    const dir = tempDir();
    const runName = uniqueRunName("engine");
    runNames.push(runName);
    const rows = Array.from({ length: tasks }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `t${i}` }));
    writeFileSync(join(dir, "d.jsonl"), rows.join("\n") + "\n");
    const r = await runCli(
      [
        "run",
        join(dir, "d.jsonl"),
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--env",
        "docker",
        "--toolsets",
        "terminal",
        "--run-name",
        runName,
        "--output-dir",
        join(dir, "runs"),
        "--approval",
        "deny",
        "--progress",
        "none",
        ...extra,
      ],
      { env, timeoutMs },
    );
    const runDir = join(dir, "runs", runName);
    return {
      r,
      runName,
      trajectories: readJsonl(join(runDir, "trajectories.jsonl")),
      failed: readJsonl(join(runDir, "failed.jsonl")),
      events: existsSync(join(runDir, "events.log")) ? readFileSync(join(runDir, "events.log"), "utf8") : "",
    };
  }

  function toolOutput(entry: any): string {
    return JSON.parse(entry.messages.find((m: { role: string }) => m.role === "tool").content).output;
  }

  it("retries creations and starts the engine fails for a moment: every task completes, each retry is an event", async () => {
    const rules: FaultRule[] = [
      {
        match: isTaskCreate,
        faults: [
          { status: 500, message: "engine overloaded (test)" },
          "reset",
          { status: 429, message: "too many requests (test)" },
        ],
      },
      {
        match: isStart,
        faults: [
          { status: 503, message: "service unavailable (test)" },
          { status: 409, message: "conflict (test)" },
        ],
      },
    ];
    const proxy = await startFlakyDockerProxy(rules);
    try {
      const { r, runName, trajectories, failed, events } = await run(
        4,
        ["--image", image, "--concurrency", "4", "--workers", "2"],
        { DOCKER_HOST: proxy.dockerHost },
      );
      expect(r.exitCode, r.stderr + r.stdout).toBe(0);
      expect(proxy.given).toEqual([3, 2]);
      expect(failed).toEqual([]);
      expect(trajectories.map((e) => e.task_id).sort()).toEqual(["t0", "t1", "t2", "t3"]);
      for (const e of trajectories) {
        expect(e.outcome).toBe("completed");
        expect(toolOutput(e)).toContain(`ran-${e.task_id}`);
      }
      const retries = events.split("\n").filter((l) => /task t\d: sandbox start attempt \d of \d+ failed/.test(l));
      expect(retries, events).toHaveLength(5);
      for (const reason of [
        "engine overloaded (test)",
        "socket hang up",
        "too many requests (test)",
        "service unavailable (test)",
        "conflict (test)",
      ]) {
        expect(
          retries.some((l) => l.includes(reason)),
          `${reason} in\n${retries.join("\n")}`,
        ).toBe(true);
      }
      expect(retries.every((l) => /retrying in \d+ ms, run-wide starts now \d+ ms apart/.test(l))).toBe(true);
      expect(await listLabelledContainers({ run: runName })).toEqual([]);
    } finally {
      await proxy.close();
    }
  }, 300_000);

  it("does not retry a deterministic engine error: the task fails with the engine's message", async () => {
    const proxy = await startFlakyDockerProxy([
      { match: isTaskCreate, faults: [{ status: 400, message: "invalid mount config (test)" }] },
    ]);
    try {
      const { r, runName, trajectories, failed, events } = await run(
        1,
        ["--image", image, "--concurrency", "1", "--workers", "1"],
        { DOCKER_HOST: proxy.dockerHost },
      );
      expect(r.exitCode, r.stderr + r.stdout).toBe(1);
      expect(proxy.given).toEqual([1]);
      expect(trajectories).toEqual([]);
      expect(failed).toHaveLength(1);
      expect(JSON.stringify(failed[0])).toContain("invalid mount config (test)");
      expect(events).not.toMatch(/sandbox start attempt/);
      expect(await listLabelledContainers({ run: runName })).toEqual([]);
    } finally {
      await proxy.close();
    }
  }, 300_000);

  // 32, not 64: the run-wide gate starts at most DEFAULT_STARTS_PER_SECOND (10) sandboxes a second, so the
  // engine sees the same rate of creations either way; 32 live containers is still 16 per core here.
  it("a start storm of 32 tasks at --concurrency 32 fails none", async () => {
    const { r, runName, trajectories, failed } = await run(
      32,
      ["--image", busybox, "--concurrency", "32", "--workers", "2"],
      {},
      900_000,
    );
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(failed).toEqual([]);
    expect(trajectories).toHaveLength(32);
    for (const e of trajectories) expect(toolOutput(e)).toContain(`ran-${e.task_id}`);
    expect(await listLabelledContainers({ run: runName })).toEqual([]);
  }, 1_000_000);
});
