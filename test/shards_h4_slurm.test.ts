/**
 * On the one-node Slurm cluster (scripts/start-slurm.sh), through scripts/slurm/submit.sh: a sharded run whose merge
 * job exits 1 (a task failed), whose failed task the user then reruns in the merged folder (`run --retry-failed`
 * there: a merged folder is a run folder), and one of whose shards is later submitted again (ARRAY=0). The new merge
 * job merged again and replaced the user's retried result with the shard's old failure, exit 1. It must leave the
 * merged folder as it is and exit 2, naming the changed files.
 *
 * Skipped when no cluster is up (test/slurm_e2e.test.ts is the file that fails in CI without one).
 */
import { execa } from "execa";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOfTask } from "../src/shard/assign.js";
import { NO_SCHEDULER, ROOT, runCli, tempDir } from "./helpers/cli.js";
import { httpError, startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const SUBMIT = join(ROOT, "scripts", "slurm", "submit.sh");
const N = 2;
const IDS = Array.from({ length: 12 }, (_, i) => `task-${i}`);
const FAILING = "task-3";

async function clusterUp(): Promise<boolean> {
  try {
    const r = await execa("sinfo", ["-h", "-o", "%T"], { reject: false, timeout: 10_000 });
    return r.exitCode === 0 && /^(idle|mixed|allocated)/.test(r.stdout.trim().replace(/[*~#!%$@^-]/g, ""));
  } catch {
    return false;
  }
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function jobGone(id: string): Promise<boolean> {
  const r = await execa("squeue", ["-h", "-j", id], { reject: false });
  return r.exitCode === 0 ? r.stdout.trim() === "" : /Invalid job id/i.test(r.stderr);
}

async function jobExitCode(id: string): Promise<number | undefined> {
  const r = await execa("scontrol", ["show", "job", id], { reject: false });
  const m = /ExitCode=(\d+):(\d+)/.exec(r.stdout);
  return m ? Number(m[1]) : undefined;
}

// CI=true, or HERMES_BATCH_REQUIRE_SLURM=1 (.ci/run, which starts the cluster): a missing cluster is a failure, not a skip.
const required = process.env.CI === "true" || process.env.CI === "1" || process.env.HERMES_BATCH_REQUIRE_SLURM === "1";
describe.runIf(required || (await clusterUp()))(
  "Slurm: a later merge job never replaces results added to the merged folder",
  () => {
    let dir: string;
    let server: FakeOpenAI;
    let healed = false;
    const env = () => ({
      ...NO_SCHEDULER,
      OPENAI_API_KEY: "sk-h4-slurm",
      SHARDS: String(N),
      OUTPUT_DIR: join(dir, "runs"),
    });
    const runArgs = () => ["data.jsonl", "exp", "--model", "m", "--base-url", server.baseURL, "--max-retries", "0"];

    async function submit(extra: Record<string, string> = {}): Promise<string> {
      const r = await execa("bash", [SUBMIT, "--", ...runArgs()], {
        cwd: dir,
        env: { ...env(), ...extra },
        reject: false,
        timeout: 30_000,
      });
      expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
      const merge = r.stdout.trim().split("\n").at(-1)!.split(" ")[1]!;
      await until(`merge job ${merge}`, () => jobGone(merge));
      return merge;
    }

    beforeAll(async () => {
      dir = tempDir("hb-h4-slurm-");
      server = await startFakeOpenAI((req) => {
        const id = /task (task-\d+)/.exec(JSON.stringify(req.body.messages))?.[1] ?? "";
        return !healed && id === FAILING ? httpError(400, `refused ${id}`) : text(`done ${id}`);
      });
      writeFileSync(
        join(dir, "data.jsonl"),
        IDS.map((id) => JSON.stringify({ id, prompt: `task ${id}: say done` })).join("\n") + "\n",
      );
    });

    afterAll(async () => {
      await server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("the merge job of a shard submitted again exits 2 and leaves the merged folder as it is", async () => {
      const runDir = join(dir, "runs", "exp");
      const first = await submit();
      expect(await jobExitCode(first), readFileSync(join(runDir, `merge-${first}.log`), "utf8")).toBe(1);

      healed = true;
      const retry = await runCli(
        [
          "run",
          ...runArgs().slice(0, 1),
          "--run-name",
          "exp",
          "--output-dir",
          join(dir, "runs"),
          ...runArgs().slice(2),
        ].concat(["--retry-failed", "--progress", "none"]),
        { cwd: dir, env: env() },
      );
      expect(retry.exitCode, retry.stderr + retry.stdout).toBe(0);
      const retried = readFileSync(join(runDir, "trajectories.jsonl"), "utf8");
      expect(readJsonl(join(runDir, "trajectories.jsonl")).map((l) => l.task_id)).toContain(FAILING);

      const victim = shardOfTask(FAILING, N) === 0 ? 1 : 0; // a shard without the failed task: its rerun changes nothing
      const second = await submit({ ARRAY: String(victim) });
      const log = readFileSync(join(runDir, `merge-${second}.log`), "utf8");
      expect(await jobExitCode(second), log).toBe(2);
      expect(log).toContain("changed since the merge");
      expect(readFileSync(join(runDir, "trajectories.jsonl"), "utf8")).toBe(retried);
    }, 300_000);
  },
);
