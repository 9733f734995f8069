/**
 * Conformance of task.toml handling with Harbor's own TaskConfig (`src/harbor/models/task/config.py`) and its
 * per-phase network resolution (`src/harbor/trial/network_policy.py`), laude-institute/harbor at
 * 2922220bf78bf22e2ff3b30147cbbe15ad02c7c9: each field a real task may carry is honoured or refused, never
 * silently dropped when it changes the score. The network phases run end to end in real containers.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readHarborTask } from "../src/harbor/task_dir.js";
import { dockerClient } from "../tools/environments/docker/docker_client.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { readJsonl } from "./helpers/jsonl.js";

/** A task folder: the local test image, the given task.toml tables after [environment]'s first lines. */
function task(root: string, name: string, toml: string, testSh = "echo 1 > /logs/verifier/reward.txt", solve = "true") {
  const dir = join(root, name);
  mkdirSync(join(dir, "tests"), { recursive: true });
  mkdirSync(join(dir, "solution"), { recursive: true });
  writeFileSync(join(dir, "task.toml"), toml);
  writeFileSync(join(dir, "instruction.md"), `Do ${name}.\n`);
  writeFileSync(join(dir, "tests", "test.sh"), `#!/bin/bash\n${testSh}\n`, { mode: 0o755 });
  writeFileSync(join(dir, "solution", "solve.sh"), `#!/bin/bash\n${solve}\n`, { mode: 0o755 });
  return dir;
}

const IMAGE = 'docker_image = "hermes-batch-test:bookworm"';

function read(toml: string) {
  const r = readHarborTask(task(tempDir("hb-conf-toml-"), "t", toml));
  return r.ok ? { row: r.row } : { reason: r.bad.reason };
}

describe("task.toml fields as Harbor's TaskConfig reads them", () => {
  it("[agent].user and [verifier].user may be a UID (str | int upstream)", () => {
    const r = read(
      `[agent]\nuser = 1000\n[verifier]\nuser = 0\n[environment]\n${IMAGE}\nnetwork_mode = "no-network"\n`,
    );
    expect(r.reason).toBeUndefined();
    expect(r.row!.harbor).toMatchObject({ agent: { user: "1000" }, verifier: { user: "0" } });
  });

  it("[environment].os is case-insensitive (normalize_os)", () => {
    const r = read(`[environment]\n${IMAGE}\nos = "Linux"\nnetwork_mode = "no-network"\n`);
    expect(r.reason).toBeUndefined();
  });

  it("a [verifier.environment] table without environment_mode means a separate verifier: refused, not run shared", () => {
    const r = read(
      `[verifier.environment]\ndocker_image = "other:image"\n[environment]\n${IMAGE}\nnetwork_mode = "no-network"\n`,
    );
    expect(r.reason).toMatch(/separate verifier environment/);
  });

  it("the 1.0 form's sizes: a unitless memory is refused as upstream refuses it, a conflict with memory_mb too", () => {
    expect(read(`[environment]\n${IMAGE}\nmemory = "2048"\nallow_internet = false\n`).reason).toMatch(
      /environment\.memory/,
    );
    expect(read(`[environment]\n${IMAGE}\nmemory = "2G"\nmemory_mb = 1024\nallow_internet = false\n`).reason).toMatch(
      /memory.*memory_mb/,
    );
    const ok = read(
      `[environment]\n${IMAGE}\nmemory = "2G"\nmemory_mb = 2048\nstorage = "512M"\nallow_internet = false\n`,
    );
    expect(ok.row?.harbor).toMatchObject({ memory_mb: 2048, storage_mb: 512, network: "none" });
  });

  it("allowed_hosts outside network_mode = 'allowlist' is invalid upstream: refused, not ignored", () => {
    expect(read(`[environment]\n${IMAGE}\nnetwork_mode = "public"\nallowed_hosts = ["pypi.org"]\n`).reason).toMatch(
      /allowed_hosts/,
    );
  });

  it("[agent]/[verifier] network_mode override the [environment] baseline per phase", () => {
    const a = read(`[agent]\nnetwork_mode = "no-network"\n[environment]\n${IMAGE}\n`);
    // A phase field only where it differs from the baseline (rows written before it stay valid).
    expect(a.row?.harbor).toMatchObject({ network: "public", agent_network: "none" });
    expect(a.row?.harbor.verifier_network).toBeUndefined();
    const v = read(`[verifier]\nnetwork_mode = "public"\n[environment]\n${IMAGE}\nnetwork_mode = "no-network"\n`);
    expect(v.row?.harbor).toMatchObject({ network: "none", verifier_network: "public" });
    expect(v.row?.harbor.agent_network).toBeUndefined();
    // allow_internet = false is the baseline; an explicit phase mode still wins for its phase.
    const legacy = read(`[verifier]\nnetwork_mode = "public"\n[environment]\n${IMAGE}\nallow_internet = false\n`);
    expect(legacy.row?.harbor).toMatchObject({ network: "none", verifier_network: "public" });
    expect(read(`[agent]\nnetwork_mode = "sometimes"\n[environment]\n${IMAGE}\n`).reason).toMatch(/network_mode/);
  });
});

