/**
 * The Docker warm pool (`--prewarm`) against the real engine: warm sandboxes are started before a task asks,
 * handed out fast, removed with their task, never given to a task with another image, and removed at the
 * end of a CLI run.
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
  dockerLimits,
  drainWarmPool,
  listLabelledContainers,
  preflightDocker,
  removeContainersByLabel,
  warmPoolStats,
} from "../tools/environments/docker.js";
import { LABEL_ROLE, dockerClient } from "../tools/environments/docker_client.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
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

async function waitFor(cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 50));
  }
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
  let coldMs = 0;

  it("a cold start (no prewarm) costs a container start", async () => {
    // The first creation also inspects the image for its user: measure the second.
    await (await createDockerEnvironment(spec("cold0"), { image, maxSandboxes: 64 })).cleanup();
    const t0 = performance.now();
    const env = (await createDockerEnvironment(spec("cold"), { image, maxSandboxes: 64 })) as DockerEnvironment;
    coldMs = performance.now() - t0;
    expect((await inspect(env)).Config.Labels[LABEL_ROLE]).toBe("task");
    await env.cleanup();
    console.log(`cold environment creation: ${coldMs.toFixed(0)} ms`);
  });

  it("hands a task a container started before it asked, much faster than a cold start", async () => {
    await preflightDocker(spec("w1"), options());
    await waitFor(() => warmPoolStats()?.ready === 2);
    const warmIds = (await listLabelledContainers({ run: RUN, role: "warm" })).map((c) => c.id);
    expect(warmIds).toHaveLength(2);

    const requestedAt = Date.now();
    const t0 = performance.now();
    const env = (await createDockerEnvironment(spec("w1"), options())) as DockerEnvironment;
    const warmMs = performance.now() - t0;
    console.log(`environment creation from a filled pool: ${warmMs.toFixed(0)} ms (cold ${coldMs.toFixed(0)} ms)`);

    expect(warmIds).toContain(env.containerId);
    const info = await inspect(env);
    expect(Date.parse(info.State.StartedAt)).toBeLessThan(requestedAt);
    expect(info.Config.Labels[LABEL_ROLE]).toBe("warm");
    // Dead-man's switch: the time a warm sandbox may wait in the pool, plus the task timeout, plus the margin.
    expect(info.Config.Cmd).toEqual([String(WARM_MAX_IDLE_SEC + TIMEOUT_SEC + 120)]);
    expect(warmMs).toBeLessThan(200);
    expect(warmMs).toBeLessThan(coldMs);

    // It works as a sandbox (the run's user, its workdir) and the pool refills behind it.
    const r = await env.exec("id -un; pwd");
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^agent\n/);
    await waitFor(() => warmPoolStats()?.ready === 2);
    expect(warmPoolStats()?.taken).toBe(1);

    // Per-task cleanup removes the taken warm container even though its labels still say "warm".
    await env.cleanup();
    expect(await exists(env.containerId)).toBe(false);
  });

  it("does not give a warm container to a task with another image or workdir", async () => {
    await waitFor(() => warmPoolStats()?.ready === 2);
    const before = warmPoolStats()!.taken;
    const other = (await createDockerEnvironment(spec("other-image", { image: busybox }), options())) as DockerEnvironment;
    const otherCwd = (await createDockerEnvironment(spec("other-cwd", { cwd: "/srv/x" }), options())) as DockerEnvironment;
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
    const opts = options({ prewarm: 1, maxSandboxes: 1 });
    await preflightDocker(spec("limited"), opts);
    await waitFor(() => warmPoolStats()?.ready === 1);
    expect(dockerLimits().live).toBe(1);
    const env = (await createDockerEnvironment(spec("limited", { image: busybox }), opts)) as DockerEnvironment;
    expect((await inspect(env)).Config.Labels[LABEL_ROLE]).toBe("task");
    await env.cleanup();
    // The slot is back: the pool warms up again.
    await waitFor(() => warmPoolStats()?.ready === 1);
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
        "run", "datasets/smoke.jsonl", "--model", "scripted", "--max-samples", "2", "--env", "docker", "--prewarm", "2",
        "--image", image, "--run-name", runName, "--output-dir", join(dir, "runs"), "--workers", "1", "--approval", "deny",
        "--progress", "none",
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
    const lines = readFileSync(join(dir, "runs", runName, "trajectories.jsonl"), "utf8").trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(await listLabelledContainers({ run: runName })).toEqual([]);
  }, 200_000);
});
