/** The run's Piscina worker pool, the run-wide gates its threads share, and what a gone thread leaves behind. */
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import type { RunConfig } from "../config/run_config.js";
import { errorMessage } from "../core/errors.js";
import type { WorkerData } from "./worker.js";
import { WORKER_RESOURCE_LIMITS } from "./heap_tuning.js";
import { SandboxGates, environmentBackend, reclaimThread } from "../../tools/environments/index.js";
import { ModelGates } from "../scheduler/run_models.js";
import type { RunInputs } from "./run_inputs.js";

/** The run's worker pool and the run-wide gates it shares. */
export interface RunPool {
  pool: Piscina;
  sandboxGates: SandboxGates;
  modelGates: ModelGates;
  /** Every worker thread the pool started (from its first one on): a gone thread's permits are reclaimed by id. */
  threadIds: Set<number>;
  /** Ends the pool once (later calls wait for the first); safe while threads are still loading their modules. */
  close(): Promise<void>;
}

/** How long an unused pool waits for its threads to finish loading before it ends them anyway. */
const POOL_LOAD_WAIT_MS = 15_000;

/** Starts the run's worker threads with the run-wide gates they share. */
export function startRunPool(config: RunConfig, runDir: string, inputs: RunInputs): RunPool {
  const sandboxGates = SandboxGates.create({
    maxSandboxes: config.max_sandboxes,
    prewarm: config.prewarm,
    workers: config.workers,
  });
  // One limiter per model endpoint for the whole run: every worker thread shares its permits and its back-off.
  const modelGates = ModelGates.create(config);
  const loaded = new Int32Array(new SharedArrayBuffer(4));
  const workerData: WorkerData = {
    config,
    runDir,
    workers: config.workers,
    prefill: inputs.prefill,
    allowlist: inputs.allowlist,
    mcp: inputs.mcp,
    sandboxGates: sandboxGates.buffers,
    modelGates: modelGates.buffers,
    loaded,
  };
  const perWorker = Math.max(1, Math.ceil(config.concurrency / config.workers));
  const pool = new Piscina({
    filename: fileURLToPath(new URL("./worker.js", import.meta.url)),
    minThreads: config.workers,
    maxThreads: config.workers,
    concurrentTasksPerWorker: perWorker,
    maxQueue: "auto",
    // An idle thread then waits in its event loop, not in Atomics.wait: its set-up runs before the first task.
    atomics: "disabled",
    idleTimeout: 60_000,
    resourceLimits: WORKER_RESOURCE_LIMITS,
    // The sandboxes' FIFOs are opened with fs and then read and written as sockets, which close them without fs:
    // tracked, their numbers stayed listed as open, and Node warned when the kernel handed a number out again
    // ("opened in unmanaged mode twice"), and would close a reused number, another thread's, if the worker ended.
    trackUnmanagedFds: false,
    workerData,
  });
  const threadIds = new Set<number>();
  pool.on("workerCreate", (worker: { id: number }) => threadIds.add(worker.id));
  let closing: Promise<void> | undefined;
  // Node 20 can abort the whole process (SIGABRT in ModuleWrap::InstantiateSync) when a worker thread is ended
  // while piscina still loads the worker module: a pool that may not have run a task waits for that first.
  const close = () =>
    (closing ??= (async () => {
      const deadline = Date.now() + POOL_LOAD_WAIT_MS;
      while (Atomics.load(loaded, 0) < config.workers && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 5));
      await pool.destroy();
    })());
  return { pool, sandboxGates, modelGates, threadIds, close };
}

/**
 * Sandboxes only the worker threads could have removed (they are terminated without async clean-up): unused
 * warm ones at the end of the run, or a crashed worker's task sandbox.
 */
export async function removeLeftSandboxes(
  config: RunConfig,
  taskId: string | undefined,
  gates: SandboxGates,
  log: (m: string) => void,
): Promise<void> {
  const what =
    taskId === undefined ? "unused warm sandbox(es)" : `sandbox(es) of task ${taskId} left by the crashed worker`;
  try {
    const backend = await environmentBackend(config.env);
    const n =
      taskId === undefined
        ? await backend.afterRun(config.run_name!, { gates })
        : (await backend.removeLeftovers({ run: config.run_name!, task: taskId })).removed.length;
    if (n) log(`removed ${n} ${what}`);
  } catch (err) {
    log(`could not remove the ${what}: ${errorMessage(err)}`);
  }
}

/**
 * A thread that is gone cannot give back its sandbox permits: remove what it started, then return them.
 * Returns the clean-ups still running (the run waits for them before it ends).
 */
export function reclaimGoneThreads(
  config: RunConfig,
  runPool: RunPool,
  logEvent: (msg: string) => void,
): Set<Promise<void>> {
  const { pool, sandboxGates, modelGates, threadIds } = runPool;
  // (Piscina names a destroyed worker only by a thread id already reset to -1: compare with the live ones.)
  const threadsGone = new Set<Promise<void>>();
  pool.on("workerDestroy", () => {
    const check = new Promise<void>((r) => setImmediate(r)).then(async () => {
      const live = new Set(pool.threads.map((t) => t.threadId));
      for (const id of [...threadIds].filter((t) => !live.has(t))) {
        threadIds.delete(id);
        const modelPermits = modelGates.releaseThread(id);
        if (modelPermits) logEvent(`worker thread ${id} gone: returned ${modelPermits} model connection permit(s)`);
        try {
          const { removed, permits } = await reclaimThread(config.env, config.run_name!, id, sandboxGates);
          if (removed || permits)
            logEvent(`worker thread ${id} gone: removed ${removed} sandbox(es), returned ${permits} sandbox permit(s)`);
        } catch (err) {
          logEvent(`worker thread ${id} gone: could not remove its sandboxes: ${errorMessage(err)}`);
        }
      }
    });
    const p: Promise<void> = check.finally(() => threadsGone.delete(p));
    threadsGone.add(p);
  });
  return threadsGone;
}
