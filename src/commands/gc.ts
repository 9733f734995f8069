/** `hermes-batch gc [--run NAME] [--dry-run]`: removes leftover sandbox containers by their labels. */
import { dockerAvailability, removeContainersByLabel } from "../../tools/environments/docker_client.js";
import { UserError } from "../core/errors.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

export const command: Command = {
  summary: "remove leftover Docker sandboxes (one run, or all runs with --all)",
  help: `Usage: hermes-batch gc (--run NAME | --all) [--dry-run] [--json]

Removes the Docker containers labelled hermes-batch.run=NAME (or, with --all, of every run), running or
not, with their anonymous volumes. Normally a run removes its own containers, and an abandoned container
ends by itself after the task timeout plus two minutes; gc is for removing what a crash left at once.

Options:
  --run NAME   the containers of this run
  --all        the containers of every run on this engine, including runs still in progress
  --dry-run    list what would be removed, remove nothing
  --json       machine-readable output
`,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      run: { type: "string" },
      all: { type: "boolean" },
      "dry-run": { type: "boolean" },
      json: { type: "boolean" },
    });
    if (positionals.length > 0) throw new UserError(`unexpected argument '${positionals[0]}'`);
    if (values.run !== undefined && values.run.trim() === "") throw new UserError("--run needs a run name");
    if (values.run === undefined && !values.all) {
      throw new UserError("name a run with --run NAME, or pass --all to remove the containers of every run (including runs in progress)");
    }
    if (values.run !== undefined && values.all) throw new UserError("--run and --all exclude each other");
    const availability = await dockerAvailability();
    if (!availability.available) {
      process.stderr.write(`hermes-batch gc: ${availability.reason}\n`);
      return 1;
    }
    const dryRun = values["dry-run"] === true;
    const { removed, failed } = await removeContainersByLabel({ run: values.run, dryRun });
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ dryRun, removed, failed }, null, 2)}\n`);
    } else {
      for (const c of removed) {
        process.stdout.write(`${dryRun ? "would remove" : "removed"} ${c.name || c.id.slice(0, 12)} (run ${c.run}, task ${c.task || "-"}, ${c.state})\n`);
      }
      for (const f of failed) {
        process.stderr.write(`could not remove ${f.container.name || f.container.id.slice(0, 12)}: ${f.error}\n`);
      }
      const scope = values.run !== undefined ? ` of run ${values.run}` : "";
      const n = removed.length;
      process.stdout.write(`${dryRun ? "would remove" : "removed"} ${n} container${n === 1 ? "" : "s"}${scope}\n`);
    }
    return failed.length > 0 ? 1 : 0;
  },
};
