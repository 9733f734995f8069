/**
 * The agent loop, the response parsing and the trajectory formats against a model whose HTTP answers are
 * well formed but semantically odd: the built CLI (`run`, then `export` in every format) against a local
 * OpenAI-compatible server, non-streaming and `--stream`. Each task is one oddity (`case:NAME` in its prompt);
 * every run must end with the right outcome, no internal error, export in every format, round-trip (ATIF back
 * to the saved messages, the conversations rebuilt from the messages), follow the original's conversion rules
 * (a tool response is named after the call at its position) and give statistics that add up.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeOpenAI, text, type FakeOpenAI, type RecordedRequest, type Reply } from "./helpers/fake_openai.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { TrajectoryEntrySchema } from "../src/core/records.js";
import { messagesFromAtif } from "../src/formats/atif.js";
import { AtifTrajectorySchema } from "../src/formats/atif_schema.js";
import { toHermesConversations } from "../src/formats/hermes.js";
import type { ChatMessage } from "../src/core/chat.js";

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

/** A completion whose assistant message is exactly `message` (role added unless given). */
function raw(
  message: Record<string, unknown>,
  opts: { finish?: string; usage?: unknown; choices?: unknown[] } = {},
): Reply {
  return {
    kind: "json",
    body: {
      id: "chatcmpl-odd",
      object: "chat.completion",
      model: "odd-model",
      choices: [
        { index: 0, message: { role: "assistant", ...message }, finish_reason: opts.finish ?? "stop" },
        ...(opts.choices ?? []),
      ],
      ...(opts.usage === undefined ? { usage: USAGE } : opts.usage === null ? {} : { usage: opts.usage }),
    },
  };
}

/** An event stream of these deltas (to either kind of request), then the finish reason and the usage. */
function sse(deltas: unknown[], finish = "stop"): Reply {
  const chunk = (choices: unknown[], extra = {}) => ({
    id: "s",
    object: "chat.completion.chunk",
    model: "m",
    choices,
    ...extra,
  });
  return {
    kind: "sse",
    chunks: [
      ...deltas.map((delta) => chunk([{ index: 0, delta, finish_reason: null }])),
      chunk([{ index: 0, delta: {}, finish_reason: finish }]),
      chunk([], { usage: USAGE }),
    ],
  };
}

const call = (name: string, args: string, id = "c1") => ({ id, type: "function", function: { name, arguments: args } });
const calls = (...c: ReturnType<typeof call>[]) => raw({ content: null, tool_calls: c });

