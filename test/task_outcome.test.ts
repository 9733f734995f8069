/** One task in process (src/run/task.ts): how an exception becomes an outcome. No CLI, no worker thread. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RunConfigSchema } from "../src/config/run_config.js";
import { ModelError, type ChatModel } from "../src/core/chat.js";
import { DroppedRecordSchema, FailureRecordSchema, TrajectoryEntrySchema } from "../src/core/records.js";
import { EnvironmentSetupError, runTask, type TaskRunnerDeps } from "../src/run/task.js";
import type { RunModels } from "../src/scheduler/run_models.js";
import { scheduleModel } from "../src/scheduler/scheduler.js";
import { ProviderError } from "../src/models/provider.js";
import { FakeClock } from "./helpers/fake_clock.js";
import { failureEvent, type TaskSpec } from "../src/run/task_spec.js";
import { expectExactRecord } from "./helpers/records.js";
import { silentLogger } from "./helpers/local_ctx.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function deps(model: ChatModel | RunModels, over: Record<string, unknown> = {}): TaskRunnerDeps {
  const runDir = mkdtempSync(join(tmpdir(), "hb-task-"));
  dirs.push(runDir);
  const config = RunConfigSchema.parse({
    dataset: "d.jsonl",
    run_name: "r",
    model: "m",
    approval: "deny",
    workers: 1,
    ...over,
  });
  const models: RunModels = "forTask" in model ? model : { forTask: () => ({ agent: model }) };
  return { config, runDir, models, logger: silentLogger, allowlist: [], workers: 1 };
}

const spec: TaskSpec = { index: 0, id: "t", line: 1, prompt: "hi", toolsets: [], attempt: 0 };

function throwing(err: unknown): ChatModel {
  return {
    name: "throwing",
    async complete() {
      throw err;
    },
  };
}

describe("task outcome of an exception", () => {
  it("a bug of our own (TypeError) is internal_error, with its stack for events.log and not in the record", async () => {
    const msg = await runTask(
      spec,
      deps(throwing(new TypeError("cannot read properties of undefined"))),
      new AbortController().signal,
    );
    expect(msg.kind).toBe("failed");
    expect(msg.outcome).toBe("internal_error");
    expect(msg.error).toBe("TypeError: cannot read properties of undefined");
    expect(msg.stack).toMatch(/TypeError: cannot read properties of undefined\n\s+at /);
    const record = JSON.parse(msg.line);
    expectExactRecord(FailureRecordSchema, record, "failure record");
    expect(record.outcome).toBe("internal_error");
    expect(msg.line).not.toContain("\\n    at ");
    // events.log: the failure line, then the stack indented under it.
    const event = failureEvent(msg).split("\n");
    expect(event[0]).toBe("task t: internal_error: TypeError: cannot read properties of undefined");
    expect(event[1]).toBe("    TypeError: cannot read properties of undefined");
    expect(event.slice(2).every((l) => /^ {4}\s*at /.test(l))).toBe(true);
  });

  it("a model failure stays model_error and an environment set-up failure environment_error, both without a stack", async () => {
    const model = await runTask(
      spec,
      deps(throwing(new ModelError("400 bad request", 400))),
      new AbortController().signal,
    );
    expect([model.outcome, model.error, model.stack]).toEqual([
      "model_error",
      "ModelError: 400 bad request",
      undefined,
    ]);
    const env = await runTask(
      spec,
      deps(throwing(new EnvironmentSetupError("no image"))),
      new AbortController().signal,
    );
    expect([env.outcome, env.stack]).toEqual(["environment_error", undefined]);
    expect(failureEvent(model)).toBe("task t: model_error: ModelError: 400 bad request");
  });

  it("an exception after a cancel is cancelled, whatever it is", async () => {
    const cancel = new AbortController();
    cancel.abort(new Error("run interrupted"));
    const msg = await runTask(spec, deps(throwing(new TypeError("x"))), cancel.signal);
    expect(msg.outcome).toBe("cancelled");
  });

  it("reports the model retries of the task with its result, for events.log", async () => {
    let calls = 0;
    const provider: ChatModel = {
      name: "flaky",
      async complete() {
        if (++calls === 1)
          throw new ProviderError("429 rate limited: slow down", {
            status: 429,
            retryable: true,
            rateLimited: true,
            retryAfterMs: 2000,
          });
        return {
          message: { role: "assistant", content: "done" },
          finishReason: "stop",
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        };
      },
    };
    const clock = new FakeClock();
    const models: RunModels = {
      forTask: (onEvent) => ({
        agent: scheduleModel(provider, { endpoint: "http://127.0.0.1:9/v1#m", purpose: "agent", clock, onEvent }),
      }),
    };
    const msg = await clock.run(runTask(spec, deps(models), new AbortController().signal));
    expect(msg.kind).toBe("trajectory");
    expect(msg.modelEvents).toEqual([
      expect.objectContaining({
        kind: "retry",
        attempt: 1,
        delayMs: 2000,
        status: 429,
        purpose: "agent",
        endpoint: "http://127.0.0.1:9/v1#m",
      }),
    ]);
    expect(clock.sleeps).toEqual([2000]);
  });
});

/** A model that answers `turns[n]` on its n-th call (the last one again after that). */
function answering(...turns: { content?: string; call?: string; finish?: string }[]): ChatModel {
  let n = 0;
  return {
    name: "answering",
    async complete() {
      const t = turns[Math.min(n++, turns.length - 1)]!;
      const tool_calls = t.call
        ? [{ id: `c${n}`, type: "function" as const, function: { name: t.call, arguments: "{}" } }]
        : undefined;
      return {
        message: { role: "assistant", content: t.content ?? null, ...(tool_calls ? { tool_calls } : {}) },
        finishReason: t.finish ?? (tool_calls ? "tool_calls" : "stop"),
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      };
    },
  };
}

describe("task outcome of a loop end", () => {
  const cancel = new AbortController().signal;

  it("a final answer is a completed trajectory", async () => {
    const msg = await runTask(spec, deps(answering({ content: "42" })), cancel);
    expect([msg.kind, msg.outcome]).toEqual(["trajectory", "completed"]);
    const entry = JSON.parse(msg.line);
    expectExactRecord(TrajectoryEntrySchema, entry, "trajectory");
    expect(entry).toMatchObject({ completed: true, partial: false, final_response: "42", api_calls: 1 });
  });

  it("the turn limit is max_turns, neither completed nor partial", async () => {
    const msg = await runTask(
      spec,
      deps(answering({ call: "no_such_tool" }), { max_turns: 3, max_consecutive_tool_errors: 10 }),
      cancel,
    );
    expect(msg.outcome).toBe("max_turns");
    const entry = JSON.parse(msg.line);
    expect(entry).toMatchObject({ outcome: "max_turns", completed: false, partial: false, api_calls: 3 });
    // It called a tool this build does not know: kept out of the training data, as a dropped record.
    expect(msg.kind).toBe("dropped");
    expectExactRecord(DroppedRecordSchema, entry, "dropped record");
  });

  it("an answer cut by the token limit is partial", async () => {
    const msg = await runTask(spec, deps(answering({ content: "hal", finish: "length" })), cancel);
    expect([msg.kind, msg.outcome]).toEqual(["trajectory", "partial"]);
    expect(JSON.parse(msg.line)).toMatchObject({ completed: false, partial: true });
  });
});
