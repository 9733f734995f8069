/**
 * Sharding: shard resolution from flags and scheduler env, the task → shard hash, the config fingerprint,
 * and `hermes-batch merge` end to end on shard folders written by hand, run as a real process.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunConfigSchema } from "../src/config/run_config.js";
import { configFingerprint } from "../src/store/run_identity.js";
import {
  parseShardDirName,
  resolveShard,
  shardDirName,
  shardOfTask,
  shardRunDir,
  shardRunName,
  taskInShard,
  type Shard,
} from "../src/shard/assign.js";

const ROOT = join(import.meta.dirname, "..");
/** The built CLI (the cli project builds it once): a tsx start compiles the sources again, ~5× the CPU. */
const CLI = join(ROOT, "dist", "src", "cli.js");

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "hb-shard-"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("resolveShard", () => {
  const none = {} as NodeJS.ProcessEnv;

  it("takes --shard i/N (0-based) and rejects malformed or out-of-range values with clear messages", () => {
    expect(resolveShard({ shard: "3/16", env: none })).toEqual({ index: 3, count: 16 });
    expect(resolveShard({ shard: " 0 / 1 ", env: none })).toEqual({ index: 0, count: 1 });
    expect(() => resolveShard({ shard: "16/16", env: none })).toThrow(
      /0-based, so with 16 shard\(s\) they run 0\.\.15/,
    );
    expect(() => resolveShard({ shard: "3", env: none })).toThrow(/--shard must look like i\/N .* got '3'/);
    expect(() => resolveShard({ shard: "-1/4", env: none })).toThrow(/must look like i\/N/);
    expect(() => resolveShard({ shard: "a/b", env: none })).toThrow(/must look like i\/N/);
    expect(() => resolveShard({ shard: "0/0", env: none })).toThrow(/--shard count N must be at least 1/);
    expect(() => resolveShard({ shard: "1/4", shardCount: "8", env: none })).toThrow(
      /says 4 shards but --shard-count says 8/,
    );
  });

  it("is undefined for an ordinary run, and --shard none turns auto-detection off", () => {
    expect(resolveShard({ env: none })).toBeUndefined();
    expect(resolveShard({ env: { SLURM_JOB_ID: "77", SLURM_NTASKS: "1" } })).toBeUndefined();
    expect(
      resolveShard({ shard: "none", env: { SLURM_ARRAY_TASK_ID: "2", SLURM_ARRAY_TASK_COUNT: "4" } }),
    ).toBeUndefined();
  });

  it("an explicit --shard wins over the scheduler's env", () => {
    expect(
      resolveShard({
        shard: "1/2",
        env: { SLURM_ARRAY_TASK_ID: "5", SLURM_ARRAY_TASK_MIN: "0", SLURM_ARRAY_TASK_MAX: "9" },
      }),
    ).toEqual({ index: 1, count: 2 });
  });

  it("detects Slurm job arrays whatever their first id and step", () => {
    const oneBased = { SLURM_ARRAY_TASK_MIN: "1", SLURM_ARRAY_TASK_MAX: "16", SLURM_ARRAY_TASK_COUNT: "16" };
    expect(resolveShard({ env: { ...oneBased, SLURM_ARRAY_TASK_ID: "1" } })).toEqual({ index: 0, count: 16 });
    expect(resolveShard({ env: { ...oneBased, SLURM_ARRAY_TASK_ID: "5" } })).toEqual({ index: 4, count: 16 });
    expect(resolveShard({ env: { ...oneBased, SLURM_ARRAY_TASK_ID: "16" } })).toEqual({ index: 15, count: 16 });
    expect(resolveShard({ env: { SLURM_ARRAY_TASK_ID: "3", SLURM_ARRAY_TASK_COUNT: "4" } })).toEqual({
      index: 3,
      count: 4,
    });
    const stepped = {
      SLURM_ARRAY_TASK_MIN: "10",
      SLURM_ARRAY_TASK_MAX: "16",
      SLURM_ARRAY_TASK_STEP: "2",
      SLURM_ARRAY_TASK_COUNT: "4",
    };
    expect(resolveShard({ env: { ...stepped, SLURM_ARRAY_TASK_ID: "14" } })).toEqual({ index: 2, count: 4 });
  });

  it("rejects Slurm arrays it cannot map, and bad values, naming the variable", () => {
    const list = {
      SLURM_ARRAY_TASK_ID: "7",
      SLURM_ARRAY_TASK_MIN: "3",
      SLURM_ARRAY_TASK_MAX: "7",
      SLURM_ARRAY_TASK_COUNT: "2",
    };
    expect(() => resolveShard({ env: list })).toThrow(/not a plain range .* set HERMES_BATCH_SHARD_COUNT/);
    expect(() => resolveShard({ env: { SLURM_ARRAY_TASK_ID: "x1", SLURM_ARRAY_TASK_COUNT: "4" } })).toThrow(
      /SLURM_ARRAY_TASK_ID must be a whole number ≥ 0, got 'x1'/,
    );
    expect(() => resolveShard({ env: { SLURM_ARRAY_TASK_ID: "2" } })).toThrow(
      /neither SLURM_ARRAY_TASK_MAX nor SLURM_ARRAY_TASK_COUNT/,
    );
    expect(() => resolveShard({ env: { SLURM_ARRAY_TASK_ID: "4", SLURM_ARRAY_TASK_COUNT: "4" } })).toThrow(
      /out of range; .* 0\.\.3/,
    );
  });

  it("with a pinned count, Slurm array ids are the shard indexes, so rerunning a few ids keeps N", () => {
    // `sbatch --array=3,7` as a rerun: Slurm then reports min 3, max 7, count 2.
    const rerun = {
      SLURM_ARRAY_TASK_ID: "7",
      SLURM_ARRAY_TASK_MIN: "3",
      SLURM_ARRAY_TASK_MAX: "7",
      SLURM_ARRAY_TASK_COUNT: "2",
    };
    expect(resolveShard({ env: { ...rerun, HERMES_BATCH_SHARD_COUNT: "16" } })).toEqual({ index: 7, count: 16 });
    expect(resolveShard({ shardCount: "16", env: rerun })).toEqual({ index: 7, count: 16 });
    expect(() => resolveShard({ env: { SLURM_ARRAY_TASK_ID: "16", HERMES_BATCH_SHARD_COUNT: "16" } })).toThrow(
      /submit --array=0-15/,
    );
  });

  it("detects Kubernetes Indexed Jobs with the count from --shard-count or HERMES_BATCH_SHARD_COUNT", () => {
    expect(resolveShard({ env: { JOB_COMPLETION_INDEX: "7", HERMES_BATCH_SHARD_COUNT: "16" } })).toEqual({
      index: 7,
      count: 16,
    });
    expect(
      resolveShard({ shardCount: "8", env: { JOB_COMPLETION_INDEX: "7", HERMES_BATCH_SHARD_COUNT: "16" } }),
    ).toEqual({ index: 7, count: 8 });
    expect(() => resolveShard({ env: { JOB_COMPLETION_INDEX: "7" } })).toThrow(
      /JOB_COMPLETION_INDEX=7 .* set HERMES_BATCH_SHARD_COUNT to the Job's completions/,
    );
    expect(() => resolveShard({ env: { JOB_COMPLETION_INDEX: "16", HERMES_BATCH_SHARD_COUNT: "16" } })).toThrow(
      /out of range/,
    );
    expect(() => resolveShard({ env: { JOB_COMPLETION_INDEX: "1", HERMES_BATCH_SHARD_COUNT: "0" } })).toThrow(
      /HERMES_BATCH_SHARD_COUNT must be at least 1/,
    );
    expect(() => resolveShard({ shardCount: "two", env: { JOB_COMPLETION_INDEX: "1" } })).toThrow(
      /--shard-count must be a whole number/,
    );
  });

  it("refuses a shard count without an index (every pod would run the whole dataset into one folder)", () => {
    expect(() => resolveShard({ env: { HERMES_BATCH_SHARD_COUNT: "16" } })).toThrow(
      /no shard index was found.*completionMode: Indexed/,
    );
    expect(() => resolveShard({ shardCount: "4", env: none })).toThrow(
      /--shard-count gives a shard count \(4\) but no shard index/,
    );
  });
});