/** Each case: the answer to its turn (assistant messages so far in the request). */
const CASES: Record<string, (turn: number) => Reply> = {
  dup_ids: (t) =>
    t === 0
      ? calls(call("terminal", '{"command":"echo a"}', "same"), call("read_file", '{"path":"nofile"}', "same"))
      : text("done"),
  empty_ids: (t) =>
    t === 0
      ? calls(call("terminal", '{"command":"echo a"}', ""), call("terminal", '{"command":"echo b"}', ""))
      : text("done"),
  reused_ids: (t) => (t < 2 ? calls(call("terminal", `{"command":"echo ${t}"}`, "call_0")) : text("done")),
  reused_derived_ids: (t) => (t < 2 ? calls(call("terminal", '{"command":"echo same"}', "")) : text("done")),
  name_space: (t) => (t === 0 ? calls(call("read file", '{"path":"a"}')) : text("done")),
  name_unicode: (t) => (t === 0 ? calls(call("términal\u0000☃", '{"a":1}')) : text("done")),
  name_500: (t) => (t === 0 ? calls(call("x".repeat(500), '{"a":1}')) : text("done")),
  name_unregistered: (t) => (t === 0 ? calls(call("frobnicate", "{}")) : text("done")),
  args_null: (t) => (t === 0 ? calls(call("terminal", "null")) : text("done")),
  args_array: (t) => (t === 0 ? calls(call("terminal", "[]")) : text("done")),
  args_string: (t) => (t === 0 ? calls(call("terminal", '"echo hi"')) : text("done")),
  args_empty: (t) => (t === 0 ? calls(call("terminal", "")) : text("done")),
  args_garbage: (t) => (t === 0 ? calls(call("terminal", '{"command":"echo hi"} trailing')) : text("done")),
  args_5mb: (t) =>
    t === 0
      ? calls(call("write_file", JSON.stringify({ path: "big.txt", content: "a".repeat(5_000_000) })))
      : text("done"),
  calls_300: (t) =>
    t === 0
      ? calls(...Array.from({ length: 300 }, (_, i) => call("read_file", `{"path":"f${i}"}`, `c${i}`)))
      : text("done"),
  content_and_calls: (t) =>
    t === 0 ? raw({ content: "Let me look.", tool_calls: [call("terminal", '{"command":"echo x"}')] }) : text("done"),
  content_parts: () =>
    raw({
      content: [
        { type: "text", text: "Hello " },
        { type: "text", text: "world" },
      ],
    }),
  refusal: () => raw({ content: null, refusal: "I cannot help with that." }),
  tool_calls_empty: () => raw({ content: "answer", tool_calls: [] }),
  function_call: (t) =>
    t === 0
      ? raw(
          { content: null, function_call: { name: "terminal", arguments: '{"command":"echo legacy"}' } },
          { finish: "function_call" },
        )
      : text("done"),
  role_missing: () => ({
    kind: "json",
    body: { choices: [{ index: 0, message: { content: "no role" }, finish_reason: "stop" }], usage: USAGE },
  }),
  role_user: () => raw({ role: "user", content: "I am the user?" }),
  choices_2: () =>
    raw(
      { content: "first" },
      { choices: [{ index: 1, message: { role: "assistant", content: "second" }, finish_reason: "stop" }] },
    ),
  reasoning_3: () =>
    raw({
      content: "ans",
      reasoning: "R1",
      reasoning_content: "R2",
      reasoning_details: [{ type: "reasoning.text", text: "R3" }],
    }),
  content_filter: () => raw({ content: "partial answ" }, { finish: "content_filter" }),
  content_filter_empty: () => raw({ content: null }, { finish: "content_filter" }),
  tool_calls_finish_no_calls: () => raw({ content: "ans" }, { finish: "tool_calls" }),
  stop_with_calls: (t) =>
    t === 0 ? raw({ content: null, tool_calls: [call("terminal", '{"command":"echo a"}')] }) : text("done"),
  usage_missing: () => raw({ content: "ans" }, { usage: null }),
  usage_zero: () => raw({ content: "ans" }, { usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }),
  usage_negative: () =>
    raw({ content: "ans" }, { usage: { prompt_tokens: -10, completion_tokens: 5, total_tokens: -5 } }),
  usage_float: () =>
    raw({ content: "ans" }, { usage: { prompt_tokens: 10.5, completion_tokens: 2.25, total_tokens: 12.75 } }),
  usage_string: () =>
    raw({ content: "ans" }, { usage: { prompt_tokens: "10", completion_tokens: "5", total_tokens: "15" } }),
  usage_total_short: () =>
    raw({ content: "ans" }, { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 3 } }),
  never_stops: (t) => calls(call("terminal", `{"command":"echo ${t}"}`, `k${t}`)),
  empty_forever: () => raw({ content: "" }),
  sse_same_index: (t) =>
    t === 0
      ? sse(
          [
            { role: "assistant" },
            {
              tool_calls: [
                {
                  index: 0,
                  id: "a",
                  type: "function",
                  function: { name: "terminal", arguments: '{"command":"echo a"}' },
                },
              ],
            },
            {
              tool_calls: [
                { index: 0, id: "b", type: "function", function: { name: "read_file", arguments: '{"path":"x"}' } },
              ],
            },
          ],
          "tool_calls",
        )
      : text("done"),
  sse_refusal: () => sse([{ refusal: "I won't" }, { refusal: " do that." }]),
  sse_function_call: (t) =>
    t === 0
      ? sse(
          [
            { function_call: { name: "terminal", arguments: '{"command":' } },
            { function_call: { arguments: '"echo fc"}' } },
          ],
          "function_call",
        )
      : text("done"),
  sse_reasoning_3: () =>
    sse([
      { reasoning: "R1" },
      { reasoning_content: "R2" },
      { reasoning_details: [{ type: "reasoning.text", text: "R3", index: 0 }] },
      { content: "ans" },
    ]),
  sse_parts: () => sse([{ content: [{ type: "text", text: "par" }] }, { content: [{ type: "text", text: "ts" }] }]),
};

