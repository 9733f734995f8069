/**
 * A task run again starts in an empty folder (EnvironmentSpec.freshTaskDir): with --keep-workspaces its earlier
 * attempt's folder holds what that attempt's verify put there, the row's hidden tests among them. End to end with
 * the built CLI, a local sandbox and two local model servers (the agent's and the judge's).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { httpError, startFakeOpenAI, text, toolCalls, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const HIDDEN = "HIDDEN-TEST-3f9a";

describe("a rerun's agent does not see the earlier attempt's folder", () => {
  let agent: FakeOpenAI;
  let judge: FakeOpenAI;
  let judgeDown = true;
  beforeAll(async () => {
    agent = await startFakeOpenAI((req) =>
      req.body.messages.some((m: { role: string }) => m.role === "tool")
        ? text("done")
        : toolCalls([
            { name: "terminal", arguments: { command: "ls -laR; cat hidden.sh 2>&1; echo mine > work.txt" } },
          ]),
    );
    judge = await startFakeOpenAI(() =>
      judgeDown ? httpError(400, "judge unavailable") : text(JSON.stringify({ score: 1, passed: true, reason: "ok" })),
    );
  });
  afterAll(async () => {
    await agent.close();
    await judge.close();
  });

  it("--resume --retry-unscored with --keep-workspaces: no hidden test, no earlier work", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "checks"));
    writeFileSync(join(dir, "checks", "hidden.sh"), `echo ${HIDDEN}; true\n`);
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      `${JSON.stringify({ id: "t", prompt: "look around", verify: "bash hidden.sh", verify_files: "checks", rubric: "tidy" })}\n`,
    );
    const base = [
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      agent.baseURL,
      "--api-key",
      "k",
      "--judge-model",
      "j",
      "--judge-base-url",
      judge.baseURL,
      "--toolsets",
      "terminal",
      "--keep-workspaces",
      "--max-retries",
      "0",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
    ];
    const first = await runCliInProcess(base);
    expect(first.exitCode, first.stderr).toBe(0);
    const [unscored] = readJsonl(join(dir, "runs", "r", "trajectories.jsonl"));
    expect(unscored.score.passed).toBeNull();
    judgeDown = false;
    const again = await runCliInProcess([...base, "--resume", "--retry-unscored", "--allow-config-change"]);
    expect(again.exitCode, again.stderr).toBe(0);
    // The unscored line went to superseded.jsonl; the rerun's is the one line left.
    const [rerun] = readJsonl(join(dir, "runs", "r", "trajectories.jsonl"));
    const seen = JSON.stringify(rerun.messages.filter((m: { role: string }) => m.role === "tool"));
    expect(seen).toContain("No such file or directory");
    expect(seen).not.toContain(HIDDEN);
    expect(seen).not.toContain("work.txt");
    expect(rerun.score.passed).toBe(true);
  }, 120_000);
});
