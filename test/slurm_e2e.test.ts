/**
 * Sharded runs through a real Slurm cluster (scripts/start-slurm.sh: one node on 127.0.0.1, cons_tres) via
 * scripts/slurm/submit.sh, against a local scripted model server: 4 shards merged to exactly the dataset's
 * ids; a shard scancel'ed in its first seconds → the merge job exits 4 naming it and its missing ids;
 * `shards` prints the Slurm rerun command, which, run as printed, completes the run exactly; a requeued
 * shard resumes without duplicates.
 *
 * Needs the cluster: with CI=true (or HERMES_BATCH_REQUIRE_SLURM=1, set by .ci/run) a missing cluster fails this
 * file; elsewhere it is skipped.
 */
import { execa } from "execa";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOfTask } from "../src/shard/assign.js";
import { ROOT, runCli, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text, type FakeOpenAI, type RecordedRequest, type Reply } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const SUBMIT = join(ROOT, "scripts", "slurm", "submit.sh");
const KEY = "sk-slurm-e2e-secret-0123456789";
const N = 4;
const IDS = Array.from({ length: 200 }, (_, i) => `task-${String(i).padStart(3, "0")}`);

async function clusterUp(): Promise<string | undefined> {
  try {
    const r = await execa("sinfo", ["-h", "-o", "%T"], { reject: false, timeout: 10_000 });
    const state = r.stdout.trim().replace(/[*~#!%$@^-]/g, "");
    return r.exitCode === 0 && /^(idle|mixed|allocated)/.test(state)
      ? undefined
      : `sinfo: ${r.stdout.trim() || r.stderr.trim()}`;
  } catch (err) {
    return `sinfo not runnable: ${(err as Error).message.split("\n")[0]}`;
  }
}

const missing = await clusterUp();
// CI=true (any CI), or HERMES_BATCH_REQUIRE_SLURM=1 (.ci/run, which starts the cluster): a missing cluster is a failure.
const inCI = process.env.CI === "true" || process.env.CI === "1" || process.env.HERMES_BATCH_REQUIRE_SLURM === "1";

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 90_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) {
      const q = await execa("squeue", ["-h", "-o", "%i %T %r %S"], { reject: false });
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; squeue:\n${q.stdout}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
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

function ids(path: string): string[] {
  return readJsonl(path).map((l) => l.task_id as string);
}

// In CI a missing cluster is a failing test (counted as failed), not a skipped file.
describe.runIf(missing !== undefined && inCI)("Slurm end to end: the cluster", () => {
  it("is up (CI requires it: scripts/start-slurm.sh, run by .ci/run)", () => {
    throw new Error(`no Slurm cluster is up (${missing}): run scripts/start-slurm.sh (as root) first`);
  });
});

describe.runIf(!missing)(
  `Slurm end to end (scripts/slurm/submit.sh on a one-node cluster)${missing ? ` — no cluster: ${missing}` : ""}`,
  () => {
    let dir: string;
    let server: FakeOpenAI;
    /** Task ids whose requests are held (never answered) while set: keeps a shard running on purpose. */
    let holdShard: number | undefined;
    /** A shard whose requests are answered slowly while set: it is mid-run long enough to be requeued. */
    let slowShard: number | undefined;
    /** A shard whose endpoint dies (every request a 502) after this many of its requests were answered. */
    let dyingShard: { shard: number; after: number; answered: number } | undefined;
    const taskOf = (req: RecordedRequest) =>
      /task (task-\d+)/.exec(JSON.stringify(req.body?.messages ?? ""))?.[1] ?? "";
    const env = () => ({
      OPENAI_API_KEY: KEY,
      SHARDS: String(N),
      OUTPUT_DIR: join(dir, "runs"),
      HERMES_BATCH_SHARD_COUNT: "",
      SLURM_ARRAY_TASK_ID: "",
      JOB_COMPLETION_INDEX: "",
    });

    async function submit(
      run: string,
      extra: Record<string, string> = {},
      runArgs: string[] = [],
      sbatchOpts: string[] = [],
    ): Promise<{ array: string; merge: string; out: string }> {
      const r = await execa(
        "bash",
        [
          SUBMIT,
          ...sbatchOpts,
          "--",
          "data.jsonl",
          run,
          "--model",
          "m",
          "--base-url",
          server.baseURL,
          "--toolsets",
          "todo",
          "--concurrency",
          "2",
          ...runArgs,
        ],
        {
          cwd: dir,
          env: { ...env(), ...extra },
          reject: false,
          timeout: 30_000,
        },
      );
      expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
      const [array, merge] = r.stdout.trim().split("\n").at(-1)!.split(" ");
      return { array: array!, merge: merge!, out: r.stdout };
    }

    beforeAll(async () => {
      dir = tempDir("hb-slurm-");
      server = await startFakeOpenAI(async (req): Promise<Reply> => {
        const id = taskOf(req);
        if (holdShard !== undefined && shardOfTask(id, N) === holdShard) return { kind: "hang" };
        if (dyingShard && shardOfTask(id, N) === dyingShard.shard && ++dyingShard.answered > dyingShard.after) {
          return { kind: "json", status: 502, body: { error: { message: "bad gateway: upstream gone" } } };
        }
        await new Promise((r) => setTimeout(r, slowShard !== undefined && shardOfTask(id, N) === slowShard ? 400 : 30));
        return text(`done ${id}`);
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

    it("4 shards, merged by the dependent job: exactly the dataset's ids, once each; logs per shard and attempt", async () => {
      const { array, merge } = await submit("clean", {}, [], ["--time=0:20:00", "--mem=400M", "--job-name=hb-clean"]);
      // sbatch options passed through; the key in no job's command line or arguments.
      const shown = await execa("scontrol", ["show", "job", array], { reject: false });
      expect(shown.stdout).toMatch(/TimeLimit=00:20:00/);
      expect(shown.stdout).toMatch(/JobName=hb-clean/);
      expect(shown.stdout).toMatch(/mem=400M/);
      expect(shown.stdout).toMatch(/NumCPUs=1\b/);
      expect(shown.stdout).not.toContain(KEY);
      await until("the merge job to end", async () => (await jobGone(merge)) || undefined, 120_000);
      const runDir = join(dir, "runs", "clean");
      const log = readFileSync(join(runDir, `merge-${merge}.log`), "utf8");
      expect(await jobExitCode(merge), log).toBe(0);
      expect(log).toContain(`merged all ${N} shard(s)`);
      expect([...ids(join(runDir, "trajectories.jsonl"))].sort()).toEqual(IDS);
      for (let i = 0; i < N; i++) {
        const shardDir = join(runDir, "shards", `000${i}-of-000${N}`);
        const files = readdirSync(shardDir);
        expect(files).toContain(`slurm-${array}_${i}.log`);
        expect(files).toContain(`slurm-${array}_${i}.attempt0.log`);
        const launch = readFileSync(join(shardDir, "launch.json"), "utf8");
        expect(launch).not.toContain(KEY);
        expect(JSON.parse(launch).scheduler).toMatchObject({
          kind: "slurm",
          array_job_id: array,
          array_task_id: String(i),
        });
      }
    }, 150_000);

    it("a shard scancel'ed in its first seconds: merge exits 4 naming it and its missing ids; the printed rerun completes the run", async () => {
      const victim = 2;
      holdShard = victim;
      const started = server.requests.length;
      const { array, merge } = await submit("cancelled");
      const first = await until(
        "the victim shard's first request",
        () => server.requests.slice(started).find((q) => shardOfTask(taskOf(q), N) === victim),
        60_000,
        50,
      );
      await execa("scancel", [`${array}_${victim}`]);
      const sinceStart = Date.now() - first.at;
      expect(sinceStart).toBeLessThan(2_000);
      await until("the merge job to end", async () => (await jobGone(merge)) || undefined, 120_000);
      holdShard = undefined;
      const runDir = join(dir, "runs", "cancelled");
      const log = readFileSync(join(runDir, `merge-${merge}.log`), "utf8");
      expect(await jobExitCode(merge), log).toBe(4);
      const owned = IDS.filter((id) => shardOfTask(id, N) === victim);
      expect(log).toMatch(new RegExp(`shard ${victim}/${N}: (interrupted|killed)`));
      const missingIds = /shard 2\/4:[^\n]*\n[^\n]*\n\s+missing ids: ([^\n]+)/.exec(log)?.[1];
      expect(missingIds, log).toBeDefined();
      for (const id of missingIds!.replace(/, … \(.*$/, "").split(", ")) expect(owned).toContain(id);

      const shards = await runCli(["shards", runDir], { cwd: dir });
      expect(shards.exitCode, shards.stdout).toBe(4);
      const rerun = /Slurm:\n\s+(cd .*)\n/.exec(shards.stdout)?.[1];
      expect(rerun, shards.stdout).toContain(`SHARDS=${N} ARRAY=${victim} `);
      expect(rerun).not.toContain(KEY);
      const again = await execa("bash", ["-c", rerun!], {
        cwd: dir,
        env: { OPENAI_API_KEY: KEY, SHARDS: "", ARRAY: "", OUTPUT_DIR: "" },
        reject: false,
        timeout: 30_000,
      });
      expect(again.exitCode, `${again.stdout}\n${again.stderr}`).toBe(0);
      const merge2 = again.stdout.trim().split("\n").at(-1)!.split(" ")[1]!;
      await until("the second merge job to end", async () => (await jobGone(merge2)) || undefined, 120_000);
      const log2 = readFileSync(join(runDir, `merge-${merge2}.log`), "utf8");
      expect(await jobExitCode(merge2), log2).toBe(0);
      const merged = ids(join(runDir, "trajectories.jsonl"));
      expect(merged.length).toBe(IDS.length);
      expect([...merged].sort()).toEqual(IDS);
    }, 240_000);

    it("a shard requeued mid-run (scontrol requeue) resumes its folder: no task twice, the merge exact, one log per attempt", async () => {
      const victim = 1;
      slowShard = victim;
      const { array, merge } = await submit("requeued");
      const runDir = join(dir, "runs", "requeued");
      const shardDir = join(runDir, "shards", `000${victim}-of-000${N}`);
      // Some of its tasks durably written (the writer fsyncs at least once a second), most still to run.
      await until(
        "3 results in the victim shard",
        () => ids(join(shardDir, "trajectories.jsonl")).length >= 3 || undefined,
        90_000,
        100,
      );
      const r = await execa("scontrol", ["requeue", `${array}_${victim}`], { reject: false });
      expect(r.exitCode, r.stderr).toBe(0);
      // A requeued job waits 2 minutes (BeginTime) by default: start it now.
      await until(
        "the requeued shard to run again",
        async () => {
          const q = await execa("squeue", ["-h", "-j", `${array}_${victim}`, "-o", "%T %r"], { reject: false });
          if (/^PENDING BeginTime/.test(q.stdout.trim()))
            await execa("scontrol", ["update", `JobId=${array}_${victim}`, "StartTime=now"], { reject: false });
          return /^(RUNNING|COMPLETING|COMPLETED)?$/.test(q.stdout.trim()) &&
            existsSync(join(shardDir, `slurm-${array}_${victim}.attempt1.log`))
            ? true
            : undefined;
        },
        90_000,
        300,
      );
      slowShard = undefined;
      await until("the merge job to end", async () => (await jobGone(merge)) || undefined, 150_000);
      const log = readFileSync(join(runDir, `merge-${merge}.log`), "utf8");
      expect(await jobExitCode(merge), log).toBe(0);
      const shardIds = ids(join(shardDir, "trajectories.jsonl"));
      expect(new Set(shardIds).size).toBe(shardIds.length);
      expect([...ids(join(runDir, "trajectories.jsonl"))].sort()).toEqual(IDS);
      const files = readdirSync(shardDir);
      expect(files).toContain(`slurm-${array}_${victim}.attempt0.log`);
      expect(files).toContain(`slurm-${array}_${victim}.attempt1.log`);
      const record = JSON.parse(readFileSync(join(shardDir, "shard-complete.json"), "utf8"));
      expect(record.state).toBe("finished");
      expect(record.invocations.at(-1).state).toBe("finished");
      // The requeue's SIGTERM reached hermes-batch itself (exec'd, no wrapper): its first attempt ended in order.
      expect(record.invocations.map((i: { state: string }) => i.state)).toEqual(["interrupted", "finished"]);
    }, 240_000);

    it("a shard whose endpoint dies mid-run stops early; merge (exit 4) and shards name it with the error", async () => {
      const victim = 3;
      dyingShard = { shard: victim, after: 4, answered: 0 };
      const { merge } = await submit("endpoint-died", {}, ["--max-retries", "0", "--stop-after-failures", "3"]);
      await until("the merge job to end", async () => (await jobGone(merge)) || undefined, 120_000);
      dyingShard = undefined;
      const runDir = join(dir, "runs", "endpoint-died");
      const log = readFileSync(join(runDir, `merge-${merge}.log`), "utf8");
      expect(await jobExitCode(merge), log).toBe(4);
      expect(log).toContain(`shard ${victim}/${N}: stopped_early — stopped early: 3 tasks in a row all failed with:`);
      expect(log).toContain("upstream gone");
      const record = JSON.parse(
        readFileSync(join(runDir, "shards", `000${victim}-of-000${N}`, "shard-complete.json"), "utf8"),
      );
      expect(record).toMatchObject({
        state: "stopped_early",
        stopped_early: { after_failures: 3, what: "3 tasks in a row" },
      });
      const owned = IDS.filter((id) => shardOfTask(id, N) === victim).length;
      expect(record.counts.missing).toBeGreaterThan(0); // it stopped: the rest were never started
      expect(record.counts.done + record.counts.failed + record.counts.missing).toBe(owned);
      const shards = await runCli(["shards", runDir], { cwd: dir });
      expect(shards.exitCode).toBe(4);
      expect(shards.stdout).toMatch(new RegExp(`${victim}/${N}\\s+${owned}\\s+.*stopped_early \\(.*upstream gone`));
      expect(shards.stdout).toContain(`ARRAY=${victim} `);
    }, 180_000);
  },
);
