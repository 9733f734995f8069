/**
 * ATIF end to end through the built CLI and a fake OpenAI server on 127.0.0.1: atif.jsonl validates and gives
 * back each trajectory's conversation, model calls and harness turns; `export --format atif` writes the same
 * documents (as JSONL or one file per trajectory); resume and merge rebuild atif.jsonl to match
 * trajectories.jsonl; a line that gives no valid document leaves no atif.jsonl and names its task.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import {
  completion,
  httpError,
  startFakeOpenAI,
  taskTurn,
  text,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { AtifTrajectorySchema, type AtifTrajectory } from "../src/formats/atif_schema.js";
import { messagesFromAtif } from "../src/formats/atif.js";

/** Every line of atif.jsonl valid, one per trajectory line in the same order, each giving back its messages. */
function expectAtifMatches(runDir: string): AtifTrajectory[] {
  const entries = readJsonl(join(runDir, "trajectories.jsonl"), { mustExist: true });
  const docs = readJsonl(join(runDir, "atif.jsonl"), { mustExist: true }) as AtifTrajectory[];
  expect(docs.map((d) => d.extra?.task_id)).toEqual(entries.map((e) => e.task_id));
  docs.forEach((doc, i) => {
    const parsed = AtifTrajectorySchema.safeParse(doc);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(messagesFromAtif(doc)).toEqual(entries[i].messages);
  });
  return docs;
}

const usage = {
  prompt_tokens: 30,
  completion_tokens: 6,
  prompt_tokens_details: { cached_tokens: 12 },
  completion_tokens_details: { reasoning_tokens: 4 },
};
const spacedArgs = '{"command": "echo hi"}';

/**
 * calls: one turn with two tool calls (argument text with a space; a recursive delete the deny policy refuses),
 * then an empty answer (asked again), then the answer. cut: an answer cut by the length limit, then the rest.
 * flaky-*: a 500 until `healthy`. Other ids: one echo, then an answer.
 */
function agent(state: { healthy: boolean; seen: Map<string, number> }) {
  return (req: RecordedRequest): Reply => {
    const { id, turn } = taskTurn(req);
    const n = (state.seen.get(id) ?? 0) + 1;
    state.seen.set(id, n);
    if (id.startsWith("flaky") && !state.healthy) return httpError(500, "down");
    if (id === "calls") {
      if (turn === 0) {
        return completion({
          toolCalls: [
            { name: "terminal", arguments: spacedArgs, id: "c-echo" },
            { name: "terminal", arguments: { command: "rm -rf /tmp/hb-atif-nothing" }, id: "c-rm" },
          ],
          usage,
          model: "served-model",
        });
      }
      if (n === 2) return completion({ content: "", model: "served-model" });
      return completion({ content: "all done", reasoning: "checked", usage, model: "served-model" });
    }
    if (id === "cut")
      return turn === 0 ? completion({ content: "first half", finishReason: "length" }) : text("second half");
    return turn === 0
      ? completion({ toolCalls: [{ name: "terminal", arguments: { command: `echo ${id}` } }] })
      : text(`done ${id}`);
  };
}

