/**
 * Hostile inputs to `export` that would silently drop or duplicate samples: files the original Hermes wrote (its
 * lines have no task_id), several epochs of a task that never reached a final answer, and the choices across
 * lines (--dedup, --split, --best-of-epochs) over them.
 */
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

/** A line exactly as the original batch_runner writes it: no task_id, no epoch, no messages. */
function hermesLine(promptIndex: number, prompt: string, answer: string): string {
  return JSON.stringify({
    prompt_index: promptIndex,
    conversations: [
      { from: "system", value: "You are a function calling AI model." },
      { from: "human", value: prompt },
      { from: "gpt", value: `<think>\n</think>\n${answer}` },
    ],
    metadata: { batch_num: 0, timestamp: "2026-01-15T10:30:00.000000", model: "m" },
    completed: true,
    partial: false,
    api_calls: 1,
    toolsets_used: ["terminal"],
    tool_stats: {},
    tool_error_counts: {},
  });
}

/** One of our lines whose task stopped at --max-turns: no final answer, a tool call of its own per epoch. */
function maxTurnsLine(taskId: string, epoch: number, command: string): string {
  const id = `call_${epoch}`;
  return JSON.stringify({
    prompt_index: 0,
    task_id: taskId,
    epoch,
    messages: [
      { role: "system", content: "sys" },
      { role: "user", content: "list the files" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: "terminal", arguments: JSON.stringify({ command }) } }],
      },
      { role: "tool", tool_call_id: id, name: "terminal", content: `{"output": "${command}"}` },
    ],
    tools: [],
    metadata: {},
    completed: false,
    partial: false,
    outcome: "max_turns",
    final_response: null,
  });
}

async function exportFile(file: string, args: string[]): Promise<{ code: number; stderr: string; out: any[] }> {
  const out = join(tempDir(), "out.jsonl");
  const r = await runCliInProcess(["export", file, "--out", out, ...args]);
  return { code: r.exitCode, stderr: r.stderr, out: r.exitCode === 0 ? readJsonl(out, { mustExist: true }) : [] };
}

