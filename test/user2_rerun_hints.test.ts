/**
 * The commands a stopped run prints: `node <cli>` as `shards` prints them (never `npx hermes-batch`), and after an
 * early stop on an answer that repeating will not change (404), the command that reruns those failed tasks.
 */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, runCliInProcess, tempDir } from "./helpers/cli.js";
import { httpError, startFakeOpenAI, text } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

describe("an early stop on a 404 'model does not exist'", () => {
  it("names one node <cli> … --resume --retry-failed command, and it runs all 40", async () => {
    let broken = true;
    const server = await startFakeOpenAI(() =>
      broken ? httpError(404, "The model `nope` does not exist") : text("done"),
    );
    try {
      const dir = tempDir();
      const file = join(dir, "d.jsonl");
      writeFileSync(
        file,
        Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `task ${i}` })).join("\n") + "\n",
      );
      const args = ["run", file, "--model", "nope", "--base-url", server.baseURL, "--api-key", "k-123456"];
      const common = ["--output-dir", join(dir, "runs"), "--progress", "none", "--concurrency", "2", "--workers", "1"];
      const r = await runCliInProcess([...args, ...common, "--stop-after-failures", "3"]);
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toContain("stopped early");
      expect(r.stdout).not.toContain("npx hermes-batch");
      const failedBefore = readJsonl(join(dir, "runs", "d", "failed.jsonl")).length;
      expect(failedBefore).toBeGreaterThanOrEqual(3);
      expect(failedBefore).toBeLessThan(40);
      // The same form as `shards` prints: this node, the CLI's absolute path.
      const prefix = `${process.execPath} ${CLI} `;
      // The command ends with its flags, then maybe a note in parentheses (put your key back…).
      const commands = r.stdout
        .split("\n")
        .map((l) => /^(.*? --[a-z-]+?)(?: \(.*\))?$/.exec(l)?.[1])
        .filter((l): l is string => l?.includes(prefix) === true);
      expect(commands, r.stdout).toHaveLength(1);
      const rerun = commands[0]!;
      expect(rerun).toMatch(/ --resume --retry-failed$/);
      expect(rerun).toContain("--api-key KEY");
      const argv = rerun
        .slice(rerun.indexOf(prefix) + prefix.length)
        .split(" ")
        .map((a) => (a === "KEY" ? "k-123456" : a));
      // The endpoint fixed: the printed command runs every task, the failed and the never started.
      broken = false;
      const again = await runCliInProcess(argv);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(readJsonl(join(dir, "runs", "d", "trajectories.jsonl")).length).toBe(40);
    } finally {
      await server.close();
    }
  }, 30_000);

  it("keeps the one --resume command when the stopping error is retried by --resume (a 500)", async () => {
    const server = await startFakeOpenAI(() => httpError(500, "upstream is down"));
    try {
      const dir = tempDir();
      const file = join(dir, "d.jsonl");
      writeFileSync(
        file,
        Array.from({ length: 12 }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `task ${i}` })).join("\n") + "\n",
      );
      const r = await runCliInProcess([
        "run",
        file,
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--api-key",
        "k-123456",
        "--output-dir",
        join(dir, "runs"),
        "--progress",
        "none",
        "--concurrency",
        "1",
        "--workers",
        "1",
        "--stop-after-failures",
        "2",
        "--max-retries",
        "0",
      ]);
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toContain(`then: ${process.execPath} ${CLI} run `);
      expect(r.stdout).toMatch(/ --resume( \(.*\))?$/m);
      expect(r.stdout).not.toContain("--retry-failed");
    } finally {
      await server.close();
    }
  }, 30_000);
});
