/**
 * `--resume` after the dataset (or --epochs) changed: the refusal names what changed, and a resume that goes on
 * (--allow-config-change) ends with statistics that describe the dataset it was given, equal to a fresh run's.
 */
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

interface Row {
  id: string;
  prompt: string;
  toolsets: string[];
  expected: { value: number; match: string };
}

function rows(n: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `t${i}`,
    prompt: `Use the shell to compute ${i} * 7 and tell me the result.`,
    toolsets: ["terminal"],
    // every third row has a wrong answer key: the run passes some and fails some
    expected: { value: i % 3 === 0 ? i * 7 + 1 : i * 7, match: "number" },
  }));
}

function write(path: string, rs: Row[]): string {
  writeFileSync(path, rs.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

const common = (dir: string, epochs: number) => [
  "--model",
  "scripted",
  "--output-dir",
  join(dir, "runs"),
  "--workers",
  "1",
  "--concurrency",
  "4",
  "--approval",
  "deny",
  "--progress",
  "log",
  "--epochs",
  String(epochs),
];

/** The parts of statistics.json a resumed run must share with a fresh run over the same dataset. */
function stable(dir: string, name: string) {
  const s = JSON.parse(readFileSync(join(dir, "runs", name, "statistics.json"), "utf8"));
  const { judge_usage: _j, ...scores } = s.scores ?? {};
  return { outcomes: s.outcomes, tasks: s.tasks, completed: s.completed, scores };
}

function keys(dir: string, name: string): string[] {
  return readJsonl(join(dir, "runs", name, "trajectories.jsonl"))
    .map((e: any) => `${e.task_id}#${e.epoch ?? 0}`)
    .sort();
}

describe("resume after the dataset changed", () => {
  it("is refused with exit 3 naming the rows added, removed, renamed, re-prompted and re-graded", async () => {
    const dir = tempDir();
    const data = write(join(dir, "d.jsonl"), rows(6));
    const first = await runCliInProcess(["run", data, "--run-name", "r", ...common(dir, 2)]);
    expect(first.exitCode, first.stderr).toBe(0);
    const changed = rows(6);
    changed[0]!.expected = { value: 0, match: "number" }; // answer key fixed
    changed[1]!.prompt = "Use the shell to compute 100 * 7 and tell me the result."; // prompt edited
    changed[2]!.id = "t2-renamed"; // id changed
    changed.pop(); // t5 removed
    changed.push({ ...rows(7)[6]! }); // t6 appended
    write(data, changed);
    const resumed = await runCliInProcess(["run", data, "--run-name", "r", "--resume", ...common(dir, 2)]);
    expect(resumed.exitCode).toBe(3);
    expect(resumed.stderr).toContain("(the dataset or a referenced file changed): ");
    expect(resumed.stderr).toMatch(/2 task\(s\) without a result yet \(new or renamed rows: t2-renamed, t6\)/);
    expect(resumed.stderr).toMatch(
      /results of 2 task id\(s\) no longer in the dataset slice \(removed or renamed: t2, t5\)/,
    );
    expect(resumed.stderr).toMatch(/1 task\(s\) whose prompt changed \(t1\)/);
    expect(resumed.stderr).toMatch(/1 task\(s\) graded against other criteria .*t0\)/);
    expect(resumed.stderr).toContain("hermes-batch score");
    // A resume refused after it read the folder lets go of the lock it took to read it: this process lives on (a
    // library caller, the next command of a test), and another invocation must find the folder free.
    write(data, rows(6));
    const unknown = await runCliInProcess(["run", data, "--run-name", "r", "--only", "nope", ...common(dir, 2)]);
    expect(unknown.exitCode, unknown.stderr).toBe(2);
    expect(unknown.stderr).toContain("nope");
    expect(existsSync(join(dir, "runs", "r", ".lock"))).toBe(false);
  });

  it("with --allow-config-change: stale results move to superseded.jsonl, and the statistics equal a fresh run's", async () => {
    const dir = tempDir();
    const data = write(join(dir, "d.jsonl"), rows(6));
    const first = await runCliInProcess(["run", data, "--run-name", "r", ...common(dir, 2)]);
    expect(first.exitCode, first.stderr).toBe(0);
    const changed = rows(6);
    changed[0]!.expected = { value: 0, match: "number" };
    changed[1]!.prompt = "Use the shell to compute 100 * 7 and tell me the result.";
    changed[1]!.expected = { value: 700, match: "number" };
    changed[2]!.id = "t2-renamed";
    changed.pop();
    changed.push({ ...rows(7)[6]! });
    write(data, changed);
    const resumed = await runCliInProcess([
      "run",
      data,
      "--run-name",
      "r",
      "--resume",
      "--allow-config-change",
      ...common(dir, 2),
    ]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("superseded.jsonl");
    const fresh = await runCliInProcess(["run", data, "--run-name", "fresh", ...common(dir, 2)]);
    expect(fresh.exitCode, fresh.stderr).toBe(0);
    expect(keys(dir, "r")).toEqual(keys(dir, "fresh"));
    expect(stable(dir, "r")).toEqual(stable(dir, "fresh"));
    // t0 passes now (its answer key was fixed), the old t1 and the removed and renamed tasks are set aside
    const superseded = readJsonl(join(dir, "runs", "r", "superseded.jsonl")).map((e: any) => e.task_id);
    expect(new Set(superseded)).toEqual(new Set(["t0", "t1", "t2", "t5"]));
  });

  it("with fewer --epochs and --allow-config-change, the statistics are those of a run with that many epochs", async () => {
    const dir = tempDir();
    const data = write(join(dir, "d.jsonl"), rows(4));
    expect((await runCliInProcess(["run", data, "--run-name", "r", ...common(dir, 3)])).exitCode).toBe(0);
    const refused = await runCliInProcess(["run", data, "--run-name", "r", "--resume", ...common(dir, 2)]);
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toContain("epochs (3 ≠ 2)");
    expect(refused.stderr).toContain("4 result(s) of epochs beyond --epochs");
    const resumed = await runCliInProcess([
      "run",
      data,
      "--run-name",
      "r",
      "--resume",
      "--allow-config-change",
      ...common(dir, 2),
    ]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect((await runCliInProcess(["run", data, "--run-name", "fresh", ...common(dir, 2)])).exitCode).toBe(0);
    expect(keys(dir, "r")).toEqual(keys(dir, "fresh"));
    expect(stable(dir, "r")).toEqual(stable(dir, "fresh"));
    expect(existsSync(join(dir, "runs", "r", "superseded.jsonl"))).toBe(true);
  });
});
