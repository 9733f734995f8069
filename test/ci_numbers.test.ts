/**
 * Numbers a CI team gates on, end to end with the built CLI and the scripted model (no network): results that a
 * shard holds for a task it does not own never replace the owner's result in a merge; JUnit marks as absent only
 * tasks the current run lacks, not epochs a run with fewer epochs never had; the end-of-run scores line never
 * prints a pass@k that no task could be measured for; bad --max-drop values are refused.
 */
import { execFileSync } from "node:child_process";
import { execa } from "execa";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardOfTask } from "../src/shard/assign.js";
import { cleanEnv, NO_SCHEDULER, ROOT, runCliInProcess, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text, httpError, type FakeOpenAI, type Reply } from "./helpers/fake_openai.js";

/** Rows the scripted model answers right (expected = a + 1) or wrong (expected far off). */
function dataset(path: string, pattern: string): string {
  const rows = [...pattern].map((c, i) =>
    JSON.stringify({
      id: `t${i}`,
      prompt: `Use the shell to compute ${i + 1} + 1 and tell me the result.`,
      toolsets: ["terminal"],
      expected: { value: c === "P" ? i + 2 : i + 1002, match: "number" },
    }),
  );
  writeFileSync(path, rows.join("\n") + "\n");
  return path;
}

const readLines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

