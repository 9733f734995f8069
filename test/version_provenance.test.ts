/**
 * Which build of hermes-batch wrote a run folder (s13, defect 1). The version and the build's identity are
 * recorded with the run (checkpoint.json, each shard's completion record, a merge's run.yaml and merge.json), so:
 *  - `merge` of shards run by different versions refuses (exit 2, naming the shards and versions, as for a config
 *    mismatch) unless --force; shards of the same version built differently merge with a warning naming them;
 *  - `compare` of runs made by different versions says so in its header (not a failure);
 *  - folders of earlier versions, which recorded none, still merge and compare (their version is "unknown").
 * "Another build" is the real one copied with another package.json version (and, for a rebuild, one chunk
 * changed): exactly what a node with another checkout or install of hermes-batch runs.
 */
import { execa } from "execa";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, NO_SCHEDULER, ROOT, cleanEnv, runCliInProcess, tempDir } from "./helpers/cli.js";
import { writeRunFolder } from "./helpers/report_fixture.js";

const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const N = 2;
const IDS = Array.from({ length: 6 }, (_, i) => `t${i}`);

let dir: string;
let dataset: string;
/** The CLI of hermes-batch "9.9.9" (the same code, another version), and of this version rebuilt (another build). */
let otherVersionCli: string;
let rebuiltCli: string;

/** A copy of the built CLI in its own package folder: `version` in its package.json, `rebuilt` one chunk changed. */
function copyBuild(name: string, version: string, rebuilt = false): string {
  const root = join(dir, name);
  mkdirSync(join(root, "dist"), { recursive: true });
  cpSync(join(ROOT, "dist", "src"), join(root, "dist", "src"), {
    recursive: true,
    filter: (src) => !src.endsWith(".map"),
  });
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(join(root, "package.json"), JSON.stringify({ ...pkg, version }));
  // Its dependencies (the few the bundle leaves outside, and wasm files) as an install has them.
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  if (rebuilt) {
    const chunk = readdirSync(join(root, "dist", "src")).find((f) => f.startsWith("chunk-") && f.endsWith(".js"))!;
    writeFileSync(
      join(root, "dist", "src", chunk),
      `${readFileSync(join(root, "dist", "src", chunk), "utf8")}\n// rebuilt\n`,
    );
    // As scripts/build.mjs writes it for other code: the hash of the changed bundle.
    writeFileSync(join(root, "dist", "src", "build-id"), "0123456789abcdef\n");
  }
  return join(root, "dist", "src", "cli.js");
}

