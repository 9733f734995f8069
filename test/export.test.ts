import { spawn } from "node:child_process";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync, createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenAITool } from "../tools/registry.js";
import type { ChatMessage } from "../src/core/chat.js";
import type { TrajectoryEntry } from "../src/core/records.js";
import { toHermesConversations } from "../src/formats/hermes.js";
import { runCliInProcess } from "./helpers/cli.js";
import { parseJsonl, readJsonl } from "./helpers/jsonl.js";

const ROOT = resolve(import.meta.dirname, "..");
// The built CLI (the cli project builds it once), for the one test that needs a process of its own.
const CLI = join(ROOT, "dist/src/cli.js");

/** `hermes-batch ARGS` in process (no test here but the FIFO one is about the process itself). */
async function cli(args: string[]) {
  const r = await runCliInProcess(args, { cwd: ROOT, timeoutMs: 60_000 });
  return { code: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

const TOOLS: OpenAITool[] = [
  {
    type: "function",
    function: {
      name: "terminal",
      description: "Run a command",
      parameters: { type: "object", properties: { command: { type: "string" } } },
    },
  },
];

function messages(reasoning: string | undefined, answer: string): ChatMessage[] {
  return [
    { role: "user", content: `prompt for ${answer}` },
    {
      role: "assistant",
      content: null,
      reasoning,
      tool_calls: [{ id: "c1", type: "function", function: { name: "terminal", arguments: '{"command": "echo hi"}' } }],
    },
    {
      role: "tool",
      tool_call_id: "c1",
      name: "terminal",
      content: '{"output": "hi\\n", "exit_code": 0, "error": null}',
    },
    { role: "assistant", content: answer },
  ];
}

function entry(i: number, over: Partial<TrajectoryEntry>, reasoning?: string): TrajectoryEntry {
  const msgs = messages(reasoning, `answer ${i}`);
  return {
    prompt_index: i,
    task_id: `task-${i}`,
    conversations: toHermesConversations(msgs, TOOLS),
    messages: msgs,
    tools: TOOLS,
    metadata: { model: "scripted", seed: 7 },
    completed: true,
    partial: false,
    outcome: "completed",
    api_calls: 2,
    toolsets_used: ["terminal"],
    tool_stats: { terminal: { count: 1, success: 1, failure: 0 } },
    tool_error_counts: { terminal: 0 },
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    approvals: [],
    final_response: `answer ${i}`,
    duration_ms: 100,
    ...over,
  };
}

let dir = "";
let trajectories = "";
const E0 = entry(
  0,
  { verify: { command: "true", exit_code: 0, passed: true, output: "", timed_out: false } },
  "I will echo.",
);
const E1 = entry(1, { completed: false, outcome: "max_turns" }, "thinking");
const E2 = entry(2, { conversations: [] }); // no reasoning, conversations rebuilt from messages

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "export-test-"));
  trajectories = join(dir, "trajectories.jsonl");
  const lines = [
    JSON.stringify(E0),
    JSON.stringify(E1),
    "{this is not json",
    "",
    JSON.stringify({ task_id: "bad-role", messages: [{ role: "robot", content: "x" }] }),
    JSON.stringify(E2),
    '{"task_id": "torn", "conv', // a torn last line, no newline
  ];
  writeFileSync(trajectories, lines.join("\n"));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("hermes-batch export", () => {
  it("exports sharegpt beside the input by default, reporting bad lines with file:line", async () => {
    const r = await cli(["export", dir, "--format", "sharegpt"]);
    expect(r.stderr).toContain(`${trajectories}:3: skipped bad line`);
    expect(r.stderr).toMatch(
      new RegExp(`${trajectories.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:5: skipped bad line: .*messages\\.0\\.role`),
    );
    expect(r.stderr).toContain(`${trajectories}:7: skipped bad line`);
    expect(r.stderr).toContain("exported 3 of 3 trajectories");
    expect(r.stderr).toContain("3 bad lines skipped");
    expect(r.code).toBe(0);
    const out = join(dir, "export.sharegpt.jsonl");
    const rows = readJsonl(out, { mustExist: true });
    expect(rows).toEqual([
      { conversations: E0.conversations },
      { conversations: E1.conversations },
      { conversations: toHermesConversations(E2.messages, TOOLS) },
    ]);
    expect(rows[0].conversations[2].value).toBe(
      '<think>\nI will echo.\n</think>\n<tool_call>\n{"name": "terminal", "arguments": {"command": "echo hi"}}\n</tool_call>',
    );
    expect(rows[2].conversations[2].value.startsWith("<think>\n</think>\n<tool_call>")).toBe(true);
    // no temp files left behind
    expect(readdirSync(dir).filter((f) => f.includes(".tmp"))).toEqual([]);
  });

  it("leaves reasoning sent only in reasoning_details out of hermes/sharegpt unless --reasoning-details", async () => {
    const msgs = messages("from details", "answer 9");
    (msgs[1] as Extract<ChatMessage, { role: "assistant" }>).reasoning_without_details = "";
    const file = join(dir, "details.jsonl");
    writeFileSync(
      file,
      JSON.stringify(entry(9, { messages: msgs, conversations: toHermesConversations(msgs, TOOLS) })) + "\n",
    );
    const gpt = (out: string) => readJsonl(out, { mustExist: true })[0].conversations[2].value as string;
    const plain = join(dir, "details.plain.jsonl");
    expect((await cli(["export", file, "--format", "hermes", "--out", plain])).code).toBe(0);
    expect(gpt(plain).startsWith("<think>\n</think>\n<tool_call>")).toBe(true);
    // By default the conversation has no reasoning, so --require-reasoning filters it; with the flag it is kept.
    expect(
      (await cli(["export", file, "--format", "hermes", "--require-reasoning", "--out", join(dir, "none.jsonl")])).code,
    ).toBe(1);
    const kept = join(dir, "details.kept.jsonl");
    const r = await cli([
      "export",
      file,
      "--format",
      "hermes",
      "--reasoning-details",
      "--require-reasoning",
      "--out",
      kept,
    ]);
    expect(r.code).toBe(0);
    expect(gpt(kept).startsWith("<think>\nfrom details\n</think>\n<tool_call>")).toBe(true);
    const bad = await cli(["export", file, "--format", "openai", "--reasoning-details"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--reasoning-details is for the sharegpt and hermes formats");
  });

  it("exports openai fine-tuning records with filters", async () => {
    const out = join(dir, "ft.jsonl");
    const r = await cli([
      "export",
      trajectories,
      "--format",
      "openai",
      "--only-completed",
      "--require-reasoning",
      "--out",
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("exported 1 of 3 trajectories");
    expect(r.stderr).toContain("filtered: 1 not completed, 1 without reasoning");
    const rows = readJsonl(out, { mustExist: true });
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0])).toEqual(["messages", "tools"]);
    expect(rows[0].tools).toEqual(TOOLS);
    expect(rows[0].messages).toEqual([
      { role: "user", content: "prompt for answer 0" },
      {
        role: "assistant",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "terminal", arguments: '{"command": "echo hi"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: '{"output": "hi\\n", "exit_code": 0, "error": null}' },
      { role: "assistant", content: "answer 0" },
    ]);
  });

  it("exports Hermes batch entries to stdout, keeping only passing verifies", async () => {
    const r = await cli(["export", trajectories, "--format", "hermes", "--min-verify-pass", "--out", "-"]);
    expect(r.code).toBe(0);
    const rows = parseJsonl(r.stdout);
    expect(rows).toHaveLength(1);
    const { tool_stats, tool_error_counts, ...rest } = rows[0];
    expect(rest).toEqual({
      prompt_index: 0,
      conversations: E0.conversations,
      metadata: { batch_num: 0, timestamp: "", model: "scripted" },
      completed: true,
      partial: false,
      api_calls: 2,
      toolsets_used: ["terminal"],
    });
    expect(Object.keys(rows[0])).toEqual([
      "prompt_index",
      "conversations",
      "metadata",
      "completed",
      "partial",
      "api_calls",
      "toolsets_used",
      "tool_stats",
      "tool_error_counts",
    ]);
    expect(tool_stats.terminal).toEqual({ count: 1, success: 1, failure: 0 });
    expect(tool_stats.browser_cdp).toEqual({ count: 0, success: 0, failure: 0 });
    expect(Object.keys(tool_error_counts)).toEqual(Object.keys(tool_stats));
    expect(r.stderr).toContain("filtered: 2 without a passing verify");
    const withMeta = await cli(["export", trajectories, "--format", "hermes", "--metadata", "--out", "-"]);
    expect(withMeta.code).toBe(2);
    expect(withMeta.stderr).toMatch(
      /--metadata: the hermes format has the original's metadata \{batch_num, timestamp, model\}/,
    );
  });

  it("exports a result line present twice once, the first, as statistics.json counts it", async () => {
    const repeated = join(dir, "repeated.jsonl");
    const again = entry(0, { final_response: "a later copy" });
    writeFileSync(repeated, [E0, E1, again, E2].map((e) => JSON.stringify(e)).join("\n") + "\n");
    const out = join(dir, "repeated.out.jsonl");
    const r = await cli(["export", repeated, "--format", "openai", "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("exported 3 of 3 trajectories");
    expect(r.stderr).toContain("1 repeat of a task and epoch already read (the first stands)");
    const rows = readJsonl(out, { mustExist: true }) as { messages: { content: string | null }[] }[];
    expect(rows.map((row) => row.messages.at(-1)!.content)).toEqual(["answer 0", "answer 1", "answer 2"]);
  });

  it("rejects bad input with exit code 2", async () => {
    const missing = await cli(["export", join(dir, "nope"), "--format", "openai"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no such file or folder");
    const badFormat = await cli(["export", dir, "--format", "csv"]);
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain("unknown export format 'csv'. Formats: sharegpt, hermes, openai, atif, groups");
    const emptyDir = mkdtempSync(join(dir, "empty-"));
    const noFile = await cli(["export", emptyDir]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain("no trajectories.jsonl");
    expect(existsSync(join(emptyDir, "export.sharegpt.jsonl"))).toBe(false);
    const allBad = join(dir, "all-bad.jsonl");
    writeFileSync(allBad, "nope\n[1]\n");
    const r = await cli(["export", allBad, "--out", join(dir, "all-bad.out.jsonl")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${allBad}:2: skipped bad line`);
    expect(r.stderr).toContain("export: nothing written: no valid line (0 of 0 trajectories from all-bad.jsonl)");
    expect(existsSync(join(dir, "all-bad.out.jsonl"))).toBe(false);
  });

  it("streams: output appears before the input has ended (reads a FIFO)", async () => {
    const fifo = join(dir, "live.jsonl");
    execFileSync("mkfifo", [fifo]);
    const child = spawn(process.execPath, [CLI, "export", fifo, "--format", "sharegpt", "--out", "-"], { cwd: ROOT });
    let stdout = "";
    const firstLine = new Promise<void>((res) =>
      child.stdout.on("data", (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes("\n")) res();
      }),
    );
    const done = new Promise<number | null>((res) => child.on("close", (code) => res(code)));
    const writer = createWriteStream(fifo);
    writer.write(JSON.stringify(E0) + "\n");
    await firstLine; // the export emitted a record while the writer still holds the FIFO open
    expect(JSON.parse(stdout.split("\n")[0]!)).toEqual({ conversations: E0.conversations });
    writer.end(JSON.stringify(E1) + "\n");
    expect(await done).toBe(0);
    expect(stdout.trimEnd().split("\n")).toHaveLength(2);
  }, 60_000);
});

// Issue 22: a split that holds what it says, exit codes as --help says, every format named in errors.
describe("hermes-batch export: split sizes, empty results and flag ranges", () => {
  let sdir = "";
  /** 6 tasks × 2 epochs; task-0 and task-3 passed, the rest failed (score values 1 and 0). */
  const scored = (reverse = false) => {
    const lines: string[] = [];
    for (let t = 0; t < 6; t++)
      for (let e = 0; e < 2; e++) {
        const passed = t % 3 === 0;
        lines.push(
          JSON.stringify(
            entry(t, {
              epoch: e,
              score: { passed, value: passed ? 1 : 0, scorers: [{ name: "expected", passed, value: passed ? 1 : 0 }] },
            }),
          ),
        );
      }
    return (reverse ? lines.reverse() : lines).join("\n") + "\n";
  };
  const ids = (path: string) => readJsonl(path).map((r) => r.metadata.task_id as string);

  beforeAll(() => {
    sdir = mkdtempSync(join(tmpdir(), "export-split-"));
    writeFileSync(join(sdir, "trajectories.jsonl"), scored());
    writeFileSync(join(sdir, "reversed.jsonl"), scored(true));
  });
  afterAll(() => {
    if (sdir) rmSync(sdir, { recursive: true, force: true });
  });

  it("--split 0.34 on 6 tasks puts exactly round(0.34 × 6) = 2 tasks, every epoch of each, in validation, for seeds 1, 2 and 3", async () => {
    const valSets = new Set<string>();
    for (const seed of ["1", "2", "3"]) {
      const out = join(sdir, `s${seed}.jsonl`);
      const r = await cli(["export", sdir, "--metadata", "--split", "0.34", "--seed", seed, "--out", out]);
      expect(r.code).toBe(0);
      const train = ids(join(sdir, `s${seed}.train.jsonl`));
      const val = ids(join(sdir, `s${seed}.val.jsonl`));
      expect(new Set(val).size).toBe(2);
      expect(val).toHaveLength(4);
      expect(new Set(train).size).toBe(4);
      expect(train).toHaveLength(8);
      expect(val.filter((id) => train.includes(id))).toEqual([]);
      expect(r.stderr).toMatch(/s\d\.train\.jsonl \(8 lines, 4 tasks\) and .*s\d\.val\.jsonl \(4 lines, 2 tasks\)/);
      valSets.add([...new Set(val)].sort().join(","));
      // The same seed and ids give the same split, whatever order the lines come in.
      const again = join(sdir, `r${seed}.jsonl`);
      expect(
        (
          await cli([
            "export",
            join(sdir, "reversed.jsonl"),
            "--metadata",
            "--split",
            "0.34",
            "--seed",
            seed,
            "--out",
            again,
          ])
        ).code,
      ).toBe(0);
      expect(new Set(ids(join(sdir, `r${seed}.val.jsonl`)))).toEqual(new Set(val));
    }
    expect(valSets.size).toBeGreaterThan(1); // the seed does choose
  }, 120_000);

  it("a split with an empty side writes nothing and exits 1, saying which --split would do", async () => {
    const out = join(sdir, "empty-side.jsonl");
    const few = await cli(["export", sdir, "--split", "0.05", "--out", out]);
    expect(few.code).toBe(1);
    expect(few.stderr).toContain(
      "export: nothing written: --split 0.05 puts round(0.05 × 6) = 0 of the 6 exported tasks in validation: with 6 tasks, a --split from 0.0834 to 0.9166 leaves at least one task on each side",
    );
    const many = await cli(["export", sdir, "--split", "0.95", "--out", out]);
    expect(many.code).toBe(1);
    expect(many.stderr).toContain("= 6 of the 6 exported tasks in validation and none in training");
    // n counts the tasks left after the filters: only task-0 and task-3 passed.
    const two = await cli(["export", sdir, "--only-passed", "--split", "0.2", "--out", out]);
    expect(two.code).toBe(1);
    expect(two.stderr).toContain("round(0.2 × 2) = 0 of the 2 exported tasks");
    expect(two.stderr).toContain("a --split from 0.25 to 0.7499");
    const twoOk = await cli(["export", sdir, "--only-passed", "--split", "0.25", "--out", out]);
    expect(twoOk.code).toBe(0);
    expect(readJsonl(join(sdir, "empty-side.val.jsonl"), { mustExist: true })).toHaveLength(2);
    rmSync(join(sdir, "empty-side.val.jsonl"));
    rmSync(join(sdir, "empty-side.train.jsonl"));
    const best = await cli([
      "export",
      sdir,
      "--metadata",
      "--min-score",
      "1",
      "--best-of-epochs",
      "--split",
      "0.5",
      "--out",
      join(sdir, "best.jsonl"),
    ]);
    expect(best.code).toBe(0); // one epoch of each passing task: one task a side
    expect([...ids(join(sdir, "best.train.jsonl")), ...ids(join(sdir, "best.val.jsonl"))].sort()).toEqual([
      "task-0",
      "task-3",
    ]);
    const single = join(sdir, "single.jsonl");
    writeFileSync(single, JSON.stringify(entry(9, {})) + "\n");
    const lone = await cli(["export", single, "--split", "0.5", "--out", join(sdir, "lone.jsonl")]);
    expect(lone.code).toBe(1);
    expect(lone.stderr).toContain(
      "0.5 × 1) = 1 of the 1 exported task in validation and none in training: a split needs at least 2 tasks, one on each side",
    );
    for (const f of ["empty-side", "lone"])
      for (const side of ["train", "val"]) expect(existsSync(join(sdir, `${f}.${side}.jsonl`))).toBe(false);
    expect(readdirSync(sdir).filter((f) => f.includes(".tmp") || f.includes("staging"))).toEqual([]);
  }, 120_000);

  it("an export that keeps no line exits 1 as --help says, and writes no file", async () => {
    const out = join(sdir, "none.jsonl");
    const r = await cli(["export", sdir, "--only-passed", "--min-score", "1", "--max-turns", "0", "--out", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "export: nothing written: no line passed the filters (0 of 12 trajectories from trajectories.jsonl); filtered: 4 too many turns, 8 not passed",
    );
    expect(existsSync(out)).toBe(false);
    const stdout = await cli(["export", sdir, "--only-passed", "--max-turns", "0", "--out", "-"]);
    expect(stdout.code).toBe(1);
    expect(stdout.stdout).toBe("");
    const empty = join(sdir, "empty.jsonl");
    writeFileSync(empty, "");
    const e = await cli(["export", empty, "--out", join(sdir, "empty.out.jsonl")]);
    expect(e.code).toBe(1);
    expect(e.stderr).toContain("nothing written: the input has no lines");
    const help = await cli(["export", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toContain(
      "Exit codes: 0 written (bad lines only warn); 1 nothing written: no line left after bad lines and filters, or a --split with an empty side",
    );
  }, 60_000);

  it("--min-score outside 0..1 is exit 2 with one line naming the flag", async () => {
    for (const bad of ["2", "-0.1", "1.5", "x"]) {
      const r = await cli(["export", sdir, "--only-passed", `--min-score=${bad}`, "--out", join(sdir, "ms.jsonl")]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(`--min-score must be a number from 0 to 1 (score values are in 0..1), got '${bad}'`);
    }
    expect(existsSync(join(sdir, "ms.jsonl"))).toBe(false);
  }, 60_000);

  it("every format is named where formats are listed: the error for an unknown one, --help and the summary", async () => {
    const r = await cli(["export", sdir, "--format", "bogus"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/unknown export format 'bogus'\. Formats: sharegpt, hermes, openai, atif, groups$/);
    const help = (await cli(["export", "--help"])).stdout;
    for (const f of ["sharegpt", "hermes", "openai", "atif", "groups"])
      expect(help).toMatch(new RegExp(`^ +${f}: `, "m"));
    expect((await cli(["--help"])).stdout).toContain("sharegpt, hermes, openai, atif or groups");
  }, 60_000);
});
