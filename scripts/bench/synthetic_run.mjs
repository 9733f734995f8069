/**
 * A synthetic run folder for benchmarks: N tasks of MIN..MAX turns with tool calls, some approvals, failures
 * and scores, written as trajectories.jsonl / failed.jsonl / run.yaml, plus the dataset it came from.
 * Deterministic for a given seed; `variant` changes some outcomes (a second run to compare against).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function trajectoryLines({ n, minTurns = 4, maxTurns = 12, seed = 42, variant = 0 }) {
  let state = seed + variant * 7919;
  const rnd = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
  const traj = [];
  const failed = [];
  for (let i = 0; i < n; i++) {
    const id = `task-${String(i).padStart(6, "0")}`;
    if (rnd() < 0.02) {
      failed.push(
        JSON.stringify({
          prompt_index: i,
          task_id: id,
          outcome: pick(["model_error", "timeout"]),
          completed: false,
          partial: false,
          error: "HTTP 503",
          toolsets_used: ["terminal"],
          metadata: {},
        }),
      );
      continue;
    }
    const turns = minTurns + Math.floor(rnd() * (maxTurns - minTurns + 1));
    const messages = [
      { role: "system", content: "You are a capable assistant that completes tasks by calling the provided tools." },
      {
        role: "user",
        content: `Task ${i}: find the failing test in the repository and fix it. ${"Context line. ".repeat(10)}`,
      },
    ];
    const stats = {};
    const approvals = [];
    for (let t = 0; t < turns - 1; t++) {
      const tool = pick(["terminal", "read_file", "write_file", "search_files"]);
      const command = tool === "terminal" ? pick(["pytest -x", "ls -la", "git diff", "rm -rf /tmp/cache"]) : null;
      const args = command ? { command } : { path: `src/module_${t}.py` };
      messages.push({
        role: "assistant",
        content: null,
        reasoning: `Step ${t}: I will use ${tool} to look at the state. `.repeat(3),
        tool_calls: [{ id: `c${t}`, type: "function", function: { name: tool, arguments: JSON.stringify(args) } }],
      });
      messages.push({
        role: "tool",
        tool_call_id: `c${t}`,
        name: tool,
        content: JSON.stringify({ output: `line of output ${t}\n`.repeat(8 + Math.floor(rnd() * 30)), exit_code: 0 }),
      });
      const err = rnd() < 0.05;
      stats[tool] ??= { count: 0, success: 0, failure: 0 };
      stats[tool].count++;
      stats[tool][err ? "failure" : "success"]++;
      if (command === "rm -rf /tmp/cache")
        approvals.push({
          command,
          pattern: "recursive delete",
          decision: rnd() < 0.5 ? "approve" : "deny",
          by: "smart",
          reason: "cache only",
          latency_ms: 40,
        });
    }
    messages.push({
      role: "assistant",
      content: "Fixed: the off-by-one in module_3.",
      reasoning: "All tests pass now.",
    });
    const passed = rnd() < 0.1 ? null : rnd() < 0.7;
    traj.push(
      JSON.stringify({
        prompt_index: i,
        task_id: id,
        conversations: [],
        messages,
        tools: [],
        metadata: { group: pick(["easy", "medium", "hard"]) },
        completed: true,
        partial: false,
        outcome: rnd() < 0.1 ? "max_turns" : "completed",
        api_calls: turns,
        toolsets_used: pick([["terminal", "file"], ["terminal"], ["file", "web"]]),
        tool_stats: stats,
        tool_error_counts: {},
        usage: { prompt_tokens: turns * 900, completion_tokens: turns * 120, total_tokens: turns * 1020 },
        approvals,
        score: {
          passed,
          value: passed === null ? null : passed ? 1 : 0,
          scorers: [
            {
              name: "verify",
              passed,
              value: passed === null ? null : passed ? 1 : 0,
              reason: passed === null ? "verify could not run" : "exit code",
            },
          ],
        },
        final_response: "Fixed: the off-by-one in module_3.",
        duration_ms: 5000 + Math.floor(rnd() * 60000),
      }),
    );
  }
  return { traj, failed };
}

/** Writes `dir` as a finished run folder of `opts.n` tasks; returns the path of trajectories.jsonl. */
export function writeSyntheticRun(dir, opts) {
  mkdirSync(dir, { recursive: true });
  const { traj, failed } = trajectoryLines(opts);
  writeFileSync(join(dir, "trajectories.jsonl"), traj.join("\n") + "\n");
  writeFileSync(join(dir, "failed.jsonl"), failed.join("\n") + (failed.length ? "\n" : ""));
  writeFileSync(
    join(dir, "run.yaml"),
    `dataset: bench.jsonl\nmodel: bench-model\nrun_name: ${opts.runName ?? "bench-run"}\n`,
  );
  return join(dir, "trajectories.jsonl");
}

/** The dataset matching a synthetic run's task ids. */
export function writeSyntheticDataset(path, n) {
  const rows = [];
  for (let i = 0; i < n; i++)
    rows.push(
      JSON.stringify({
        id: `task-${String(i).padStart(6, "0")}`,
        prompt: `Task ${i}: find the failing test in the repository and fix it.`,
        toolsets: ["terminal"],
      }),
    );
  writeFileSync(path, rows.join("\n") + "\n");
}
