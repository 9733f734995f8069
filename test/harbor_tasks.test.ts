/**
 * Harbor task folders as rows (no containers): task.toml forms, refusals per task, the digest, the reward files,
 * `harbor import` and `run --harbor --dry-run` through the built CLI.
 */
import { describe, expect, it } from "vitest";
import { chmodSync, cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readHarborTasks, taskDigest } from "../src/harbor/task_dir.js";
import { quantityToMb } from "../src/harbor/task_config.js";
import { resolveEnvTable, unpassedVariables } from "../src/harbor/env_template.js";
import { readRewardFiles } from "../src/score/harbor_reward.js";
import { ROOT, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { resolveRunConfig } from "../src/config/run_config.js";
import { harborEnvOptions, harborPlan } from "../src/harbor/task_hooks.js";

const FIXTURES = join(ROOT, "test", "fixtures", "harbor");

/** A minimal runnable task (docker_image, no network) with `extra` appended to its task.toml. */
function task(root: string, name: string, extra = "", files: Record<string, string> = {}): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "tests"), { recursive: true });
  writeFileSync(
    join(dir, "task.toml"),
    `schema_version = "1.4"\n[environment]\ndocker_image = "hermes-batch-test:bookworm"\nnetwork_mode = "no-network"\n${extra}`,
  );
  writeFileSync(join(dir, "instruction.md"), `Do ${name}.\n`);
  writeFileSync(join(dir, "tests", "test.sh"), "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n");
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