describe("export of the original's own files (lines without task_id)", () => {
  const file = join(tempDir(), "batch_0.jsonl");
  writeFileSync(
    file,
    [hermesLine(0, "What is 2+2?", "4"), hermesLine(1, "What is 3+3?", "6"), hermesLine(2, "What is 4+4?", "8")]
      .map((l) => `${l}\n`)
      .join(""),
  );

  it("every line is exported, none taken for a repeat of the first", async () => {
    for (const format of ["sharegpt", "hermes"]) {
      const r = await exportFile(file, ["--format", format]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/repeat/);
      expect(r.out.map((l) => l.conversations[1].value)).toEqual(["What is 2+2?", "What is 3+3?", "What is 4+4?"]);
    }
  });

  it("--split counts each prompt as its own task", async () => {
    const dir = tempDir();
    const r = await runCliInProcess(["export", file, "--out", join(dir, "o.jsonl"), "--split", "0.34"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const train = readJsonl(join(dir, "o.train.jsonl"), { mustExist: true });
    const val = readJsonl(join(dir, "o.val.jsonl"), { mustExist: true });
    expect([train.length, val.length]).toEqual([2, 1]);
  });

  it("a line the file really repeats (same prompt_index, same text) is still left out once", async () => {
    const twice = join(tempDir(), "batch_0.jsonl");
    writeFileSync(
      twice,
      [hermesLine(0, "q", "a"), hermesLine(0, "q", "a"), hermesLine(1, "q1", "b")].join("\n") + "\n",
    );
    const r = await exportFile(twice, []);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out).toHaveLength(2);
    expect(r.stderr).toMatch(/1 repeat/);
  });
});

describe("--dedup over trajectories without a final answer", () => {
  it("epochs that stopped at max turns with different calls are not duplicates of each other", async () => {
    const file = join(tempDir(), "trajectories.jsonl");
    writeFileSync(file, ["ls", "ls -la", "find ."].map((c, e) => `${maxTurnsLine("t", e, c)}\n`).join(""));
    const r = await exportFile(file, ["--dedup", "--format", "openai"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out).toHaveLength(3);
  });

  it("exact repeats without a final answer are still duplicates", async () => {
    const file = join(tempDir(), "trajectories.jsonl");
    writeFileSync(file, [0, 1].map((e) => `${maxTurnsLine("t", e, "ls")}\n`).join(""));
    const r = await exportFile(file, ["--dedup", "--format", "openai"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out).toHaveLength(1);
    expect(r.stderr).toMatch(/1 duplicate/);
  });

  it("the original's lines with the same prompt and different answers are both kept", async () => {
    const file = join(tempDir(), "batch_0.jsonl");
    writeFileSync(file, [hermesLine(0, "Say hi", "hi"), hermesLine(1, "Say hi", "hello")].join("\n") + "\n");
    const r = await exportFile(file, ["--dedup"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out).toHaveLength(2);
  });
});

describe("lines whose fields hold what no run writes (hand-edited, another tool)", () => {
  const U = { role: "user", content: "q" };
  const A = { role: "assistant", content: "a" };
  const good = (id: string) =>
    JSON.stringify({ task_id: id, messages: [U, A], score: { passed: true, value: 1 }, epoch: 0 });

  it("sharegpt/hermes: a line that cannot be converted is a bad line (file:line), not an internal error", async () => {
    const file = join(tempDir(), "trajectories.jsonl");
    writeFileSync(
      file,
      [
        good("a"),
        JSON.stringify({ task_id: "b", messages: [U, A], tools: [null, { type: "function" }] }),
        JSON.stringify({
          task_id: "c",
          messages: [U, { role: "assistant", content: "x", reasoning: "r", reasoning_without_details: 5 }],
        }),
        good("d"),
      ].join("\n") + "\n",
    );
    for (const format of ["sharegpt", "hermes"]) {
      const r = await exportFile(file, ["--format", format]);
      expect(r.stderr).not.toMatch(/internal error/);
      expect(r.code, r.stderr).toBe(0);
      expect(r.out).toHaveLength(2);
      expect(r.stderr).toMatch(new RegExp(`trajectories\\.jsonl:2: skipped bad line: .*${format}`));
      expect(r.stderr).toMatch(/trajectories\.jsonl:3: skipped bad line: /);
      expect(r.stderr).toMatch(/2 bad lines skipped/);
    }
  });

  it("groups: a line without task_id, or with a score of strings, is a bad line, not an internal error", async () => {
    const file = join(tempDir(), "trajectories.jsonl");
    writeFileSync(
      file,
      [
        good("a"),
        JSON.stringify({ task_id: "a", epoch: 1, messages: [U, A], score: { passed: false, value: 0 } }),
        JSON.stringify({ messages: [U, A], score: { passed: true, value: 1 } }),
        JSON.stringify({ task_id: "b", messages: [U, A], score: { passed: "yes", value: "1" } }),
      ].join("\n") + "\n",
    );
    const r = await exportFile(file, ["--format", "groups"]);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out.map((l) => [l.task_id, l.samples.map((s: { reward: number }) => s.reward)])).toEqual([["a", [1, 0]]]);
    expect(r.stderr).toMatch(/trajectories\.jsonl:3: skipped bad line: .*task_id/);
  });
});

describe("an input read once only (a pipe: export <(…))", () => {
  it("--best-of-epochs, which reads the input twice, refuses it up front (exit 2) instead of finding it empty", async () => {
    const dir = tempDir();
    const src = join(dir, "src.jsonl");
    writeFileSync(
      src,
      ["a", "b"]
        .flatMap((t) =>
          [0, 1].map((e) =>
            JSON.stringify({
              task_id: t,
              epoch: e,
              messages: [
                { role: "user", content: `q${t}` },
                { role: "assistant", content: `answer ${e}` },
              ],
              score: { passed: e === 1, value: e },
            }),
          ),
        )
        .join("\n") + "\n",
    );
    const fifo = join(dir, "pipe");
    execFileSync("mkfifo", [fifo]);
    const writer = spawn("sh", ["-c", 'cat "$1" > "$2"', "sh", src, fifo], { stdio: "ignore" });
    try {
      const r = await runCliInProcess(["export", fifo, "--best-of-epochs", "--out", join(dir, "o.jsonl")], {
        timeoutMs: 10_000,
      });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/--best-of-epochs reads the input twice.*pipe/);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      writer.kill();
    }
  });
});

describe("--split-files into a folder that already holds documents", () => {
  it("is refused (exit 2): an earlier export's files would be read as this one's", async () => {
    const dir = tempDir();
    const file = join(dir, "trajectories.jsonl");
    writeFileSync(
      file,
      ["good", "bad"]
        .map((t) =>
          JSON.stringify({
            task_id: t,
            messages: [
              { role: "user", content: "q" },
              { role: "assistant", content: "a" },
            ],
            score: { passed: t === "good", value: t === "good" ? 1 : 0 },
          }),
        )
        .join("\n") + "\n",
    );
    const docs = join(dir, "docs");
    const all = await runCliInProcess(["export", file, "--format", "atif", "--split-files", docs]);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(readdirSync(docs).sort()).toEqual(["bad.json", "good.json"]);
    // The same folder for the passed trajectories only: bad.json would stay beside good.json.
    const passed = await runCliInProcess(["export", file, "--format", "atif", "--only-passed", "--split-files", docs]);
    expect(passed.exitCode).toBe(2);
    expect(passed.stderr.trim()).toMatch(/^hermes-batch export: --split-files .*docs already holds 2 \.json files/);
    expect(readdirSync(docs).sort()).toEqual(["bad.json", "good.json"]);
  });
});
