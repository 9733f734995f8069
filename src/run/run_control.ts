/**
 * When a run stops taking tasks: Ctrl-C once drains (the tasks in flight finish), Ctrl-C twice, SIGTERM or SIGHUP
 * abort the tasks in flight too, and an endpoint that fails every task the same way stops the run early.
 */
import { BroadcastChannel } from "node:worker_threads";
import { CANCEL_CHANNEL, type CancelMessage } from "./cancel_channel.js";
import { DeadEndpointWatch } from "./early_stop.js";
import type { Progress } from "./progress.js";
import type { TaskOutcomeMessage } from "./task_spec.js";

export interface RunStop {
  /** No further task starts. */
  stopping: boolean;
  /** A signal ended the run: it exits 130 and prints the resume command. */
  interrupted: boolean;
  /** Tasks were left without a result: not started when the run stopped taking tasks, or cancelled in flight. */
  leftTasks: boolean;
  /** The model error every task of the early stop had. */
  earlyStop?: string;
  earlyStopWhat: string;
}

export interface RunControl {
  stop: RunStop;
  /** Tells every worker thread to abort its tasks in flight. */
  abortAll(): void;
  /** One task's result, for the dead-endpoint rule. */
  observe(msg: TaskOutcomeMessage): void;
  /** Removes the signal handlers and closes the cancel channel. */
  dispose(): void;
}

export function createRunControl(
  runDir: string,
  stopAfterFailures: number,
  progress: Progress,
  logEvent: (msg: string) => void,
): RunControl {
  const stop: RunStop = { stopping: false, interrupted: false, leftTasks: false, earlyStopWhat: "" };
  // Ctrl-C once: stop taking tasks, let in-flight ones finish. Twice, or SIGTERM: abort them too.
  const cancel = new BroadcastChannel(CANCEL_CHANNEL);
  const abortAll = () => cancel.postMessage({ type: "abort-all", runDir } satisfies CancelMessage);
  const onSigint = () => {
    stop.interrupted = true;
    if (!stop.stopping) {
      stop.stopping = true;
      progress.log("interrupt: finishing the tasks in flight (Ctrl-C again to abort them)…");
      logEvent("SIGINT: draining");
    } else {
      progress.log("interrupt: aborting the tasks in flight…");
      logEvent("SIGINT: aborting");
      abortAll();
    }
  };
  // SIGHUP (the terminal closed, the ssh session dropped) ends the run like SIGTERM: nothing is left running.
  const onSigterm = (signal: NodeJS.Signals) => {
    stop.interrupted = true;
    stop.stopping = true;
    logEvent(`${signal}: aborting`);
    abortAll();
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  process.on("SIGHUP", onSigterm);

  // An endpoint that cannot work (bad key, unknown model, nobody listening) or dies mid-run fails every task the
  // same way: N results in a row that are all one model error stop the run (src/run/early_stop.ts).
  const deadEndpoint = new DeadEndpointWatch(stopAfterFailures);
  const observe = (msg: TaskOutcomeMessage) => {
    if (msg.outcome === "cancelled") stop.leftTasks = true;
    if (stop.earlyStop !== undefined) return;
    const fired = deadEndpoint.observe(msg);
    if (!fired) return;
    stop.earlyStop = fired.error;
    stop.earlyStopWhat = fired.what;
    stop.stopping = true;
    progress.log(`stopping: ${fired.what} all failed with the same model error; finishing the tasks in flight`);
    logEvent(`stopped early: ${fired.what} all failed with: ${stop.earlyStop}`);
  };
  const dispose = () => {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigterm);
    process.off("SIGHUP", onSigterm);
    cancel.close();
  };
  return { stop, abortAll, observe, dispose };
}
