/**
 * The Docker warm pool (`--prewarm`) against the real engine: warm sandboxes are started before a task asks
 * and handed to it, removed with their task, never given to a task with another image, give their permit up
 * to a task that cannot use them, and are removed at the end of a CLI run. (How much faster a warm hand-over
 * is than a cold start is measured by scripts/bench/docker-exec.ts, not asserted here.)
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvironmentOptions } from "../tools/environments/base.js";
import {
  DockerEnvironment,
  WARM_MAX_IDLE_SEC,
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  drainWarmPool,
  listLabelledContainers,
  preflightDocker,
  removeContainersByLabel,
  warmPoolStats,
} from "../tools/environments/docker/docker.js";
import { LABEL_ROLE, dockerClient } from "../tools/environments/docker/docker_client.js";
import { SandboxGates } from "../tools/environments/sandbox_gates.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { waitUntil } from "./helpers/wait.js";
import { runCli, tempDir } from "./helpers/cli.js";

const RUN = uniqueRunName("prewarm");
const TIMEOUT_SEC = 300;
let image = "";
let busybox = "";

function spec(taskId: string, extra: Record<string, unknown> = {}) {
  return { runName: RUN, taskId, hostTaskDir: `/tmp/${RUN}/${taskId}`, taskTimeoutSec: TIMEOUT_SEC, ...extra };
}

function options(extra: EnvironmentOptions = {}): EnvironmentOptions {
  return { image, prewarm: 2, maxSandboxes: 64, ...extra };
}

async function inspect(env: DockerEnvironment) {
  return dockerClient().getContainer(env.containerId).inspect();
}

async function exists(id: string): Promise<boolean> {
  return dockerClient()
    .getContainer(id)
    .inspect()
    .then(
      () => true,
      () => false,
    );
}

beforeAll(async () => {
  ({ image, busyboxImage: busybox } = await ensureDockerTestImages());
}, 600_000);

afterAll(async () => {
  await cleanupAllDockerEnvironments();
  await removeContainersByLabel({ run: RUN });
});

describe("warm pool", () => {
  it("a task without prewarm gets a container of its own", async () => {
    const env = (await createDockerEnvironment(spec("cold"), { image, maxSandboxes: 64 })) as DockerEnvironment;
    expect((await inspect(env)).Config.Labels[LABEL_ROLE]).toBe("task");
    await env.cleanup();
  });

  it("hands a task a container that existed before it asked, and refills behind it", async () => {
    await preflightDocker(spec("w1"), options());
    expect(await waitUntil(() => warmPoolStats()?.ready === 2, 20_000), "2 warm sandbox(es) ready").toBe(true);
    const warmIds = (await listLabelledContainers({ run: RUN, role: "warm" })).map((c) => c.id);
    expect(warmIds).toHaveLength(2);

    const env = (await createDockerEnvironment(spec("w1"), options())) as DockerEnvironment;
    // One of the containers listed before the task asked: started ahead, not for this task.
    expect(warmIds).toContain(env.containerId);
    const info = await inspect(env);
    expect(info.Config.Labels[LABEL_ROLE]).toBe("warm");
    // Dead-man's switch: the time a warm sandbox may wait in the pool, plus the task timeout, plus the margin.
    expect(info.Config.Cmd).toEqual([String(WARM_MAX_IDLE_SEC + TIMEOUT_SEC + 120)]);

    // It works as a sandbox (the run's user, its workdir) and the pool refills behind it with a new container.
    const r = await env.exec("id -un; pwd");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^agent\n/);
    expect(await waitUntil(() => warmPoolStats()?.ready === 2, 20_000), "2 warm sandbox(es) ready").toBe(true);
    expect(warmPoolStats()?.taken).toBe(1);
    const refilled = (await listLabelledContainers({ run: RUN, role: "warm" }))
      .map((c) => c.id)
      .filter((id) => !warmIds.includes(id));
    expect(refilled).toHaveLength(1);

    // Per-task cleanup removes the taken warm container even though its labels still say "warm".
    await env.cleanup();
    expect(await exists(env.containerId)).toBe(false);
  });

  it("does not give a warm container to a task with another image or workdir", async () => {
    expect(await waitUntil(() => warmPoolStats()?.ready === 2, 20_000), "2 warm sandbox(es) ready").toBe(true);
    const before = warmPoolStats()!.taken;
    const other = (await createDockerEnvironment(
      spec("other-image", { image: busybox }),
      options(),
    )) as DockerEnvironment;
    const otherCwd = (await createDockerEnvironment(
      spec("other-cwd", { cwd: "/srv/x" }),
      options(),
    )) as DockerEnvironment;
    try {
      for (const env of [other, otherCwd]) {
        const info = await inspect(env);
        expect(info.Config.Labels[LABEL_ROLE]).toBe("task");
      }
      expect((await inspect(other)).Config.Image).toBe(busybox);
      expect(warmPoolStats()).toMatchObject({ ready: 2, taken: before });
    } finally {
      await other.cleanup();
      await otherCwd.cleanup();
    }
  });

  it("a full pool gives up a slot to a task that cannot use it (no deadlock under --max-sandboxes)", async () => {
    await drainWarmPool();
    const gates = SandboxGates.create({ maxSandboxes: 1, prewarm: 1 });
    const opts = options({ gates });
    await preflightDocker(spec("limited"), opts);
    expect(await waitUntil(() => warmPoolStats()?.ready === 1, 20_000), "1 warm sandbox(es) ready").toBe(true);
    expect(gates.live).toBe(1);
    const warmId = (await listLabelledContainers({ run: RUN, role: "warm" }))[0]!.id;
    const env = (await createDockerEnvironment(spec("limited", { image: busybox }), opts)) as DockerEnvironment;
    expect((await inspect(env)).Config.Labels[LABEL_ROLE]).toBe("task");
    expect(warmPoolStats()?.evicted).toBe(1);
    expect(await exists(warmId)).toBe(false);
    expect(gates.peak).toBe(1);
    await env.cleanup();
    // The slot is back: the pool warms up again.
    expect(await waitUntil(() => warmPoolStats()?.ready === 1, 20_000), "1 warm sandbox(es) ready").toBe(true);
  }, 60_000);

  it("gc by run and role finds and removes unused warm containers", async () => {
    const found = await listLabelledContainers({ run: RUN, role: "warm" });
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((c) => c.role === "warm" && c.run === RUN)).toBe(true);
    const { removed, failed } = await removeContainersByLabel({ run: RUN, role: "warm" });
    expect(failed).toEqual([]);
    expect(removed.map((c) => c.id).sort()).toEqual(found.map((c) => c.id).sort());
    expect(await listLabelledContainers({ run: RUN, role: "warm" })).toEqual([]);
    await drainWarmPool();
  });
});

describe("hermes-batch run --prewarm", () => {
  it("starts warm containers during the run and leaves none behind", async () => {
    const dir = tempDir();
    const runName = uniqueRunName("prewarm-cli");
    const child = runCli(
      [
        "run",
        "datasets/smoke.jsonl",
        "--model",
        "scripted",
        "--max-samples",
        "2",
        "--env",
        "docker",
        "--prewarm",
        "2",
        "--image",
        image,
        "--run-name",
        runName,
        "--output-dir",
        join(dir, "runs"),
        "--workers",
        "1",
        "--approval",
        "deny",
        "--progress",
        "none",
      ],
      { timeoutMs: 180_000 },
    );
    // Watch the engine while the run is going: warm containers of this run must show up.
    let sawWarm = 0;
    let running = true;
    const watch = (async () => {
      while (running) {
        sawWarm = Math.max(sawWarm, (await listLabelledContainers({ run: runName, role: "warm" })).length);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const r = await child;
    running = false;
    await watch;
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    expect(sawWarm).toBeGreaterThan(0);
    const lines = readFileSync(join(dir, "runs", runName, "trajectories.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(lines).toHaveLength(2);
    expect(await listLabelledContainers({ run: runName })).toEqual([]);
  }, 200_000);
});
