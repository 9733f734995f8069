/**
 * Faults of the sandbox through the CLI (in the test process), the fake OpenAI server scripting the tool calls: a
 * container removed from outside mid-task and a fork bomb that fills the pids limit end the task as
 * environment_error (retryable, in failed.jsonl), never as a completed trajectory; a fork failure the sandbox
 * recovers from does not.
 */
import { beforeAll, afterAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { listLabelledContainers, removeContainerById } from "../tools/environments/docker/docker_client.js";

// Spelled past the terminal's foreground guard (the original's: ` & `, a trailing `&`, nohup, setsid refused), as a
// hostile task would: `cmd& next`, `set''sid`.
// A fork bomb that keeps the pids limit full (dash forks without bash's retry loop), and a foreground loop
// that meets "Cannot fork" once the limit is reached.
const FILL_PIDS =
  `sh -c '( while :; do (sleep 600 </dev/null >/dev/null 2>&1 &) 2>/dev/null; done ) </dev/null >/dev/null 2>&1& ` +
  `i=0; while [ $i -lt 100000 ]; do (true) || break; i=$((i+1)); done' 2>&1 | tail -2; echo filled`;
// One failing fork (a ulimit inside a subshell), then the sandbox is fine again.
const FAIL_ONCE = `(ulimit -u 1; exec sh -c 'true& wait' 2>&1) ; echo after`;

let runName = "";

async function reply(req: RecordedRequest): Promise<Reply> {
  const messages = req.body.messages as { role: string; content: string }[];
  const prompt = messages.find((m) => m.role === "user")!.content;
  const turn = messages.filter((m) => m.role === "assistant").length;
  if (prompt === "gone") {
    if (turn === 0) return toolCalls([{ name: "terminal", arguments: { command: "echo up" } }]);
    if (turn === 1) {
      for (const c of await listLabelledContainers({ run: runName, task: "gone" })) await removeContainerById(c.id);
      return toolCalls([{ name: "terminal", arguments: { command: "echo after" } }]);
    }
  }
  if (prompt === "bomb" && turn === 0) return toolCalls([{ name: "terminal", arguments: { command: FILL_PIDS } }]);
  if (prompt === "once" && turn === 0) return toolCalls([{ name: "terminal", arguments: { command: FAIL_ONCE } }]);
  return text(`done after ${turn} turn(s)`);
}

describe("sandbox faults through the CLI", () => {
  let server: FakeOpenAI;
  let image: string;

  // One run for the two tasks that need no flag of their own: the container of one is removed mid-task (by task).
  let pair: Awaited<ReturnType<typeof runRows>>;
  beforeAll(async () => {
    ({ image } = await ensureDockerTestImages());
    server = await startFakeOpenAI(reply);
    pair = await runRows(["gone", "once"]);
  }, 900_000);
  afterAll(async () => {
    await server?.close();
  });

  /** One run (in the test process) of a row per prompt, its id the prompt. */
  async function runRows(prompts: string[], extra: string[] = []) {
    const dir = tempDir();
    runName = uniqueRunName(`fault-${prompts.join("-")}`);
    writeFileSync(
      join(dir, "d.jsonl"),
      prompts.map((prompt) => JSON.stringify({ id: prompt, prompt }) + "\n").join(""),
    );
    const r = await runCliInProcess(
      [
        "run",
        join(dir, "d.jsonl"),
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--env",
        "docker",
        "--image",
        image,
        "--run-name",
        runName,
        "--output-dir",
        join(dir, "runs"),
        "--toolsets",
        "terminal",
        "--progress",
        "log",
        "--no-preflight",
        "--concurrency",
        String(prompts.length),
        ...extra,
      ],
      { timeoutMs: 240_000 },
    );
    return {
      r,
      trajectories: readJsonl(join(dir, "runs", runName, "trajectories.jsonl")),
      failed: readJsonl(join(dir, "runs", runName, "failed.jsonl")),
    };
  }

  it("a container removed mid-task ends the task as environment_error, retryable", () => {
    const { r, trajectories, failed } = pair;
    // Exit 1 for this task alone: the other one of the run completes (the last test).
    expect(r.exitCode, r.stderr + r.stdout).toBe(1);
    expect(trajectories.filter((t) => t.completed).map((t) => t.task_id)).toEqual(["once"]);
    expect(failed).toHaveLength(1);
    expect(failed[0].task_id).toBe("gone");
    expect(failed[0].outcome).toBe("environment_error");
    expect(failed[0].retryable).not.toBe(false);
    expect(failed[0].error).toMatch(/gone|stopped|sandbox/);
  });

  it("a fork bomb filling the pids limit ends the task as environment_error, and its container is removed", {
    timeout: 300_000,
    retry: 2,
  }, async () => {
    // The approval gate rightly flags a fork bomb: allowed here, so that it runs and fills the sandbox.
    const { r, trajectories, failed } = await runRows(["bomb"], ["--pids-limit", "48", "--approval", "allow"]);
    expect(r.exitCode, r.stderr + r.stdout).toBe(1);
    expect(trajectories.filter((t) => t.completed)).toEqual([]);
    expect(failed).toHaveLength(1);
    expect(failed[0].outcome).toBe("environment_error");
    expect(failed[0].error).toMatch(/can no longer start a process/);
    // Named as the local sandbox names it: an unscored row keeps environment_error, with the limit as its reason.
    expect(failed[0].reason).toBe("pids_limit");
    expect(await listLabelledContainers({ run: runName })).toEqual([]);
    // Retried: on a loaded machine the bomb sometimes does not keep the limit full through all three probes, and
    // the sandbox is then (rightly) judged recovered. Known flakiness, noted in the closing note.
  });

  it("a command that fails to fork once, in a sandbox that recovers, does not end the task", () => {
    const { trajectories, failed } = pair;
    expect(failed.map((f) => f.task_id)).not.toContain("once");
    const once = trajectories.filter((t) => t.task_id === "once");
    expect(once).toHaveLength(1);
    expect(once[0].completed).toBe(true);
    const out = JSON.parse(once[0].messages.find((m: any) => m.role === "tool").content).output;
    expect(out).toMatch(/fork/i);
    expect(out).toContain("after");
  });
});