describe("ATIF trajectories", () => {
  let server: FakeOpenAI;
  const state = { healthy: true, seen: new Map<string, number>() };
  let dir: string;
  const base = (runName: string) => [
    "--model",
    "agent-model",
    "--base-url",
    server.baseURL,
    "--api-key",
    "k",
    "--toolsets",
    "terminal",
    "--approval",
    "deny",
    "--max-retries",
    "0",
    "--output-dir",
    join(dir, "runs"),
    "--run-name",
    runName,
    "--progress",
    "none",
  ];

  beforeAll(async () => {
    server = await startFakeOpenAI(agent(state));
    dir = tempDir("hb-atif-");
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("atif.jsonl validates and round-trips the conversation, calls, approvals and harness turns", async () => {
    const data = join(dir, "a.jsonl");
    writeFileSync(
      data,
      ["calls", "cut"].map((id) => JSON.stringify({ id, prompt: `task:${id} go` })).join("\n") + "\n",
    );
    const r = await runCliInProcess(["run", data, ...base("a"), "--price-input", "1", "--price-output", "2"]);
    expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    const runDir = join(dir, "runs", "a");
    const docs = expectAtifMatches(runDir);
    const entries = Object.fromEntries(
      readJsonl(join(runDir, "trajectories.jsonl"), { mustExist: true }).map((e) => [e.task_id, e]),
    );
    const doc = Object.fromEntries(docs.map((d) => [d.extra!.task_id as string, d]));

    // calls: three model calls, the empty answer thrown away; its tokens only in the totals.
    const calls = entries.calls;
    expect(calls.model_calls.map((c: any) => c.message_index)).toEqual([2, undefined, 5]);
    expect(calls.model_calls.map((c: any) => c.model)).toEqual(["served-model", "served-model", "served-model"]);
    const agentSteps = doc.calls!.steps.filter((s) => s.source === "agent");
    expect(agentSteps).toHaveLength(2);
    expect(agentSteps[0]).toMatchObject({
      timestamp: calls.model_calls[0].started_at,
      model_name: "served-model",
      metrics: { prompt_tokens: 30, completion_tokens: 6, cached_tokens: 12, extra: { reasoning_tokens: 4 } },
    });
    expect(agentSteps[0]!.metrics!.cost_usd).toBeCloseTo((30 * 1 + 6 * 2) / 1e6, 12);
    const [echo, rm] = agentSteps[0]!.tool_calls!;
    expect(echo).toMatchObject({
      tool_call_id: "c-echo",
      arguments: { command: "echo hi" },
      extra: { arguments_text: spacedArgs },
    });
    expect(rm!.extra!.approvals).toEqual([expect.objectContaining({ decision: "deny", tool_call_id: "c-rm" })]);
    expect(agentSteps[0]!.observation!.results.map((x) => x.source_call_id)).toEqual(["c-echo", "c-rm"]);
    expect(doc.calls!.final_metrics).toMatchObject({
      total_prompt_tokens: calls.usage.prompt_tokens,
      total_completion_tokens: calls.usage.completion_tokens,
      total_cost_usd: calls.cost_usd,
      total_steps: 4,
    });
    expect(doc.calls!.final_metrics!.extra).toMatchObject({ discarded_model_calls: 1 });
    const stepPrompt = agentSteps.reduce((n, s) => n + (s.metrics?.prompt_tokens ?? 0), 0);
    expect(calls.usage.prompt_tokens - stepPrompt).toBe(calls.model_calls[1].usage.prompt_tokens);

    // cut: the continuation turn is the harness's, marked in the record and in the document.
    const cut = entries.cut;
    expect(cut.injected_messages).toHaveLength(1);
    expect(cut.messages[cut.injected_messages[0]].role).toBe("user");
    const marked = doc.cut!.steps.flatMap((s, i) => (s.extra?.harness_injected ? [i] : []));
    expect(marked).toEqual(cut.injected_messages);
    expect(doc.cut!.steps.find((s) => s.source === "agent")!.extra).toMatchObject({ finish_reason: "length" });
    expect(calls.injected_messages).toEqual([]);
  });

  it("export --format atif writes the same documents, as JSONL or one file per trajectory", async () => {
    const runDir = join(dir, "runs", "a");
    const inRun = readFileSync(join(runDir, "atif.jsonl"), "utf8");
    const out = join(dir, "export.atif.jsonl");
    const jsonl = await runCliInProcess(["export", runDir, "--format", "atif", "--out", out]);
    expect(jsonl.exitCode, jsonl.stderr).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(inRun);

    const files = join(dir, "atif-files");
    const split = await runCliInProcess(["export", runDir, "--format", "atif", "--split-files", files]);
    expect(split.exitCode, split.stderr).toBe(0);
    expect(split.stderr).toMatch(/exported 2 of 2 trajectories .* as atif to .*atif-files \(one file per trajectory\)/);
    expect(readdirSync(files).sort()).toEqual(["calls.json", "cut.json"]);
    const byTask = Object.fromEntries(
      readJsonl(join(runDir, "atif.jsonl"), { mustExist: true }).map((d) => [d.extra.task_id, d]),
    );
    for (const id of ["calls", "cut"])
      expect(JSON.parse(readFileSync(join(files, `${id}.json`), "utf8"))).toEqual(byTask[id]);

    const wrongFormat = await runCliInProcess(["export", runDir, "--format", "openai", "--split-files", files]);
    expect(wrongFormat.exitCode).toBe(2);
    expect(wrongFormat.stderr).toMatch(/--split-files is for --format atif/);
  });

  it("a line that gives no valid document: export exits 2 naming the task, writing nothing", async () => {
    const bad = join(dir, "bad.jsonl");
    const line = readJsonl(join(dir, "runs", "a", "trajectories.jsonl"), { mustExist: true })[0];
    writeFileSync(bad, JSON.stringify({ ...line, task_id: "broken-task", messages: [] }) + "\n");
    const files = join(dir, "bad-files");
    const r = await runCliInProcess(["export", bad, "--format", "atif", "--split-files", files]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/task broken-task: not a valid ATIF-v1\.7 document: steps/);
    expect(existsSync(files) ? readdirSync(files) : []).toEqual([]);
  });

  it("--resume rebuilds atif.jsonl with the tasks it adds; an invalid line leaves none and names its task", async () => {
    const data = join(dir, "r.jsonl");
    writeFileSync(
      data,
      ["r1", "flaky-1", "r2"].map((id) => JSON.stringify({ id, prompt: `task:${id} go` })).join("\n") + "\n",
    );
    state.healthy = false;
    const first = await runCliInProcess(["run", data, ...base("r")]);
    expect(first.exitCode).toBe(1);
    const runDir = join(dir, "runs", "r");
    expect(
      expectAtifMatches(runDir)
        .map((d) => d.extra?.task_id)
        .sort(),
    ).toEqual(["r1", "r2"]);

    state.healthy = true;
    const resumed = await runCliInProcess(["run", data, ...base("r"), "--resume"]);
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(0);
    expect(
      expectAtifMatches(runDir)
        .map((d) => d.extra?.task_id)
        .sort(),
    ).toEqual(["flaky-1", "r1", "r2"]);

    // A line the run did not write itself (hand-edited) with no messages: no atif.jsonl that disagrees.
    const line = readJsonl(join(runDir, "trajectories.jsonl"), { mustExist: true })[0];
    appendFileSync(
      join(runDir, "trajectories.jsonl"),
      JSON.stringify({ ...line, task_id: "hand-made", messages: [] }) + "\n",
    );
    const again = await runCliInProcess(["run", data, ...base("r"), "--resume"]);
    expect(again.exitCode).toBe(1);
    expect(again.stdout).toMatch(/error: .*atif\.jsonl not written: task hand-made: not a valid ATIF-v1\.7 document/);
    expect(existsSync(join(runDir, "atif.jsonl"))).toBe(false);
    expect(existsSync(join(runDir, "statistics.json"))).toBe(true);
  });

  it("--resume still checks a hand-edited line written before the lines it adds (its own are not re-checked)", async () => {
    const data = join(dir, "h.jsonl");
    writeFileSync(
      data,
      ["h1", "flaky-h"].map((id) => JSON.stringify({ id, prompt: `task:${id} go` })).join("\n") + "\n",
    );
    state.healthy = false;
    expect((await runCliInProcess(["run", data, ...base("h")])).exitCode).toBe(1);
    const runDir = join(dir, "runs", "h");
    const line = readJsonl(join(runDir, "trajectories.jsonl"), { mustExist: true })[0];
    appendFileSync(
      join(runDir, "trajectories.jsonl"),
      JSON.stringify({ ...line, task_id: "hand-made", messages: [] }) + "\n",
    );
    state.healthy = true;
    const resumed = await runCliInProcess(["run", data, ...base("h"), "--resume"]);
    expect(resumed.exitCode).toBe(1);
    expect(resumed.stdout).toMatch(/error: .*atif\.jsonl not written: task hand-made: not a valid ATIF-v1\.7 document/);
    expect(existsSync(join(runDir, "atif.jsonl"))).toBe(false);
    // Without the bad line, the same folder's documents (the added task's included) are all valid.
    const lines = readFileSync(join(runDir, "trajectories.jsonl"), "utf8").split("\n");
    writeFileSync(join(runDir, "trajectories.jsonl"), lines.filter((l) => !l.includes('"hand-made"')).join("\n"));
    expect((await runCliInProcess(["run", data, ...base("h"), "--resume"])).exitCode).toBe(0);
    expect(
      expectAtifMatches(runDir)
        .map((d) => d.extra?.task_id)
        .sort(),
    ).toEqual(["flaky-h", "h1"]);
  });

  it("merge writes atif.jsonl for the merged trajectories", async () => {
    const data = join(dir, "m.jsonl");
    writeFileSync(
      data,
      ["m1", "m2", "m3", "m4"].map((id) => JSON.stringify({ id, prompt: `task:${id} go` })).join("\n") + "\n",
    );
    for (const shard of ["0/2", "1/2"]) {
      const r = await runCliInProcess(["run", data, ...base("m"), "--shard", shard], { env: NO_SCHEDULER });
      expect(r.exitCode, r.stderr + r.stdout).toBe(0);
    }
    const merged = await runCliInProcess(["merge", join(dir, "runs", "m")], { env: NO_SCHEDULER });
    expect(merged.exitCode, merged.stderr + merged.stdout).toBe(0);
    const docs = expectAtifMatches(join(dir, "runs", "m"));
    expect(docs.map((d) => d.extra?.task_id).sort()).toEqual(["m1", "m2", "m3", "m4"]);
    expect(new Set(docs.map((d) => d.session_id))).toEqual(new Set(["m"]));
  });
});
