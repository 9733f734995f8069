/**
 * An invocation killed before its end-of-run reports, or one whose report writing fails, leaves nothing that claims
 * a completion it did not reach: no checkpoint.json saying `finished: true` from an earlier invocation, no
 * statistics.json of scores that trajectories.jsonl no longer holds.
 */
import { describe, expect, it } from "vitest";
import { execa } from "execa";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, ROOT, cleanEnv, runCliInProcess, tempDir } from "./helpers/cli.js";
import { waitUntil } from "./helpers/wait.js";

function lines(path: string): number {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).length : 0;
}

function dataset(dir: string, n: number): string {
  const path = join(dir, "d.jsonl");
  const rows = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `t${i}`,
      prompt: `Use the shell to compute ${i} * 7 and tell me the result.`,
      toolsets: ["terminal"],
      expected: { value: i * 7 + 1, match: "number" },
    }),
  );
  writeFileSync(path, rows.join("\n") + "\n");
  return path;
}

const opts = (dir: string, model = "scripted") => [
  "--model",
  model,
  "--output-dir",
  join(dir, "runs"),
  "--workers",
  "1",
  "--concurrency",
  "2",
  "--approval",
  "deny",
  "--progress",
  "log",
];

describe("a killed invocation leaves no stale claim of completion", () => {
  it("checkpoint.json does not keep an earlier invocation's finished: true", async () => {
    const dir = tempDir();
    const data = dataset(dir, 6);
    const first = await runCliInProcess([
      "run",
      data,
      "--run-name",
      "r",
      "--max-samples",
      "2",
      ...opts(dir, "scripted:300"),
    ]);
    expect(first.exitCode, first.stderr).toBe(0);
    const checkpoint = join(dir, "runs", "r", "checkpoint.json");
    expect(JSON.parse(readFileSync(checkpoint, "utf8")).finished).toBe(true);
    // Grow the slice and kill -9 the resume as soon as it wrote one more result (well before its 5 s checkpoint).
    const child = execa(
      "node",
      [CLI, "run", data, "--run-name", "r", "--resume", "--max-samples", "6", ...opts(dir, "scripted:300")],
      { cwd: ROOT, env: cleanEnv(), extendEnv: false, reject: false },
    );
    const trajectories = join(dir, "runs", "r", "trajectories.jsonl");
    expect(await waitUntil(() => lines(trajectories) >= 3, 60_000, 10), "a new result").toBe(true);
    child.kill("SIGKILL");
    await child;
    expect(lines(trajectories)).toBeLessThan(6);
    expect(JSON.parse(readFileSync(checkpoint, "utf8")).finished).not.toBe(true);
    // and the resume that follows finishes it
    const resumed = await runCliInProcess([
      "run",
      data,
      "--run-name",
      "r",
      "--resume",
      "--max-samples",
      "6",
      ...opts(dir, "scripted:300"),
    ]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(readFileSync(checkpoint, "utf8")).finished).toBe(true);
  }, 120_000);

  it("score whose reports cannot be written leaves no statistics.json of the old scores", async () => {
    const dir = tempDir();
    const data = dataset(dir, 4);
    const first = await runCliInProcess(["run", data, "--run-name", "r", ...opts(dir)]);
    expect(first.stdout).toContain("0.0 % passed");
    const runDir = join(dir, "runs", "r");
    // the answer key fixed: every task passes now
    const fixed = join(dir, "fixed.jsonl");
    writeFileSync(
      fixed,
      readFileSync(data, "utf8").replace(/"value":(\d+)/g, (_, v) => `"value":${Number(v) - 1}`),
    );
    // statistics.json cannot be replaced (as when the process dies while writing the reports)
    mkdirSync(join(runDir, "statistics.json.tmp"));
    const scored = await runCliInProcess(["score", runDir, "--dataset", fixed]);
    expect(scored.exitCode).not.toBe(0);
    const trajectories = readFileSync(join(runDir, "trajectories.jsonl"), "utf8");
    expect(trajectories).toContain('"passed":true');
    // whatever is left must not report the old 0 % as the run's scores
    const statsPath = join(runDir, "statistics.json");
    if (existsSync(statsPath)) expect(JSON.parse(readFileSync(statsPath, "utf8")).scores.passed).toBe(4);
    // scoring again (or a resume) rebuilds them
    rmSync(join(runDir, "statistics.json.tmp"), { recursive: true });
    const again = await runCliInProcess(["score", runDir, "--dataset", fixed]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(statsPath, "utf8")).scores.passed).toBe(4);
  }, 120_000);
});
