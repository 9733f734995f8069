import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { command as exportCommand } from "../src/commands/export.js";
import { UserError } from "../src/core/errors.js";
import { tempDir } from "./helpers/cli.js";

interface L {
  id: string;
  epoch?: number;
  passed: boolean | null;
  value?: number;
  turns?: number;
  answer?: string;
  prompt?: string;
  toolErrors?: number;
}

function line(l: L): string {
  const turns = l.turns ?? 1;
  const messages: unknown[] = [
    { role: "system", content: "sys" },
    { role: "user", content: l.prompt ?? `prompt ${l.id}` },
  ];
  for (let t = 0; t < turns - 1; t++) {
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: `c${t}`, type: "function", function: { name: "terminal", arguments: "{}" } }],
    });
    messages.push({ role: "tool", tool_call_id: `c${t}`, name: "terminal", content: "{}" });
  }
  messages.push({ role: "assistant", content: l.answer ?? "done" });
  return JSON.stringify({
    prompt_index: 0,
    task_id: l.id,
    ...(l.epoch !== undefined ? { epoch: l.epoch } : {}),
    conversations: [
      { from: "system", value: "sys" },
      { from: "human", value: l.prompt ?? `prompt ${l.id}` },
      { from: "gpt", value: l.answer ?? "done" },
    ],
    messages,
    tools: [],
    metadata: {},
    completed: true,
    partial: false,
    outcome: "completed",
    api_calls: turns,
    toolsets_used: [],
    tool_stats: {},
    tool_error_counts: { terminal: l.toolErrors ?? 0 },
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    approvals: [],
    final_response: l.answer ?? "done",
    duration_ms: 1,
    score: { passed: l.passed, value: l.value ?? (l.passed === null ? null : l.passed ? 1 : 0), scorers: [] },
  });
}

function run(lines: L[]): string {
  const dir = tempDir();
  writeFileSync(join(dir, "trajectories.jsonl"), lines.map(line).join("\n") + "\n");
  return dir;
}

async function exportLines(
  dir: string,
  args: string[],
  out = join(dir, "out.jsonl"),
): Promise<Record<string, unknown>[]> {
  expect(await exportCommand.run([dir, "--out", out, ...args])).toBe(0);
  return readFileSync(out, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((t) => JSON.parse(t));
}

const taskIds = (recs: Record<string, unknown>[]) => recs.map((r) => (r.metadata as { task_id: string }).task_id);

describe("curated export", () => {
  it("--only-passed and --min-score keep only good trajectories", async () => {
    const dir = run([
      { id: "a", passed: true },
      { id: "b", passed: false },
      { id: "c", passed: null },
      { id: "d", passed: true, value: 0.6 },
    ]);
    expect(taskIds(await exportLines(dir, ["--only-passed", "--metadata"]))).toEqual(["a", "d"]);
    expect(taskIds(await exportLines(dir, ["--min-score", "0.7", "--metadata"]))).toEqual(["a"]);
  });

  it("--best-of-epochs keeps one epoch per task: highest reward, then fewer turns", async () => {
    const dir = run([
      { id: "a", epoch: 0, passed: false },
      { id: "a", epoch: 1, passed: true, turns: 3, answer: "long way" },
      { id: "a", epoch: 2, passed: true, turns: 2, answer: "short way" },
      { id: "b", epoch: 0, passed: null },
      { id: "b", epoch: 1, passed: false },
    ]);
    const recs = await exportLines(dir, ["--best-of-epochs", "--format", "openai"]);
    expect(recs.map((r) => (r.messages as { content: string }[]).at(-1)!.content)).toEqual(["short way", "done"]);
  });

  it("--dedup drops a repeated prompt and answer; --min-turns/--max-turns; --drop-tool-errors", async () => {
    const dir = run([
      { id: "a", epoch: 0, passed: true, answer: "4" },
      { id: "a", epoch: 1, passed: true, answer: " 4 " },
      { id: "a", epoch: 2, passed: true, answer: "four", turns: 3 },
      { id: "b", passed: true, toolErrors: 2, turns: 2 },
    ]);
    expect(await exportLines(dir, ["--dedup"])).toHaveLength(3);
    expect(await exportLines(dir, ["--min-turns", "2"])).toHaveLength(2);
    expect(await exportLines(dir, ["--max-turns", "1"])).toHaveLength(2);
    expect(await exportLines(dir, ["--drop-tool-errors"])).toHaveLength(3);
  });

  it("--split puts exactly round(R × n) tasks in validation, is stable for a seed, never splits a task's epochs", async () => {
    const lines: L[] = [];
    for (let t = 0; t < 60; t++) for (let e = 0; e < 3; e++) lines.push({ id: `task-${t}`, epoch: e, passed: true });
    const dir = run(lines);
    const out = join(dir, "data.jsonl");
    const sides = async (seed: string) => {
      expect(await exportCommand.run([dir, "--out", out, "--split", "0.25", "--seed", seed, "--metadata"])).toBe(0);
      const read = (p: string) =>
        readFileSync(p, "utf8")
          .trim()
          .split("\n")
          .map((t) => (JSON.parse(t).metadata as { task_id: string }).task_id);
      return { train: read(join(dir, "data.train.jsonl")), val: read(join(dir, "data.val.jsonl")) };
    };
    const a = await sides("7");
    expect(a.train.length + a.val.length).toBe(180);
    expect(a.val.filter((id) => a.train.includes(id))).toEqual([]);
    expect(a.val.length).toBe(15 * 3); // exactly round(0.25 × 60) tasks, with all 3 epochs of each
    expect(await sides("7")).toEqual(a);
    expect((await sides("8")).val).not.toEqual(a.val);
    expect(existsSync(out)).toBe(false);
  });

  it("groups: one line per task with every scored epoch; advantages sum to 0 per task", async () => {
    const dir = run([
      { id: "a", epoch: 0, passed: true },
      { id: "b", epoch: 0, passed: false },
      { id: "a", epoch: 1, passed: false },
      { id: "a", epoch: 2, passed: true, value: 0.5 },
      { id: "b", epoch: 1, passed: null },
      { id: "c", epoch: 0, passed: null },
    ]);
    const recs = (await exportLines(dir, ["--format", "groups"])) as {
      task_id: string;
      mean_reward: number;
      samples: { epoch: number; reward: number; advantage: number }[];
    }[];
    expect(recs.map((r) => r.task_id)).toEqual(["a", "b"]);
    const a = recs[0]!;
    expect(a.samples.map((s) => s.epoch)).toEqual([0, 1, 2]);
    expect(a.mean_reward).toBeCloseTo(0.5, 12);
    expect(a.samples.map((s) => s.advantage)).toEqual([0.5, -0.5, 0]);
    for (const r of recs) expect(r.samples.reduce((n, s) => n + s.advantage, 0)).toBeCloseTo(0, 12);
  });

  it("bad flags and output folders are one clear UserError before anything is written", async () => {
    const dir = run([{ id: "a", passed: true }]);
    await expect(exportCommand.run([dir, "--split", "1.5", "--out", join(dir, "x.jsonl")])).rejects.toThrow(UserError);
    await expect(exportCommand.run([dir, "--split", "0.2", "--out", "-"])).rejects.toThrow(/two files/);
    await expect(exportCommand.run([dir, "--out", join(dir, "missing", "x.jsonl")])).rejects.toThrow(/does not exist/);
    await expect(exportCommand.run([dir, "--min-turns=-1"])).rejects.toThrow(/--min-turns must be a whole number/);
    await expect(exportCommand.run([dir, "--seed", "3"])).rejects.toThrow(/--seed is for --split/);
  });
});
