/**
 * Sandbox starts when the engine fails or is stormed, through the real CLI and the fake OpenAI server:
 * - behind a proxy that answers the first container creations and starts with 500/503/429/409 or drops the
 *   connection, every task still completes; each retry is an events.log line; nothing is left behind;
 * - a deterministic engine error (400) is not retried: the task fails with the engine's message (a fifth task of
 *   the same run: the proxy's rules tell tasks apart by their label);
 * - 16 tasks at --concurrency 16 starting at once: none fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LABEL_TASK } from "../tools/environments/docker/docker_client.js";
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
import { runCli, runCliInProcess, tempDir } from "./helpers/cli.js";
import { startFlakyDockerProxy, type FlakyDockerProxy } from "./helpers/flaky_docker_proxy.js";
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

  /** In the test process when `inProcess` (not behind the proxy: the CLI's engine client is one per process). */
  async function run(
    tasks: number,
    extra: string[],
    env: Record<string, string> = {},
    timeoutMs = 240_000,
    inProcess = false,
  ) {
    const dir = tempDir();
    const runName = uniqueRunName("engine");
    runNames.push(runName);
    const rows = Array.from({ length: tasks }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `t${i}` }));
    writeFileSync(join(dir, "d.jsonl"), rows.join("\n") + "\n");
    const r = await (inProcess ? runCliInProcess : runCli)(
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

  /** One run behind the failing proxy: t0-t3 meet transient faults, t4 a deterministic one (rules by task label). */
  describe("behind a proxy failing creations and starts", () => {
    let proxy: FlakyDockerProxy;
    let res: Awaited<ReturnType<typeof run>>;
    /** Creations of the tasks whose id passes `which` (the task's label on the container). */
    const createOf = (which: (task: string) => boolean) => (r: { method: string; path: string; body: unknown }) =>
      isTaskCreate(r) && which((r.body as { Labels: Record<string, string> }).Labels[LABEL_TASK]!);

    beforeAll(async () => {
      proxy = await startFlakyDockerProxy([
        {
          match: createOf((task) => task !== "t4"),
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
        { match: createOf((task) => task === "t4"), faults: [{ status: 400, message: "invalid mount config (test)" }] },
      ]);
      res = await run(5, ["--image", image, "--concurrency", "5", "--workers", "2"], {
        DOCKER_HOST: proxy.dockerHost,
      });
    }, 300_000);
    afterAll(async () => {
      await proxy?.close();
    });

    it("retries creations and starts the engine fails for a moment: every task completes, each retry is an event", async () => {
      const { r, runName, trajectories, failed, events } = res;
      // Exit 1 for t4 alone (the next test).
      expect(r.exitCode, r.stderr + r.stdout).toBe(1);
      expect(proxy.given).toEqual([3, 2, 1]);
      expect(failed.map((f) => f.task_id)).toEqual(["t4"]);
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
    });

    it("does not retry a deterministic engine error: the task fails with the engine's message", async () => {
      const { trajectories, failed, events, runName } = res;
      expect(proxy.given[2]).toBe(1);
      expect(trajectories.map((e) => e.task_id)).not.toContain("t4");
      expect(failed).toHaveLength(1);
      expect(failed[0].task_id).toBe("t4");
      expect(JSON.stringify(failed[0])).toContain("invalid mount config (test)");
      expect(events).not.toMatch(/task t4: sandbox start attempt/);
      expect(await listLabelledContainers({ run: runName })).toEqual([]);
    });
  });

  // 16 tasks: the run-wide gate lets a start through every 100 ms (DEFAULT_STARTS_PER_SECOND) however many tasks
  // wait, and a create + start takes the engine well over 100 ms here, so creations overlap (and overlap the first
  // tasks' removals) from the first second on; 16 tasks keep the gate saturated for 1.6 s, longer than one start,
  // so the engine meets the same overlap as with 32 or 64: more tasks make the storm last longer, not denser.
  it("a start storm of 16 tasks at --concurrency 16 fails none", async () => {
    const { r, runName, trajectories, failed } = await run(
      16,
      ["--image", busybox, "--concurrency", "16", "--workers", "2"],
      {},
      900_000,
      true,
    );
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(failed).toEqual([]);
    expect(trajectories).toHaveLength(16);
    for (const e of trajectories) expect(toolOutput(e)).toContain(`ran-${e.task_id}`);
    expect(await listLabelledContainers({ run: runName })).toEqual([]);
  }, 1_000_000);
});
