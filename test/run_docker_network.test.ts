/**
 * Network policy through the real CLI: `none` and user-defined networks pass; host, container:… and the default
 * bridge need --allow-network (a row asking for more is a bad row, exit 2 before any model call); a network the
 * engine does not know stops the run up front.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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
import { isPrivilegedNetwork, networkModeFor, networkRefusal } from "../tools/environments/docker/docker_network.js";
import { dockerClient } from "../tools/environments/docker/docker_client.js";

function reply(req: RecordedRequest): Reply {
  const turn = (req.body.messages as { role: string }[]).filter((m) => m.role === "assistant").length;
  return turn === 0
    ? toolCalls([{ name: "terminal", arguments: { command: "cat /proc/net/dev | wc -l" } }])
    : text("done");
}

describe("network policy", () => {
  it("classifies modes: none and named networks are free, host/bridge/container: need allowing", () => {
    expect(networkModeFor(undefined)).toBe("none");
    expect(networkModeFor("off")).toBe("none");
    expect(networkModeFor("on")).toBe("bridge");
    expect(isPrivilegedNetwork("host")).toBe(true);
    expect(isPrivilegedNetwork("container:abc")).toBe(true);
    expect(isPrivilegedNetwork("my-net")).toBe(false);
    expect(networkRefusal("none", [])).toBeUndefined();
    expect(networkRefusal("my-net", [])).toBeUndefined();
    expect(networkRefusal("host", [])).toMatch(/--allow-network host/);
    expect(networkRefusal("true", [])).toMatch(/--allow-network bridge/);
    expect(networkRefusal("on", ["bridge"])).toBeUndefined();
    expect(networkRefusal("container:abc", [])).toMatch(/--allow-network container:abc/);
    expect(networkRefusal("container:abc", ["container:*"])).toBeUndefined();
    expect(networkRefusal("host", ["bridge"])).toMatch(/host/);
  });
});

describe("network policy through the CLI", () => {
  let server: FakeOpenAI;
  let image: string;
  const userNet = `hb-test-net-${process.pid}`;

  beforeAll(async () => {
    ({ image } = await ensureDockerTestImages());
    server = await startFakeOpenAI(reply);
    await dockerClient().createNetwork({ Name: userNet, Internal: true });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    await dockerClient()
      .getNetwork(userNet)
      .remove()
      .catch(() => {});
  });

  function dataset(dir: string, rows: object[]): string {
    const file = join(dir, "rows.jsonl");
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    return file;
  }
  const base = (file: string, dir: string, runName: string) => [
    "run",
    file,
    "--model",
    "m",
    "--base-url",
    server.baseURL,
    "--env",
    "docker",
    "--image",
    image,
    "--run-name",
    runName,
    "--output-dir",
    join(dir, "runs"),
    "--approval",
    "deny",
    "--progress",
    "log",
    "--no-preflight",
  ];

  it("refuses a row with network host (file:line, exit 2, no model call)", async () => {
    const dir = tempDir();
    const file = dataset(dir, [
      { id: "ok", prompt: "a" },
      { id: "h", prompt: "b", network: "host" },
    ]);
    const before = server.requests.length;
    const r = await runCliInProcess(base(file, dir, uniqueRunName("net")), { timeoutMs: 120_000 });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${file}:2: 'network': network host`);
    expect(r.stderr).toContain("--allow-network host");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(server.requests.length).toBe(before);
  });

  it("refuses --network bridge without --allow-network, and an unknown network up front", async () => {
    const dir = tempDir();
    const file = dataset(dir, [{ id: "a", prompt: "a" }]);
    const r1 = await runCliInProcess([...base(file, dir, uniqueRunName("net")), "--network", "bridge"], {
      timeoutMs: 120_000,
    });
    expect(r1.exitCode, r1.stderr).toBe(2);
    expect(r1.stderr).toMatch(/--network: network bridge .*--allow-network bridge/);
    const file2 = dataset(dir, [{ id: "a", prompt: "a", network: "hb-no-such-net-xyz" }]);
    const r2 = await runCliInProcess(base(file2, dir, uniqueRunName("net")), { timeoutMs: 120_000 });
    expect(r2.exitCode, r2.stderr).toBe(2);
    expect(r2.stderr).toContain("network hb-no-such-net-xyz: no such network");
  });

  it("runs a row on a user-defined network, and host once allowed (recorded in run.yaml)", async () => {
    const dir = tempDir();
    const runName = uniqueRunName("net");
    const file = dataset(dir, [
      { id: "u", prompt: "a", network: userNet },
      { id: "h", prompt: "b", network: "host" },
    ]);
    const r = await runCliInProcess([...base(file, dir, runName), "--allow-network", "host"], { timeoutMs: 300_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const lines = readJsonl(join(dir, "runs", runName, "trajectories.jsonl"), { mustExist: true });
    const devLines = (id: string) =>
      Number(
        JSON.parse(
          lines.find((e) => e.task_id === id).messages.find((m: any) => m.role === "tool").content,
        ).output.trim(),
      );
    // The user network gives lo + eth0 (2 header lines + 2); the host's stack has more interfaces than that.
    expect(devLines("u")).toBe(4);
    expect(devLines("h")).toBeGreaterThan(4);
    const yaml = readFileSync(join(dir, "runs", runName, "run.yaml"), "utf8");
    expect(yaml).toMatch(/allow_network:\s*\n\s*- host/);
    expect(existsSync(join(dir, "runs", runName))).toBe(true);
  });
});
