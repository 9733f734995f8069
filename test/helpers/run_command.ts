/**
 * Runs one command module as a process, with src/cli.ts's exit-code mapping (UserError → its code,
 * anything else → 1): `node --import tsx test/helpers/run_command.ts merge ARGS…`. For commands not yet
 * wired into src/cli.ts's COMMANDS map; tests switch to the real CLI once they are.
 */
import { UserError, errorMessage } from "../../src/core/errors.js";
import type { Command } from "../../src/commands/types.js";

const [name, ...rest] = process.argv.slice(2);
if (!name || !/^[a-z_]+$/.test(name)) {
  process.stderr.write("usage: run_command.ts COMMAND [ARGS…]\n");
  process.exit(2);
}
const { command } = (await import(`../../src/commands/${name}.js`)) as { command: Command };
try {
  process.exitCode = await command.run(rest);
} catch (err) {
  if (err instanceof UserError) {
    process.stderr.write(`hermes-batch ${name}: ${err.message}\n`);
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write(`hermes-batch ${name}: internal error: ${errorMessage(err)}\n`);
    process.exitCode = 1;
  }
}
