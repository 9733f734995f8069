/**
 * Run folders for the report tests: trajectory lines of the real schema (with and without a score, with
 * tool calls, a tool error, approvals and a verify), a failure and a drop, and a hostile prompt.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const HOSTILE_PROMPT = `Summarise </script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2"> and <b>bold</b> & "quotes"`;

interface TaskSpec {
  id: string;
  epoch?: number;
  passed?: boolean | null;
  /** no score at all (the run had no scorer) */
  unscored?: boolean;
  prompt?: string;
  toolsets?: string[];
  group?: string;
  approval?: "approve" | "deny";
  toolError?: boolean;
  turns?: number;
}

function usage(n: number) {
  return { prompt_tokens: 100 * n, completion_tokens: 20 * n, total_tokens: 120 * n };
}

export function trajectoryLine(spec: TaskSpec, index: number): Record<string, unknown> {
  const prompt = spec.prompt ?? `Task ${spec.id}: list the files and count them.`;
  const command = spec.approval ? "rm -rf /tmp/build-cache" : "ls -la";
  const messages: Record<string, unknown>[] = [
    { role: "system", content: "You are a capable assistant that completes tasks by calling the provided tools." },
    { role: "user", content: prompt },
    {
      role: "assistant",
      content: null,
      reasoning: `I should look at the folder first (${spec.id}).`,
      tool_calls: [
        {
          id: `call_${index}_1`,
          type: "function",
          function: { name: "terminal", arguments: JSON.stringify({ command }) },
        },
      ],
    },
    {
      role: "tool",
      tool_call_id: `call_${index}_1`,
      name: "terminal",
      content:
        spec.approval === "deny"
          ? "BLOCKED: the command was denied. Do NOT retry."
          : JSON.stringify({
              output: "total 8\n-rw-r--r-- 1 agent agent 24 a.txt\n".repeat(spec.toolError ? 1 : 3),
              exit_code: spec.toolError ? 1 : 0,
            }),
    },
  ];
  const extraTurns = Math.max(0, (spec.turns ?? 2) - 2);
  for (let t = 0; t < extraTurns; t++) {
    messages.push(
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: `call_${index}_x${t}`,
            type: "function",
            function: { name: "read_file", arguments: JSON.stringify({ path: `f${t}.txt` }) },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: `call_${index}_x${t}`,
        name: "read_file",
        content: JSON.stringify({ content: `line ${t}` }),
      },
    );
  }
  messages.push({ role: "assistant", content: `There are 3 files (${spec.id}).`, reasoning: "Counted them." });
  const turns = 2 + extraTurns;
  const scoreValue = spec.passed === true ? 1 : spec.passed === false ? 0 : null;
  return {
    prompt_index: index,
    task_id: spec.id,
    ...(spec.epoch !== undefined ? { epoch: spec.epoch } : {}),
    conversations: [{ from: "human", value: prompt }],
    messages,
    tools: [],
    metadata: { batch: 0, ...(spec.group ? { group: spec.group } : {}) },
    completed: true,
    partial: false,
    outcome: "completed",
    api_calls: turns,
    toolsets_used: spec.toolsets ?? ["terminal", "file"],
    tool_stats: {
      terminal: { count: 1, success: spec.toolError ? 0 : 1, failure: spec.toolError ? 1 : 0 },
      ...(extraTurns ? { read_file: { count: extraTurns, success: extraTurns, failure: 0 } } : {}),
    },
    tool_error_counts: spec.toolError ? { terminal: 1 } : {},
    usage: usage(turns),
    approvals: spec.approval
      ? [
          {
            command,
            pattern: "recursive delete",
            description: "recursive delete outside the working directory",
            decision: spec.approval,
            by: "smart",
            reason: spec.approval === "deny" ? "deletes outside the task folder" : "only a cache",
            latency_ms: 12,
          },
        ]
      : [],
    ...(spec.unscored
      ? {}
      : {
          score: {
            passed: spec.passed ?? null,
            value: scoreValue,
            scorers: [
              {
                name: "expected",
                passed: spec.passed ?? null,
                value: scoreValue,
                reason: spec.passed
                  ? "final answer includes '3'"
                  : spec.passed === false
                    ? "expected '4', got 'There are 3 files'"
                    : "judge outage",
                details: { expected: "4" },
              },
            ],
          },
          verify: {
            command: "test -f a.txt",
            exit_code: spec.passed ? 0 : 1,
            passed: spec.passed === true,
            output: spec.passed ? "" : "a.txt: missing",
            timed_out: false,
          },
        }),
    final_response: `There are 3 files (${spec.id}).`,
    duration_ms: 1000 + index * 37,
  };
}

