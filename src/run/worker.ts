/**
 * Piscina worker entry: each worker thread has its own event loop and runs several agent loops at once.
 * Set-up (tool discovery, the model client, the shared connection limiter) happens once per thread.
 */
import { setMaxListeners } from "node:events";
import { BroadcastChannel, workerData } from "node:worker_threads";
import type { RunConfig } from "../config/run_config.js";
import { consoleLogger } from "../../tools/registry.js";
import { ensureToolsLoaded } from "../../tools/model_tools.js";
import { ModelGates, createRunModels, type ModelGateBuffers } from "../scheduler/run_models.js";
import type { ChatMessage } from "../core/chat.js";
import { runTask, type TaskRunnerDeps } from "./task.js";
import { tuneHeapGrowth } from "./heap_tuning.js";
import { StartTurns } from "./start_turns.js";
import { CANCEL_CHANNEL, type CancelMessage } from "./cancel_channel.js";
import { captureLibraryConsole, tieConsoleToTasks, withConsoleNotes } from "./library_console.js";
import { SandboxGates, type SandboxGateBuffers } from "../../tools/environments/index.js";
import type { TaskOutcomeMessage, TaskSpec } from "./task_spec.js";
import { registerMcpCatalog } from "../../tools/mcp/mcp_tools.js";
import type { McpServerCatalog } from "../../tools/mcp/types.js";

export interface WorkerData {
  config: RunConfig;
  runDir: string;
  workers: number;
  /** The prefill messages, read and validated once by the main thread. */
  prefill?: ChatMessage[];
  /** The user's command_allowlist, read once by the main thread (a bad file stops the run there). */
  allowlist: string[];
  /** The run's MCP servers and their tools, listed once by the main thread. */
  mcp?: McpServerCatalog[];
  /** The run-wide sandbox gates' shared state (created once by the main thread). */
  sandboxGates?: SandboxGateBuffers;
  /** The run-wide model connection limiters' shared state (created once by the main thread). */
  modelGates: ModelGateBuffers;
  /** Counts the threads whose worker module finished loading (see startRunPool's close). */
  loaded: Int32Array;
}

export { CANCEL_CHANNEL, type CancelMessage };

let deps: Promise<TaskRunnerDeps> | undefined;
const abortAll = new AbortController();
const startTurns = new StartTurns();
// Every task in flight on this thread listens to it (core/abort.ts linkedAbort): hundreds at once are expected.
setMaxListeners(0, abortAll.signal);

function setUp(): Promise<TaskRunnerDeps> {
  if (!deps) {
    deps = (async () => {
      const data = workerData as WorkerData;
      const channel = new BroadcastChannel(CANCEL_CHANNEL);
      channel.onmessage = (ev) => {
        const msg = (ev as unknown as { data: CancelMessage }).data;
        if (msg?.type === "abort-all" && msg.runDir === data.runDir) abortAll.abort(new Error("run interrupted"));
      };
      // The channel must not keep the worker alive once the pool is done with it.
      (channel as unknown as { unref?: () => void }).unref?.();
      tieConsoleToTasks(data.config.stream === true);
      await ensureToolsLoaded({ packages: data.config.plugins });
      if (data.mcp) registerMcpCatalog(data.mcp);
      const models = await createRunModels(data.config, new ModelGates(data.modelGates));
      const { prefill, allowlist } = data;
      // Only now: a V8 flag set at run time makes every thread started after it compile Node's own modules without
      // their built-in code cache (about twice the CPU for this thread's start-up); see heap_tuning.ts.
      tuneHeapGrowth();
      return {
        config: data.config,
        runDir: data.runDir,
        models,
        prefill,
        logger: consoleLogger,
        allowlist,
        workers: data.workers,
        mcp: data.mcp,
        sandboxGates: data.sandboxGates ? new SandboxGates(data.sandboxGates) : undefined,
      };
    })();
  }
  return deps;
}

captureLibraryConsole();

export default async function runTaskInWorker(spec: TaskSpec): Promise<TaskOutcomeMessage> {
  const taskDeps = await setUp();
  await startTurns.next();
  const { value, notes } = await withConsoleNotes(() => runTask(spec, taskDeps, abortAll.signal));
  return notes.length ? { ...value, consoleNotes: notes } : value;
}

// Piscina loads this module with a synchronous require(); ending the thread before that require has returned
// (it still builds the module's CommonJS facade after this line ran) aborts Node 20. A microtask queued here
// runs only once the require has returned (a microtask, not a macrotask: with piscina's default atomics an idle
// thread blocks in Atomics.wait before any macrotask runs).
const loadedCounter = (workerData as WorkerData | null)?.loaded;
if (loadedCounter)
  queueMicrotask(() => {
    Atomics.add(loadedCounter, 0, 1);
    // The set-up (tool modules, model clients) starts now, while the main thread still checks the run, instead
    // of when the first task arrives (the pool runs without Atomics waits, so this thread's loop is free).
    // A failure is the first task's to report.
    setUp().catch(() => undefined);
  });
