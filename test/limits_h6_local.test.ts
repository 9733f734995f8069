/**
 * A scored row whose agent hits a sandbox limit (its memory, its process count, its disk quota) is graded with
 * what the agent did, as at --task-timeout: the outcome `resource_limit` with the limit as `reason`, the verify step
 * run, a failing verify a scored failure. Otherwise an agent could take its own failing task out of the pass rate
 * (environment_error is unscored) with `bytearray(3<<30)`, a fork bomb or a full disk. An unscored row keeps
 * today's environment_error. Through the built CLI, a fake OpenAI server whose tool call is the attack; root only
 * (cgroups, loop file systems), the Docker case with the Docker engine and the test images.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { ensureDockerTestImages } from "./helpers/docker.js";
import { readJsonl } from "./helpers/jsonl.js";

const HOG = `echo work > out.txt; python3 -c "b = bytearray(1 << 30); print(len(b))"; echo rc=$?`;
// A fork bomb that keeps the process limit full (dash forks without bash's retry loop) in the background, and a
// foreground loop that meets "Cannot fork" once the limit is reached.
const BOMB =
  `echo work > out.txt; sh -c '( while :; do (sleep 600 </dev/null >/dev/null 2>&1 &) 2>/dev/null; done ) </dev/null >/dev/null 2>&1& ` +
  `i=0; while [ $i -lt 100000 ]; do (true) || break; i=$((i+1)); done' 2>&1 | tail -2; echo filled`;
const FILL = "echo work > out.txt; dd if=/dev/zero of=big bs=1M count=200 status=none; echo rc=$?";

const CALLS: Record<string, string[]> = {
  hog: [HOG],
  // Never run: the bomb's command leaves the process limit full, which ends the agent there (pids_limit).
  bomb: [BOMB, "ls; echo after"],
  fill: [FILL],
};

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI(
    scriptedPerTask((id) =>
      CALLS[id.replace(/-.*/, "")]!.map((command) => ({ name: "terminal", arguments: { command, timeout: 30 } })),
    ),
  );
});

afterAll(async () => {
  await server?.close();
});

interface Row {
  id: string;
  verify?: string;
}

async function run(rows: Row[], extra: string[]) {
  const dir = tempDir("hb-h6-limits-");
  const dataset = join(dir, "d.jsonl");
  writeFileSync(
    dataset,
    rows.map((r) => JSON.stringify({ ...r, prompt: `task:${r.id}`, toolsets: ["terminal"] })).join("\n") + "\n",
  );
  const tmp = join(dir, "tmp");
  mkdirSync(tmp);
  // In process: the limits are the sandboxes' (their own cgroups and file systems), not this process's.
  const r = await runCliInProcess(
    [
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--approval",
      "allow",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
      "--concurrency",
      "2",
      "--task-timeout",
      "120",
      ...extra,
    ],
    { timeoutMs: 400_000, env: { TMPDIR: tmp } },
  );
  const trajectories = readJsonl(join(dir, "runs", "r", "trajectories.jsonl"));
  const failed = readJsonl(join(dir, "runs", "r", "failed.jsonl"));
  const lines = new Map<string, any>();
  for (const l of [...trajectories, ...failed]) lines.set(l.task_id, l);
  return { r, lines, trajectories, failed, dir };
}

/** The row's line is a graded trajectory: the limit named, the verify run after it, its verdict the score. */
function expectGraded(line: any, reason: string, passed: boolean): void {
  expect(line, JSON.stringify(line?.error)).toMatchObject({ outcome: "resource_limit", reason, completed: false });
  expect(line.error).toMatch(new RegExp(`^${reason}: `));
  expect(line.verify).toMatchObject({ passed });
  expect(line.score).toMatchObject({ passed });
}

const root = process.getuid?.() === 0;

describe("a scored row at a sandbox limit is graded (--env local)", () => {
  it.runIf(root)(
    "memory: the verify runs on what the agent did; a failing one is a scored failure; an unscored row stays environment_error",
    { timeout: 420_000 },
    async () => {
      const { lines, trajectories, failed } = await run(
        [
          { id: "hog-pass", verify: "grep -q work out.txt" },
          { id: "hog-fail", verify: "test -f answer.txt" },
          { id: "hog-unscored" },
        ],
        ["--env", "local", "--memory-mb", "256"],
      );
      expectGraded(lines.get("hog-pass"), "memory_limit", true);
      expectGraded(lines.get("hog-fail"), "memory_limit", false);
      expect(trajectories.map((l) => l.task_id).sort()).toEqual(["hog-fail", "hog-pass"]);
      // No grader: as before, an infrastructure-looking failure, left out of the pass rate, the limit named.
      expect(failed.map((l) => l.task_id)).toEqual(["hog-unscored"]);
      expect(lines.get("hog-unscored")).toMatchObject({ outcome: "environment_error", reason: "memory_limit" });
    },
  );

  it.runIf(root)(
    "pids: a fork bomb that keeps the process limit full ends its task resource_limit at once, graded without the bomb",
    { timeout: 420_000 },
    async () => {
      const { lines } = await run(
        [
          { id: "bomb-fail", verify: "test -f answer.txt" },
          { id: "bomb-pass", verify: "grep -q work out.txt" },
        ],
        ["--env", "local", "--pids-limit", "64", "--concurrency", "1"],
      );
      for (const [id, passed] of [
        ["bomb-fail", false],
        ["bomb-pass", true],
      ] as const) {
        const line = lines.get(id);
        expectGraded(line, "pids_limit", passed);
        // Found full after the bomb's own command: the agent's next command never ran.
        const calls = line.conversations.filter((m: any) => m.from === "gpt" && m.value.includes("<tool_call>"));
        expect(calls, id).toHaveLength(1);
      }
    },
  );

  it.runIf(root)("disk: writing past --disk on a scored row is graded", { timeout: 420_000 }, async () => {
    const { lines } = await run(
      [{ id: "fill-fail", verify: "test -f answer.txt" }],
      ["--env", "local", "--disk", "64m"],
    );
    expectGraded(lines.get("fill-fail"), "disk_limit", false);
  });
});

describe("a scored row at a sandbox limit is graded (--env docker)", () => {
  it.runIf(root)(
    "disk: writing past --disk is graded; a failing verify is a scored failure",
    {
      timeout: 600_000,
    },
    async () => {
      const { image } = await ensureDockerTestImages();
      const { lines } = await run(
        [
          { id: "fill-fail", verify: "test -f answer.txt" },
          { id: "fill-pass", verify: "grep -q work out.txt" },
          { id: "fill-unscored" },
        ],
        ["--env", "docker", "--image", image, "--disk", "64m"],
      );
      expectGraded(lines.get("fill-fail"), "disk_limit", false);
      expectGraded(lines.get("fill-pass"), "disk_limit", true);
      expect(lines.get("fill-unscored")).toMatchObject({ outcome: "environment_error", reason: "disk_limit" });
    },
  );
});
