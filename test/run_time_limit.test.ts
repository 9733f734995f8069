/**
 * A scored row whose agent reaches --task-timeout is graded (outcome `time_limit`, as Harbor grades a trial at its
 * agent's limit and inspect_ai a sample at its limits): a task the agent never finishes counts as failed in the pass
 * rate instead of leaving it. Its verify still runs, after the agent's processes are ended. A row without a scorer
 * still fails as `timeout`. End to end with the built CLI, local sandboxes and a local model server.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCliInProcess, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text, toolCalls, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

describe("an agent stopped by --task-timeout", () => {
  let agent: FakeOpenAI;
  beforeAll(async () => {
    agent = await startFakeOpenAI((req) => {
      const prompt: string = req.body.messages.find((m: { role: string }) => m.role === "user").content;
      const called = req.body.messages.some((m: { role: string }) => m.role === "tool");
      if (prompt.startsWith("slow") && !called)
        // A background writer that would make the verify pass if it outlived the agent, then a long command.
        return toolCalls([
          { name: "terminal", arguments: { command: "(sleep 5; echo forged > done.txt)&sleep 120", timeout: 170 } },
        ]);
      return text(prompt === "good" ? "42" : "41");
    });
  });
  afterAll(async () => {
    await agent.close();
  });

  it("is graded on a scored row (time_limit, failed) and fails as timeout on a row without a scorer", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    const rows = [
      { id: "good", prompt: "good", expected: "42" },
      { id: "bad", prompt: "bad", expected: "42" },
      { id: "slow", prompt: "slow", expected: "42" },
      { id: "slow-verify", prompt: "slow, verified", verify: "sleep 5; test -f done.txt" },
      { id: "slow-plain", prompt: "slow, not scored" },
    ];
    writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const started = Date.now();
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      agent.baseURL,
      "--api-key",
      "k",
      "--toolsets",
      "terminal",
      "--task-timeout",
      "2",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
    ]);
    // The long command was ended at the deadline, not waited for.
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(r.exitCode, r.stderr).toBe(1); // the unscored row's timeout is a failed task
    const lines = Object.fromEntries(
      readJsonl(join(dir, "runs", "r", "trajectories.jsonl")).map((l) => [l.task_id, l]),
    );
    expect(Object.keys(lines).sort()).toEqual(["bad", "good", "slow", "slow-verify"]);
    expect(lines.slow).toMatchObject({ outcome: "time_limit", completed: false, score: { passed: false } });
    // The verify ran after the agent's processes were ended: the background writer never wrote.
    expect(lines["slow-verify"]).toMatchObject({ outcome: "time_limit", score: { passed: false } });
    expect(lines["slow-verify"].verify).toMatchObject({ exit_code: 1 });
    const [failed] = readJsonl(join(dir, "runs", "r", "failed.jsonl"));
    expect(failed).toMatchObject({ task_id: "slow-plain", outcome: "timeout" });
    expect(r.stdout).toMatch(/scores: 25\.0 % passed \(1\/4 scored/);
  });

  it("is a timeout, not graded, when the time went to a sandbox that was still starting", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "bin"));
    symlinkSync(join(ROOT, "test", "fixtures", "fake-apptainer"), join(dir, "bin", "apptainer"));
    const dataset = join(dir, "d.jsonl");
    writeFileSync(dataset, `${JSON.stringify({ id: "slow", prompt: "slow", expected: "42" })}\n`);
    const r = await runCliInProcess(
      [
        "run",
        dataset,
        "--model",
        "m",
        "--base-url",
        agent.baseURL,
        "--api-key",
        "k",
        "--toolsets",
        "terminal",
        "--env",
        "singularity",
        "--image",
        "docker://debian:bookworm",
        "--task-timeout",
        "2",
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        "r",
        "--progress",
        "none",
      ],
      {
        env: {
          PATH: `${join(dir, "bin")}:${process.env.PATH}`,
          APPTAINER_FAKE_START_SLEEP: "6",
          APPTAINER_FAKE_STATE: join(dir, "state"),
          APPTAINER_CACHEDIR: join(dir, "cache"),
        },
      },
    );
    expect(r.stderr).not.toMatch(/internal error/);
    expect(readJsonl(join(dir, "runs", "r", "trajectories.jsonl"))).toEqual([]);
    const [failed] = readJsonl(join(dir, "runs", "r", "failed.jsonl"));
    expect(failed, r.stderr).toMatchObject({ task_id: "slow", outcome: "timeout" });
  });
});
