/**
 * End to end: the built CLI against a local OpenAI-compatible server on 127.0.0.1, real files, local env.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, readdirSync, writeFileSync, existsSync, mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import {
  completion,
  httpError,
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { runCli, runCliInProcess, tempDir } from "./helpers/cli.js";
import { expectExactRecord } from "./helpers/records.js";
import { readJsonl } from "./helpers/jsonl.js";
import { waitUntil } from "./helpers/wait.js";
import { DroppedRecordSchema, FailureRecordSchema, TrajectoryEntrySchema } from "../src/core/records.js";

const SECRET = "sk-test-SECRET-0123456789";
const ENV_SECRET = "sk-env-SECRET-9876543210";

/** Replies chosen by the task's prompt and the number of assistant turns so far. */
type Script = Record<string, (turn: number, req: RecordedRequest) => Reply>;

function scriptedHandler(script: Script) {
  return (req: RecordedRequest): Reply => {
    const messages: { role: string; content: string }[] = req.body?.messages ?? [];
    const prompt = messages.find((m) => m.role === "user")?.content ?? "";
    const turn = messages.filter((m) => m.role === "assistant").length;
    const key = Object.keys(script).find((k) => prompt.includes(k));
    if (!key) return httpError(400, `no script for prompt ${prompt.slice(0, 40)}`);
    return script[key]!(turn, req);
  };
}

