/**
 * A command run as one exec (no persistent shell) is stopped by its timeout or an abort even when its pid line
 * reaches the harness late, as it does from a loaded engine: the stop waited a fixed 500 ms for the line, then
 * killed nothing, and the command ran to its end. Here the container's `sh` starts a second late (a root agent can
 * replace it; a loaded machine delays it), so the pid line comes after the timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import {
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  removeContainersByLabel,
} from "../tools/environments/docker/docker.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";

const RUN = uniqueRunName("latepid");
let env: Environment;

beforeAll(async () => {
  const { image } = await ensureDockerTestImages();
  env = await createDockerEnvironment(
    { runName: RUN, taskId: "late", hostTaskDir: `/tmp/${RUN}/late`, taskTimeoutSec: 600 },
    { image, persistentShell: false, user: "root" },
  );
  const slow = await env.exec(
    "cp /bin/sh /bin/sh.real && printf '#!/bin/sh.real\\nsleep 1.5\\nexec /bin/sh.real \"$@\"\\n' > /bin/sh.slow && " +
      "chmod 755 /bin/sh.slow && mv /bin/sh.slow /bin/sh && echo ok",
  );
  expect(slow.stdout, slow.stderr).toBe("ok\n");
}, 600_000);

afterAll(async () => {
  await cleanupAllDockerEnvironments();
  await removeContainersByLabel({ run: RUN });
});

describe("a plain exec whose pid line comes late", () => {
  it("is still ended by its timeout, with everything it started", async () => {
    const started = Date.now();
    const r = await env.exec("sleep 40", { timeoutMs: 500 });
    expect(r.timedOut).toBe(true);
    // Before the fix the command ran its 40 s.
    expect(Date.now() - started).toBeLessThan(20_000);
    const ps = await env.exec("ps -eo args");
    expect(ps.stdout).not.toMatch(/sleep 40/);
  }, 60_000);

  it("is still ended by an abort (exit 130)", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const started = Date.now();
    const r = await env.exec("sleep 41", { signal: ac.signal });
    expect(r.exitCode).toBe(130);
    expect(Date.now() - started).toBeLessThan(20_000);
    const ps = await env.exec("ps -eo args");
    expect(ps.stdout).not.toMatch(/sleep 41/);
  }, 60_000);
});
