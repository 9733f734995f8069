/**
 * SIGHUP and SIGTERM of the real CLI while Docker tasks are mid-task (a background process running in each
 * container, the model call pending): the run exits 130, the run files stay consistent (checkpoint counts =
 * lines, every interrupted task recorded once as `cancelled`), no container of the run is left, and
 * `--resume` then finishes every task exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execa } from "execa";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listLabelledContainers, removeContainersByLabel } from "../tools/environments/docker/docker.js";
import {
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { waitUntil } from "./helpers/wait.js";
import { CLI, ROOT, cleanEnv, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

const TASKS = ["a", "b", "c"];
let hang = true;

function reply(req: RecordedRequest): Reply {
  const turn = (req.body.messages as { role: string }[]).filter((m) => m.role === "assistant").length;
  if (turn === 0)
    return toolCalls([{ name: "terminal", arguments: { command: "sleep 600 >/dev/null 2>&1 &echo started" } }]);
  return hang ? { kind: "hang" } : text("done");
}

describe("signals of a docker run (CLI)", () => {
  let server: FakeOpenAI;
  let image: string;
  const runNames: string[] = [];

  beforeAll(async () => {
    ({ image } = await ensureDockerTestImages());
    server = await startFakeOpenAI(reply);
  }, 600_000);
  afterAll(async () => {
    await server?.close();
    for (const run of runNames) await removeContainersByLabel({ run });
  });

  for (const signal of ["SIGHUP", "SIGTERM"] as const) {
    it(`${signal} mid-task: exit 130, consistent run files, no container left, and --resume finishes each task once`, async () => {
      hang = true;
      const dir = tempDir();
      const runName = uniqueRunName(`sig-${signal.toLowerCase()}`);
      runNames.push(runName);
      const dataset = join(dir, "d.jsonl");
      writeFileSync(dataset, TASKS.map((id) => JSON.stringify({ id, prompt: `${runName} ${id}` })).join("\n") + "\n");
      const args = [
        "run",
        dataset,
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--env",
        "docker",
        "--image",
        image,
        "--toolsets",
        "terminal",
        "--concurrency",
        "3",
        "--workers",
        "2",
        "--run-name",
        runName,
        "--output-dir",
        join(dir, "runs"),
        "--approval",
        "deny",
        "--progress",
        "none",
      ];
      const child = execa(process.execPath, [CLI, ...args], {
        cwd: ROOT,
        env: cleanEnv(),
        extendEnv: false,
        reject: false,
        timeout: 240_000,
        forceKillAfterDelay: false, // execa's SIGKILL 5 s after a SIGTERM would cut the clean-up under test
      });

      const ours = () => server.requests.filter((q) => JSON.stringify(q.body).includes(runName));
      const secondTurns = () =>
        ours().filter((q) => (q.body.messages as { role: string }[]).some((m) => m.role === "tool")).length;
      // Every task has run its command (a background sleep is alive in each container) and waits for the model.
      expect(await waitUntil(() => secondTurns() >= TASKS.length, 180_000)).toBe(true);
      const live = (await listLabelledContainers({ run: runName })).filter((c) => c.role !== "probe");
      expect(live).toHaveLength(TASKS.length);

      child.kill(signal);
      const r = await child;
      expect(r.exitCode, r.stderr + r.stdout).toBe(130);
      expect(await waitUntil(async () => (await listLabelledContainers({ run: runName })).length === 0, 5_000)).toBe(
        true,
      );

      const runDir = join(dir, "runs", runName);
      const trajectories = readJsonl(join(runDir, "trajectories.jsonl"));
      const failed = readJsonl(join(runDir, "failed.jsonl"));
      expect(trajectories).toEqual([]);
      expect(failed.map((f) => f.task_id).sort()).toEqual(TASKS);
      for (const f of failed) expect(f.outcome).toBe("cancelled");
      const checkpoint = JSON.parse(readFileSync(join(runDir, "checkpoint.json"), "utf8"));
      expect(checkpoint).toMatchObject({ finished: false, done: 0, failed: TASKS.length });
      expect(readFileSync(join(runDir, "events.log"), "utf8")).toContain(`${signal}: aborting`);

      hang = false;
      // The resume is an ordinary run: in the test process (the signal needed the child above).
      const resumed = await runCliInProcess([...args, "--resume"], { timeoutMs: 240_000 });
      expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(0);
      const after = readJsonl(join(runDir, "trajectories.jsonl"));
      expect(after.map((e) => e.task_id).sort()).toEqual(TASKS);
      for (const e of after) expect(e.outcome).toBe("completed");
      expect(JSON.parse(readFileSync(join(runDir, "checkpoint.json"), "utf8"))).toMatchObject({
        finished: true,
        done: TASKS.length,
      });
      expect(await listLabelledContainers({ run: runName })).toEqual([]);
    }, 600_000);
  }
});