type Where = "trajectories" | "dropped";
/** Where each case's line goes, its outcome, and what else must hold of it. */
const EXPECT: Record<string, { where: Where; outcome: string; final?: string | null }> = {
  dup_ids: { where: "trajectories", outcome: "completed" },
  empty_ids: { where: "trajectories", outcome: "completed" },
  reused_ids: { where: "trajectories", outcome: "completed" },
  reused_derived_ids: { where: "trajectories", outcome: "completed" },
  // Near misses of offered tools, repaired as Hermes repairs them (read file → read_file; términal\0☃ → terminal,
  // difflib's ratio 0.78) and run: kept.
  name_space: { where: "trajectories", outcome: "completed" },
  name_unicode: { where: "trajectories", outcome: "completed" },
  name_500: { where: "dropped", outcome: "completed" },
  name_unregistered: { where: "dropped", outcome: "completed" },
  args_null: { where: "trajectories", outcome: "completed" },
  args_array: { where: "trajectories", outcome: "completed" },
  args_string: { where: "trajectories", outcome: "completed" },
  args_empty: { where: "trajectories", outcome: "completed" },
  args_garbage: { where: "trajectories", outcome: "partial", final: null },
  args_5mb: { where: "trajectories", outcome: "completed" },
  calls_300: { where: "trajectories", outcome: "completed" },
  content_and_calls: { where: "trajectories", outcome: "completed" },
  content_parts: { where: "trajectories", outcome: "completed", final: "Hello world" },
  refusal: { where: "trajectories", outcome: "completed", final: "I cannot help with that." },
  tool_calls_empty: { where: "trajectories", outcome: "completed", final: "answer" },
  function_call: { where: "trajectories", outcome: "completed", final: "done" },
  role_missing: { where: "trajectories", outcome: "completed", final: "no role" },
  role_user: { where: "trajectories", outcome: "completed", final: "I am the user?" },
  choices_2: { where: "trajectories", outcome: "completed", final: "first" },
  reasoning_3: { where: "trajectories", outcome: "completed", final: "ans" },
  content_filter: { where: "trajectories", outcome: "completed", final: "partial answ" },
  content_filter_empty: { where: "dropped", outcome: "partial" },
  tool_calls_finish_no_calls: { where: "trajectories", outcome: "completed", final: "ans" },
  stop_with_calls: { where: "trajectories", outcome: "completed", final: "done" },
  usage_missing: { where: "trajectories", outcome: "completed" },
  usage_zero: { where: "trajectories", outcome: "completed" },
  usage_negative: { where: "trajectories", outcome: "completed" },
  usage_float: { where: "trajectories", outcome: "completed" },
  usage_string: { where: "trajectories", outcome: "completed" },
  usage_total_short: { where: "trajectories", outcome: "completed" },
  never_stops: { where: "trajectories", outcome: "max_turns" },
  empty_forever: { where: "dropped", outcome: "partial" },
  sse_same_index: { where: "trajectories", outcome: "completed", final: "done" },
  sse_refusal: { where: "trajectories", outcome: "completed", final: "I won't do that." },
  sse_function_call: { where: "trajectories", outcome: "completed", final: "done" },
  sse_reasoning_3: { where: "trajectories", outcome: "completed", final: "ans" },
  sse_parts: { where: "trajectories", outcome: "completed", final: "parts" },
};

