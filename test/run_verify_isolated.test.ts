/**
 * --verify-isolated with real Docker: the verify runs in a fresh container made from a snapshot of the
 * task's container. The agent's files are there; its processes are not; the snapshot image and the copy
 * are gone afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { listLabelledContainers } from "../tools/environments/docker/docker.js";
import { startFakeOpenAI, text, toolCalls, type FakeOpenAI } from "./helpers/fake_openai.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

describe("--verify-isolated", () => {
  let server: FakeOpenAI;
  let image: string;

  beforeAll(async () => {
    ({ image } = await ensureDockerTestImages());
    server = await startFakeOpenAI((req) => {
      const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
      // The agent writes its answer, then leaves a process that would keep forging the check.
      if (turn === 0) return toolCalls([{ name: "terminal", arguments: { command: "echo 42 > answer.txt" } }]);
      // Started from a plain command, so no process table of ours knows it: only a fresh sandbox is rid of it.
      if (turn === 1)
        return toolCalls([
          {
            name: "terminal",
            arguments: {
              command: "sh -c 'trap \"\" HUP; while :; do sleep 0.05; done # forger-marker' >/dev/null 2>&1&",
            },
          },
        ]);
      return text("done");
    });
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  it("verifies in a snapshot copy without the agent's processes (or in place after ending them), then removes the copy and its image", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "checks"));
    // Fails if any process of the agent is alive in the verify's sandbox, or if the agent's answer is missing.
    writeFileSync(
      join(dir, "checks", "check.sh"),
      "for f in /proc/[0-9]*/cmdline; do if tr '\\\\0' ' ' < \"$f\" 2>/dev/null | grep -q forger-marker; then echo 'agent process alive'; exit 1; fi; done\ngrep -qx 42 answer.txt\n",
    );
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      JSON.stringify({
        id: "iso",
        prompt: "answer 42",
        verify: "sh check.sh",
        verify_files: "checks",
        toolsets: ["terminal"],
      }) + "\n",
    );
    const run = uniqueRunName("iso");
    const imagesBefore = (await execa("docker", ["images", "-q", "hermes-batch-verify"])).stdout.trim();
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "agent",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--approval",
      "allow",
      "--env",
      "docker",
      "--image",
      image,
      "--verify-isolated",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      run,
      "--progress",
      "none",
    ]);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.exitCode).toBe(0);
    const [line] = readJsonl(join(dir, "runs", run, "trajectories.jsonl"));
    expect(line.verify).toMatchObject({ exit_code: 0, passed: true });
    expect(line.score.passed).toBe(true);
    expect(await listLabelledContainers({ run })).toEqual([]);
    expect((await execa("docker", ["images", "-q", "hermes-batch-verify"])).stdout.trim()).toBe(imagesBefore);

    // Verified in its own sandbox, the untracked process is gone too: every process of the (unprivileged) run
    // user is ended before verify.
    const plain = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "agent",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--approval",
      "allow",
      "--env",
      "docker",
      "--image",
      image,
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      `${run}-plain`,
      "--progress",
      "none",
    ]);
    expect(plain.exitCode).toBe(0);
    const [plainLine] = readJsonl(join(dir, "runs", `${run}-plain`, "trajectories.jsonl"));
    expect(plainLine.verify).toMatchObject({ exit_code: 0, passed: true });
  });

  it("is refused up front for an environment that cannot snapshot", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(dataset, JSON.stringify({ prompt: "p", verify: "true" }) + "\n");
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      "--env",
      "local",
      "--verify-isolated",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      "--verify-isolated needs an environment that can snapshot a sandbox (docker); --env local cannot",
    );
  });
});