describe("Harbor task folders → rows", () => {
  it("reads the 1.0 form and schema 1.1/1.4 fixtures: id, prompt, metadata with the digest, limits", () => {
    const { rows, bad } = readHarborTasks(FIXTURES);
    expect(bad).toEqual([]);
    const ids = rows.map((r) => r.id);
    expect(ids).toEqual([
      "edit-greeting",
      "hermes-tests/slow-agent",
      "hermes-tests/two-rewards",
      "hermes-tests/verifier-env",
    ]);
    const legacy = rows[0]!;
    expect(legacy.prompt).toBe(readFileSync(join(FIXTURES, "edit-greeting", "instruction.md"), "utf8"));
    expect(legacy.metadata).toMatchObject({
      author_name: "hermes-batch tests",
      difficulty: "easy",
      harbor: { schema: "1.0", digest: legacy.harbor.digest },
    });
    // "1G" in the 1.0 form is 1024 MiB, as Harbor maps it; allow_internet = false is no network.
    expect(legacy.harbor).toMatchObject({
      memory_mb: 1024,
      storage_mb: 1024,
      cpus: 1,
      network: "none",
      agent: { timeout_sec: 120 },
    });
    const env = rows[3]!.harbor;
    expect(env).toMatchObject({
      docker_image: "hermes-batch-test:bookworm",
      workdir: "/home/agent",
      agent: { user: "agent" },
      verifier: { user: "agent", env: { EXPECTED_WORD: "banana" } },
    });
    expect(rows[2]!.harbor.healthcheck).toEqual({
      command: "test -d /app",
      interval_sec: 1,
      timeout_sec: 10,
      retries: 2,
      start_period_sec: 0,
      start_interval_sec: 5,
    });
  });

  it("a task folder alone is one row; its name is the folder's without [task].name; public is the default network", () => {
    const root = tempDir("hb-one-");
    const dir = task(root, "solo");
    writeFileSync(join(dir, "task.toml"), 'version = "1.0"\n[environment]\ndocker_image = "x:y"\n');
    const { rows } = readHarborTasks(dir);
    expect(rows.map((r) => [r.id, r.harbor.network])).toEqual([["solo", "public"]]);
  });

  it("the digest changes with any file of the task, and with an executable bit", () => {
    const root = tempDir("hb-digest-");
    const dir = task(root, "d");
    const first = taskDigest(dir);
    expect(taskDigest(dir)).toBe(first);
    writeFileSync(join(dir, "tests", "test.sh"), "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n");
    const second = taskDigest(dir);
    expect(second).not.toBe(first);
    chmodSync(join(dir, "tests", "test.sh"), 0o755);
    const third = taskDigest(dir);
    expect(third).not.toBe(second);
    writeFileSync(join(dir, "tests", "helper.py"), "print(1)\n");
    expect(taskDigest(dir)).not.toBe(third);
  });

  it("refuses per task what cannot run yet, naming the task.toml and the reason", () => {
    const root = tempDir("hb-refuse-");
    task(root, "ok");
    task(root, "windows", 'os = "windows"\n');
    task(root, "steps", '[[steps]]\nname = "one"\n');
    task(root, "compose", "", { "environment/docker-compose.yaml": "services: {}\n" });
    task(root, "allowlist", "", {});
    writeFileSync(
      join(root, "allowlist", "task.toml"),
      'schema_version = "1.4"\n[environment]\ndocker_image = "x"\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n',
    );
    task(root, "future");
    writeFileSync(join(root, "future", "task.toml"), 'schema_version = "2.0"\n');
    task(root, "broken");
    writeFileSync(join(root, "broken", "task.toml"), 'schema_version = "1.4"\n\n[agent\ntimeout_sec = 1\n');
    task(root, "noimage");
    writeFileSync(join(root, "noimage", "task.toml"), 'schema_version = "1.4"\n');
    const { rows, bad } = readHarborTasks(root);
    expect(rows.map((r) => r.id)).toEqual(["ok"]);
    const why = Object.fromEntries(bad.map((b) => [b.file.split("/").slice(-2, -1)[0], `${b.line ?? ""}|${b.reason}`]));
    expect(why.windows).toMatch(/Windows tasks/);
    expect(why.steps).toMatch(/multi-step/);
    expect(why.compose).toMatch(/docker-compose environments are not supported/);
    expect(why.allowlist).toMatch(/allow-list networking/);
    expect(why.future).toMatch(/schema version 2.0 is not supported/);
    expect(why.broken).toMatch(/^3\|invalid TOML/);
    expect(why.noimage).toMatch(/neither \[environment\].docker_image nor environment\/Dockerfile/);
  });

  it("[[environment.mcp_servers]] become the row's mcp_servers (a URL server is SSE by default); bad ones are refused", () => {
    const root = tempDir("hb-mcp-");
    task(
      root,
      "mcp",
      '[[environment.mcp_servers]]\nname = "fs"\ntransport = "stdio"\ncommand = "python3"\nargs = ["-u", "/srv/mcp.py"]\n' +
        '[[environment.mcp_servers]]\nname = "api"\nurl = "http://127.0.0.1:9/mcp"\n' +
        '[[environment.mcp_servers]]\nname = "api2"\ntransport = "streamable-http"\nurl = "http://127.0.0.1:9/mcp"\n',
    );
    task(root, "noname", '[[environment.mcp_servers]]\ntransport = "stdio"\ncommand = "x"\n');
    task(root, "badargs", '[[environment.mcp_servers]]\nname = "x"\ncommand = "x"\nargs = "not a list"\n');
    const { rows, bad } = readHarborTasks(root);
    expect(rows.map((r) => r.id)).toEqual(["mcp"]);
    expect(rows[0]!.mcp_servers).toEqual([
      { name: "fs", transport: "stdio", command: "python3", args: ["-u", "/srv/mcp.py"] },
      { name: "api", url: "http://127.0.0.1:9/mcp", transport: "sse" },
      { name: "api2", transport: "streamable-http", url: "http://127.0.0.1:9/mcp" },
    ]);
    expect(rows[0]!.harbor).not.toHaveProperty("mcp_servers");
    const why = Object.fromEntries(bad.map((b) => [b.file.split("/").slice(-2, -1)[0], b.reason]));
    expect(why.noname).toMatch(/^'environment\.mcp_servers\.0': each server of the list needs a 'name'/);
    expect(why.badargs).toMatch(/^'environment\.mcp_servers\.x\.args'/);
  });

  it("quantities of the 1.0 form and ${VAR} templates", () => {
    expect([quantityToMb("2G"), quantityToMb("512Mi"), quantityToMb("1.5Gi"), quantityToMb("lots")]).toEqual([
      2048,
      512,
      1536,
      undefined,
    ]);
    const env = { A: "${HB_A}", B: "x-${HB_B:-dflt}", C: "plain" };
    expect(unpassedVariables(env, [])).toEqual(["HB_A"]);
    expect(unpassedVariables(env, ["HB_A"])).toEqual([]);
    // Only named variables are read from the host; the others get their default.
    expect(resolveEnvTable(env, ["HB_A"], { HB_A: "1", HB_B: "2" })).toEqual({ A: "1", B: "x-dflt", C: "plain" });
  });

  it("reward files: reward.json wins over reward.txt; missing, empty and garbage give no reward with the reason", () => {
    expect(readRewardFiles('{"reward": 1, "accuracy": 0.5}', "0")).toMatchObject({
      reward: 1,
      rewards: { reward: 1, accuracy: 0.5 },
      source: "reward.json",
    });
    expect(readRewardFiles('{"a": 1, "b": 0}', undefined)).toMatchObject({ reward: 0.5 });
    expect(readRewardFiles(undefined, " 0.25\n")).toMatchObject({ reward: 0.25, source: "reward.txt" });
    expect(readRewardFiles(undefined, undefined)).toMatchObject({
      reward: null,
      reason: expect.stringMatching(/no reward/),
    });
    expect(readRewardFiles("", "1")).toMatchObject({ reward: null, reason: "reward.json is empty" });
    expect(readRewardFiles("{nope", "1").reward).toBeNull();
    // As pydantic's lax float reads them upstream: a bool is 1/0, a numeric string its number, anything else no reward.
    expect(readRewardFiles('{"reward": "1"}', undefined).reward).toBe(1);
    expect(readRewardFiles('{"reward": true}', undefined)).toMatchObject({ reward: 1, rewards: { reward: 1 } });
    expect(readRewardFiles('{"tests": false, "lint": " 0.5 "}', undefined).reward).toBe(0.25);
    expect(readRewardFiles('{"reward": "pass"}', undefined).reward).toBeNull();
    expect(readRewardFiles('{"reward": "NaN"}', undefined).reward).toBeNull();
    expect(readRewardFiles('{"reward": null}', undefined).reward).toBeNull();
    expect(readRewardFiles(undefined, "").reason).toBe("reward.txt is empty");
    expect(readRewardFiles(undefined, "1 2").reason).toBe("reward.txt is not a number");
    expect(readRewardFiles(undefined, "NaN").reward).toBeNull();
  });
});

