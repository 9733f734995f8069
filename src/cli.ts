#!/usr/bin/env node
/**
 * The `hermes-batch` executable: runs src/cli_main.ts `main` on the arguments and exits with its code.
 * The test suite also imports this built file to call `main` in its own process (test/helpers/cli.ts `runCliInProcess`
 * for `run`, whose worker threads load the built dist/src/worker.js): it sets the global IN_PROCESS flag first, and
 * then nothing below runs.
 */
import { errorMessage } from "./core/errors.js";
import { main } from "./cli_main.js";

export { main };

/** Set (to true) by a test process that imports this file for `main` instead of running it as the executable. */
export const IN_PROCESS = Symbol.for("hermes-batch.cli.in-process");

if ((globalThis as Record<symbol, unknown>)[IN_PROCESS] !== true) runAsExecutable();

function runAsExecutable(): void {
  // `hermes-batch sample -n 5000 | head -1`: a closed pipe ends the output, it is not an error.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(0);
    throw err;
  });

  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`hermes-batch: ${errorMessage(err)}\n`);
      process.exitCode = 1;
    },
  );
}
