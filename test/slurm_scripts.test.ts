/**
 * scripts/slurm without a cluster: what submit.sh refuses before it calls sbatch, and the batch script's
 * contract (exec node, no npx wrapper, SIGTERM before the time limit, requeue). The cluster run is
 * test/slurm_e2e.test.ts.
 */
import { execa } from "execa";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "./helpers/cli.js";

const SUBMIT = join(ROOT, "scripts", "slurm", "submit.sh");
const SBATCH = readFileSync(join(ROOT, "scripts", "slurm", "hermes-batch.sbatch"), "utf8");

describe("scripts/slurm", () => {
  it("submit.sh refuses a key on the command line, and a bad shard count, before anything is submitted", async () => {
    const dir = tempDir("hb-submit-");
    writeFileSync(join(dir, "data.jsonl"), '{"prompt":"x"}\n');
    // A fake sbatch on PATH: reaching it would be a failure of the test.
    writeFileSync(join(dir, "sbatch"), "#!/bin/sh\necho SUBMITTED >&2\nexit 99\n", { mode: 0o755 });
    const env = { PATH: `${dir}:${process.env.PATH}`, OUTPUT_DIR: join(dir, "runs") };
    for (const key of [["--api-key", "sk-abc"], ["--judge-api-key=sk-abc"]]) {
      const r = await execa("bash", [SUBMIT, "--", "data.jsonl", "exp", "--model", "m", ...key], {
        cwd: dir,
        env,
        reject: false,
      });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/would put the key in the job's command line .* export OPENAI_API_KEY/);
      expect(r.stderr).not.toContain("SUBMITTED");
    }
    const bad = await execa("bash", [SUBMIT, "--", "data.jsonl", "exp"], {
      cwd: dir,
      env: { ...env, SHARDS: "0" },
      reject: false,
    });
    expect([bad.exitCode, bad.stderr.trim()]).toEqual([2, "submit.sh: SHARDS must be a whole number ≥ 1, got '0'"]);
    const noSep = await execa("bash", [SUBMIT, "data.jsonl", "exp"], { cwd: dir, env, reject: false });
    expect(noSep.exitCode).toBe(2);
    expect(noSep.stderr).toContain("usage: SHARDS=N submit.sh [sbatch options…] -- DATASET.jsonl RUN_NAME");
  });

  it("the batch script execs node on the checkout's CLI, gets SIGTERM 60 s before its limit, and can be requeued", () => {
    const lines = SBATCH.split("\n").filter((l) => !l.startsWith("# ") && l !== "#");
    expect(lines).toContain("#SBATCH --signal=B:TERM@60");
    expect(lines).toContain("#SBATCH --requeue");
    expect(SBATCH).toMatch(/^exec "\$\{HERMES_BATCH_NODE:-node\}" "\$CLI" run "\$DATASET" \\$/m);
    expect(SBATCH).toContain('CLI="$CHECKOUT/dist/src/cli.js"');
    expect(lines.join("\n")).not.toMatch(/\bnpx\b|\bnpm\b/);
    expect(lines.join("\n")).toContain("--resume");
  });
});