function writeDataset(dir: string, rows: unknown[]): string {
  const path = join(dir, "data.jsonl");
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

describe("hermes-batch run against a local OpenAI-compatible server", () => {
  let server: FakeOpenAI;
  const seenKeys: string[] = [];
  const attempts = new Map<string, number>();

  const script: Script = {
    "single tool": (turn) =>
      turn === 0 ? toolCalls([{ name: "terminal", arguments: { command: "echo single-ok" } }]) : text("single done"),
    "parallel tools": (turn) =>
      turn === 0
        ? toolCalls([
            { name: "write_file", arguments: { path: "a.txt", content: "alpha\n" } },
            { name: "terminal", arguments: { command: "echo beta" } },
          ])
        : turn === 1
          ? toolCalls([
              { name: "read_file", arguments: { path: "a.txt" } },
              { name: "terminal", arguments: { command: "echo gamma" } },
            ])
          : text("parallel done"),
    "unknown tool": (turn) => {
      // Bad argument JSON is asked for again (nothing of it kept), as the original does.
      const n = (attempts.get(`u-${turn}`) ?? 0) + 1;
      attempts.set(`u-${turn}`, n);
      return turn === 0
        ? toolCalls([{ name: "no_such_tool", arguments: {} }])
        : turn === 1
          ? toolCalls([{ name: "terminal", arguments: n === 1 ? '{command: "echo x"}' : { command: "echo fixed" } }])
          : text("recovered");
    },
    "twice unknown": (turn) => (turn < 2 ? toolCalls([{ name: "no_such_tool", arguments: {} }]) : text("recovered")),
    // web_search is a registered tool, but these runs offer only terminal and file tools.
    "not offered": (turn) =>
      turn === 0 ? toolCalls([{ name: "web_search", arguments: { query: "x" } }]) : text("searched anyway"),
    "rate limited": (turn, req) => {
      const key = `rl-${turn}`;
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      if (turn === 0 && n === 1) return httpError(429, "slow down", { "retry-after": "1" });
      if (turn === 0 && n <= 3) return httpError(500, "upstream hiccup");
      return turn === 0
        ? toolCalls([{ name: "terminal", arguments: { command: "echo after-retry" } }])
        : text("rate limit survived");
    },
    "fatal request": () => httpError(400, "this model does not support tools (test)"),
    "leak attempt": (turn) =>
      turn === 0
        ? toolCalls([
            {
              name: "terminal",
              arguments: { command: "tr '\\0' '\\n' < /proc/$PPID/environ | grep API_KEY; echo $OPENAI_API_KEY" },
            },
          ])
        : text(`the key is ${SECRET} and ${ENV_SECRET}`),
    "reasoning please": (turn) =>
      turn === 0
        ? completion({
            content: null,
            reasoning: "I should list files.",
            toolCalls: [{ name: "terminal", arguments: { command: "echo r" } }],
          })
        : completion({ content: "<think>Summing up.</think>The answer is r.", reasoningField: "reasoning" }),
  };

  beforeAll(async () => {
    server = await startFakeOpenAI((req) => {
      seenKeys.push(String(req.headers.authorization ?? ""));
      return scriptedHandler(script)(req);
    });
  });
  afterAll(async () => {
    await server.close();
  });

  /** A run of `rows`; two workers only where the test is about more than one (a worker costs ~0.4 s of CPU). */
  async function run(rows: unknown[], extra: string[] = [], workers = "1") {
    const dir = tempDir();
    const dataset = writeDataset(dir, rows);
    const result = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "test-model",
      "--base-url",
      server.baseURL,
      "--api-key",
      SECRET,
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "t",
      "--toolsets",
      "terminal,file",
      "--workers",
      workers,
      "--concurrency",
      "4",
      "--approval",
      "deny",
      "--progress",
      "log",
      ...extra,
    ]);
    return { dir, runDir: join(dir, "runs", "t"), result };
  }

  it("executes single and parallel tool calls, echoes results back in call order, and writes every output file", async () => {
    const { runDir, result } = await run(
      [
        { id: "s", prompt: "single tool please" },
        { id: "p", prompt: "parallel tools please" },
      ],
      ["--ephemeral-system-prompt", "EPHEMERAL-MARKER do not save", "--max-retries", "2"],
      "2",
    );
    expect(result.stderr).not.toContain("internal error");
    expect(result.exitCode, result.stderr).toBe(0);
    const entries = readJsonl(join(runDir, "trajectories.jsonl"));
    expect(entries.map((e) => e.task_id).sort()).toEqual(["p", "s"]);
    for (const e of entries) expectExactRecord(TrajectoryEntrySchema, e, `trajectory ${e.task_id}`);
    const single = entries.find((e) => e.task_id === "s");
    expect(single.completed).toBe(true);
    expect(single.final_response).toBe("single done");
    const toolMsg = single.messages.find((m: any) => m.role === "tool");
    expect(JSON.parse(toolMsg.content).output).toContain("single-ok");

    const par = entries.find((e) => e.task_id === "p");
    const toolMsgs = par.messages.filter((m: any) => m.role === "tool");
    expect(toolMsgs.map((m: any) => m.name)).toEqual(["write_file", "terminal", "read_file", "terminal"]);
    expect(JSON.parse(toolMsgs[1].content).output).toContain("beta");
    expect(toolMsgs[2].content).toContain("alpha");
    expect(JSON.parse(toolMsgs[3].content).output).toContain("gamma");
    // The model saw the tool results of turn 1 before turn 2.
    const secondCall = server.requests.find(
      (r) =>
        r.body.messages.some((m: any) => m.content === "parallel tools please") &&
        r.body.messages.filter((m: any) => m.role === "tool").length === 2,
    );
    expect(secondCall).toBeDefined();
    // Hermes conversations: one tool turn holding both responses.
    const toolTurns = par.conversations.filter((c: any) => c.from === "tool");
    expect(toolTurns).toHaveLength(2);
    expect(toolTurns[0].value.match(/<tool_response>/g)).toHaveLength(2);
    expect(par.tool_stats.terminal).toEqual({ count: 2, success: 2, failure: 0 });

    // Ephemeral prompt sent, never saved.
    expect(server.requests.some((r) => JSON.stringify(r.body.messages).includes("EPHEMERAL-MARKER"))).toBe(true);
    for (const f of readdirSync(runDir)) {
      const content = readFileSync(join(runDir, f), "utf8");
      expect(content, f).not.toContain("EPHEMERAL-MARKER");
      expect(content, f).not.toContain(SECRET);
    }
    expect(seenKeys).toContain(`Bearer ${SECRET}`);
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.tasks.trajectories).toBe(2);
    expect(stats.tool_statistics.terminal.count).toBe(3);
    const csv = readFileSync(join(runDir, "summary.csv"), "utf8").trim().split("\n");
    expect(csv).toHaveLength(3);
    expect(readFileSync(join(runDir, "run.yaml"), "utf8")).toContain("model: test-model");
  });

  it("never writes a secret to any output file, even when a tool or the model prints it", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, [{ id: "leak", prompt: "leak attempt" }]);
    const result = await runCliInProcess(
      [
        "run",
        dataset,
        "--model",
        "test-model",
        "--base-url",
        server.baseURL,
        "--api-key",
        SECRET,
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
      ],
      { env: { OPENAI_API_KEY: ENV_SECRET } },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const runDir = join(dir, "runs", "t");
    const [entry] = readJsonl(join(runDir, "trajectories.jsonl"));
    expect(entry.final_response).toBe("the key is <redacted> and <redacted>");
    for (const f of readdirSync(runDir)) {
      const content = readFileSync(join(runDir, f), "utf8");
      expect(content, f).not.toContain(SECRET);
      expect(content, f).not.toContain(ENV_SECRET);
    }
  });

  it("returns errors for unknown tools, asks again for bad JSON, then continues; marks partial after repeated malformed turns", async () => {
    attempts.clear();
    // One run, two tasks: an unknown tool (u) and a registered tool this task was not offered (u3).
    const { runDir, result } = await run([
      { id: "u", prompt: "unknown tool test" },
      { id: "u3", prompt: "not offered test" },
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    // A trajectory that called a tool outside the known set is dropped from training data, and counted.
    expect(readJsonl(join(runDir, "trajectories.jsonl"))).toHaveLength(0);
    const dropped = readJsonl(join(runDir, "dropped.jsonl"));
    expect(dropped.map((d) => d.task_id).sort()).toEqual(["u", "u3"]);
    const entry = dropped.find((d) => d.task_id === "u");
    expect(entry.dropped).toBe("unknown_tools");
    expectExactRecord(DroppedRecordSchema, entry, "dropped record");
    expect(JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8")).filtered.dropped_unknown_tools).toBe(2);
    const tools = entry.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
    expect(tools[0].error).toMatch(/Unknown tool 'no_such_tool'/);
    expect(tools[1].output).toContain("fixed");
    expect(tools).toHaveLength(2);
    expect(entry.completed).toBe(true);
    // The repeated request for arguments that do not parse is not counted, as in the original.
    expect(entry.api_calls).toBe(3);
    expect(entry.final_response).toBe("recovered");

    // A registered tool this task was not offered is as unknown to the model as one nobody registered (the
    // original's valid names are the tools it loaded for the task).
    const notOffered = dropped.find((d) => d.task_id === "u3");
    expect(notOffered.dropped).toBe("unknown_tools");
    expect(JSON.parse(notOffered.messages.find((m: any) => m.role === "tool").content).error).toMatch(/web_search/);

    const strict = await run(
      [{ id: "u2", prompt: "twice unknown test" }],
      ["--max-consecutive-tool-errors", "2", "--run-name", "t"],
    );
    const [partial] = readJsonl(join(strict.runDir, "dropped.jsonl"));
    expect(partial.partial).toBe(true);
    expect(partial.completed).toBe(false);
    expect(partial.api_calls).toBe(2);
  });

  /** One streamed run of the retry tasks and the reasoning task, for the two tests below. */
  let streamed: Promise<{ runDir: string; result: Awaited<ReturnType<typeof run>>["result"]; started: number }>;
  const streamedRun = () =>
    (streamed ??= (async () => {
      attempts.clear();
      const started = Date.now();
      const { runDir, result } = await run(
        [
          { id: "rl", prompt: "rate limited task" },
          { id: "bad", prompt: "fatal request task" },
          { id: "r", prompt: "reasoning please" },
        ],
        ["--stream"],
      );
      return { runDir, result, started };
    })());

  it("retries 429 (honouring retry-after) and 500s, streaming or not; records a fatal 400 as a failure", async () => {
    const { runDir, result, started } = await streamedRun();
    expect(result.exitCode, result.stderr).toBe(1);
    const rl = server.requests.filter(
      (r) => r.at >= started && JSON.stringify(r.body.messages).includes("rate limited task"),
    );
    // retry-after: 1 was honoured between the 429 and the next attempt (backoff alone would be far shorter).
    expect(rl[1]!.at - rl[0]!.at).toBeGreaterThanOrEqual(950);
    const entries = readJsonl(join(runDir, "trajectories.jsonl"));
    expect(entries.map((e) => e.task_id).sort()).toEqual(["r", "rl"]);
    expect(entries.find((e) => e.task_id === "rl").final_response).toBe("rate limit survived");
    expect(attempts.get("rl-0")).toBe(4);
    const failed = readJsonl(join(runDir, "failed.jsonl"));
    expect(failed).toHaveLength(1);
    expect(failed[0].task_id).toBe("bad");
    expect(failed[0].outcome).toBe("model_error");
    expect(failed[0].error).toContain("does not support tools");
    expectExactRecord(FailureRecordSchema, failed[0], "failure record");
    expect(server.requests.filter((r) => JSON.stringify(r.body.messages).includes("fatal request task"))).toHaveLength(
      1,
    );
    expect(result.stdout).toContain("--retry-failed");
  });

  it("captures reasoning from fields and <think> blocks into the trajectory", async () => {
    const { runDir } = await streamedRun();
    const entry = readJsonl(join(runDir, "trajectories.jsonl")).find((e) => e.task_id === "r");
    const gpt = entry.conversations.filter((c: any) => c.from === "gpt");
    expect(gpt[0].value).toMatch(/^<think>\nI should list files.\n<\/think>\n<tool_call>/);
    expect(gpt[1].value).toBe("<think>\nSumming up.\n</think>\nThe answer is r.");
    expect(entry.final_response).toBe("The answer is r.");
  });
});

describe("hermes-batch run input validation", () => {
  it("rejects a bad dataset before running anything, naming file and line", async () => {
    const dir = tempDir();
    const path = join(dir, "bad.jsonl");
    writeFileSync(path, `{"prompt": "ok"}\n{"prompt": 5}\nnot json\n{"id": "x"}\n`);
    const r = await runCliInProcess(["run", path, "--model", "scripted", "--output-dir", join(dir, "runs")]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${path}:2`);
    expect(r.stderr).toContain(`${path}:3: invalid JSON`);
    expect(r.stderr).toContain(`${path}:4: missing 'prompt'`);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(dir, "runs"))).toBe(false);
  });

  it("names the key of a bad config file", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "run.yaml"), "max_turns: lots\nbogus_key: 1\n");
    const r = await runCliInProcess([
      "run",
      "datasets/smoke.jsonl",
      "--config",
      join(dir, "run.yaml"),
      "--model",
      "scripted",
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("max_turns");
    expect(r.stderr).toContain("bogus_key");
  });

  it("requires --resume to continue a run folder that has results", async () => {
    const dir = tempDir();
    const args = [
      "run",
      "datasets/smoke.jsonl",
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "runs"),
      "--max-samples",
      "1",
      "--approval",
      "deny",
    ];
    expect((await runCliInProcess(args)).exitCode).toBe(0);
    const again = await runCliInProcess(args);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain("--resume");
    const resumed = await runCliInProcess([...args, "--resume"]);
    expect(resumed.exitCode).toBe(0);
    expect(readJsonl(join(dir, "runs", "smoke", "trajectories.jsonl"))).toHaveLength(1);
  });

  it("refuses a run folder locked by a live process, takes over a stale lock", async () => {
    const dir = tempDir();
    const runDir = join(dir, "runs", "smoke");
    mkdirSync(runDir, { recursive: true });
    const args = [
      "run",
      "datasets/smoke.jsonl",
      "--model",
      "scripted",
      "--output-dir",
      join(dir, "runs"),
      "--max-samples",
      "1",
      "--approval",
      "deny",
      "--progress",
      "none",
    ];
    // A child process: in process, the lock's pid (this test process) would be the run's own.
    writeFileSync(join(runDir, ".lock"), JSON.stringify({ pid: process.pid, host: hostname(), started: "earlier" }));
    const locked = await runCli(args);
    expect(locked.exitCode).toBe(2);
    expect(locked.stderr).toContain(`in use by another hermes-batch (pid ${process.pid}`);
    writeFileSync(join(runDir, ".lock"), JSON.stringify({ pid: 2 ** 22 + 17, host: hostname(), started: "earlier" }));
    // A stale lock names no live process: in process proves the same takeover.
    const stale = await runCliInProcess(args);
    expect(stale.exitCode, stale.stderr).toBe(0);
    expect(existsSync(join(runDir, ".lock"))).toBe(false);
  });

  it("takes over a lock whose process was killed and is left unreaped (a zombie, as under a container's shell)", async () => {
    const dir = tempDir();
    const runDir = join(dir, "runs", "smoke");
    mkdirSync(runDir, { recursive: true });
    // The short sleep ends after its parent has become the long one, which never reaps it: a zombie meanwhile.
    const parent = spawn("sh", ["-c", "sleep 0.2 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const [first] = (await once(parent.stdout!, "data")) as [Buffer];
      const zombie = Number(first.toString().trim());
      expect(await waitUntil(() => /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${zombie}/stat`, "utf8")), 10_000)).toBe(
        true,
      );
      writeFileSync(join(runDir, ".lock"), JSON.stringify({ pid: zombie, host: hostname(), started: "earlier" }));
      const r = await runCliInProcess([
        "run",
        "datasets/smoke.jsonl",
        "--model",
        "scripted",
        "--output-dir",
        join(dir, "runs"),
        "--max-samples",
        "1",
        "--progress",
        "none",
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("--dry-run prints the plan and writes nothing", async () => {
    const dir = tempDir();
    const r = await runCliInProcess([
      "run",
      "datasets/smoke.jsonl",
      "--model",
      "scripted",
      "--dry-run",
      "--output-dir",
      join(dir, "runs"),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("tasks to run: 8");
    expect(existsSync(join(dir, "runs"))).toBe(false);
  });
});
