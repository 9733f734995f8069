/**
 * A task whose agent hits a limit of its sandbox is graded (`resource_limit`), in the cases the first round left
 * unscored (environment_error, out of the pass rate, which an agent could choose for its own failing task):
 * - a Harbor task (its agent phase has its own time limit): its verifier runs on what the agent left;
 * - Docker, the container's own init killed for the memory limit (a root agent makes it the OOM killer's first
 *   choice, `echo 1000 > /proc/1/oom_score_adj`, then fills the /tmp tmpfs past the limit): the container stops and
 *   the engine removes it (AutoRemove). The verify runs in a new sandbox of the task's image, its task folder
 *   copied from the old one's own file system (`--disk`, 10g by default as root), which outlives the container.
 * Through the CLI with a scripted model (the fake OpenAI server: its tool call is the attack), in real containers;
 * root only (loop file systems for the disk quota).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages } from "./helpers/docker.js";
import type { FakeOpenAI } from "./helpers/fake_openai.js";
import { runScripted, startTerminalScripts, writeHarborTask } from "./helpers/scripted_runs.js";

const FILL = "echo work > out.txt; dd if=/dev/zero of=big bs=1M count=200 status=none; echo rc=$?";

// As root in the container: its init the OOM killer's first choice, then more than the memory limit in the /tmp
// tmpfs (charged to the container, held by no process): the kernel kills the init, and the container stops.
const OOM_INIT =
  "echo work > out.txt; echo 1000 > /proc/1/oom_score_adj; dd if=/dev/zero of=/tmp/fill bs=1M count=200; echo rc=$?";

const CALLS: Record<string, string[]> = {
  fill: [FILL],
  // The second command never runs: the first ends the agent.
  oom: [OOM_INIT, "echo after"],
};

let server: FakeOpenAI;

beforeAll(async () => {
  await ensureDockerTestImages();
  server = await startTerminalScripts(CALLS);
}, 600_000);

afterAll(async () => {
  await server?.close();
});

const root = process.getuid?.() === 0;

describe("a Harbor task whose agent hits a sandbox limit (--env docker)", () => {
  it.runIf(root)(
    "disk, and memory that stops the container: the task ends resource_limit and its verifier grades what the agent left",
    { timeout: 300_000 },
    async () => {
      const dir = tempDir("hb-s13-harbor-");
      const tasks = join(dir, "tasks");
      writeHarborTask(tasks, "fill-pass", "grep -q work out.txt");
      writeHarborTask(tasks, "fill-fail", "test -f answer.txt");
      writeHarborTask(tasks, "oom-pass", "grep -q work out.txt", "memory_mb = 64\n");
      writeHarborTask(tasks, "oom-fail", "test -f answer.txt", "memory_mb = 64\n");
      const r = await runScripted(server, {
        dir,
        name: "s13-harbor",
        inputs: ["--harbor", tasks],
        args: ["--env", "docker", "--toolsets", "terminal"],
        timeoutMs: 280_000,
      });
      const lines = r.lines;
      for (const [id, passed, reason] of [
        ["fill-pass", true, "disk_limit"],
        ["fill-fail", false, "disk_limit"],
        ["oom-pass", true, "memory_limit"],
        ["oom-fail", false, "memory_limit"],
      ] as const) {
        const line = lines.get(id);
        expect(line, `${id}: ${JSON.stringify(line?.error)}\n${r.stderr}`).toMatchObject({
          outcome: "resource_limit",
          reason,
          completed: false,
        });
        expect(line.error).toMatch(new RegExp(`^${reason}: `));
        expect(line.score, JSON.stringify(line.score)).toMatchObject({ passed, value: passed ? 1 : 0 });
        expect(line.score.scorers[0].details?.output_tail).toMatch(/the test ran/);
      }
    },
  );
});

describe("a Docker container whose own init the memory limit kills (root agent)", () => {
  it.runIf(root)(
    "the task ends resource_limit (memory_limit) and its verify runs on what is left of the sandbox",
    { timeout: 300_000 },
    async () => {
      const { busyboxImage } = await ensureDockerTestImages();
      const dir = tempDir("hb-s13-oom-");
      const rows = [
        // The task folder's own file system outlives the container: the verify sees what the agent wrote there.
        { id: "oom-pass", verify: "grep -q work out.txt", limits: { disk: "64m" } },
        { id: "oom-fail", verify: "test -f answer.txt", limits: { disk: "64m" } },
        // Without one, the engine removed the container with its files: graded on what is left (nothing).
        { id: "oom-gone", verify: "grep -q work out.txt", limits: { disk: "none" } },
        { id: "oom-unscored" },
      ];
      const dataset = join(dir, "d.jsonl");
      writeFileSync(
        dataset,
        rows.map((r) => JSON.stringify({ ...r, prompt: `task:${r.id}`, toolsets: ["terminal"] })).join("\n") + "\n",
      );
      const started = Date.now();
      const r = await runScripted(server, {
        dir,
        name: "s13-oom",
        inputs: [dataset],
        args: ["--env", "docker", "--image", busyboxImage, "--memory-mb", "64", "--concurrency", "4"],
        timeoutMs: 280_000,
      });
      const lines = r.lines;
      for (const [id, passed] of [
        ["oom-pass", true],
        ["oom-fail", false],
        ["oom-gone", false],
      ] as const) {
        const line = lines.get(id);
        expect(line, `${id}: ${JSON.stringify(line?.error)}\n${r.stderr}`).toMatchObject({
          outcome: "resource_limit",
          reason: "memory_limit",
          completed: false,
        });
        expect(line.error).toMatch(/^memory_limit: /);
        expect(line.verify, JSON.stringify(line.verify)).toMatchObject({ passed });
        expect(line.score).toMatchObject({ passed });
        const calls = line.conversations.filter((m: any) => m.from === "gpt" && m.value.includes("<tool_call>"));
        const results = line.conversations.filter((m: any) => m.from === "tool");
        // The container's stop is found with the command that caused it: the agent's next command is never asked
        // for. Under load the kernel may kill the allocating `dd` first (the init's exit still under way, the OOM
        // reaper done with it): then the agent sees `Killed` and its next command finds the container stopped.
        const seen = `${id}: ${JSON.stringify(line.conversations.slice(-3))}`;
        if (calls.length === 2) expect(results[0]?.value, seen).toMatch(/Killed/);
        else expect(calls, seen).toHaveLength(1);
      }
      expect(lines.get("oom-unscored")).toMatchObject({ outcome: "environment_error", reason: "memory_limit" });
      expect(Date.now() - started).toBeLessThan(60_000);
    },
  );
});
