/**
 * process write/submit/close in containers: the FIFO stdin of background processes works in the Debian
 * test image and in a busybox-only image (busybox mkfifo, sleep, mv).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import {
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  removeContainersByLabel,
} from "../tools/environments/docker/docker.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { waitUntil } from "./helpers/local_ctx.js";

const RUN = uniqueRunName("stdintest");
let images: { image: string; busyboxImage: string };

beforeAll(async () => {
  images = await ensureDockerTestImages();
}, 600_000);

afterAll(async () => {
  await cleanupAllDockerEnvironments();
  await removeContainersByLabel({ run: RUN });
});

describe.each(["debian", "busybox"])("background stdin in Docker (%s)", (which) => {
  let env: Environment;
  beforeAll(async () => {
    const image = which === "debian" ? images.image : images.busyboxImage;
    env = await createDockerEnvironment(
      { runName: RUN, taskId: `stdin-${which}`, hostTaskDir: `/tmp/${RUN}/${which}`, taskTimeoutSec: 600 },
      { image },
    );
  }, 120_000);
  afterAll(async () => env?.cleanup());

  it("sends lines to a reading program and closes its stdin", async () => {
    const { id } = await env.startBackground('read -r a; echo "got $a"; cat; echo "eof"');
    await env.writeBackground!(id, "first\n");
    expect(await waitUntil(async () => (await env.pollBackground(id)).output.includes("got first"), 20_000)).toBe(true);
    await env.writeBackground!(id, "second\n");
    await env.closeBackgroundStdin!(id);
    expect(await waitUntil(async () => !(await env.pollBackground(id)).running, 20_000)).toBe(true);
    const done = await env.pollBackground(id);
    expect(done.output).toBe("got first\nsecond\neof\n");
    expect(done.exitCode).toBe(0);
    await expect(env.writeBackground!(id, "late")).rejects.toThrow(/has exited/);
  }, 60_000);
});