describe("a Harbor row's plan in the worker", () => {
  it("multiplies the agent and verifier limits, raises the task timeout to fit, and asks for the task's limits and user", () => {
    const [row] = readHarborTasks(join(FIXTURES, "verifier-env")).rows;
    const config = resolveRunConfig({
      dataset: "x",
      model: "m",
      timeout_multiplier: 2,
      task_timeout: 60,
      network: "my-net",
    });
    const plan = harborPlan({ harbor: row!.harbor }, config)!;
    expect(plan.agentTimeoutMs).toBe(240_000);
    expect(plan.taskTimeoutSec).toBe(240 + 120 + 600 + 120);
    // no-network stays offline whatever --network says
    expect(plan.network).toBe("none");
    expect(harborEnvOptions(plan)).toEqual({ user: "agent" });
    const legacy = readHarborTasks(join(FIXTURES, "edit-greeting")).rows[0]!;
    expect(harborEnvOptions(harborPlan({ harbor: legacy.harbor }, config)!)).toEqual({
      memoryMb: 1024,
      cpus: 1,
      disk: "1024m",
      user: "root",
    });
    const pub = { ...legacy.harbor, network: "public" };
    expect(harborPlan({ harbor: pub }, config)!.network).toBe("my-net");
    expect(harborPlan({ harbor: pub }, resolveRunConfig({ dataset: "x", model: "m" }))!.network).toBe("bridge");
    expect(harborPlan({}, config)).toBeUndefined();
    expect(() => harborPlan({ harbor: { task_dir: "/x" } }, config)).toThrow(/not a Harbor task/);
  });
});

