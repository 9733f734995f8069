/**
 * Runs whose agent is a script of terminal commands (the fake OpenAI server's tool calls are the attack), through
 * `hermes-batch run` in the test process: the set-up the tests of graded outcomes share.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCliInProcess } from "./cli.js";
import { uniqueRunName } from "./docker.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./fake_openai.js";
import { readJsonl } from "./jsonl.js";

/**
 * A model server whose task runs `scripts[KEY]`, one terminal call per command (30 s each), then answers. KEY is
 * the task id without a Harbor task's folder and without what follows its first `-` (`kill-pass` runs `kill`).
 */
export function startTerminalScripts(scripts: Record<string, string[]>): Promise<FakeOpenAI> {
  return startFakeOpenAI(
    scriptedPerTask((id) =>
      scripts[id.replace(/^.*\//, "").replace(/-.*/, "")]!.map((command) => ({
        name: "terminal",
        arguments: { command, timeout: 30 },
      })),
    ),
  );
}

export interface ScriptedRun {
  exitCode: number;
  stderr: string;
  /** Every line of trajectories.jsonl and failed.jsonl, by task id. */
  lines: Map<string, any>;
  /** statistics.json's `scores`. */
  scores: any;
}

/**
 * `hermes-batch run INPUTS… ARGS…` against `server` (no approval, no progress), its results under `dir/runs` in a
 * run named after `name`.
 */
export async function runScripted(
  server: FakeOpenAI,
  o: { dir: string; name: string; inputs: string[]; args: string[]; timeoutMs: number },
): Promise<ScriptedRun> {
  const out = join(o.dir, "runs");
  const runName = uniqueRunName(o.name);
  const r = await runCliInProcess(
    [
      "run",
      ...o.inputs,
      ...o.args,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--approval",
      "allow",
      "--output-dir",
      out,
      "--run-name",
      runName,
      "--progress",
      "none",
    ],
    { timeoutMs: o.timeoutMs },
  );
  const lines = new Map<string, any>();
  for (const f of ["trajectories.jsonl", "failed.jsonl"])
    for (const l of readJsonl(join(out, runName, f))) lines.set(l.task_id, l);
  const { scores } = JSON.parse(readFileSync(join(out, runName, "statistics.json"), "utf8"));
  return { exitCode: r.exitCode, stderr: r.stderr, lines, scores };
}

/**
 * A Harbor task folder `dir/name`: the local test image, no network, the agent as root (Harbor's default), a
 * 64 MiB workdir and `more` [environment] settings; its test writes reward 1 when the shell condition `test` holds.
 */
export function writeHarborTask(dir: string, name: string, test: string, more = ""): void {
  const task = join(dir, name);
  mkdirSync(join(task, "tests"), { recursive: true });
  mkdirSync(join(task, "solution"), { recursive: true });
  writeFileSync(
    join(task, "task.toml"),
    `schema_version = "1.4"\n\n[agent]\ntimeout_sec = 120.0\n\n[verifier]\ntimeout_sec = 30.0\n\n[environment]\ndocker_image = "hermes-batch-test:bookworm"\nnetwork_mode = "no-network"\nstorage_mb = 64\n${more}`,
  );
  writeFileSync(join(task, "instruction.md"), `task:${name}\n`);
  writeFileSync(
    join(task, "tests", "test.sh"),
    `#!/bin/bash\necho 'the test ran'\nif ${test}; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n`,
    { mode: 0o755 },
  );
  writeFileSync(join(task, "solution", "solve.sh"), "#!/bin/bash\ntrue\n", { mode: 0o755 });
}
