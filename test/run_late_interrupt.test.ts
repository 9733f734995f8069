/**
 * Ctrl-C with nothing left to stop: every task of the run was already in flight (or done), the drain finished them
 * all, so the run is complete: exit 0, the checkpoint says finished, and no "interrupted … Resume with" line that
 * would send a CI job or a user to rerun a finished run.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, cleanEnv, ROOT, tempDir } from "./helpers/cli.js";
import { type FakeOpenAI, startFakeOpenAI, text } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { waitUntil } from "./helpers/wait.js";

describe("Ctrl-C once the last task is in flight", () => {
  let server: FakeOpenAI;
  let release: () => void = () => undefined;
  beforeAll(async () => {
    server = await startFakeOpenAI(async () => {
      await new Promise<void>((r) => {
        release = r;
      });
      return text("done");
    });
  });
  afterAll(() => server.close());

  it("drains it and ends the run complete: exit 0, finished, no resume line", async () => {
    const dir = tempDir();
    const data = join(dir, "d.jsonl");
    writeFileSync(data, `${JSON.stringify({ id: "only", prompt: "p" })}\n`);
    const child = execa(
      "node",
      [CLI, "run", data, "--model", "m", "--base-url", server.baseURL, "--api-key", "k"].concat([
        "--toolsets",
        "todo",
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        "r",
        "--progress",
        "log",
      ]),
      // No SIGKILL 5 s after the Ctrl-C (execa's default): the drain waits for the answer.
      { cwd: ROOT, env: cleanEnv(), extendEnv: false, reject: false, forceKillAfterDelay: false },
    );
    let said = "";
    child.stdout?.on("data", (d: Buffer) => (said += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (said += d.toString()));
    expect(await waitUntil(() => server.requests.length === 1, 30_000)).toBe(true);
    child.kill("SIGINT");
    // The drain waits for the answer: given once the run has taken the interrupt in.
    expect(await waitUntil(() => said.includes("interrupt: finishing the tasks in flight"), 30_000), said).toBe(true);
    release();
    const r = await child;
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/interrupted|Resume with/);
    expect(readJsonl(join(dir, "runs", "r", "trajectories.jsonl"))).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, "runs", "r", "checkpoint.json"), "utf8")).finished).toBe(true);
  }, 60_000);
});