/** `hermes-batch ARGS` by `cli`: this build in the test process, another build as a child process. */
async function runWith(cli: string, args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  if (cli === CLI) return runCliInProcess(args, { cwd: dir, env: NO_SCHEDULER });
  const r = await execa("node", [cli, ...args], {
    cwd: dir,
    env: cleanEnv(NO_SCHEDULER),
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

const runArgs = (name: string, extra: string[] = []) => [
  "run",
  dataset,
  "--model",
  "scripted",
  "--run-name",
  name,
  "--output-dir",
  join(dir, "runs"),
  "--workers",
  "1",
  "--progress",
  "none",
  ...extra,
];

/** A copy of run folder `source` under the name `name` (a run's name is no part of its configuration). */
function copyRun(source: string, name: string): string {
  const copy = join(dir, "runs", name);
  cpSync(source, copy, { recursive: true });
  return copy;
}

let twoVersions: Promise<string> | undefined;
/**
 * A copy, under `name`, of one run whose shard 0 this build ran and shard 1 the "9.9.9" copy (run once for the
 * tests that only read or merge it).
 */
async function twoVersionRun(name: string): Promise<string> {
  return copyRun(await (twoVersions ??= shardedRun("two-versions", otherVersionCli)), name);
}

let shard0: Promise<string> | undefined;
/**
 * Run `name` whose shard 0 this build ran (run once, copied for each run) and shard 1 `cli`: each test's runs
 * differ only in the build of shard 1.
 */
async function shardedRun(name: string, cli: string): Promise<string> {
  const source = await (shard0 ??= (async () => {
    const r = await runWith(CLI, runArgs("shard0", ["--shard", `0/${N}`]));
    expect(r.exitCode, r.stderr).toBe(0);
    return join(dir, "runs", "shard0");
  })());
  copyRun(source, name);
  const r = await runWith(cli, runArgs(name, ["--shard", `1/${N}`]));
  expect(r.exitCode, r.stderr).toBe(0);
  return join(dir, "runs", name);
}

let partial: Promise<string> | undefined;
/** A copy, under `name`, of a run the "9.9.9" copy stopped after 3 of the 6 tasks (run once). */
async function partialRun(name: string): Promise<string> {
  const source = await (partial ??= (async () => {
    const r = await runWith(otherVersionCli, runArgs("partial", ["--max-samples", "3"]));
    expect(r.exitCode, r.stderr).toBe(0);
    return join(dir, "runs", "partial");
  })());
  return copyRun(source, name);
}

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

beforeAll(async () => {
  dir = tempDir("hb-version-");
  dataset = join(dir, "data.jsonl");
  writeFileSync(
    dataset,
    IDS.map((id, i) =>
      JSON.stringify({
        id,
        prompt: `Use the shell to compute ${i} * 7 and tell me the result.`,
        expected: String(i * 7),
      }),
    ).join("\n") + "\n",
  );
  otherVersionCli = copyBuild("hb-9.9.9", "9.9.9");
  rebuiltCli = copyBuild("hb-rebuilt", VERSION, true);
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a run records which hermes-batch wrote it", () => {
  it("checkpoint.json and a shard's completion record name the version and the build", async () => {
    const run = await twoVersionRun("recorded");
    const shard0 = join(run, "shards", `0000-of-000${N}`);
    const shard1 = join(run, "shards", `0001-of-000${N}`);
    expect(readJson(join(shard0, "checkpoint.json")).hermes_batch_version).toBe(VERSION);
    expect(readJson(join(shard1, "checkpoint.json")).hermes_batch_version).toBe("9.9.9");
    const build = readJson(join(shard0, "checkpoint.json")).hermes_batch_build;
    expect(build).toMatch(/^[0-9a-f]{16}$/);
    // The copy is the same code: the same build; the rebuilt copy is another.
    expect(readJson(join(shard1, "checkpoint.json")).hermes_batch_build).toBe(build);
    const record = readJson(join(shard1, "shard-complete.json"));
    expect(record.hermes_batch_version).toBe("9.9.9");
    expect(record.invocations.at(-1).hermes_batch_version).toBe("9.9.9");
  }, 120_000);
});

describe("merge of shards run by different builds", () => {
  it("refuses shards of different versions (exit 2, naming shards and versions); --force merges and records them", async () => {
    const run = await twoVersionRun("mixed");
    const m = await runCliInProcess(["merge", run], { cwd: dir, env: NO_SCHEDULER });
    expect(m.exitCode, m.stdout + m.stderr).toBe(2);
    expect(m.stderr).toContain("the shards were run by different hermes-batch versions");
    expect(m.stderr).toContain(`${VERSION}: shard(s) 0`);
    expect(m.stderr).toContain("9.9.9: shard(s) 1");
    expect(m.stderr).toContain("nothing was merged (--force merges anyway)");
    expect(existsSync(join(run, "merge.json"))).toBe(false);
    expect(existsSync(join(run, "trajectories.jsonl"))).toBe(false);

    const forced = await runCliInProcess(["merge", run, "--force"], { cwd: dir, env: NO_SCHEDULER });
    expect(forced.exitCode, forced.stdout + forced.stderr).toBe(0);
    expect(forced.stderr).toContain("different hermes-batch versions");
    expect(forced.stderr).toContain("merging anyway: --force");
    const info = readJson(join(run, "merge.json"));
    expect(info.hermes_batch_versions.map((g: { version: string; shards: number[] }) => [g.version, g.shards])).toEqual(
      [
        [VERSION, [0]],
        ["9.9.9", [1]],
      ],
    );
    expect(info.merged_by.hermes_batch_version).toBe(VERSION);
    const yaml = YAML.parse(readFileSync(join(run, "run.yaml"), "utf8"));
    expect(yaml.hermes_batch_version).toBe(`${VERSION}, 9.9.9`);
    expect(readJson(join(run, "checkpoint.json")).hermes_batch_version).toBe(`${VERSION}, 9.9.9`);
  }, 120_000);

  it("merges shards of one version built differently, with a warning naming the builds", async () => {
    const run = await shardedRun("rebuilt", rebuiltCli);
    const m = await runCliInProcess(["merge", run], { cwd: dir, env: NO_SCHEDULER });
    expect(m.exitCode, m.stdout + m.stderr).toBe(0);
    expect(m.stderr).toMatch(new RegExp(`different builds of hermes-batch ${VERSION.replace(/\./g, "\\.")}`));
    expect(m.stderr).toMatch(/build [0-9a-f]{16}: shard\(s\) 0/);
    expect(m.stderr).toMatch(/build [0-9a-f]{16}: shard\(s\) 1/);
    const info = readJson(join(run, "merge.json"));
    expect(info.hermes_batch_versions).toHaveLength(2);
    expect(new Set(info.hermes_batch_versions.map((g: { version: string }) => g.version))).toEqual(new Set([VERSION]));
    const yaml = YAML.parse(readFileSync(join(run, "run.yaml"), "utf8"));
    expect(yaml.hermes_batch_version).toBe(VERSION);
    expect(yaml.hermes_batch_build).toBeUndefined();
    expect(m.stdout).toContain(`hermes-batch: ${VERSION}`);
  }, 120_000);

  it("merges shards of one version silently, and records it", async () => {
    const run = await shardedRun("same", CLI);
    const m = await runCliInProcess(["merge", run], { cwd: dir, env: NO_SCHEDULER });
    expect(m.exitCode, m.stdout + m.stderr).toBe(0);
    expect(m.stderr).not.toContain("hermes-batch version");
    expect(m.stderr).not.toContain("builds");
    expect(m.stdout).toContain(`hermes-batch: ${VERSION} (all shards agree)`);
    const yaml = YAML.parse(readFileSync(join(run, "run.yaml"), "utf8"));
    expect(yaml.hermes_batch_version).toBe(VERSION);
    expect(yaml.hermes_batch_build).toMatch(/^[0-9a-f]{16}$/);
  }, 120_000);

  it("merges shards of earlier versions, which recorded none (unknown), and does not refuse one beside a known one", async () => {
    const run = await twoVersionRun("old");
    // Shard 1 as an earlier hermes-batch left it: no version anywhere.
    const shard1 = join(run, "shards", `0001-of-000${N}`);
    for (const f of ["checkpoint.json", "shard-complete.json"]) {
      const v = readJson(join(shard1, f));
      delete v.hermes_batch_version;
      delete v.hermes_batch_build;
      for (const inv of v.invocations ?? []) {
        delete inv.hermes_batch_version;
        delete inv.hermes_batch_build;
      }
      writeFileSync(join(shard1, f), JSON.stringify(v, null, 2));
    }
    const y = YAML.parse(readFileSync(join(shard1, "run.yaml"), "utf8"));
    delete y.hermes_batch_version;
    delete y.hermes_batch_build;
    writeFileSync(join(shard1, "run.yaml"), YAML.stringify(y));
    const m = await runCliInProcess(["merge", run], { cwd: dir, env: NO_SCHEDULER });
    expect(m.exitCode, m.stdout + m.stderr).toBe(0);
    expect(m.stderr).toContain("shard(s) 1 recorded no hermes-batch version");
    const info = readJson(join(run, "merge.json"));
    expect(info.hermes_batch_versions.map((g: { version: string | null }) => g.version)).toEqual([VERSION, null]);
  }, 120_000);
});

describe("compare of runs made by different builds", () => {
  it("names both versions in its header, and still compares (exit 0)", async () => {
    const a = await runWith(otherVersionCli, runArgs("base"));
    expect(a.exitCode, a.stderr).toBe(0);
    const b = await runWith(CLI, runArgs("cur"));
    expect(b.exitCode, b.stderr).toBe(0);
    const md = join(dir, "c.md");
    const json = join(dir, "c.json");
    const c = await runCliInProcess([
      "compare",
      join(dir, "runs", "base"),
      join(dir, "runs", "cur"),
      "--markdown",
      md,
      "--json",
      json,
    ]);
    expect(c.exitCode, c.stdout + c.stderr).toBe(0);
    expect(c.stdout).toContain(`hermes-batch versions differ: baseline 9.9.9, current ${VERSION}`);
    expect(readFileSync(md, "utf8")).toContain(`| hermes-batch | 9.9.9 | ${VERSION} |`);
    const cmp = readJson(json);
    expect(cmp.baseline.hermes_batch_version).toBe("9.9.9");
    expect(cmp.current.hermes_batch_version).toBe(VERSION);
    // Same version both sides: nothing said.
    const same = await runCliInProcess(["compare", join(dir, "runs", "cur"), join(dir, "runs", "cur")]);
    expect(same.stdout).not.toContain("hermes-batch versions differ");
  }, 120_000);

  it("a run folder of an earlier version (no version recorded) compares, its version unknown", async () => {
    const old = writeRunFolder(join(dir, "fixtures"), { name: "old", tasks: IDS.map((id) => ({ id, passed: true })) });
    const cur = writeRunFolder(join(dir, "fixtures"), { name: "new", tasks: IDS.map((id) => ({ id, passed: true })) });
    writeFileSync(
      join(cur, "checkpoint.json"),
      JSON.stringify({ ...readJson(join(cur, "checkpoint.json")), hermes_batch_version: VERSION }),
    );
    const c = await runCliInProcess(["compare", old, cur]);
    expect(c.exitCode, c.stdout + c.stderr).toBe(0);
    expect(c.stdout).toContain(`hermes-batch versions differ: baseline unknown (not recorded), current ${VERSION}`);
    const old2 = writeRunFolder(join(dir, "fixtures"), {
      name: "old2",
      tasks: IDS.map((id) => ({ id, passed: true })),
    });
    const both = await runCliInProcess(["compare", old, old2]);
    expect(both.exitCode, both.stdout + both.stderr).toBe(0);
    expect(both.stdout).not.toContain("hermes-batch versions");
  }, 60_000);
});

describe("--resume by another build", () => {
  it("run.yaml records the version and build; a resume by another version warns (stderr, events.log) and goes on", async () => {
    const run = await partialRun("upgraded");
    const before = YAML.parse(readFileSync(join(run, "run.yaml"), "utf8"));
    expect(before.hermes_batch_version).toBe("9.9.9");
    expect(before.hermes_batch_build).toMatch(/^[0-9a-f]{16}$/);
    // Upgrading mid-run is normal: not refused (as a changed configuration would be), but said and logged.
    const resumed = await runWith(CLI, runArgs("upgraded", ["--resume"]));
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const warning = `was written by hermes-batch 9.9.9; this is ${VERSION}`;
    expect(resumed.stderr).toContain(warning);
    expect(readFileSync(join(run, "events.log"), "utf8")).toContain(warning);
    expect(readFileSync(join(run, "trajectories.jsonl"), "utf8").trim().split("\n")).toHaveLength(IDS.length);
    expect(YAML.parse(readFileSync(join(run, "run.yaml"), "utf8")).hermes_batch_version).toBe(VERSION);
    // The same build again: nothing to say.
    const again = await runWith(CLI, runArgs("upgraded", ["--resume"]));
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("was written by hermes-batch");
  }, 120_000);

  it("a run folder of an earlier version (no version recorded) resumes without a word about versions", async () => {
    // An earlier version's folder: a run "9.9.9" stopped, its versions taken out, resumed by this build (a version
    // left behind would be named: "was written by hermes-batch 9.9.9").
    const run = await partialRun("older");
    const y = YAML.parse(readFileSync(join(run, "run.yaml"), "utf8"));
    delete y.hermes_batch_version;
    delete y.hermes_batch_build;
    writeFileSync(join(run, "run.yaml"), YAML.stringify(y));
    const cp = readJson(join(run, "checkpoint.json"));
    delete cp.hermes_batch_version;
    delete cp.hermes_batch_build;
    writeFileSync(join(run, "checkpoint.json"), JSON.stringify(cp));
    const resumed = await runWith(CLI, runArgs("older", ["--resume"]));
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain("hermes-batch");
    expect(YAML.parse(readFileSync(join(run, "run.yaml"), "utf8")).hermes_batch_version).toBe(VERSION);
  }, 120_000);
});
