/** Runs the built CLI (dist/, built by `npm test`) as a real child process. */
import { execa, type ResultPromise } from "execa";
import { Console } from "node:console";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

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
 * `hermes-batch ARGS` in this test process, stdout and stderr captured, the working directory and the environment
 * (cleaned as for `runCli`) set for the call and restored after. Every command calls the built CLI's `main`
 * (dist/src/cli.js, imported natively once per process, as the executable loads it: a run's worker threads start
 * dist/src/worker.js beside it; the sources' modules through vite would cost a file ~0.8 s of CPU more). No node
 * start and no bundle load per call (about half the CPU of a small `run`). Not for signals, stdin, a crash, runs
 * that must overlap, what a process does at its exit (temporary folders, open handles), or a test that needs a fresh
 * process (a lock naming this pid, state a run leaves in its process: MCP servers and plugins registered): those
 * stay with `runCli`. Calls in one process run one at a time; `timeoutMs` fails a call that has not returned by then.
 */
export function runCliInProcess(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const call = inProcessQueue.then(() => withTimeLimit(callMain(args, opts), args, opts.timeoutMs));
  inProcessQueue = call.catch(() => undefined);
  return call;
}

/** As `runCli`'s timeout fails a hung child: the call fails (the command cannot be killed in process). */
function withTimeLimit<T>(call: Promise<T>, args: string[], timeoutMs: number | undefined): Promise<T> {
  if (timeoutMs === undefined) return call;
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`hermes-batch ${args.join(" ")}: not done after ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  return Promise.race([call, limit]).finally(() => clearTimeout(timer));
}

type Main = (argv: string[]) => Promise<number>;
let builtMain: Promise<Main> | undefined;

/** dist/src/cli.js's `main`, loaded once per process; src/cli.ts skips running it as the executable on this flag. */
function loadBuiltMain(): Promise<Main> {
  assertBuilt();
  (globalThis as Record<symbol, unknown>)[Symbol.for("hermes-batch.cli.in-process")] = true;
  // vitest.config.ts externalizes dist/: Node's own loader imports it, as it does for the executable.
  return import(/* @vite-ignore */ pathToFileURL(CLI).href).then((m: { main: Main }) => m.main);
}

async function callMain(args: string[], opts: { cwd?: string; env?: Record<string, string> }): Promise<CliResult> {
  const main = await (builtMain ??= loadBuiltMain());
  const saved = { cwd: process.cwd(), env: { ...process.env }, exitCode: process.exitCode, argv: process.argv };
  const out = { stdout: "", stderr: "" };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const ttys = { stdout: process.stdout.isTTY, stderr: process.stderr.isTTY };
  const testConsole = globalThis.console;
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
    // What the executable sees (a resume hint repeats the command line from it).
    process.argv = [process.execPath, CLI, ...args];
    process.stdout.write = capture("stdout");
    process.stderr.write = capture("stderr");
    // As for a child whose output is a pipe (`--progress auto` then logs lines instead of drawing a bar).
    process.stdout.isTTY = process.stderr.isTTY = false;
    // vitest's console reports to the test runner: a process's console writes to its stdout and stderr.
    globalThis.console = new Console({ stdout: process.stdout, stderr: process.stderr });
    const exitCode = await main(args);
    // As execa gives a child's output: without its final newline.
    return { exitCode, stdout: withoutFinalNewline(out.stdout), stderr: withoutFinalNewline(out.stderr) };
  } finally {
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
    globalThis.console = testConsole;
    process.stdout.isTTY = ttys.stdout;
    process.stderr.isTTY = ttys.stderr;
    process.chdir(saved.cwd);
    process.argv = saved.argv;
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