describe("taskInShard", () => {
  it("puts every task id in exactly one shard, roughly balanced", () => {
    const count = 7;
    const sizes = new Array<number>(count).fill(0);
    for (let i = 0; i < 7000; i++) {
      const id = `task_${i}`;
      const owners = Array.from({ length: count }, (_, index) => index).filter((index) =>
        taskInShard(id, { index, count }),
      );
      expect(owners).toHaveLength(1);
      sizes[owners[0]!]!++;
    }
    for (const n of sizes) expect(Math.abs(n - 1000)).toBeLessThan(150); // σ ≈ 29
  });

  it("is a fixed function of the id (sha256, first 8 bytes big-endian, mod N): stable across processes and versions", () => {
    // Values computed independently (Python hashlib); changing them would move tasks of existing shard folders.
    const expected: [string, number, number, number][] = [
      ["task_0", 14, 0, 718],
      ["task_1", 13, 2, 517],
      ["a", 10, 1, 250],
      ["ü-β", 5, 0, 933],
      ["42", 13, 0, 637],
    ];
    for (const [id, of16, of3, of1000] of expected) {
      expect([shardOfTask(id, 16), shardOfTask(id, 3), shardOfTask(id, 1000)]).toEqual([of16, of3, of1000]);
    }
    expect(taskInShard("anything", { index: 0, count: 1 })).toBe(true);
  });
});

