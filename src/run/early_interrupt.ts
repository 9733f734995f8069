/**
 * A signal before the run's own handlers are in place (src/run/run_control.ts), while it still reads the dataset,
 * checks the sandbox backend and asks the endpoints: one line says that no task started and what, if anything,
 * was written, and the process exits 130, as an interrupted run does.
 */
import { existsSync } from "node:fs";

export interface EarlyInterrupt {
  /** What is now written that a signal would leave behind (said in its line instead of "nothing was written"). */
  wrote(what: string): void;
  /** The run's own handlers take over: removes these. Idempotent. */
  dispose(): void;
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export function interruptBeforeTasks(runDir: string): EarlyInterrupt {
  const existed = existsSync(runDir);
  const written: string[] = [];
  const onSignal = () => {
    const made =
      !existed && existsSync(runDir) && written.length === 0 ? [`the run folder ${runDir} was made, empty`] : [];
    const what = [...made, ...written];
    process.stderr.write(
      `hermes-batch run: interrupted before any task started: ${what.length ? what.join("; ") : "nothing was written"}\n`,
    );
    process.exit(130);
  };
  for (const s of SIGNALS) process.on(s, onSignal);
  return {
    wrote(what) {
      written.push(what);
    },
    dispose() {
      for (const s of SIGNALS) process.off(s, onSignal);
    },
  };
}