let sharded: Promise<string> | undefined;
/** Run folder `exp`: 20 rows (10 pass, 10 fail) in 3 shards, made once (the merge test reads it, the lock test copies it). */
function threeShardRun(): Promise<string> {
  return (sharded ??= (async () => {
    const dir = tempDir("hb-ci-shards-");
    const data = dataset(join(dir, "data.jsonl"), "PPPPPPPPPPFFFFFFFFFF");
    for (let i = 0; i < 3; i++) {
      const r = await runCliInProcess([
        "run",
        data,
        "--model",
        "scripted",
        "--run-name",
        "exp",
        "--output-dir",
        join(dir, "runs"),
        "--progress",
        "none",
        "--shard",
        `${i}/3`,
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    return join(dir, "runs", "exp");
  })());
}

describe("merge keeps each task's result from the shard that owns it", () => {
  let dir: string;
  let exp: string;
  const N = 3;
  beforeAll(async () => {
    dir = tempDir("hb-ci-merge-");
    exp = await threeShardRun();
  }, 120_000);

  it("a copy of another shard's task, with another verdict, in a lower shard's folder changes no number", async () => {
    const exact = await runCliInProcess(["merge", exp, "--out", join(dir, "exact")]);
    expect(exact.exitCode, exact.stderr).toBe(0);
    const exactStats = JSON.parse(readFileSync(join(dir, "exact", "statistics.json"), "utf8"));

    // A stale folder copy: shard 0's folder also holds a result of a task shard 2 owns, with the opposite verdict,
    // and one of a task id the dataset does not have at all.
    const run = join(dir, "tampered");
    mkdirSync(run);
    cpSync(join(exp, "shards"), join(run, "shards"), { recursive: true });
    const pad = (i: number) => `${String(i).padStart(4, "0")}-of-${String(N).padStart(4, "0")}`;
    const owner = readLines(join(run, "shards", pad(2), "trajectories.jsonl"))[0]!;
    expect(shardOfTask(owner.task_id, N)).toBe(2);
    const copy = { ...owner, score: { ...owner.score, passed: !owner.score.passed } };
    const ghostId = ["ghost", "ghost1", "ghost2", "ghost3", "ghost4"].find((id) => shardOfTask(id, N) === 0)!;
    const ghost = { ...owner, task_id: ghostId, score: { ...owner.score, passed: true } };
    appendFileSync(
      join(run, "shards", pad(0), "trajectories.jsonl"),
      `${JSON.stringify(copy)}\n${JSON.stringify(ghost)}\n`,
    );

    const r = await runCliInProcess(["merge", run]);
    expect(r.exitCode, r.stderr).toBe(0);
    const merged = readLines(join(run, "trajectories.jsonl"));
    expect(merged.map((l) => l.task_id).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `t${i}`).sort());
    expect(merged.find((l) => l.task_id === owner.task_id)!.score.passed).toBe(owner.score.passed);
    const stats = JSON.parse(readFileSync(join(run, "statistics.json"), "utf8"));
    expect(stats.scores.passed).toBe(exactStats.scores.passed);
    expect(stats.scores.scored).toBe(20);
    expect(stats.tasks).toEqual(exactStats.tasks);
    // Both left-out lines are named.
    expect(r.stderr).toContain(owner.task_id);
    expect(r.stderr).toContain(ghostId);
    const info = JSON.parse(readFileSync(join(run, "merge.json"), "utf8"));
    expect(info.left_out_lines).toBe(2);
  }, 120_000);
});

describe("JUnit and a baseline with more epochs than the current run", () => {
  it("no task present in both runs is <skipped> as absent from the current run", async () => {
    const dir = tempDir("hb-ci-junit-");
    const data = dataset(join(dir, "data.jsonl"), "PPF");
    const base = ["run", data, "--model", "scripted", "--output-dir", join(dir, "runs"), "--progress", "none"];
    expect((await runCliInProcess([...base, "--run-name", "three", "--epochs", "3"])).exitCode).toBe(0);
    expect((await runCliInProcess([...base, "--run-name", "one"])).exitCode).toBe(0);
    // And a current run without t2 at all: that one task is absent.
    const partial = join(dir, "partial.jsonl");
    writeFileSync(partial, readFileSync(data, "utf8").split("\n").slice(0, 2).join("\n") + "\n");
    expect(
      (
        await runCliInProcess([
          "run",
          partial,
          "--model",
          "scripted",
          "--output-dir",
          join(dir, "runs"),
          "--progress",
          "none",
          "--run-name",
          "two",
        ])
      ).exitCode,
    ).toBe(0);
    const junitOf = async (current: string) => {
      const file = join(dir, `${current}.xml`);
      const r = await runCliInProcess([
        "compare",
        join(dir, "runs", "three"),
        join(dir, "runs", current),
        "--junit",
        file,
        "--max-unscored",
        "100%",
      ]);
      const parsed = execFileSync(
        "python3",
        [
          "-c",
          "import sys,json,xml.etree.ElementTree as ET; s=ET.parse(sys.argv[1]).getroot().find('testsuite'); print(json.dumps({'skipped':s.get('skipped'),'tests':s.get('tests'),'cases':[[c.get('name'),[e.tag for e in c]] for c in s.findall('testcase')]}))",
          file,
        ],
        { encoding: "utf8" },
      );
      return { r, x: JSON.parse(parsed) as { skipped: string; tests: string; cases: [string, string[]][] } };
    };
    // The report counts tasks as tasks, not task × epoch results.
    const rep = await runCliInProcess(["report", join(dir, "runs", "three"), "-o", join(dir, "three.html")]);
    expect(rep.stdout).toMatch(/^report: 3 task\(s\) × 3 epochs \(9 results\), \d+ kB/);
    const one = await junitOf("one");
    expect(one.r.stdout).not.toContain("absent from the current run");
    expect(one.x.skipped).toBe("0");
    expect(one.x.cases.filter(([, tags]) => tags.includes("skipped"))).toEqual([]);
    const two = await junitOf("two");
    expect(two.r.stdout).toContain("1 absent from the current run");
    expect(two.x.skipped).toBe("1");
    expect(two.x.cases.filter(([, tags]) => tags.includes("skipped")).map(([name]) => name)).toEqual(["t2 [epoch 0]"]);
  }, 120_000);
});

describe("the end-of-run scores line and pass@k when some epochs are unscored", () => {
  let server: FakeOpenAI;
  const seen = new Map<string, number>();
  beforeAll(async () => {
    // Every task's first request is answered right, every later one fails (no retries): one scored epoch each.
    server = await startFakeOpenAI((req): Reply => {
      const id = /key=(\w+)/.exec(JSON.stringify(req.body?.messages ?? ""))?.[1] ?? "";
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      return n === 1 ? text("ANSWER-OK") : httpError(500, "boom");
    });
  });
  afterAll(async () => server?.close());

  it("prints no pass@3 when no task has 3 scored epochs, and says over how many tasks each k is measured", async () => {
    const dir = tempDir("hb-ci-passk-");
    const data = join(dir, "data.jsonl");
    writeFileSync(
      data,
      ["a", "b"]
        .map((k) => JSON.stringify({ id: k, prompt: `Say it. key=${k}`, toolsets: ["todo"], expected: "ANSWER-OK" }))
        .join("\n") + "\n",
    );
    const r = await runCliInProcess([
      "run",
      data,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--api-key",
      "sk-test",
      "--run-name",
      "k",
      "--output-dir",
      join(dir, "runs"),
      "--epochs",
      "3",
      "--max-retries",
      "0",
      "--concurrency",
      "1",
      "--stop-after-failures",
      "0",
      "--progress",
      "none",
    ]);
    expect(r.exitCode, r.stderr).toBe(1); // the failed epochs
    const line = r.stdout.split("\n").find((l) => l.startsWith("scores:"))!;
    expect(line).toContain("100.0 % passed (2/2 scored");
    expect(line).not.toMatch(/pass@3 0\.0 %/);
    const stats = JSON.parse(readFileSync(join(dir, "runs", "k", "statistics.json"), "utf8"));
    expect(stats.scores.pass_at_k).toEqual({ "1": 1 });
    expect(stats.scores.pass_at_k_tasks).toEqual({ "1": 2, "2": 0, "3": 0 });
  }, 120_000);
});

describe("compare: the flag values and folders it refuses", () => {
  it("--max-drop in decimal points only (exit 2); a run folder compared with itself is not comparable (exit 3)", async () => {
    const dir = tempDir("hb-ci-flags-");
    const data = dataset(join(dir, "data.jsonl"), "P");
    for (const name of ["a", "b"]) {
      const args = ["run", data, "--model", "scripted", "--run-name", name, "--output-dir", join(dir, "runs")];
      expect((await runCliInProcess([...args, "--progress", "none"])).exitCode).toBe(0);
    }
    // Two runs of the same data (a copied folder, or the same folder twice, is refused: see below).
    const a = join(dir, "runs", "a");
    const b = join(dir, "runs", "b");
    for (const bad of ["0x10", "0b11", "0o7", "1e1"]) {
      const r = await runCliInProcess(["compare", a, b, "--max-drop", bad]);
      expect(r.exitCode, bad).toBe(2);
      expect(r.stderr.trim().split("\n"), bad).toHaveLength(1);
      expect(r.stderr, bad).toContain("--max-drop");
    }
    for (const good of ["5", "2.5", " 10 ", "0", "100"]) {
      expect((await runCliInProcess(["compare", a, b, "--max-drop", good])).exitCode, good).toBe(0);
    }
    // The same folder twice (a CI job whose current run reuses the baseline's name, or a symlink to it) passes
    // any gate: it is not a comparison.
    symlinkSync(a, join(dir, "link"));
    for (const other of [a, join(dir, "link"), `${a}/`]) {
      const r = await runCliInProcess(["compare", a, other]);
      expect(r.exitCode, other).toBe(3);
      expect(r.stdout, other).toContain("NOT COMPARABLE: the baseline and the current run are the same folder");
    }
  }, 120_000);
});

describe("report --baseline says what compare says", () => {
  const mainModel = (html: string) => {
    const m = /<script type="application\/gzip\+base64" id="hb-main">([^<]*)<\/script>/.exec(html)!;
    return JSON.parse(gunzipSync(Buffer.from(m[1]!.trim(), "base64")).toString("utf8"));
  };

  it("not comparable when the prompts differ, and the regression's reasons when there is one", async () => {
    const dir = tempDir("hb-ci-report-");
    const data = dataset(join(dir, "a.jsonl"), "PPPP");
    writeFileSync(join(dir, "b.jsonl"), readFileSync(data, "utf8").replaceAll("tell me the result", "say the result"));
    // The regression comes from the model, on the same rows: another answer key would make the runs not comparable.
    const wrongOnLast = await startFakeOpenAI((req): Reply => {
      const n = Number(/compute (\d+) \+ 1/.exec(JSON.stringify(req.body?.messages ?? ""))?.[1] ?? 0);
      return text(String(n === 4 ? 1004 : n + 1));
    });
    const run = async (file: string, name: string, model = ["--model", "scripted"]) =>
      expect(
        (
          await runCliInProcess([
            "run",
            join(dir, file),
            ...model,
            "--run-name",
            name,
            "--output-dir",
            join(dir, "runs"),
            "--progress",
            "none",
          ])
        ).exitCode,
      ).toBe(0);
    await run("a.jsonl", "a");
    await run("b.jsonl", "b");
    await run("a.jsonl", "c", ["--model", "m", "--base-url", wrongOnLast.baseURL, "--api-key", "k"]);
    await wrongOnLast.close();
    const runs = join(dir, "runs");

    const cmp = await runCliInProcess(["compare", join(runs, "a"), join(runs, "b")]);
    expect(cmp.exitCode).toBe(3);
    expect(cmp.stdout).toContain("NOT COMPARABLE: the dataset differs");
    const rep = await runCliInProcess([
      "report",
      join(runs, "b"),
      "--baseline",
      join(runs, "a"),
      "-o",
      join(dir, "b.html"),
    ]);
    expect(rep.exitCode, rep.stderr).toBe(0);
    const b = mainModel(readFileSync(join(dir, "b.html"), "utf8")).baseline.comparison;
    expect(b.verdict).toBe("not_comparable");
    expect(b.gate_note).toContain("the dataset differs");

    const worse = await runCliInProcess(["compare", join(runs, "a"), join(runs, "c")]);
    expect(worse.exitCode).toBe(1);
    const repC = await runCliInProcess([
      "report",
      join(runs, "c"),
      "--baseline",
      join(runs, "a"),
      "-o",
      join(dir, "c.html"),
    ]);
    expect(repC.exitCode, repC.stderr).toBe(0);
    const c = mainModel(readFileSync(join(dir, "c.html"), "utf8")).baseline.comparison;
    expect(c.verdict).toBe("regression");
    expect(c.regressions.join("; ")).toContain("1 task(s) passed every epoch of the baseline");

    // The gate CI applies is the one the page shows: --max-drop 50 lets the 25-point drop through in both.
    const within = await runCliInProcess(["compare", join(runs, "a"), join(runs, "c"), "--max-drop", "50"]);
    expect(within.exitCode, within.stdout).toBe(0);
    const gated = join(dir, "c50.html");
    const repGated = await runCliInProcess([
      "report",
      join(runs, "c"),
      "--baseline",
      join(runs, "a"),
      "--max-drop",
      "50",
      "-o",
      gated,
    ]);
    expect(repGated.exitCode, repGated.stderr).toBe(0);
    const g = mainModel(readFileSync(gated, "utf8")).baseline.comparison;
    expect(g.verdict).not.toBe("regression");
    expect(g.gate_note).toContain("--max-drop 50");
    const noBaseline = await runCliInProcess(["report", join(runs, "c"), "--max-drop", "50", "-o", gated]);
    expect(noBaseline.exitCode).toBe(2);
    expect(noBaseline.stderr).toContain("--max-drop needs --baseline");
  }, 120_000);
});

describe("a passing verdict names the baseline tasks it did not compare", () => {
  let server: FakeOpenAI;
  let crash = new Set<string>();
  beforeAll(async () => {
    server = await startFakeOpenAI((req): Reply => {
      const id = /key=(\w+)/.exec(JSON.stringify(req.body?.messages ?? ""))?.[1] ?? "";
      return crash.has(id) ? httpError(500, "boom") : text("ANSWER-OK");
    });
  });
  afterAll(async () => server?.close());

  it("two tasks that passed in the baseline crash now: within --max-unscored, yet said on the verdict line", async () => {
    const dir = tempDir("hb-ci-unscored-");
    const data = join(dir, "data.jsonl");
    const ids = Array.from({ length: 20 }, (_, i) => `k${i}`);
    writeFileSync(
      data,
      ids
        .map((k) => JSON.stringify({ id: k, prompt: `Say it. key=${k}`, toolsets: ["todo"], expected: "ANSWER-OK" }))
        .join("\n") + "\n",
    );
    const runArgs = (name: string) => [
      "run",
      data,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--api-key",
      "sk-test",
      "--run-name",
      name,
      "--output-dir",
      join(dir, "runs"),
      "--max-retries",
      "0",
      "--progress",
      "none",
    ];
    const run = (name: string) => runCliInProcess(runArgs(name));
    expect((await run("base")).exitCode).toBe(0);
    crash = new Set(["k3", "k7"]);
    expect((await run("cur")).exitCode).toBe(1);
    const md = join(dir, "pr.md");
    const r = await runCliInProcess(["compare", join(dir, "runs", "base"), join(dir, "runs", "cur"), "--markdown", md]);
    expect(r.exitCode).toBe(0); // 2 of 20 is within the default --max-unscored 10 %
    const verdict = r.stdout.trim().split("\n").at(-1)!;
    expect(verdict).toMatch(/^no regression: ±0\.0 pp/);
    expect(verdict).toContain("2 of 20 baseline task(s) not compared (2 model_error), within --max-unscored 10 %");
    expect(readFileSync(md, "utf8").split("\n")[0]).toContain("2 of 20 baseline task\\(s\\) not compared");
    // A baseline that stopped short (15 of the 20 tasks): the 5 others are judged by nothing, and the verdict says so.
    crash = new Set();
    expect((await runCliInProcess([...runArgs("short"), "--max-samples", "15"])).exitCode).toBe(0);
    const short = await runCliInProcess(["compare", join(dir, "runs", "short"), join(dir, "runs", "base")]);
    expect(short.exitCode).toBe(0);
    expect(short.stdout.trim().split("\n").at(-1)).toContain("5 task(s) only in the current run, not compared");
  }, 120_000);
});

describe("task ids with '#' and epochs", () => {
  // Task "a" epoch 1 and task "a#1" epoch 0 are two results; a key "id#epoch" made them one.
  const rows = ["a", "a#1"].map((id, i) =>
    JSON.stringify({
      id,
      prompt: `Use the shell to compute ${i + 1} + 1 and tell me the result.`,
      toolsets: ["terminal"],
      expected: { value: i + 2, match: "number" },
    }),
  );
  const pairs = (path: string) =>
    readLines(path)
      .map((l) => `${l.task_id}@${l.epoch ?? 0}`)
      .sort();
  const ALL = ["a#1@0", "a#1@1", "a@0", "a@1"];

  it("--resume after only 'a' epoch 1 was written still runs 'a#1' epoch 0", async () => {
    const dir = tempDir("hb-ci-hash-");
    const data = join(dir, "data.jsonl");
    writeFileSync(data, rows.join("\n") + "\n");
    const args = ["run", data, "--model", "scripted", "--output-dir", join(dir, "runs"), "--run-name", "h"];
    expect((await runCliInProcess([...args, "--epochs", "2", "--progress", "none"])).exitCode).toBe(0);
    const traj = join(dir, "runs", "h", "trajectories.jsonl");
    expect(pairs(traj)).toEqual(ALL);
    // As if killed when only "a" epoch 1 had finished.
    const kept = readFileSync(traj, "utf8")
      .split("\n")
      .filter((l) => l && JSON.parse(l).task_id === "a" && JSON.parse(l).epoch === 1);
    writeFileSync(traj, kept.join("\n") + "\n");
    const r = await runCliInProcess([...args, "--epochs", "2", "--progress", "none", "--resume"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(pairs(traj)).toEqual(ALL);
  }, 120_000);

  it("merge keeps 'a' epoch 1 and 'a#1' epoch 0 both", async () => {
    const dir = tempDir("hb-ci-hash-merge-");
    const data = join(dir, "data.jsonl");
    writeFileSync(data, rows.join("\n") + "\n");
    for (const i of [0, 1]) {
      const r = await runCliInProcess([
        "run",
        data,
        "--model",
        "scripted",
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        "h",
        "--epochs",
        "2",
        "--progress",
        "none",
        "--shard",
        `${i}/2`,
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const r = await runCliInProcess(["merge", join(dir, "runs", "h")]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toContain("duplicate");
    expect(pairs(join(dir, "runs", "h", "trajectories.jsonl"))).toEqual(ALL);
  }, 120_000);
});

describe("the rerun of a shard's failed tasks, as `shards` prints it", () => {
  let server: FakeOpenAI;
  const seen = new Map<string, number>();
  beforeAll(async () => {
    // k1 fails its first request (no retries), then answers.
    server = await startFakeOpenAI((req): Reply => {
      const id = /key=(\w+)/.exec(JSON.stringify(req.body?.messages ?? ""))?.[1] ?? "";
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      return id === "k1" && n === 1 ? httpError(500, "boom") : text("ANSWER-OK");
    });
  });
  afterAll(async () => server?.close());

  it("Slurm: the batch script given --retry-failed reruns the shard's failed task", async () => {
    const dir = tempDir("hb-ci-sbatch-");
    const data = join(dir, "data.jsonl");
    const ids = ["k0", "k1", "k2", "k3", "k4", "k5"];
    writeFileSync(
      data,
      ids
        .map((k) => JSON.stringify({ id: k, prompt: `Say it. key=${k}`, toolsets: ["todo"], expected: "ANSWER-OK" }))
        .join("\n") + "\n",
    );
    const shard = shardOfTask("k1", 2);
    const owned = ids.filter((k) => shardOfTask(k, 2) === shard);
    const env = {
      ...cleanEnv({ ...NO_SCHEDULER, OPENAI_API_KEY: "sk-test" }),
      SLURM_ARRAY_TASK_ID: String(shard),
      SLURM_ARRAY_JOB_ID: "77",
      SLURM_JOB_ID: "78",
      HERMES_BATCH_SHARD_COUNT: "2",
      HERMES_BATCH_CHECKOUT: ROOT,
      HERMES_BATCH_NODE: process.execPath,
      OUTPUT_DIR: join(dir, "runs"),
    };
    const sbatch = (extra: string[]) =>
      execa(
        "bash",
        [
          join(ROOT, "scripts", "slurm", "hermes-batch.sbatch"),
          data,
          "exp",
          "--model",
          "m",
          "--base-url",
          server.baseURL,
          "--max-retries",
          "0",
          ...extra,
        ],
        { cwd: dir, env, extendEnv: false, reject: false },
      );
    const shardDir = join(dir, "runs", "exp", "shards", `${String(shard).padStart(4, "0")}-of-0002`);
    const log = () =>
      readdirSync(shardDir)
        .filter((f) => f.endsWith(".log") && f.startsWith("slurm-"))
        .map((f) => readFileSync(join(shardDir, f), "utf8"))
        .join("\n");
    expect((await sbatch([])).exitCode, log()).toBe(1); // k1 failed
    const again = await sbatch(["--retry-failed"]);
    expect(again.exitCode, log()).toBe(0);
    expect(
      readLines(join(shardDir, "trajectories.jsonl"))
        .map((l) => l.task_id)
        .sort(),
    ).toEqual([...owned].sort());
  }, 120_000);
});

describe("the pass rate and its interval with unscored epochs", () => {
  let server: FakeOpenAI;
  const seen = new Map<string, number>();
  beforeAll(async () => {
    // k0…k4 pass their first epoch and fail the other nine for the endpoint (unscored); k5 fails all ten.
    server = await startFakeOpenAI((req): Reply => {
      const id = /key=(\w+)/.exec(JSON.stringify(req.body?.messages ?? ""))?.[1] ?? "";
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      if (id === "k5") return text("wrong");
      return n === 1 ? text("ANSWER-OK") : httpError(500, "boom");
    });
  });
  afterAll(async () => server?.close());

  it("the task is the unit: the rate is the mean of task rates, inside its own 95 % interval", async () => {
    const dir = tempDir("hb-ci-skew-");
    const data = join(dir, "data.jsonl");
    writeFileSync(
      data,
      ["k0", "k1", "k2", "k3", "k4", "k5"]
        .map((k) => JSON.stringify({ id: k, prompt: `Say it. key=${k}`, toolsets: ["todo"], expected: "ANSWER-OK" }))
        .join("\n") + "\n",
    );
    const r = await runCliInProcess([
      "run",
      data,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--api-key",
      "sk-test",
      "--run-name",
      "s",
      "--output-dir",
      join(dir, "runs"),
      "--epochs",
      "10",
      "--max-retries",
      "0",
      "--concurrency",
      "1",
      "--stop-after-failures",
      "0",
      "--progress",
      "none",
    ]);
    expect(r.exitCode).toBe(1);
    const s = JSON.parse(readFileSync(join(dir, "runs", "s", "statistics.json"), "utf8")).scores;
    expect([s.passed, s.scored, s.unscored]).toEqual([5, 15, 45]);
    // Five tasks passed every scored epoch, one failed all: 5 of 6 tasks, not 5 of 15 epochs.
    expect(s.pass_rate).toBeCloseTo(5 / 6, 12);
    expect(s.pass_rate).toBeGreaterThanOrEqual(s.ci95[0]);
    expect(s.pass_rate).toBeLessThanOrEqual(s.ci95[1]);
    const line = r.stdout.split("\n").find((l) => l.startsWith("scores:"))!;
    expect(line).toMatch(
      /^scores: 83\.3 % passed \(mean of 6 tasks' rates; 5\/15 scored epochs passed, 95 % CI 43\.6 %–97\.0 %\)/,
    );
    // compare shows the same rate for the run (against a copy of it).
    cpSync(join(dir, "runs", "s"), join(dir, "runs", "copy"), { recursive: true });
    const c = await runCliInProcess([
      "compare",
      join(dir, "runs", "copy"),
      join(dir, "runs", "s"),
      "--max-unscored",
      "100%",
    ]);
    expect(c.stdout).toContain("83.3 % passed");
  }, 120_000);
});

describe("submit.sh and the array indexes it is given", () => {
  it("ARRAY with a step (0-3:2) makes each shard's folder; a malformed ARRAY is refused before sbatch", async () => {
    const dir = tempDir("hb-ci-submit-");
    writeFileSync(join(dir, "data.jsonl"), '{"prompt":"x"}\n');
    // A fake sbatch on PATH that records its arguments and answers a job id.
    writeFileSync(join(dir, "sbatch"), `#!/bin/sh\necho "$@" >> "${join(dir, "sbatch.calls")}"\necho 42\n`, {
      mode: 0o755,
    });
    const env = { ...cleanEnv(NO_SCHEDULER), PATH: `${dir}:${process.env.PATH}`, OUTPUT_DIR: join(dir, "runs") };
    const submit = (array: string) =>
      execa("bash", [join(ROOT, "scripts", "slurm", "submit.sh"), "--", "data.jsonl", "exp", "--model", "m"], {
        cwd: dir,
        env: { ...env, SHARDS: "4", ARRAY: array },
        extendEnv: false,
        reject: false,
      });
    const stepped = await submit("0-3:2");
    expect(stepped.exitCode, stepped.stderr).toBe(0);
    expect(stepped.stderr).toBe("");
    // Slurm opens each task's --output file in its shard folder before the script runs: the folders must exist.
    expect(readdirSync(join(dir, "runs", "exp", "shards")).sort()).toEqual(["0000-of-0004", "0002-of-0004"]);
    for (const bad of ["0-3:x", "a", "1-", "0-9"]) {
      const r = await submit(bad);
      expect(r.exitCode, bad).toBe(2);
      expect(r.stderr, bad).toMatch(/^submit\.sh: /);
      expect(r.stderr.trim().split("\n"), bad).toHaveLength(1);
    }
    // Only the stepped submission reached sbatch (the array and its merge job).
    expect(readFileSync(join(dir, "sbatch.calls"), "utf8").trim().split("\n")).toHaveLength(2);
  });
});

describe("a shard whose lock names a host that is gone", () => {
  it("shards and merge say how to release it: the rerun they print would stop on that lock", async () => {
    const dir = tempDir("hb-ci-lock-");
    // A copy of a finished sharded run (its shards' folders are all `shards` and `merge` read).
    cpSync(await threeShardRun(), join(dir, "runs", "x"), { recursive: true });
    // Shard 1 as a node that died mid-run leaves it: no completion record, its lock naming that node.
    const shard = join(dir, "runs", "x", "shards", "0001-of-0003");
    rmSync(join(shard, "shard-complete.json"));
    writeFileSync(
      join(shard, ".lock"),
      JSON.stringify({ pid: 4242, host: "node-gone-17", started: "2026-01-01T00:00:00Z" }),
    );
    const s = await runCliInProcess(["shards", join(dir, "runs", "x")]);
    expect(s.exitCode).toBe(4);
    expect(s.stdout).toContain(`if node-gone-17 is gone, delete ${join(shard, ".lock")}`);
    const m = await runCliInProcess(["merge", join(dir, "runs", "x")]);
    expect(m.exitCode).toBe(4);
    expect(m.stderr).toContain(`if node-gone-17 is gone, delete ${join(shard, ".lock")}`);
  }, 120_000);
});
