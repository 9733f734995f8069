#!/usr/bin/env node
/** The `hermes-batch` executable: runs src/cli_main.ts `main` on the arguments and exits with its code. */
import { errorMessage } from "./core/errors.js";
import { main } from "./cli_main.js";

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
