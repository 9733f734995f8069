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

/** What a CLI call gave: its exit code and everything it wrote. */
export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

let inProcessQueue: Promise<unknown> = Promise.resolve();

/**
 * `hermes-batch ARGS` in this test process: src/cli_main.ts `main` from the sources, stdout and stderr captured,
 * the working directory and the environment (cleaned as for `runCli`) set for the call and restored after. For
 * the commands that need no process of their own (score, compare, merge, shards, export, report): no node start
 * and no bundle load per call. Not for `run` (its worker threads load dist/), signals, stdin or a crash: those
 * stay with `runCli`. Calls in one process run one at a time.
 */
export function runCliInProcess(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const call = inProcessQueue.then(() => callMain(args, opts));
  inProcessQueue = call.catch(() => undefined);
  return call;
}

async function callMain(args: string[], opts: { cwd?: string; env?: Record<string, string> }): Promise<CliResult> {
  const { main } = await import("../../src/cli_main.js");
  const saved = { cwd: process.cwd(), env: { ...process.env }, exitCode: process.exitCode };
  const out = { stdout: "", stderr: "" };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const capture = (name: "stdout" | "stderr") =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      out[name] += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      if (done) process.nextTick(done);
      return true;
    }) as typeof process.stdout.write;
  try {
    replaceEnv(cleanEnv(opts.env));
    process.chdir(opts.cwd ?? ROOT);
    process.stdout.write = capture("stdout");
    process.stderr.write = capture("stderr");
    const exitCode = await main(args);
    // As execa gives a child's output: without its final newline.
    return { exitCode, stdout: withoutFinalNewline(out.stdout), stderr: withoutFinalNewline(out.stderr) };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
    process.chdir(saved.cwd);
    replaceEnv(saved.env);
    process.exitCode = saved.exitCode;
  }
}

function replaceEnv(env: Record<string, string | undefined>): void {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  for (const [key, value] of Object.entries(env)) if (value !== undefined) process.env[key] = value;
}

function withoutFinalNewline(text: string): string {
  return text.replace(/\r?\n$/, "");
}