describe("shard folders", () => {
  it("names them <run>/shards/<i>-of-<N> with padding, and parses any padding back", () => {
    const s: Shard = { index: 3, count: 16 };
    expect(shardDirName(s)).toBe("0003-of-0016");
    expect(shardDirName({ index: 12345, count: 100000 })).toBe("012345-of-100000");
    expect(shardRunName("exp1", s)).toBe("exp1/shards/0003-of-0016");
    expect(shardRunDir("/tmp/runs", "exp1", s)).toBe("/tmp/runs/exp1/shards/0003-of-0016");
    expect(parseShardDirName("0003-of-0016")).toEqual(s);
    expect(parseShardDirName("3-of-16")).toEqual(s);
    expect(parseShardDirName("16-of-16")).toBeUndefined();
    expect(parseShardDirName("shard-3")).toBeUndefined();
  });
});

describe("configFingerprint", () => {
  it("ignores per-machine settings, and sees the seed, the model and the dataset's content (not its path)", async () => {
    const data = join(work, "fp-data.jsonl");
    const copy = join(work, "fp-copy.jsonl");
    writeFileSync(data, '{"prompt":"a"}\n{"prompt":"b"}\n');
    writeFileSync(copy, '{"prompt":"a"}\n{"prompt":"b"}\n');
    const base = { dataset: data, model: "m1", seed: 3, api_key: "k1" };
    const fp = await configFingerprint(RunConfigSchema.parse(base));
    expect(fp).toMatch(/^sha256:[0-9a-f]{64}$/);
    const perMachine = {
      ...base,
      run_name: "other",
      output_dir: "/x",
      workers: 9,
      concurrency: 3,
      resume: true,
      api_key: "k2",
      progress: "none" as const,
    };
    expect(await configFingerprint(RunConfigSchema.parse(perMachine))).toBe(fp);
    expect(await configFingerprint(RunConfigSchema.parse({ ...base, dataset: copy }))).toBe(fp);
    expect(await configFingerprint(RunConfigSchema.parse({ ...base, seed: 4 }))).not.toBe(fp);
    expect(await configFingerprint(RunConfigSchema.parse({ ...base, model: "m2" }))).not.toBe(fp);
    expect(await configFingerprint(RunConfigSchema.parse({ ...base, max_turns: 11 }))).not.toBe(fp);
    writeFileSync(copy, '{"prompt":"a"}\n{"prompt":"c"}\n');
    expect(await configFingerprint(RunConfigSchema.parse({ ...base, dataset: copy }))).not.toBe(fp);
    await expect(
      configFingerprint(RunConfigSchema.parse({ ...base, dataset: join(work, "nope.jsonl") })),
    ).rejects.toThrow(/dataset .*nope\.jsonl: cannot read it.*ENOENT/);
  });
});

