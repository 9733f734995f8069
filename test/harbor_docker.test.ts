/**
 * Harbor task folders run end to end in real containers: the fixture tasks (1.0 and 1.4 forms, two built from
 * Dockerfiles FROM the local test image) with the oracle and with a model over HTTP (the local fake OpenAI
 * server), the verifier matrix, the network per phase, --resume after a task changed, compare and report.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import YAML from "yaml";
import {
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { ROOT, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { dockerClient } from "../tools/environments/docker/docker_client.js";
import { buildReportModel } from "../src/report/html/report_data.js";

const FIXTURES = join(ROOT, "test", "fixtures", "harbor");

function byId(entries: any[]): Record<string, any> {
  return Object.fromEntries(entries.map((e) => [e.task_id, e]));
}

/** A task folder written on the spot: the image is the local test image, no network, the given test.sh. */
function writeTask(root: string, name: string, testSh: string, toml = "", solve = "true"): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "tests"), { recursive: true });
  mkdirSync(join(dir, "solution"), { recursive: true });
  writeFileSync(
    join(dir, "task.toml"),
    `schema_version = "1.4"\n${toml}\n[verifier]\ntimeout_sec = 3.0\n\n[environment]\ndocker_image = "hermes-batch-test:bookworm"\nnetwork_mode = "no-network"\n`,
  );
  writeFileSync(join(dir, "instruction.md"), `Task ${name}: nothing to do.\n`);
  writeFileSync(join(dir, "tests", "test.sh"), `#!/bin/bash\n${testSh}\n`, { mode: 0o755 });
  writeFileSync(join(dir, "solution", "solve.sh"), `#!/bin/bash\n${solve}\n`, { mode: 0o755 });
  return dir;
}

/** The model of the scripted run: one terminal command per fixture task, then a final answer. */
function modelTurn(req: RecordedRequest): Reply {
  const messages = req.body.messages as { role: string; content: string }[];
  const prompt = messages.find((m) => m.role === "user")!.content;
  const turn = messages.filter((m) => m.role === "assistant").length;
  const command = prompt.includes("hello harbor")
    ? "ls -d /tests 2>&1; echo 'hello harbor' > greeting.txt"
    : prompt.includes("42")
      ? "echo color=$TASK_COLOR; echo 41 > answer.txt"
      : prompt.includes("banana")
        ? "echo banana > ~/word.txt"
        : "sleep 60";
  return turn === 0 ? toolCalls([{ name: "terminal", arguments: { command } }]) : text("done");
}

