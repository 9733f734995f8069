/**
 * The same tasks graded by another grader are another measurement: a rubric judged by another model, a Harbor
 * reward held to another --harbor-pass-threshold. compare pairs them only with --allow-different-dataset, as it
 * does tasks graded against other criteria. Run folders are written as `run` writes them.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

interface Line {
  id: string;
  passed: boolean;
  judge?: string;
  reward?: number;
}

function writeRun(dir: string, lines: Line[], runYaml: Record<string, unknown> = {}): string {
  mkdirSync(dir, { recursive: true });
  const text = lines.map((l, i) => {
    const scorer = l.judge
      ? { name: "rubric", passed: l.passed, value: l.passed ? 0.9 : 0.1, reason: "graded" }
      : { name: "harbor", passed: l.passed, value: l.reward ?? (l.passed ? 1 : 0), reason: `reward ${l.reward}` };
    return JSON.stringify({
      task_id: l.id,
      outcome: "completed",
      messages: [{ role: "user", content: `prompt of ${l.id}` }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 10 },
      duration_ms: 100,
      final_response: "answer",
      metadata: { timestamp: `${dir}#${i}`, ...(l.judge ? {} : { dataset_metadata: { harbor: { task: l.id } } }) },
      score: {
        passed: l.passed,
        value: scorer.value,
        scorers: [scorer],
        ...(l.judge ? { criteria: "sha256:0123456789abcdef" } : {}),
      },
      ...(l.judge
        ? {
            judge: {
              model: l.judge,
              messages: [{ role: "user", content: "grade" }],
              answer: '{"score":0.9,"passed":true,"reason":"ok"}',
              usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
            },
            judge_usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }
        : {}),
    });
  });
  writeFileSync(join(dir, "trajectories.jsonl"), text.join("\n") + "\n");
  writeFileSync(
    join(dir, "run.yaml"),
    Object.entries({ epochs: 1, ...runYaml })
      .map(([k, v]) => `${k}: ${v}`)
      .join("\n") + "\n",
  );
  return dir;
}

const ids = Array.from({ length: 10 }, (_, i) => `t${i}`);

describe("another grader", () => {
  it("a rubric judged by another model is not comparable; the same judge is, and --allow-different-dataset pairs them", async () => {
    // The baseline judged by a strict model passes 6 of 10; the current run, whose answers are worse, by a lenient
    // one that passes 9 of 10. compare said "no regression: +30.0 pp".
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids.map((id, i) => ({ id, passed: i < 6, judge: "strict-judge-1" })),
    );
    const lenient = writeRun(
      join(root, "lenient"),
      ids.map((id, i) => ({ id, passed: i < 9, judge: "lenient-judge-2" })),
    );
    const r = await runCliInProcess(["compare", base, lenient]);
    expect(r.exitCode, r.stdout).toBe(3);
    expect(r.stdout).toContain(
      "NOT COMPARABLE: the grader differs: 10 task(s) are judged by another model (first: t0, strict-judge-1 in the baseline, lenient-judge-2 in the current run)",
    );
    expect(r.stdout).toContain("--allow-different-dataset compares anyway");
    const allowed = await runCliInProcess(["compare", base, lenient, "--allow-different-dataset"]);
    expect(allowed.exitCode, allowed.stdout).toBe(0);
    const same = writeRun(
      join(root, "same"),
      ids.map((id, i) => ({ id, passed: i < 6, judge: "strict-judge-1" })),
    );
    expect((await runCliInProcess(["compare", base, same])).exitCode).toBe(0);
  });

  it("Harbor rewards held to another --harbor-pass-threshold are not comparable", async () => {
    // Rewards fell from 1.0 to 0.6 on 5 tasks; the current run passes them at --harbor-pass-threshold 0.5 and
    // compare saw no change.
    const root = tempDir();
    const base = writeRun(
      join(root, "base"),
      ids.map((id) => ({ id, passed: true, reward: 1 })),
      { harbor_pass_threshold: 1 },
    );
    const cur = writeRun(
      join(root, "cur"),
      ids.map((id, i) => ({ id, passed: true, reward: i < 5 ? 0.6 : 1 })),
      { harbor_pass_threshold: 0.5 },
    );
    const r = await runCliInProcess(["compare", base, cur]);
    expect(r.exitCode, r.stdout).toBe(3);
    expect(r.stdout).toContain(
      "NOT COMPARABLE: the grader differs: Harbor rewards pass at --harbor-pass-threshold 1 in the baseline, 0.5 in the current run",
    );
    // A threshold recorded in run.yaml of runs without Harbor tasks changes nothing.
    const plainBase = writeRun(
      join(root, "pb"),
      ids.map((id) => ({ id, passed: true, judge: "j" })),
      { harbor_pass_threshold: 1 },
    );
    const plainCur = writeRun(
      join(root, "pc"),
      ids.map((id) => ({ id, passed: true, judge: "j" })),
      { harbor_pass_threshold: 0.5 },
    );
    expect((await runCliInProcess(["compare", plainBase, plainCur])).exitCode).toBe(0);
  });
});