// ---------- merge, end to end ----------

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function merge(args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, "merge", ...args],
      { cwd: work, env: { ...process.env, HOME: work, NO_COLOR: "1" }, timeout: 90_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Task ids that hash to each of 3 shards. */
function idsByShard(count: number, perShard: number): string[][] {
  const out: string[][] = Array.from({ length: count }, () => []);
  for (let k = 0; out.some((l) => l.length < perShard); k++) {
    const id = `task-${k}`;
    const list = out[shardOfTask(id, count)]!;
    if (list.length < perShard) list.push(id);
  }
  return out;
}

const IDS = idsByShard(3, 3);
const [A, B, C] = IDS[0]!;
const [D, E, F] = IDS[1]!;
const [G] = IDS[2]!;
/** The dataset the shards ran over (data.jsonl in the merge's working folder): each task has a result somewhere. */
const DATASET_IDS = [A, B, C, D, E, F, G] as string[];

function entry(taskId: string, promptIndex: number): string {
  return JSON.stringify({
    prompt_index: promptIndex,
    task_id: taskId,
    conversations: [
      { from: "human", value: `prompt ${taskId}` },
      { from: "gpt", value: "<think>\nr\n</think>\nok" },
    ],
    messages: [
      { role: "user", content: `prompt ${taskId}` },
      { role: "assistant", content: "ok", reasoning: "r" },
    ],
    tools: [],
    metadata: { model: "m1" },
    completed: true,
    partial: false,
    outcome: "completed",
    api_calls: 2,
    toolsets_used: ["terminal"],
    tool_stats: { terminal: { count: 2, success: 1, failure: 1 } },
    tool_error_counts: { terminal: 1 },
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    approvals: [],
    final_response: "ok",
    duration_ms: 100,
  });
}

function failure(taskId: string, attempt: number): string {
  return JSON.stringify({
    prompt_index: 0,
    task_id: taskId,
    outcome: "model_error",
    completed: false,
    partial: false,
    error: `HTTP 500 (attempt ${attempt})`,
    metadata: { attempt },
  });
}

function dropped(taskId: string): string {
  return JSON.stringify({ ...JSON.parse(entry(taskId, 0)), dropped: "no_reasoning" });
}

interface ShardFiles {
  trajectories?: string[];
  failed?: string[];
  dropped?: string[];
  /** Raw text appended to trajectories.jsonl (a torn tail). */
  tail?: string;
  seed?: number;
  fingerprint?: string;
  finished?: boolean;
  dirName?: string;
}

function writeShard(runDir: string, index: number, count: number, files: ShardFiles): string {
  const dir = join(runDir, "shards", files.dirName ?? shardDirName({ index, count }));
  mkdirSync(dir, { recursive: true });
  const lines = (l: string[] | undefined) => (l ?? []).map((x) => `${x}\n`).join("");
  writeFileSync(join(dir, "trajectories.jsonl"), lines(files.trajectories) + (files.tail ?? ""));
  writeFileSync(join(dir, "failed.jsonl"), lines(files.failed));
  writeFileSync(join(dir, "dropped.jsonl"), lines(files.dropped));
  const fingerprint = files.fingerprint ?? "sha256:" + "a".repeat(64);
  const runYaml = {
    dataset: "data.jsonl",
    run_name: "exp",
    output_dir: "runs",
    model: "m1",
    api_key: "<redacted>",
    seed: files.seed ?? 0,
    workers: 2 + index,
    max_turns: 10,
    config_fingerprint: fingerprint,
    shard: `${index}/${count}`,
  };
  writeFileSync(join(dir, "run.yaml"), YAML.stringify(runYaml));
  writeFileSync(
    join(dir, "checkpoint.json"),
    JSON.stringify({
      run_name: "exp",
      config_fingerprint: fingerprint,
      shard: `${index}/${count}`,
      finished: files.finished ?? true,
    }),
  );
  // The completion record a shard writes once at its end; a shard that did not finish has none.
  if (files.finished !== false) {
    const at = new Date(Date.UTC(2026, 0, 1, 0, index)).toISOString();
    const end = new Date(Date.UTC(2026, 0, 1, 1, index)).toISOString();
    const owned = DATASET_IDS.filter((id) => shardOfTask(id, count) === index);
    const invocation = {
      started_at: at,
      ended_at: end,
      busy_seconds: 3600,
      state: "finished",
      exit_code: 0,
      done: 0,
      failed: 0,
      dropped: 0,
    };
    writeFileSync(
      join(dir, "shard-complete.json"),
      JSON.stringify({
        version: 1,
        shard: { index, count },
        run_name: "exp",
        config_fingerprint: fingerprint,
        state: "finished",
        stopped_early: null,
        epochs: 1,
        owned_ids: owned,
        counts: { owned: owned.length, done: 0, failed: 0, dropped: 0, missing: 0 },
        failed_ids: [],
        missing_ids: [],
        started_at: at,
        ended_at: end,
        busy_seconds: 3600,
        invocations: [invocation],
      }),
    );
  }
  return dir;
}

/** The standard three shards, with one duplicate trajectory, one done-vs-failed conflict and a torn line. */
function writeThreeShards(runDir: string, over: Partial<Record<0 | 1 | 2, Partial<ShardFiles>>> = {}): void {
  writeShard(runDir, 0, 3, {
    trajectories: [entry(A, 0)],
    failed: [failure(B, 1), failure(B, 2)],
    dropped: [dropped(C)],
    ...over[0],
  });
  writeShard(runDir, 1, 3, {
    trajectories: [entry(D, 3), entry(E, 4), entry(A, 0)],
    failed: [failure(F, 1)],
    ...over[1],
  });
  writeShard(runDir, 2, 3, {
    trajectories: [entry(G, 6)],
    failed: [failure(D, 1)],
    tail: '{"task_id":"torn","prom',
    ...over[2],
  });
}

function lines(path: string): string[] {
  return readFileSync(path, "utf8").split("\n").filter(Boolean);
}

const RESULT_FILES = [
  "trajectories.jsonl",
  "failed.jsonl",
  "dropped.jsonl",
  "statistics.json",
  "summary.csv",
  "merge.json",
];

describe("hermes-batch merge", () => {
  const dirs = {
    good: "",
    mismatch: "",
    missing: "",
    unfinished: "",
    unmerged: "",
    mixed: "",
  };
  const r = {} as Record<
    | "good"
    | "again"
    | "mismatch"
    | "forced"
    | "missing"
    | "partial"
    | "unfinished"
    | "unmerged"
    | "unmergedOut"
    | "mixed"
    | "noArg",
    Result
  >;

  beforeAll(async () => {
    writeFileSync(
      join(work, "data.jsonl"),
      DATASET_IDS.map((id) => JSON.stringify({ id, prompt: `prompt ${id}` })).join("\n") + "\n",
    );
    for (const k of Object.keys(dirs) as (keyof typeof dirs)[]) dirs[k] = join(work, "runs", k);
    writeThreeShards(dirs.good);
    writeThreeShards(dirs.mismatch, { 2: { seed: 1, fingerprint: "sha256:" + "b".repeat(64) } });
    writeThreeShards(dirs.missing);
    rmSync(join(dirs.missing, "shards", shardDirName({ index: 1, count: 3 })), { recursive: true });
    writeThreeShards(dirs.unfinished, { 2: { finished: false } });
    writeThreeShards(dirs.unmerged);
    writeFileSync(join(dirs.unmerged, "trajectories.jsonl"), entry("from-an-unsharded-run", 0) + "\n");
    writeThreeShards(dirs.mixed);
    writeShard(dirs.mixed, 0, 1, {});

    // Sequential where a case depends on an earlier one; two processes at a time (two cores).
    const chains: (() => Promise<void>)[][] = [
      [
        async () => void (r.good = await merge([dirs.good])),
        async () => {
          const before = readFileSync(join(dirs.good, "trajectories.jsonl"), "utf8");
          r.again = await merge([dirs.good]);
          expect(readFileSync(join(dirs.good, "trajectories.jsonl"), "utf8")).toBe(before);
        },
        async () => void (r.mismatch = await merge([dirs.mismatch])),
        async () => void (r.forced = await merge([dirs.mismatch, "--force"])),
        async () => void (r.noArg = await merge([])),
      ],
      [
        async () => void (r.missing = await merge([dirs.missing])),
        async () => void (r.partial = await merge([dirs.missing, "--allow-partial"])),
        async () => void (r.unfinished = await merge([dirs.unfinished])),
        async () => void (r.unmerged = await merge([dirs.unmerged])),
        async () => void (r.unmergedOut = await merge([dirs.unmerged, "--out", join(work, "merged-elsewhere")])),
        async () => void (r.mixed = await merge([dirs.mixed])),
        async () => {
          writeFileSync(join(work, "a-file"), "not a folder");
          r.outFile = await merge([dirs.good, "--out", join(work, "a-file")]);
        },
      ],
    ];
    await Promise.all(
      chains.map(async (chain) => {
        for (const step of chain) await step();
      }),
    );
  }, 300_000);

  it("merges three shards: one line per task, bytes unchanged, only the owning shard's results", () => {
    expect(r.good.code, r.good.stderr).toBe(1); // merged; B and F failed
    const traj = lines(join(dirs.good, "trajectories.jsonl"));
    expect(traj).toEqual([entry(A, 0), entry(D, 3), entry(E, 4), entry(G, 6)]);
    expect(lines(join(dirs.good, "dropped.jsonl"))).toEqual([dropped(C)]);
    // B's two attempts are its own shard's history; D's failure in shard 2, which does not own D, is left out.
    expect(lines(join(dirs.good, "failed.jsonl"))).toEqual([failure(B, 1), failure(B, 2), failure(F, 1)]);
    for (const f of ["trajectories.jsonl", "failed.jsonl", "dropped.jsonl"])
      expect(existsSync(join(dirs.good, `${f}.merge-tmp`))).toBe(false);
  });

  it("warns about lines of tasks a shard does not own and the torn line, and prints a summary", () => {
    expect(r.good.stdout).toContain(`merged all 3 shard(s) from ${join(dirs.good, "shards")} → ${dirs.good}`);
    expect(r.good.stdout).toContain(
      `2 task(s) failed; rerun these shards with --retry-failed (\`hermes-batch shards ${dirs.good}\` prints the commands), then merge again:\n    shard 0/3: ${B}\n    shard 1/3: ${F}\n`,
    );
    expect(r.good.stdout).toContain("tasks: 4 done, 2 failed, 1 dropped");
    expect(r.good.stdout).toContain("duplicates skipped: 0\n");
    expect(r.good.stdout).toContain("left out: 2 line(s) of tasks their shard does not own");
    expect(r.good.stdout).toContain(`config fingerprint: sha256:${"a".repeat(64)} (all shards agree)`);
    expect(r.good.stderr).not.toContain("duplicate line(s) skipped");
    expect(r.good.stderr).toMatch(/warning: skipped 1 unreadable line.*0002-of-0003\/trajectories\.jsonl:2/);
    expect(r.good.stderr).toMatch(
      /warning: left out 2 result line\(s\) of tasks their shard does not own: 2 in a shard their task id does not hash to/,
    );
    expect(r.good.stderr).toContain(`0001-of-0003/trajectories.jsonl:3 (${A})`);
    expect(r.good.stderr).toContain(`0002-of-0003/failed.jsonl:1 (${D})`);
  });

  it("rebuilds statistics.json, summary.csv, run.yaml, checkpoint.json and merge.json from the merged files", () => {
    const stats = JSON.parse(readFileSync(join(dirs.good, "statistics.json"), "utf8"));
    expect(stats.run_name).toBe("exp");
    expect(stats.model).toBe("m1");
    // The original's keys in its order (batch_runner.py final_stats), then ours.
    expect(Object.keys(stats).slice(0, 12)).toEqual([
      "run_name",
      "distribution",
      "total_prompts",
      "total_batches",
      "batch_size",
      "model",
      "completed_at",
      "duration_seconds",
      "tool_statistics",
      "reasoning_statistics",
      "started_at",
      "completed_at_utc",
    ]);
    expect(stats.tasks).toEqual({ total: 7, trajectories: 4, failed: 2, dropped: 1 });
    expect(stats.outcomes).toMatchObject({ completed: 4, model_error: 2 });
    expect(stats.tool_statistics.terminal).toMatchObject({ count: 8, success: 4, failure: 4 });
    // Four trajectories and the dropped one (its tokens were spent): 5 × (10 + 5).
    expect(stats.token_usage.agent).toEqual({ prompt_tokens: 50, completion_tokens: 25, total_tokens: 75 });
    expect(stats.filtered).toEqual({ dropped_unknown_tools: 0, dropped_no_reasoning: 1, dropped_empty_response: 0 });

    const csv = lines(join(dirs.good, "summary.csv"));
    expect(csv[0]).toMatch(/^task_id,prompt_index,outcome,/);
    expect(
      csv
        .slice(1)
        .map((l) => l.split(",")[0])
        .sort(),
    ).toEqual([A, B, D, E, F, G].sort());

    const yaml = YAML.parse(readFileSync(join(dirs.good, "run.yaml"), "utf8"));
    expect(yaml.shard).toBeUndefined();
    expect(yaml).toMatchObject({ run_name: "exp", seed: 0, config_fingerprint: `sha256:${"a".repeat(64)}` });

    const cp = JSON.parse(readFileSync(join(dirs.good, "checkpoint.json"), "utf8"));
    expect(cp).toMatchObject({
      run_name: "exp",
      done: 4,
      failed: 2,
      dropped: 1,
      total_in_dataset_slice: 7,
      finished: true,
    });
    expect(cp.merged_shards).toBeUndefined(); // the keys of an unsharded run's checkpoint
    // Timing from the shards' records: first start, last end; busy time summed in merge.json.
    expect(stats.started_at).toBe("2026-01-01T00:00:00.000Z");
    expect(stats.completed_at_utc).toBe("2026-01-01T01:02:00.000Z");
    expect(new Date(stats.completed_at).getTime()).toBe(Date.parse("2026-01-01T01:02:00.000Z")); // naive local time
    expect(stats.total_prompts).toBe(7);
    expect(stats.total_batches).toBe(1);

    const info = JSON.parse(readFileSync(join(dirs.good, "merge.json"), "utf8"));
    expect(info).toMatchObject({
      shard_count: 3,
      merged_shards: [0, 1, 2],
      missing_shards: [],
      complete: true,
      failed_ids: [
        { shard: 0, ids: [B] },
        { shard: 1, ids: [F] },
      ],
      timing: { started_at: "2026-01-01T00:00:00.000Z", ended_at: "2026-01-01T01:02:00.000Z", busy_seconds: 10800 },
      lines: { trajectories: 4, failed: 3, dropped: 1 },
      duplicates: { done: 0, failed_in_two_shards: 0, failed_but_done_elsewhere: 0, tasks_in_several_shards: 0 },
      misplaced_lines: 2,
      not_in_dataset_lines: 0,
      left_out_lines: 2,
      bad_lines: 1,
    });
  });

  it("can merge again (its own earlier output is overwritten, shard folders are untouched)", () => {
    expect(r.again.code, r.again.stderr).toBe(1);
    expect(lines(join(dirs.good, "shards", "0001-of-0003", "trajectories.jsonl"))).toHaveLength(3);
  });

  it("refuses shards with different config fingerprints (exit 2), naming the shards and the setting", () => {
    expect(r.mismatch.code).toBe(2);
    expect(r.mismatch.stderr).toContain("the shards ran with different configurations");
    expect(r.mismatch.stderr).toMatch(/sha256:a+…: shard\(s\) 0,1\n/);
    expect(r.mismatch.stderr).toMatch(/sha256:b+…: shard\(s\) 2: differ from shard 0 in: seed \(0 ≠ 1\)\n/);
    expect(r.mismatch.stderr).not.toContain("workers"); // per-machine settings may differ
    expect(r.mismatch.stderr).toContain("nothing was merged (--force merges anyway)");
    expect(r.mismatch.stdout).toBe("");
    // The --force run came after; before it nothing had been written (checked by the partial case too).
    expect(r.forced.code, r.forced.stderr).toBe(1);
    expect(r.forced.stderr).toContain("(merging anyway: --force)");
    expect(r.forced.stdout).toContain("config fingerprint: 2 different (merged with --force)");
    expect(lines(join(dirs.mismatch, "trajectories.jsonl"))).toHaveLength(4);
  });

  it("refuses an --out that is a file, in one line, exit 2", () => {
    expect(r.outFile.code).toBe(2);
    expect(r.outFile.stderr).toContain(`--out ${join(work, "a-file")} is a file: the merged run needs a folder`);
    expect(readFileSync(join(work, "a-file"), "utf8")).toBe("not a folder");
  });

  it("refuses missing shards (exit 4) naming the shard and its ids; --allow-partial merges the rest and names what it leaves out", () => {
    expect(r.missing.code).toBe(4);
    expect(r.missing.stderr).toContain(
      "1 of 3 shard(s) not finished: 1\n  shard 1/3: missing — no folder (never started)",
    );
    expect(r.missing.stderr).toContain(`missing ids: ${[D, E, F].join(", ")}`);
    expect(r.missing.stderr).toContain("nothing was merged (--allow-partial merges what is there)");
    expect(r.partial.code, r.partial.stderr).toBe(4);
    expect(r.partial.stdout).toContain("merged a PARTIAL run (--allow-partial)");
    expect(r.partial.stdout).toContain("left out: 3 task(s) of shard(s) 1");
    expect(r.partial.stdout).not.toContain("merged all");
    expect(lines(join(dirs.missing, "trajectories.jsonl"))).toEqual([entry(A, 0), entry(G, 6)]);
    // Without shard 1, D has no result: its failure in shard 2, which does not own it, is no result of D.
    expect(lines(join(dirs.missing, "failed.jsonl"))).toEqual([failure(B, 1), failure(B, 2)]);
    const info = JSON.parse(readFileSync(join(dirs.missing, "merge.json"), "utf8"));
    expect(info).toMatchObject({ merged_shards: [0, 2], missing_shards: [1] });
    expect(JSON.parse(readFileSync(join(dirs.missing, "checkpoint.json"), "utf8")).finished).toBe(false);
  });

  it("refuses a shard without its completion record (exit 4), writing nothing", () => {
    expect(r.unfinished.code).toBe(4);
    expect(r.unfinished.stderr).toMatch(/shard 2\/3: killed — no shard-complete\.json/);
    for (const f of RESULT_FILES) expect(existsSync(join(dirs.unfinished, f))).toBe(false);
  });

  it("never overwrites results no merge wrote, unless told where else to write", () => {
    expect(r.unmerged.code).toBe(2);
    expect(r.unmerged.stderr).toMatch(
      /already holds run results that no merge wrote: choose --out DIR, or pass --force/,
    );
    expect(lines(join(dirs.unmerged, "trajectories.jsonl"))).toEqual([entry("from-an-unsharded-run", 0)]);
    expect(r.unmergedOut.code, r.unmergedOut.stderr).toBe(1);
    expect(lines(join(work, "merged-elsewhere", "trajectories.jsonl"))).toHaveLength(4);
  });

  it("refuses mixed shard counts and a missing RUN_DIR argument (exit 2)", () => {
    expect(r.mixed.code).toBe(2);
    expect(r.mixed.stderr).toMatch(
      /mixes shard counts \(1 folder\(s\) of 1 shards, 3 folder\(s\) of 3 shards\)|mixes shard counts \(3 folder\(s\) of 3 shards, 1 folder\(s\) of 1 shards\)/,
    );
    expect(r.noArg.code).toBe(2);
    expect(r.noArg.stderr).toContain("expected one RUN_DIR, got none");
  });
});
