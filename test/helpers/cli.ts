/** Runs the built CLI (dist/, built by `npm test`) as a real child process. */
import { execa, type ResultPromise } from "execa";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "..", "..");
export const CLI = join(ROOT, "dist", "src", "cli.js");

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first (npm test does it)`);
}

export function tempDir(prefix = "hb-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The test process may itself run inside a Slurm array or an Indexed Job: nothing of that may leak into a child run. */
export const NO_SCHEDULER = {
  SLURM_ARRAY_TASK_ID: "",
  SLURM_ARRAY_TASK_MIN: "",
  SLURM_ARRAY_TASK_MAX: "",
  SLURM_ARRAY_TASK_STEP: "",
  SLURM_ARRAY_TASK_COUNT: "",
  SLURM_JOB_ID: "",
  JOB_COMPLETION_INDEX: "",
  HERMES_BATCH_SHARD_COUNT: "",
};

/** Environment for child runs: no real keys from the developer's shell leak into tests. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /API_KEY|TOKEN|SECRET/i.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

export function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): ResultPromise<{ reject: false; all: false; extendEnv: false }> {
  assertBuilt();
  return execa("node", [CLI, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: cleanEnv(opts.env),
    extendEnv: false,
    reject: false,
    all: false,
    timeout: opts.timeoutMs ?? 120_000,
  } as const);
}
