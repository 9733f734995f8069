/**
 * A run folder whose disk fills up mid-run: the run stops saying so (not an "internal error"), keeps what it wrote,
 * and a --resume once there is space again ends with every (task, epoch) once. Needs root to mount a small tmpfs.
 */
import { afterAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

const dir = tempDir();
const mnt = join(dir, "small");
let mounted = false;
try {
  mkdirSync(mnt);
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=300k", "tmpfs", mnt], { stdio: "ignore" });
  mounted = true;
} catch {
  mounted = false;
}
afterAll(() => {
  if (mounted) execFileSync("umount", [mnt]);
});

describe.skipIf(!mounted)("a full disk mid-run", () => {
  it("stops with the cause and a resume after freeing space finishes every task and epoch once", async () => {
    const data = join(dir, "d.jsonl");
    writeFileSync(
      data,
      Array.from({ length: 12 }, (_, i) =>
        JSON.stringify({
          id: `t${i}`,
          prompt: `Use the shell to compute ${i} * 7 and tell me the result.`,
          toolsets: ["terminal"],
        }),
      ).join("\n") + "\n",
    );
    const args = [
      "run",
      data,
      "--run-name",
      "full",
      "--model",
      "scripted",
      "--output-dir",
      mnt,
      "--epochs",
      "3",
      "--workers",
      "1",
      "--concurrency",
      "3",
      "--approval",
      "deny",
      "--progress",
      "log",
    ];
    const first = await runCliInProcess(args);
    expect(first.exitCode).toBe(1);
    expect(first.stderr).not.toContain("internal error");
    expect(first.stderr).toContain("ENOSPC");
    expect(first.stderr).toContain("--resume");
    execFileSync("mount", ["-o", "remount,size=4m", mnt]);
    const resumed = await runCliInProcess([...args, "--resume"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const keys = readFileSync(join(mnt, "full", "trajectories.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .map((e) => `${e.task_id}#${e.epoch}`);
    expect(keys).toHaveLength(36);
    expect(new Set(keys).size).toBe(36);
  }, 120_000);
});