export function failedLine(id: string, index: number): Record<string, unknown> {
  return {
    prompt_index: index,
    task_id: id,
    outcome: "model_error",
    completed: false,
    partial: false,
    error: "HTTP 503 from the endpoint after 6 retries",
    toolsets_used: ["terminal"],
    metadata: {},
    duration_ms: 500,
  };
}

export interface RunFolderSpec {
  name: string;
  model?: string;
  tasks: TaskSpec[];
  failed?: string[];
  dropped?: TaskSpec[];
}

export function writeRunFolder(root: string, spec: RunFolderSpec): string {
  const dir = join(root, spec.name);
  mkdirSync(dir, { recursive: true });
  const lines = spec.tasks.map((t, i) => JSON.stringify(trajectoryLine(t, i)));
  writeFileSync(join(dir, "trajectories.jsonl"), lines.length ? lines.join("\n") + "\n" : "");
  writeFileSync(
    join(dir, "failed.jsonl"),
    (spec.failed ?? []).map((id, i) => JSON.stringify(failedLine(id, 1000 + i)) + "\n").join(""),
  );
  writeFileSync(
    join(dir, "dropped.jsonl"),
    (spec.dropped ?? [])
      .map((t, i) => JSON.stringify({ ...trajectoryLine(t, 2000 + i), dropped: "unknown_tools" }) + "\n")
      .join(""),
  );
  writeFileSync(
    join(dir, "run.yaml"),
    `dataset: datasets/eval.jsonl\nmodel: ${spec.model ?? "scripted"}\nrun_name: ${spec.name}\ndistribution: default\nseed: 0\nmax_turns: 10\nenv: local\napproval: smart\n`,
  );
  const total = spec.tasks.length + (spec.failed?.length ?? 0) + (spec.dropped?.length ?? 0);
  writeFileSync(
    join(dir, "statistics.json"),
    JSON.stringify({
      run_name: spec.name,
      model: spec.model ?? "scripted",
      started_at: "2026-12-01T10:00:00.000Z",
      completed_at: "2026-12-01T10:04:10.000Z",
      duration_seconds: 250,
      total_prompts: total,
    }),
  );
  writeFileSync(
    join(dir, "checkpoint.json"),
    JSON.stringify({
      run_name: spec.name,
      done: spec.tasks.length,
      failed: spec.failed?.length ?? 0,
      dropped: spec.dropped?.length ?? 0,
      total_in_dataset_slice: total,
      finished: true,
    }),
  );
  return dir;
}

/** A current run and its baseline: `t-03` newly fails, `t-04` newly passes. */
export function writeComparedRuns(root: string): { current: string; baseline: string } {
  const tasks = (flip: boolean): TaskSpec[] => [
    { id: "t-01", passed: true, group: "easy", approval: "approve" },
    { id: "t-02", passed: false, group: "hard", toolError: true, turns: 4 },
    { id: "t-03", passed: !flip, group: "easy", approval: "deny" },
    { id: "t-04", passed: flip, group: "hard", turns: 3 },
    { id: "t-05", passed: true, group: "easy", toolsets: ["web"] },
    { id: "t-06", passed: true, group: "hard", prompt: HOSTILE_PROMPT },
    { id: "t-07", passed: null, group: "easy" },
    { id: "t-08", passed: true, group: "hard", turns: 5 },
    { id: "t-09", passed: false, group: "easy", toolsets: ["web", "terminal"] },
    { id: "t-10", passed: true, group: "hard" },
  ];
  const baseline = writeRunFolder(root, {
    name: "baseline-run",
    model: "model-a",
    tasks: tasks(false),
    failed: ["t-11"],
  });
  const current = writeRunFolder(root, {
    name: "current-run",
    model: "model-b",
    tasks: tasks(true),
    failed: ["t-11"],
    dropped: [{ id: "t-12", passed: true }],
  });
  return { current, baseline };
}