describe("per-phase network_mode in real containers", () => {
  beforeAll(async () => {
    await ensureDockerTestImages();
  }, 600_000);

  it("the agent phase and the verifier phase each get the network their table asks for", async () => {
    const root = tempDir("hb-conf-net-");
    const online = "ls /sys/class/net | grep -vqx lo";
    // [agent] no-network over a public baseline: solve.sh must be offline, test.sh online.
    task(
      root,
      "agent-offline",
      `schema_version = "1.4"\n[agent]\nnetwork_mode = "no-network"\n[verifier]\ntimeout_sec = 10.0\n[environment]\n${IMAGE}\n`,
      `if ${online}; then echo 1; else echo 0; fi > /logs/verifier/reward.txt`,
      `${online} && exit 1; true`,
    );
    // [verifier] public over a no-network baseline: solve.sh offline, test.sh online (it would download its tools).
    task(
      root,
      "verifier-online",
      `schema_version = "1.4"\n[verifier]\ntimeout_sec = 10.0\nnetwork_mode = "public"\n[environment]\n${IMAGE}\nnetwork_mode = "no-network"\n`,
      `if ${online}; then echo 1; else echo 0; fi > /logs/verifier/reward.txt`,
      `${online} && exit 1; true`,
    );
    // [verifier] no-network over a public baseline: solve.sh online, test.sh offline.
    task(
      root,
      "verifier-offline",
      `schema_version = "1.4"\n[verifier]\ntimeout_sec = 10.0\nnetwork_mode = "no-network"\n[environment]\n${IMAGE}\n`,
      `if ${online}; then echo 0; else echo 1; fi > /logs/verifier/reward.txt`,
      `${online} || exit 1; true`,
    );
    const run = uniqueRunName("hb-conf-net");
    const net = await dockerClient().createNetwork({ Name: run, Internal: true });
    let r: Awaited<ReturnType<typeof runCliInProcess>>;
    try {
      r = await runCliInProcess(
        [
          "run",
          "--harbor",
          root,
          "--env",
          "docker",
          "--model",
          "oracle",
          "--network",
          run,
          "--output-dir",
          join(root, "runs"),
          "--run-name",
          run,
          "--progress",
          "none",
        ],
        { timeoutMs: 240_000 },
      );
    } finally {
      await net.remove().catch(() => undefined);
    }
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const entries = Object.fromEntries(
      readJsonl(join(root, "runs", run, "trajectories.jsonl")).map((e: any) => [e.task_id, e]),
    );
    for (const id of ["agent-offline", "verifier-online", "verifier-offline"]) {
      expect(entries[id].final_response, id).toBe("oracle: solution/solve.sh exited 0");
      expect(entries[id].score.passed, `${id}: ${JSON.stringify(entries[id].score)}`).toBe(true);
    }
  }, 300_000);
});