describe("run --harbor with --env docker", () => {
  let server: FakeOpenAI;
  const out = tempDir("hb-harbor-");
  const oracleRun = uniqueRunName("hb-oracle");
  const modelRun = uniqueRunName("hb-model");
  // A copy of the fixture tasks (the same digests, so the same images): the last test changes one of its files.
  const fixtures = join(tempDir("hb-harbor-tasks-"), "harbor");
  cpSync(FIXTURES, fixtures, { recursive: true });
  const oracleArgs = [
    "run",
    "--harbor",
    fixtures,
    "--env",
    "docker",
    "--model",
    "oracle",
    "--allow-build",
    "--output-dir",
    out,
    "--run-name",
    oracleRun,
    "--progress",
    "none",
  ];

  beforeAll(async () => {
    await ensureDockerTestImages();
    server = await startFakeOpenAI(modelTurn);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
  });

  it("the oracle passes every fixture task, with the verifier's logs copied into the run folder", async () => {
    const r = await runCliInProcess(oracleArgs, { timeoutMs: 400_000 });
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const runDir = join(out, oracleRun);
    const entries = byId(readJsonl(join(runDir, "trajectories.jsonl")));
    expect(Object.keys(entries).sort()).toEqual([
      "edit-greeting",
      "hermes-tests/slow-agent",
      "hermes-tests/two-rewards",
      "hermes-tests/verifier-env",
    ]);
    for (const e of Object.values(entries))
      expect(e.score.passed, `${e.task_id}: ${JSON.stringify(e.score)}`).toBe(true);
    // reward.json wins over reward.txt (which says 0), and test.sh's exit 3 does not matter.
    expect(entries["hermes-tests/two-rewards"].score.scorers[0].details.rewards).toEqual({ reward: 1, accuracy: 0.5 });
    expect(entries["edit-greeting"].metadata.dataset_metadata).toMatchObject({
      difficulty: "easy",
      harbor: { schema: "1.0" },
    });
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.harbor).toEqual({ trials: 4, rewarded: 4, mean_reward: 1 });
    expect(readFileSync(join(runDir, "harbor", "edit-greeting", "verifier", "reward.txt"), "utf8").trim()).toBe("1");
    // `score` cannot run the verifier again (its container is gone): it keeps each task's Harbor verdict.
    const rescored = await runCliInProcess(["score", runDir]);
    expect(rescored.exitCode, rescored.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8")).harbor).toEqual({
      trials: 4,
      rewarded: 4,
      mean_reward: 1,
    });
    // Built images are tagged by the task's digest.
    const digest = entries["edit-greeting"].metadata.dataset_metadata.harbor.digest as string;
    const images = await execa("docker", ["images", "--format", "{{.Repository}}:{{.Tag}}"]);
    expect(images.stdout).toContain(`hb-edit-greeting:${digest.slice(0, 12)}`);
  }, 420_000);

  it("a model over HTTP is scored by the tasks' own tests; the time limit is a graded outcome; /tests is absent meanwhile", async () => {
    const r = await runCliInProcess(
      [
        "run",
        "--harbor",
        fixtures,
        "--env",
        "docker",
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--allow-build",
        "--toolsets",
        "terminal",
        "--approval",
        "allow",
        "--output-dir",
        out,
        "--run-name",
        modelRun,
        "--progress",
        "none",
      ],
      { timeoutMs: 400_000 },
    );
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const runDir = join(out, modelRun);
    const entries = byId(readJsonl(join(runDir, "trajectories.jsonl")));
    const edit = entries["edit-greeting"];
    expect(edit.score.passed).toBe(true);
    const toolOutput = edit.messages.find((m: any) => m.role === "tool").content as string;
    expect(toolOutput).toMatch(/No such file or directory/);
    const two = entries["hermes-tests/two-rewards"];
    expect(two.score).toMatchObject({ passed: false, value: 0 });
    // [environment].env is set on the container: the agent's commands see it.
    expect(two.messages.find((m: any) => m.role === "tool").content).toContain("color=blue");
    expect(entries["hermes-tests/verifier-env"].score.passed).toBe(true);
    const slow = entries["hermes-tests/slow-agent"];
    expect(slow.outcome).toBe("time_limit");
    expect(slow.score).toMatchObject({ passed: false, value: 0 });
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.harbor).toEqual({ trials: 4, rewarded: 4, mean_reward: 0.5 });
    expect(stats.scores.passed).toBe(2);

    // Against the oracle's run: the two tasks the model failed are a regression (exit 1), named by task.
    const cmp = await runCliInProcess(["compare", join(out, oracleRun), runDir]);
    expect(cmp.exitCode, cmp.stderr).toBe(1);
    expect(cmp.stdout).toMatch(/REGRESSION: 2 task\(s\).*hermes-tests\/slow-agent, hermes-tests\/two-rewards/);
    const html = join(out, "report.html");
    const rep = await runCliInProcess(["report", runDir, "--baseline", join(out, oracleRun), "-o", html]);
    expect(rep.exitCode, rep.stderr).toBe(0);
    expect(readFileSync(html, "utf8")).toMatch(/^<!doctype html>/i);
    const model = await buildReportModel(runDir, join(out, oracleRun));
    expect(model.baseline!.comparison.newly_failing.map((t) => t.task_id).sort()).toEqual([
      "hermes-tests/slow-agent",
      "hermes-tests/two-rewards",
    ]);
  }, 420_000);

  // One oracle run of hand-written tasks: the verifier matrix and a task whose healthcheck fails.
  describe("a run of the verifier matrix and an unhealthy task", () => {
    const run = uniqueRunName("hb-matrix");
    let r: Awaited<ReturnType<typeof runCliInProcess>>;
    beforeAll(async () => {
      const root = tempDir("hb-matrix-");
      writeTask(root, "missing", "echo no reward here");
      writeTask(root, "empty", ": > /logs/verifier/reward.txt");
      writeTask(root, "garbage", "echo 'not a number' > /logs/verifier/reward.txt");
      writeTask(
        root,
        "garbage-json",
        'echo \'{"reward": "yes"}\' > /logs/verifier/reward.json; echo 1 > /logs/verifier/reward.txt',
      );
      writeTask(root, "slow-verifier", "sleep 30; echo 1 > /logs/verifier/reward.txt");
      writeTask(root, "half", "echo 0.5 > /logs/verifier/reward.txt; exit 1");
      writeTask(
        root,
        "unhealthy",
        "echo 1 > /logs/verifier/reward.txt",
        '[environment.healthcheck]\ncommand = "echo probing >&2; false"\ninterval_sec = 1\nretries = 1\n',
      );
      r = await runCliInProcess(
        [
          "run",
          "--harbor",
          root,
          "--env",
          "docker",
          "--model",
          "oracle",
          "--output-dir",
          out,
          "--run-name",
          run,
          "--progress",
          "none",
        ],
        { timeoutMs: 300_000 },
      );
    }, 320_000);

    it("the verifier matrix: missing, empty, garbage and timed-out rewards leave the task unscored with the reason", () => {
      // Exit 1 for the unhealthy task alone (the next test).
      expect(r.exitCode, r.stderr + r.stdout).toBe(1);
      const entries = byId(readJsonl(join(out, run, "trajectories.jsonl")));
      expect(Object.keys(entries).sort()).toEqual([
        "empty",
        "garbage",
        "garbage-json",
        "half",
        "missing",
        "slow-verifier",
      ]);
      const reason = (id: string) => entries[id].score.scorers[0].reason as string;
      for (const id of ["missing", "empty", "garbage", "garbage-json", "slow-verifier"])
        expect(entries[id].score.passed, id).toBeNull();
      expect(reason("missing")).toMatch(/no reward/);
      expect(reason("empty")).toMatch(/reward.txt is empty/);
      expect(reason("garbage")).toMatch(/reward.txt is not a number/);
      expect(reason("garbage-json")).toMatch(/reward.json is not a non-empty object of numbers/);
      expect(reason("slow-verifier")).toMatch(/verifier timed out after 3 s/);
      expect(entries.half.score).toMatchObject({ passed: false, value: 0.5 });
      const stats = JSON.parse(readFileSync(join(out, run, "statistics.json"), "utf8"));
      // Harbor's mean counts the five unrewarded trials (and the failed one) as 0; our pass rate leaves them out.
      expect(stats.harbor).toEqual({ trials: 7, rewarded: 1, mean_reward: Number((0.5 / 7).toFixed(6)) });
      expect(stats.scores).toMatchObject({ scored: 1, unscored: 6 });
    });

    it("a failing healthcheck is an environment_error, after its retries", () => {
      const failed = readJsonl(join(out, run, "failed.jsonl"));
      expect(failed.map((f) => f.task_id)).toEqual(["unhealthy"]);
      expect(failed[0].outcome).toBe("environment_error");
      expect(failed[0].error).toMatch(/healthcheck failed 2 time\(s\): exit 1: probing/);
    });
  });

  it("--harbor-network agent-none keeps the agent offline and connects only the verifier; a public task needs a network allowed", async () => {
    const root = tempDir("hb-net-");
    // solve.sh (the agent phase) must see no interface but lo; test.sh (the verifier) must see one more.
    writeTask(
      root,
      "net",
      "if ls /sys/class/net | grep -vqx lo; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi",
      "",
      "ls /sys/class/net | grep -vqx lo && exit 1; touch /tmp/offline",
    );
    const toml = join(root, "net", "task.toml");
    writeFileSync(toml, readFileSync(toml, "utf8").replace('network_mode = "no-network"\n', ""));
    const refused = await runCliInProcess([
      "run",
      "--harbor",
      root,
      "--env",
      "docker",
      "--model",
      "oracle",
      "--output-dir",
      out,
      "--run-name",
      uniqueRunName("hb-net0"),
      "--progress",
      "none",
    ]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/net\/task.toml: network_mode is public .*--allow-network bridge/);
    const run = uniqueRunName("hb-net");
    // A network of our own (internal: nothing outside this host) stands in for the engine's bridge.
    const net = await dockerClient().createNetwork({ Name: run, Internal: true });
    let r;
    try {
      r = await runCliInProcess(
        [
          "run",
          "--harbor",
          root,
          "--env",
          "docker",
          "--model",
          "oracle",
          "--network",
          run,
          "--harbor-network",
          "agent-none",
          "--output-dir",
          out,
          "--run-name",
          run,
          "--progress",
          "none",
        ],
        { timeoutMs: 200_000 },
      );
    } finally {
      await net.remove().catch(() => undefined);
    }
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const [entry] = readJsonl(join(out, run, "trajectories.jsonl"));
    expect(entry.final_response).toBe("oracle: solution/solve.sh exited 0");
    expect(entry.score.passed).toBe(true);
    expect(YAML.parse(readFileSync(join(out, run, "run.yaml"), "utf8")).harbor_network).toBe("agent-none");
  }, 260_000);

  it("--resume after a task's files changed stops with exit 3", async () => {
    // The oracle's run, finished: resumed as it is, nothing is left to do; after a task's test changed, exit 3.
    expect((await runCliInProcess([...oracleArgs, "--resume"], { timeoutMs: 120_000 })).exitCode).toBe(0);
    writeFileSync(
      join(fixtures, "slow-agent", "tests", "test.sh"),
      "#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n",
    );
    const changed = await runCliInProcess([...oracleArgs, "--resume"], { timeoutMs: 120_000 });
    expect(changed.exitCode, changed.stderr).toBe(3);
  }, 300_000);
});
