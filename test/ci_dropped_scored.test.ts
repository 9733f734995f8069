/**
 * A task the trajectory filters drop (an empty answer, a made-up tool) keeps its decided grade: the filters keep a
 * line out of the training data, never a failure out of the pass rate. Before, a candidate whose failing tasks
 * answered empty read "100 % passed (1/1), 1 unscored", and compare passed it within --max-unscored.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, taskTurn, text, toolCalls, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

let good: FakeOpenAI;
let bad: FakeOpenAI;
beforeAll(async () => {
  // Both tasks pass with this model: each makes the file its verify looks for.
  good = await startFakeOpenAI((req) =>
    taskTurn(req).turn === 0 ? toolCalls([{ name: "terminal", arguments: { command: "touch ok" } }]) : text("done"),
  );
  // Task b gets an empty answer and nothing done: dropped (empty_response), and its verify fails.
  bad = await startFakeOpenAI((req) => {
    const { id, turn } = taskTurn(req);
    if (id === "b") return text("");
    return turn === 0 ? toolCalls([{ name: "terminal", arguments: { command: "touch ok" } }]) : text("done");
  });
});
afterAll(async () => {
  await good.close();
  await bad.close();
});

describe("a dropped task's grade", () => {
  it("counts in the pass rate, the report and compare's gate", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      ["a", "b"].map((id) => JSON.stringify({ id, prompt: `task:${id}`, verify: "test -f ok" })).join("\n"),
    );
    const run = (name: string, server: FakeOpenAI) =>
      runCli(
        [
          "run",
          dataset,
          "--model",
          "m",
          "--api-key",
          "k",
          "--base-url",
          server.baseURL,
          "--toolsets",
          "terminal",
          "--approval",
          "allow",
          "--progress",
          "none",
          "--output-dir",
          join(dir, "runs"),
          "--run-name",
          name,
        ],
        { cwd: dir },
      );
    expect((await run("base", good)).exitCode).toBe(0);
    const cand = await run("cand", bad);
    const dropped = readJsonl(join(dir, "runs", "cand", "dropped.jsonl"));
    expect(dropped.map((d) => [d.task_id, d.dropped, d.score?.passed])).toEqual([["b", "empty_response", false]]);
    const stats = JSON.parse(readFileSync(join(dir, "runs", "cand", "statistics.json"), "utf8"));
    expect(stats.scores).toMatchObject({ scored: 2, passed: 1 });
    expect(cand.stdout + cand.stderr).not.toMatch(/100(\.0)? ?% passed/);

    const cmp = await runCli(["compare", join(dir, "runs", "base"), join(dir, "runs", "cand"), "--json", "-"], {
      cwd: dir,
    });
    const json = JSON.parse(cmp.stdout);
    expect(json.current).toMatchObject({ scored: 2, unscored: 0, passed: 1, pass_rate: 0.5 });
    expect(json.newly_failing).toMatchObject([
      { task_id: "b", reason: expect.stringMatching(/dropped: empty_response/) },
    ]);
    expect(json.verdict).toBe("regression");
    expect(cmp.exitCode).toBe(1);
  });
});
