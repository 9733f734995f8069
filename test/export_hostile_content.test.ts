/**
 * Hostile model output in the lines `export` writes for training: lone UTF-16 surrogates (JSON.stringify writes
 * them as `\udXXX` escapes, which Python's json.loads takes but UTF-8 cannot hold: tokenizers and Arrow refuse the
 * string, and with it the file), and trajectories with no model turn at all (a task cut before its first answer:
 * nothing to train on, and the OpenAI fine-tuning API refuses a file with an example without an assistant message).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Every string in a parsed value (keys too). */
function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v && typeof v === "object")
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      strings(x, out);
    }
  return out;
}

const TOOLS = [
  {
    type: "function",
    function: { name: "terminal", description: "run", parameters: { type: "object", properties: {} } },
  },
];

function line(taskId: string, messages: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    prompt_index: 0,
    task_id: taskId,
    messages: [{ role: "system", content: "sys" }, ...messages],
    tools: TOOLS,
    metadata: { batch_num: 0, timestamp: "2026-01-15T10:30:00.000000", model: "m" },
    completed: true,
    partial: false,
    outcome: "completed",
    api_calls: 1,
    toolsets_used: ["terminal"],
    tool_stats: {},
    tool_error_counts: {},
    final_response: "x",
    ...extra,
  });
}

async function exportAs(file: string, format: string): Promise<{ code: number; stderr: string; text: string }> {
  const out = join(tempDir(), "out.jsonl");
  const r = await runCliInProcess(["export", file, "--format", format, "--out", out]);
  return { code: r.exitCode, stderr: r.stderr, text: r.exitCode === 0 ? readFileSync(out, "utf8") : "" };
}

describe("lone surrogates in the model's output", () => {
  const file = join(tempDir(), "trajectories.jsonl");
  const id = "call_1";
  writeFileSync(
    file,
    line("s", [
      { role: "user", content: "prompt \uD800 end" },
      {
        role: "assistant",
        content: "cut emoji \uD83D",
        reasoning: "think \uDE00 here",
        tool_calls: [
          { id, type: "function", function: { name: "terminal", arguments: '{"command": "echo \\ud800"}' } },
        ],
      },
      { role: "tool", tool_call_id: id, name: "terminal", content: '{"output": "\uDC00"}' },
      { role: "assistant", content: "answer \uDBFF and a real pair \uD83D\uDE00" },
    ]) + "\n",
  );

  for (const format of ["sharegpt", "hermes", "openai", "atif"]) {
    it(`--format ${format}: every string written is valid UTF-16 (U+FFFD for a lone half), and it is said`, async () => {
      const r = await exportAs(file, format);
      expect(r.code, r.stderr).toBe(0);
      // Written as `\udXXX` escapes, lone surrogates come back lone from parsing (Python's json.loads too).
      const recs = r.text
        .trim()
        .split("\n")
        .map((t) => JSON.parse(t));
      const bad = strings(recs).filter((s) => LONE.test(s));
      expect(bad).toEqual([]);
      expect(r.text).toContain("\uFFFD");
      expect(r.text).toContain("\uD83D\uDE00"); // a real pair is kept
      expect(r.stderr).toMatch(/1 line with lone UTF-16 surrogates \(replaced by U\+FFFD\)/);
    });
  }
});

describe("a trajectory without a model turn", () => {
  const file = join(tempDir(), "trajectories.jsonl");
  writeFileSync(
    file,
    [
      // Cut before its first answer (three unparseable tool calls, nothing kept): only the prompt.
      line("cut", [{ role: "user", content: "do it" }], {
        completed: false,
        partial: true,
        outcome: "partial",
        final_response: null,
      }),
      line("ok", [
        { role: "user", content: "say hi" },
        { role: "assistant", content: "hi" },
      ]),
    ].join("\n") + "\n",
  );

  for (const format of ["sharegpt", "hermes", "openai"]) {
    it(`--format ${format}: is not written (nothing to learn; OpenAI refuses such an example), and counted`, async () => {
      const r = await exportAs(file, format);
      expect(r.code, r.stderr).toBe(0);
      const recs = r.text
        .trim()
        .split("\n")
        .map((t) => JSON.parse(t));
      expect(recs).toHaveLength(1);
      const rec = recs[0];
      if (format === "openai") expect(rec.messages.some((m: { role: string }) => m.role === "assistant")).toBe(true);
      else expect(rec.conversations.some((t: { from: string }) => t.from === "gpt")).toBe(true);
      expect(r.stderr).toMatch(/1 without a model turn/);
    });
  }

  it("only such lines: nothing written, exit 1, the reason given", async () => {
    const only = join(tempDir(), "trajectories.jsonl");
    writeFileSync(only, readFileSync(file, "utf8").split("\n")[0] + "\n");
    const r = await exportAs(only, "openai");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/nothing written: no line passed the filters.*1 without a model turn/);
  });
});

describe("a very long model turn full of unclosed <think> tags (the original's own lines)", () => {
  it("--require-reasoning decides in linear time, and still finds a real think block after them", async () => {
    const dir = tempDir();
    const file = join(dir, "batch_0.jsonl");
    const bomb = "<think>a".repeat(60_000); // 480 KB: seconds per line for a backtracking search
    const turns = (gpt: string) => [
      { from: "human", value: "q" },
      { from: "gpt", value: gpt },
    ];
    writeFileSync(
      file,
      [
        JSON.stringify({ prompt_index: 0, conversations: turns(bomb) }),
        JSON.stringify({ prompt_index: 1, conversations: turns(`${bomb}<think>\nreal\n</think>\nanswer`) }),
        JSON.stringify({ prompt_index: 2, conversations: turns("<think>\n \n</think>\nanswer") }),
      ].join("\n") + "\n",
    );
    const started = Date.now();
    const r = await runCliInProcess(["export", file, "--require-reasoning", "--out", join(dir, "o.jsonl")]);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/exported 1 of 3 .* filtered: 2 without reasoning/);
  });
});