describe("harbor import and run --harbor (CLI)", () => {
  it("harbor import writes the rows run --harbor runs, and refuses a bad task with exit 2 unless --on-bad-row skip", async () => {
    const root = tempDir("hb-import-");
    cpSync(FIXTURES, join(root, "tasks"), { recursive: true });
    const out = join(root, "rows.jsonl");
    const ok = await runCliInProcess(["harbor", "import", join(root, "tasks"), "-o", out]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    const rows = readJsonl(out, { mustExist: true });
    expect(rows.map((r) => r.id)).toEqual([
      "edit-greeting",
      "hermes-tests/slow-agent",
      "hermes-tests/two-rewards",
      "hermes-tests/verifier-env",
    ]);
    task(join(root, "tasks"), "zz-windows", 'os = "windows"\n');
    const refused = await runCliInProcess(["harbor", "import", join(root, "tasks"), "-o", join(root, "none.jsonl")]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/zz-windows\/task.toml: Windows tasks \(os = "windows"\) are not supported/);
    const skipped = await runCliInProcess(["harbor", "import", join(root, "tasks"), "--on-bad-row", "skip"]);
    expect(skipped.exitCode).toBe(0);
    expect(skipped.stdout.trim().split("\n")).toHaveLength(4);
    expect(skipped.stderr).toMatch(/skipped: .*zz-windows\/task.toml/);
  });

  it("run --harbor checks each task against the run's flags before anything runs (exit 2, or skipped)", async () => {
    const root = tempDir("hb-flags-");
    task(root, "a-ok");
    task(root, "b-public");
    writeFileSync(
      join(root, "b-public", "task.toml"),
      'schema_version = "1.4"\n[environment]\ndocker_image = "hermes-batch-test:bookworm"\n',
    );
    task(root, "c-build", "", { "environment/Dockerfile": "FROM hermes-batch-test:bookworm\n" });
    writeFileSync(
      join(root, "c-build", "task.toml"),
      'schema_version = "1.4"\n[environment]\nnetwork_mode = "no-network"\n',
    );
    task(root, "d-var", '[verifier.env]\nTOKEN = "${HB_FIXTURE_TOKEN}"\n');
    const common = ["run", "--harbor", root, "--env", "docker", "--dry-run", "--output-dir", join(root, "runs")];
    const model = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1"];
    const r = await runCliInProcess([...common, "--model", "oracle"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/b-public\/task.toml: network_mode is public .*--allow-network bridge/);
    expect(r.stderr).toMatch(/c-build\/task.toml: .*pass --allow-build/);
    expect(r.stderr).toMatch(
      /d-var\/task.toml: its env reads \$\{HB_FIXTURE_TOKEN\} from the host: pass --pass-env HB_FIXTURE_TOKEN/,
    );
    expect(r.stderr).toMatch(/a-ok\/task.toml: --model oracle needs solution\/solve.sh/);
    const all = await runCliInProcess([
      ...common,
      ...model,
      "--allow-network",
      "bridge",
      "--allow-build",
      "--pass-env",
      "HB_FIXTURE_TOKEN",
    ]);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/tasks to run: 4 /);
    const skip = await runCliInProcess([...common, ...model, "--on-bad-row", "skip"]);
    expect(skip.exitCode, skip.stderr).toBe(0);
    expect(skip.stdout).toMatch(/tasks to run: 1 /);
    const local = await runCliInProcess([
      "run",
      "--harbor",
      join(root, "a-ok"),
      "--model",
      "m",
      "--dry-run",
      "--output-dir",
      join(root, "runs"),
    ]);
    expect(local.exitCode).toBe(2);
    expect(local.stderr).toMatch(/a-ok\/task.toml: Harbor tasks run only with --env docker/);
    const both = await runCliInProcess(["run", "x.jsonl", "--harbor", root, "--model", "m"]);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toMatch(/--harbor .* replaces DATASET/);
  });
});
