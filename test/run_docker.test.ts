/**
 * The bundled dataset with --env docker against the local test LLM server: real HTTP, real containers.
 * The server plays the scripted demo's plan over the wire, so every tool runs inside the container.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { planToolCalls } from "../src/models/scripted.js";
import { listLabelledContainers } from "../tools/environments/docker/docker.js";
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

function planOverHttp(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: string }[];
  const prompt = messages.find((m) => m.role === "user")!.content;
  const tools = new Set<string>((req.body.tools ?? []).map((t: any) => t.function.name));
  const plan = planToolCalls(prompt, tools);
  const turn = messages.filter((m) => m.role === "assistant").length;
  if (turn === 0)
    return toolCalls([{ name: "terminal", arguments: { command: "id -un; cat /etc/debian_version; pwd" } }]);
  if (turn - 1 < plan.length) return toolCalls(plan[turn - 1]!.map((c) => ({ name: c.name, arguments: c.args })));
  const outputs = messages.filter((m) => m.role === "tool").map((m) => m.content);
  return text(`done: ${outputs.join(" | ").slice(0, 500)}`);
}

describe("batch run with --env docker", () => {
  let server: FakeOpenAI;
  let image: string;

  beforeAll(async () => {
    ({ image } = await ensureDockerTestImages());
    server = await startFakeOpenAI(planOverHttp);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  it("runs the bundled dataset end to end in containers and leaves none behind", async () => {
    const dir = tempDir();
    const runName = uniqueRunName("e2e");
    const r = await runCliInProcess(
      [
        "run",
        "datasets/smoke.jsonl",
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
        "--concurrency",
        "4",
        "--workers",
        "2",
        "--approval",
        "deny",
        "--progress",
        "log",
      ],
      { timeoutMs: 300_000 },
    );
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const entries = readJsonl(join(dir, "runs", runName, "trajectories.jsonl"));
    expect(entries).toHaveLength(8);
    for (const e of entries) {
      expect(e.completed, e.task_id).toBe(true);
      expect(e.metadata.env).toBe("docker");
      const first = JSON.parse(e.messages.find((m: any) => m.role === "tool").content);
      // Inside the Debian test image as its unprivileged user, not on this host.
      expect(first.output, e.task_id).toMatch(/^agent\n12\.\d+\n/);
    }
    const verified = entries.filter((e) => e.verify);
    expect(verified).toHaveLength(3);
    for (const e of verified) expect(e.verify.passed, `${e.task_id}: ${e.verify.output}`).toBe(true);
    expect(await listLabelledContainers({ run: runName })).toEqual([]);
  });

  it("stops before the run with one clear line (exit 2) when --image is missing, before any model call", async () => {
    const dir = tempDir();
    const runName = uniqueRunName("noimg");
    const before = server.requests.length;
    const r = await runCliInProcess(
      [
        "run",
        "datasets/smoke.jsonl",
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--env",
        "docker",
        "--image",
        "hermes-batch-test:does-not-exist",
        "--run-name",
        runName,
        "--output-dir",
        join(dir, "runs"),
        "--max-samples",
        "2",
        "--toolsets",
        "terminal",
        "--progress",
        "none",
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(
      /--image: image hermes-batch-test:does-not-exist not found locally; build it .* or pass --pull/,
    );
    expect(r.stderr).not.toMatch(/\bat .*\.js:\d+/);
    expect(existsSync(join(dir, "runs", runName, "trajectories.jsonl"))).toBe(false);
    expect(server.requests.length).toBe(before);
  });

  it("fails a task fast with a clear error when its row's image is missing, before any model call", async () => {
    const dir = tempDir();
    const runName = uniqueRunName("noimg-row");
    const rows = [
      { id: "a", prompt: "run id", image: "hermes-batch-test:does-not-exist" },
      { id: "b", prompt: "run id too", image: "hermes-batch-test:does-not-exist" },
    ];
    writeFileSync(join(dir, "d.jsonl"), rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
    const before = server.requests.length;
    const r = await runCliInProcess(
      [
        "run",
        join(dir, "d.jsonl"),
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--env",
        "docker",
        "--run-name",
        runName,
        "--output-dir",
        join(dir, "runs"),
        "--toolsets",
        "terminal",
        "--progress",
        "none",
      ],
      { timeoutMs: 120_000 },
    );
    expect(r.exitCode).toBe(1);
    const failed = readJsonl(join(dir, "runs", runName, "failed.jsonl"));
    expect(failed).toHaveLength(2);
    expect(failed[0].outcome).toBe("environment_error");
    expect(failed[0].error).toMatch(/hermes-batch-test:does-not-exist/);
    expect(server.requests.length).toBe(before);
  });
});
