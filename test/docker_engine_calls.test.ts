/**
 * The engine API calls a Docker sandbox's lifecycle makes (issue 27: each costs the engine CPU, paid again by every
 * task of a start storm), counted by a proxy in front of the engine, and the behaviours the calls left out must keep:
 * a workdir the image lacks is made. Each scenario runs in a process of its own (its first sandbox pays
 * what a process pays once), against the proxy, with a cache folder of this file's.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeContainersByLabel } from "../tools/environments/docker/docker.js";
import { startFlakyDockerProxy, type FlakyDockerProxy } from "./helpers/flaky_docker_proxy.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RUN = uniqueRunName("enginecalls");
let image = "";
let busybox = "";
let proxy: FlakyDockerProxy;
let cacheDir = "";
/** Every request the proxy relayed (exec streams aside): method and path without the API version. */
const seen: { method: string; path: string; body: unknown }[] = [];

beforeAll(async () => {
  ({ image, busyboxImage: busybox } = await ensureDockerTestImages());
  cacheDir = await mkdtemp(join(tmpdir(), "hb-engine-calls-"));
  // A rule that never matches sees every request and fails none.
  proxy = await startFlakyDockerProxy([
    {
      match: (req) => {
        seen.push(req);
        return false;
      },
      faults: [{ status: 500, message: "never" }],
    },
  ]);
}, 600_000);

afterAll(async () => {
  await proxy?.close();
  await removeContainersByLabel({ run: RUN });
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

/**
 * Runs sandboxes in a new process through the proxy: for each, create, the commands, cleanup, one after another.
 * Returns each sandbox's command output and the requests the process made.
 */
async function inChild(
  sandboxes: { image: string; cwd?: string; commands: string[] }[],
): Promise<{ outputs: string[][]; requests: { method: string; path: string; body: unknown }[] }> {
  const script = `
    import { createDockerEnvironment } from "./tools/environments/docker/docker.ts";
    const plan = JSON.parse(process.argv[1]);
    const outputs = [];
    for (const [i, s] of plan.entries()) {
      const env = await createDockerEnvironment(
        { runName: ${JSON.stringify(RUN)}, taskId: "t" + i, hostTaskDir: "/tmp/x", taskTimeoutSec: 600, ...(s.cwd ? { cwd: s.cwd } : {}) },
        { image: s.image },
      );
      const out = [];
      for (const c of s.commands) {
        const r = await env.exec(c);
        out.push(r.stdout + r.stderr + (r.exitCode === 0 ? "" : "exit " + r.exitCode));
      }
      await env.cleanup();
      outputs.push(out);
    }
    console.log("OUT " + JSON.stringify(outputs));
  `;
  const from = seen.length;
  const r = await execa("node", ["--import", "tsx", "--input-type=module", "-e", script, JSON.stringify(sandboxes)], {
    cwd: ROOT,
    env: { DOCKER_HOST: proxy.dockerHost, XDG_CACHE_HOME: cacheDir },
  });
  const line = r.stdout.split("\n").find((l) => l.startsWith("OUT "));
  if (!line) throw new Error(`no output from the child: ${r.stdout}\n${r.stderr}`);
  return { outputs: JSON.parse(line.slice(4)) as string[][], requests: seen.slice(from) };
}

const count = (requests: { method: string; path: string }[], method: string, path: RegExp) =>
  requests.filter((r) => r.method === method && path.test(r.path)).length;
const EXEC_CREATE = /^\/containers\/[^/]+\/exec$/;
const CREATE = /^\/containers\/create$/;
const ARCHIVE = /^\/containers\/[^/]+\/archive$/;

describe("engine calls of a sandbox's lifecycle", () => {
  it("cleanup ends the persistent shell without an exec of its own: removing the container ends it", async () => {
    const { outputs, requests } = await inChild([{ image, commands: ["echo x"] }]);
    expect(outputs).toEqual([["x\n"]]);
    // The persistent shell's exec, and none to kill it at cleanup.
    expect(count(requests, "POST", EXEC_CREATE)).toBe(1);
  });

  it("the image's users are read once: a later process takes them from the cache, with no probe container", async () => {
    // The file this file's cache folder holds after a first process (the test above, or this one) read the image.
    await inChild([{ image, commands: ["true"] }]);
    const { outputs, requests } = await inChild([{ image, commands: ["id -u"] }]);
    // The image's first regular user, as the probe found it.
    expect(outputs).toEqual([["1000\n"]]);
    expect(requests.filter((r) => r.method === "POST" && CREATE.test(r.path))).toHaveLength(1);
    expect(count(requests, "GET", ARCHIVE)).toBe(0);
    expect(JSON.stringify(requests)).not.toContain('"probe"');
  });

  it("starting a sandbox makes no archive call: the engine makes the workdir when it creates the container", async () => {
    const { outputs, requests } = await inChild([
      { image, commands: ["pwd; stat -c %u ."] },
      { image: busybox, cwd: "/srv/bb", commands: ["pwd; echo ok > f && cat f"] },
    ]);
    expect(outputs).toEqual([["/work\n1000\n"], ["/srv/bb\nok\n"]]);
    expect(count(requests, "HEAD", ARCHIVE)).toBe(0);
    expect(count(requests, "PUT", ARCHIVE)).toBe(0);
    expect(count(requests, "POST", /^\/containers\/[^/]+\/start$/)).toBe(2);
  });
});

describe("a workdir the image lacks", () => {
  // The engine makes it when it creates the container, as root. (With an image's regular user it is root's too,
  // as it always was: not changed here.) Busybox runs commands as root, who can write in it.
  it("is made in busybox (root, no bash), in every sandbox of a process", async () => {
    const check = ["stat -c '%u' /srv/bb; pwd; echo ok > f && cat f && id -u"];
    const { outputs } = await inChild([
      { image: busybox, cwd: "/srv/bb", commands: check },
      { image: busybox, cwd: "/srv/bb", commands: check },
    ]);
    expect(outputs).toEqual([["0\n/srv/bb\nok\n0\n"], ["0\n/srv/bb\nok\n0\n"]]);
  });
});