/** Cases the helper's event-stream form of a JSON reply cannot carry (no `refusal` or `function_call` deltas): sse_* are their streaming forms. */
const JSON_ONLY = new Set(["refusal", "function_call"]);

const caseOf = (req: RecordedRequest): string | undefined => {
  const prompt: string = req.body?.messages?.find((m: { role: string }) => m.role === "user")?.content ?? "";
  return /case:(\S+)/.exec(prompt)?.[1];
};

let server: FakeOpenAI;
const epochAnswers = new Map<string, number>();
beforeAll(async () => {
  server = await startFakeOpenAI((req) => {
    const name = caseOf(req)!;
    const messages: { role: string; content: unknown }[] = req.body.messages;
    if (name === "epochs") {
      // The same prompt answered differently every time: a tool call, then a new answer per epoch.
      const n = (epochAnswers.get("n") ?? 0) + 1;
      epochAnswers.set("n", n);
      return messages.some((m) => m.role === "tool")
        ? text(`answer ${n}`)
        : calls(call("terminal", `{"command":"echo ${n}"}`, "call_0"));
    }
    return CASES[name]!(messages.filter((m) => m.role === "assistant").length);
  });
});
afterAll(() => server.close());

async function run(rows: { id: string; prompt: string }[], extra: string[]) {
  const dir = tempDir("hb-modelout-");
  const dataset = join(dir, "data.jsonl");
  writeFileSync(dataset, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const runDir = join(dir, "runs", "t");
  const result = await runCliInProcess([
    "run",
    dataset,
    "--model",
    "odd-model",
    "--base-url",
    server.baseURL,
    "--api-key",
    "sk-test",
    "--output-dir",
    join(dir, "runs"),
    "--run-name",
    "t",
    "--toolsets",
    "terminal,file",
    "--approval",
    "deny",
    "--progress",
    "none",
    "--max-turns",
    "4",
    ...extra,
  ]);
  const exports: Record<string, any[]> = {};
  const exportErrors: Record<string, string> = {};
  for (const format of ["sharegpt", "hermes", "openai", "atif"]) {
    const out = join(dir, `${format}.jsonl`);
    const r = await runCliInProcess(["export", runDir, "--format", format, "--out", out]);
    if (r.exitCode !== 0) exportErrors[format] = r.stderr;
    else exports[format] = readJsonl(out);
  }
  return {
    result,
    runDir,
    exports,
    exportErrors,
    lines: readJsonl(join(runDir, "trajectories.jsonl")),
    dropped: readJsonl(join(runDir, "dropped.jsonl")),
    failed: readJsonl(join(runDir, "failed.jsonl")),
    stats: JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8")),
    atifFile: readJsonl(join(runDir, "atif.jsonl")),
  };
}

const toolCallIds = (messages: ChatMessage[]) =>
  messages.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((c) => c.id) : []));

/** The original's rule for a tool turn: the k-th response is named after the k-th call of the gpt turn before it. */
function checkConversionRules(conversations: { from: string; value: string }[]): void {
  let lastCallNames: string[] = [];
  for (const turn of conversations.slice(2)) {
    if (turn.from === "gpt") {
      expect(turn.value.startsWith("<think>")).toBe(true);
      lastCallNames = [...turn.value.matchAll(/<tool_call>\n(.*)\n<\/tool_call>/g)].map((m) => JSON.parse(m[1]!).name);
    } else if (turn.from === "tool") {
      const names = [...turn.value.matchAll(/<tool_response>\n(.*)\n<\/tool_response>/g)].map(
        (m) => JSON.parse(m[1]!).name,
      );
      expect(names).toEqual(lastCallNames);
      lastCallNames = [];
    }
  }
}

