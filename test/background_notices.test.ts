/**
 * terminal's `pty`, `notify_on_complete` and `watch_patterns` as the original Hermes answers them: a pty for
 * background processes (util-linux `script` inside the sandbox), completion and watch-match notices told
 * as the next user turn once the agent has answered. Real local sandboxes and a real container; the last
 * case runs the built CLI against the local OpenAI-compatible server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import "../tools/terminal_tool.js";
import { createToolPipeline } from "../tools/pipeline.js";
import { ProcessNotices } from "../tools/process_notices.js";
import type { Environment } from "../tools/environments/base.js";
import {
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  removeContainersByLabel,
} from "../tools/environments/docker/docker.js";
import { localTask, waitUntil, type LocalTaskFixture } from "./helpers/local_ctx.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { startFakeOpenAI, taskTurn, text, toolCalls, type FakeOpenAI } from "./helpers/fake_openai.js";
import { runCli, tempDir } from "./helpers/cli.js";

let task: LocalTaskFixture | undefined;
afterEach(async () => {
  await task?.dispose();
  task = undefined;
});

function tools(fixture: LocalTaskFixture) {
  const pipeline = createToolPipeline();
  return async (name: string, args: Record<string, unknown>) =>
    JSON.parse(await pipeline.call(name, args, fixture.ctx));
}

describe("pty in the local sandbox", () => {
  it("a background process with pty=true runs on a 30x120 terminal and answers through submit", async () => {
    task = localTask();
    const call = tools(task);
    const started = await call("terminal", {
      command: 'test -t 0 && test -t 1 && echo on-a-tty; stty size; read -r name; echo "hello $name"',
      background: true,
      pty: true,
    });
    expect(Object.keys(started)).toEqual(["output", "session_id", "pid", "exit_code", "error"]);
    expect(started).toMatchObject({ output: "Background process started", exit_code: 0, error: null });
    expect(started.pid).toBeGreaterThan(0);
    // Typed once the prompt is there, so the terminal's echo comes after the first lines.
    expect(
      await waitUntil(
        async () =>
          (await call("process", { action: "poll", session_id: started.session_id })).output_preview.includes("30 120"),
        20_000,
      ),
    ).toBe(true);
    await call("process", { action: "submit", session_id: started.session_id, data: "Ada" });
    const done = await call("process", { action: "wait", session_id: started.session_id, timeout: 30 });
    expect(done).toMatchObject({ status: "exited", exit_code: 0 });
    // A terminal echoes what is typed and ends lines with CRLF, as the original's pty output does.
    expect(done.output).toBe("on-a-tty\r\n30 120\r\nAda\r\nhello Ada\r\n");
  }, 60_000);

  it("without pty, and in the foreground even with pty=true, there is no terminal (as the original)", async () => {
    task = localTask();
    const call = tools(task);
    const probe = "test -t 1 && echo tty || echo no-tty";
    const bg = await call("terminal", { command: probe, background: true });
    expect((await call("process", { action: "wait", session_id: bg.session_id, timeout: 30 })).output).toBe("no-tty\n");
    expect(await call("terminal", { command: probe, pty: true })).toEqual({
      output: "no-tty",
      exit_code: 0,
      error: null,
    });
  }, 60_000);

  it("a command that needs piped stdin gets no pty and the original's pty_note", async () => {
    task = localTask();
    const call = tools(task);
    const started = await call("terminal", {
      command: "gh auth login --with-token; test -t 0 || echo piped",
      background: true,
      pty: true,
      notify_on_complete: true,
    });
    expect(Object.keys(started)).toEqual([
      "output",
      "session_id",
      "pid",
      "exit_code",
      "error",
      "pty_note",
      "notify_on_complete",
    ]);
    expect(started.pty_note).toMatch(/^PTY disabled for this command because it expects piped stdin\/EOF/);
    expect((await call("process", { action: "wait", session_id: started.session_id, timeout: 30 })).output).toMatch(
      /piped\n$/,
    );
  }, 60_000);
});

describe("notices in the local sandbox", () => {
  it("notify_on_complete: told once, after waiting for the end, with exit code and output; not when already seen", async () => {
    const notices = new ProcessNotices();
    task = localTask({ notices });
    const call = tools(task);
    const { session_id: id } = await call("terminal", {
      command: "sleep 1; echo built; exit 3",
      background: true,
      notify_on_complete: true,
    });
    const notice = await notices.next(task.ctx.getEnv);
    expect(notice).toBe(
      `[IMPORTANT: Background process ${id} completed (exit code 3).\nCommand: sleep 1; echo built; exit 3\nOutput:\nbuilt\n]`,
    );
    expect(await notices.next(task.ctx.getEnv)).toBeUndefined();

    const seen = await call("terminal", { command: "echo quick", background: true, notify_on_complete: true });
    expect((await call("process", { action: "wait", session_id: seen.session_id, timeout: 30 })).status).toBe("exited");
    expect(await notices.next(task.ctx.getEnv)).toBeUndefined();
  }, 60_000);

  it("watch_patterns: the first match is told with the matching lines; a running process is not waited for after that", async () => {
    const notices = new ProcessNotices();
    task = localTask({ notices });
    const call = tools(task);
    const command = "echo booting; sleep 0.5; echo 'server ready on :8000'; echo 'also ready'; sleep 120";
    const { session_id: id } = await call("terminal", { command, background: true, watch_patterns: ["ready"] });
    const notice = await notices.next(task.ctx.getEnv);
    expect(notice).toBe(
      `[IMPORTANT: Background process ${id} matched watch pattern "ready".\nCommand: ${command}\nMatched output:\nserver ready on :8000\nalso ready]`,
    );
    expect(await notices.next(task.ctx.getEnv)).toBeUndefined();
    expect((await call("process", { action: "poll", session_id: id })).status).toBe("running");
    await call("process", { action: "kill", session_id: id });
  }, 60_000);

  it("a process that never matches and ends is not told about; waiting stops when the task's signal aborts or the wait limit passes", async () => {
    const notices = new ProcessNotices();
    task = localTask({ notices });
    const call = tools(task);
    await call("terminal", { command: "echo nothing here", background: true, watch_patterns: ["ready"] });
    expect(await notices.next(task.ctx.getEnv)).toBeUndefined();
    const { session_id: id } = await call("terminal", {
      command: "sleep 120",
      background: true,
      notify_on_complete: true,
    });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 1500);
    expect(await notices.next(task.ctx.getEnv, abort.signal)).toBeUndefined();
    // And after the longest wait for one answer, though the process still runs.
    expect(await notices.next(task.ctx.getEnv, undefined, 1000)).toBeUndefined();
    expect((await call("process", { action: "poll", session_id: id })).status).toBe("running");
    await call("process", { action: "kill", session_id: id });
  }, 60_000);
});

describe("pty and notices in Docker", () => {
  const RUN = uniqueRunName("notices");
  let env: Environment;
  beforeAll(async () => {
    const images = await ensureDockerTestImages();
    env = await createDockerEnvironment(
      { runName: RUN, taskId: "notices", hostTaskDir: `/tmp/${RUN}/t`, taskTimeoutSec: 600 },
      { image: images.image },
    );
  }, 600_000);
  afterAll(async () => {
    await env?.cleanup();
    await cleanupAllDockerEnvironments();
    await removeContainersByLabel({ run: RUN });
  });

  it("a background pty in the container, and its completion told", async () => {
    const notices = new ProcessNotices();
    const ctx = {
      taskId: "notices",
      envKind: "docker",
      getEnv: async () => env,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      notices,
    };
    const pipeline = createToolPipeline();
    const started = JSON.parse(
      await pipeline.call(
        "terminal",
        { command: "test -t 1 && echo on-a-tty; stty size", background: true, pty: true, notify_on_complete: true },
        ctx,
      ),
    );
    expect(started.pid).toBeGreaterThan(0);
    expect(await notices.next(ctx.getEnv)).toBe(
      `[IMPORTANT: Background process ${started.session_id} completed (exit code 0).\nCommand: test -t 1 && echo on-a-tty; stty size\nOutput:\non-a-tty\r\n30 120\r\n]`,
    );
  }, 120_000);
});

describe("through the CLI", () => {
  let server: FakeOpenAI;
  beforeAll(async () => {
    server = await startFakeOpenAI((req) => {
      const { turn } = taskTurn(req);
      if (turn === 0)
        return toolCalls([
          {
            name: "terminal",
            arguments: {
              command: "sleep 1; echo 'tests: 2 failed'; exit 1",
              background: true,
              notify_on_complete: true,
            },
          },
        ]);
      if (turn === 1) return text("The tests are running; I will be told when they end.");
      const last = req.body.messages.at(-1);
      return text(
        last.role === "user" && String(last.content).startsWith("[IMPORTANT: Background process")
          ? "Two tests failed."
          : "no notice",
      );
    });
  });
  afterAll(() => server.close());

  it("the notice is the next human turn, and the answer after it is the final response", async () => {
    const dir = tempDir();
    const dataset = join(dir, "data.jsonl");
    writeFileSync(dataset, JSON.stringify({ id: "n1", prompt: "task:n1 run the tests" }) + "\n");
    const result = await runCli([
      "run",
      dataset,
      "--model",
      "test-model",
      "--base-url",
      server.baseURL,
      "--api-key",
      "sk-test",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "t",
      "--toolsets",
      "terminal",
      "--approval",
      "allow",
      "--progress",
      "none",
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    const path = join(dir, "runs", "t", "trajectories.jsonl");
    expect(existsSync(path)).toBe(true);
    const entry = JSON.parse(readFileSync(path, "utf8").trim());
    expect(entry).toMatchObject({ completed: true, final_response: "Two tests failed.", api_calls: 3 });
    const human = entry.conversations
      .filter((t: { from: string }) => t.from === "human")
      .map((t: { value: string }) => t.value);
    expect(human).toHaveLength(2);
    expect(human[1]).toMatch(
      /^\[IMPORTANT: Background process proc_[0-9a-f]+ completed \(exit code 1\)\.\nCommand: sleep 1; echo 'tests: 2 failed'; exit 1\nOutput:\ntests: 2 failed\n\]$/,
    );
  }, 120_000);
});

describe("the watch rate limit", () => {
  /** An environment whose one background process prints `lines` more lines before each poll (the clock is set by the test). */
  function printingEnv(): { env: Environment; print(text: string): void; end(code: number): void } {
    let output = "";
    let running = true;
    let exitCode: number | null = null;
    const env = {
      pollBackground: async (id: string) => ({ id, running, exitCode, output, outputBytes: Buffer.byteLength(output) }),
    } as unknown as Environment;
    return { env, print: (t) => void (output += t), end: (code) => ((running = false), (exitCode = code)) };
  }

  it("one match per 15 s; three windows with dropped matches switch the patterns off and the end is told", async () => {
    const notices = new ProcessNotices();
    const proc = printingEnv();
    const getEnv = async () => proc.env;
    let now = 1_000_000;
    const realNow = Date.now;
    Date.now = () => now;
    try {
      notices.watch("proc_1", "serve", { notifyOnComplete: false, watchPatterns: ["ERR"] });
      proc.print("ERR one\nok\n");
      expect(await notices.next(getEnv)).toBe(
        '[IMPORTANT: Background process proc_1 matched watch pattern "ERR".\nCommand: serve\nMatched output:\nERR one]',
      );
      for (let window = 1; window <= 3; window++) {
        now += 1_000;
        proc.print(`ERR dropped ${window}a\nERR dropped ${window}b\n`);
        const told = await notices.next(getEnv);
        if (window < 3) {
          expect(told).toBeUndefined();
          // The next window opens with a match that is told, with the count of those dropped before it.
          now += 15_000;
          proc.print(`ERR window ${window}\n`);
          expect(await notices.next(getEnv)).toBe(
            `[IMPORTANT: Background process proc_1 matched watch pattern "ERR".\nCommand: serve\nMatched output:\nERR window ${window}\n(2 earlier matches were suppressed by rate limit)]`,
          );
        } else {
          expect(told).toMatch(
            /^\[IMPORTANT: Watch patterns disabled for process proc_1 — 3 consecutive rate-limit windows triggered \(min spacing 15s\)\./,
          );
        }
      }
      now += 60_000;
      proc.print("ERR ignored now\n");
      proc.end(2);
      expect(await notices.next(getEnv)).toBe(
        "[IMPORTANT: Background process proc_1 completed (exit code 2).\nCommand: serve\nOutput:\n" +
          "ERR one\nok\nERR dropped 1a\nERR dropped 1b\nERR window 1\nERR dropped 2a\nERR dropped 2b\nERR window 2\nERR dropped 3a\nERR dropped 3b\nERR ignored now\n]",
      );
      expect(await notices.next(getEnv)).toBeUndefined();
    } finally {
      Date.now = realNow;
    }
  });
});
