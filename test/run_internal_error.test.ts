/**
 * internal_error through the CLI: --resume and --retry-failed leave such tasks, --retry-internal reruns them;
 * the inputs every worker needs (prefill file, command allowlist) are checked once, as one clear line.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

function ids(path: string): string[] {
  return readJsonl(path)
    .map((l) => l.task_id)
    .sort();
}

function setUp() {
  const dir = tempDir();
  const data = join(dir, "tasks.jsonl");
  writeFileSync(
    data,
    ["task-0", "task-1"].map((id) => JSON.stringify({ id, prompt: "Use the shell to compute 6 * 7." })).join("\n") +
      "\n",
  );
  const args = [
    "run",
    data,
    "--model",
    "scripted",
    "--output-dir",
    join(dir, "runs"),
    "--run-name",
    "r",
    "--approval",
    "deny",
    "--toolsets",
    "terminal",
    "--progress",
    "none",
  ];
  return { dir, data, args, runDir: join(dir, "runs", "r") };
}

describe("internal_error on resume", () => {
  it("is left by --resume and --retry-failed, rerun by --retry-internal", async () => {
    const { args, runDir } = setUp();
    mkdirSync(runDir, { recursive: true });
    const failure = {
      prompt_index: 0,
      task_id: "task-0",
      outcome: "internal_error",
      completed: false,
      partial: false,
      error: "TypeError: x is undefined",
      toolsets_used: ["terminal"],
      metadata: {},
    };
    writeFileSync(join(runDir, "failed.jsonl"), JSON.stringify(failure) + "\n");

    const resumed = await runCliInProcess([...args, "--resume"]);
    expect(resumed.exitCode, resumed.stderr).toBe(1);
    expect(resumed.stderr).toMatch(/1 task\(s\) ended in internal_error .*--retry-internal/);
    expect(resumed.stdout).toMatch(/1 of them ended in internal_error.*--retry-internal reruns them/);
    expect(ids(join(runDir, "trajectories.jsonl"))).toEqual(["task-1"]);
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.outcomes.internal_error).toBe(1);

    expect((await runCliInProcess([...args, "--retry-failed"])).exitCode).toBe(1);
    expect(ids(join(runDir, "trajectories.jsonl"))).toEqual(["task-1"]);

    const retried = await runCliInProcess([...args, "--retry-internal"]);
    expect(retried.exitCode, retried.stderr).toBe(0);
    expect(ids(join(runDir, "trajectories.jsonl"))).toEqual(["task-0", "task-1"]);
  });
});

describe("inputs read once in the main thread", () => {
  it("a bad prefill file is one line naming the flag, the file and the reason, exit 2", async () => {
    const { dir, args } = setUp();
    const prefill = join(dir, "prefill.json");
    writeFileSync(prefill, JSON.stringify([{ role: "robot", content: "hi" }]));
    const r = await runCliInProcess([...args, "--prefill-messages-file", prefill]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`--prefill-messages-file ${prefill}: [0.role]`);
  });

  it("a command allowlist with a YAML error stops the run naming the file, instead of being dropped", async () => {
    const { dir, args } = setUp();
    const configDir = join(dir, "hermes-config");
    mkdirSync(configDir);
    writeFileSync(join(configDir, "config.yaml"), "command_allowlist: [rm\n");
    const r = await runCliInProcess(args, { env: { HERMES_BATCH_CONFIG_DIR: configDir } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(join(configDir, "config.yaml"));
  });
});