for (const stream of [false, true]) {
  describe(`odd model answers, ${stream ? "streaming" : "non-streaming"}`, () => {
    let r: Awaited<ReturnType<typeof run>>;
    const byId = (id: string) => [...r.lines, ...r.dropped].find((l) => l.task_id === id);

    beforeAll(async () => {
      const rows = Object.keys(CASES)
        .filter((id) => !stream || !JSON_ONLY.has(id))
        .map((id) => ({ id, prompt: `case:${id}` }));
      r = await run(rows, stream ? ["--stream"] : []);
    }, 240_000);

    it("the run finishes: every task where it belongs with its outcome, nothing failed", () => {
      expect(r.failed).toEqual([]);
      expect(r.result.exitCode, r.result.stderr).toBe(0);
      const got = Object.fromEntries([
        ...r.lines.map((l) => [l.task_id, ["trajectories", l.outcome]]),
        ...r.dropped.map((l) => [l.task_id, ["dropped", l.outcome]]),
      ]);
      const expected = Object.entries(EXPECT).filter(([id]) => !stream || !JSON_ONLY.has(id));
      expect(got).toEqual(Object.fromEntries(expected.map(([id, e]) => [id, [e.where, e.outcome]])));
      for (const [id, e] of expected) if (e.final !== undefined) expect(byId(id).final_response, id).toBe(e.final);
      for (const l of r.lines) TrajectoryEntrySchema.parse(l);
    });

    it("every export format succeeds, ATIF round-trips and the conversations follow the original's rules", () => {
      expect(r.exportErrors).toEqual({});
      expect(r.exports.atif).toHaveLength(r.lines.length);
      expect(r.atifFile).toHaveLength(r.lines.length);
      // A line without a model turn (args_garbage: cut before any answer) has nothing to train on: the training
      // formats leave it out, so their k-th record is the k-th line that has one.
      const trainable = r.lines.filter((l) => l.messages.some((m: any) => m.role === "assistant"));
      expect(trainable.length).toBe(r.lines.length - 1);
      for (const f of ["sharegpt", "hermes", "openai"]) expect(r.exports[f], f).toHaveLength(trainable.length);
      for (const [i, line] of r.lines.entries()) {
        const doc = r.exports.atif![i];
        expect(AtifTrajectorySchema.safeParse(doc).success, line.task_id).toBe(true);
        expect(AtifTrajectorySchema.safeParse(r.atifFile[i]).success, line.task_id).toBe(true);
        expect(messagesFromAtif(doc), line.task_id).toEqual(line.messages);
        expect(line.conversations).toEqual(toHermesConversations(line.messages, line.tools));
        checkConversionRules(line.conversations);
      }
      for (const [i, line] of trainable.entries()) {
        expect(r.exports.sharegpt![i].conversations).toEqual(line.conversations);
        expect(r.exports.hermes![i].conversations).toEqual(line.conversations);
        // The OpenAI record: every tool message answers a call of the assistant turn before it, ids unique.
        const msgs = r.exports.openai![i].messages as any[];
        const ids = msgs.flatMap((m) => (m.tool_calls ?? []).map((c: any) => c.id));
        expect(new Set(ids).size, line.task_id).toBe(ids.length);
        let open = new Set<string>();
        for (const m of msgs) {
          if (m.role === "assistant") open = new Set((m.tool_calls ?? []).map((c: any) => c.id));
          if (m.role === "tool") expect(open.has(m.tool_call_id), line.task_id).toBe(true);
        }
      }
    });

    it("tool-call ids are unique in each trajectory and in every request sent back", () => {
      for (const l of [...r.lines, ...r.dropped]) {
        const ids = toolCallIds(l.messages);
        expect(new Set(ids).size, l.task_id).toBe(ids.length);
      }
      const dup = byId("dup_ids");
      expect(dup.messages.filter((m: any) => m.role === "tool").map((m: any) => m.name)).toEqual([
        "terminal",
        "read_file",
      ]);
      expect(dup.tool_stats.terminal).toEqual({ count: 1, success: 1, failure: 0 });
      expect(dup.tool_stats.read_file).toEqual({ count: 1, success: 0, failure: 1 });
      for (const req of server.requests.filter((q) =>
        ["dup_ids", "reused_ids", "reused_derived_ids"].includes(caseOf(q)!),
      )) {
        const ids = (req.body.messages as any[]).flatMap((m) => (m.tool_calls ?? []).map((c: any) => c.id));
        expect(new Set(ids).size).toBe(ids.length);
      }
    });

    it("answers the parser used to lose: content parts, refusals, legacy function_call, calls sharing a stream index", () => {
      if (!stream) expect(byId("function_call").messages[3].content).toContain("legacy");
      expect(byId("sse_function_call").messages[3].content).toContain("fc");
      const sameIndex = byId("sse_same_index").messages[2];
      expect(sameIndex.tool_calls.map((c: any) => [c.id, c.function.name])).toEqual([
        ["a", "terminal"],
        ["b", "read_file"],
      ]);
      expect(byId("calls_300").messages.filter((m: any) => m.role === "tool")).toHaveLength(300);
      // All three reasoning fields, disagreeing: all kept, the conversation shows what the original's stream records.
      for (const id of stream ? ["sse_reasoning_3"] : ["reasoning_3", "sse_reasoning_3"]) {
        const m = byId(id).messages[2];
        expect([m.reasoning, m.reasoning_without_details], id).toEqual(["R1\n\nR2\n\nR3", "R1\n\nR2"]);
        expect(byId(id).conversations[2].value, id).toBe("<think>\nR1\n\nR2\n</think>\nans");
      }
    });

    it("token counts are whole, add up per call, per task and in statistics.json", () => {
      let total = 0;
      for (const l of [...r.lines, ...r.dropped]) {
        const u = l.usage;
        for (const v of [u.prompt_tokens, u.completion_tokens, u.total_tokens])
          expect(Number.isInteger(v) && v >= 0, l.task_id).toBe(true);
        expect(u.total_tokens, l.task_id).toBeGreaterThanOrEqual(u.prompt_tokens + u.completion_tokens);
        const sum = (k: "prompt_tokens" | "completion_tokens" | "total_tokens") =>
          l.model_calls.reduce((s: number, c: any) => s + c.usage[k], 0);
        expect([sum("prompt_tokens"), sum("completion_tokens"), sum("total_tokens")], l.task_id).toEqual([
          u.prompt_tokens,
          u.completion_tokens,
          u.total_tokens,
        ]);
        total += u.total_tokens;
      }
      expect(byId("usage_total_short").usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
      expect(r.stats.tokens.agent).toBe(total);
      expect(r.stats.token_usage.agent.total_tokens).toBe(total);
      // Every call got one result: per tool, success + failure = count, in each line and in the run's table.
      for (const l of r.lines)
        for (const [name, s] of Object.entries<any>(l.tool_stats))
          expect(s.success + s.failure, `${l.task_id} ${name}`).toBe(s.count);
      for (const [name, s] of Object.entries<any>(r.stats.tool_statistics))
        expect(s.success + s.failure, name).toBe(s.count);
      expect(r.stats.outcomes.internal_error).toBe(0);
    });
  });
}

describe("the same prompt answered differently across --epochs", () => {
  it("gives one line per epoch with its own answer, exported once each in every format", async () => {
    const r = await run([{ id: "e", prompt: "case:epochs" }], ["--epochs", "3", "--concurrency", "1"]);
    expect(r.result.exitCode, r.result.stderr).toBe(0);
    expect(r.exportErrors).toEqual({});
    expect(r.lines.map((l) => l.epoch).sort()).toEqual([0, 1, 2]);
    expect(new Set(r.lines.map((l) => l.final_response)).size).toBe(3);
    expect(r.exports.atif!.map((d) => d.trajectory_id).sort()).toEqual(["e#epoch-0", "e#epoch-1", "e#epoch-2"]);
    for (const f of ["sharegpt", "hermes", "openai"]) expect(r.exports[f]).toHaveLength(3);
    for (const [i, l] of r.lines.entries()) expect(messagesFromAtif(r.exports.atif![i])).toEqual(l.messages);
    expect(r.stats.api_calls.total).toBe(r.lines.reduce((s, l) => s + l.api_calls, 0));
  }, 120_000);
});
