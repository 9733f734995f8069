/** `hermes-batch gc [--run NAME] [--dry-run]`: removes leftover sandboxes of every backend by their run labels. */
import { describeLeftover, environments, removeLeftoversEverywhere } from "../../tools/environments/index.js";
import { UserError } from "../core/errors.js";
import { nonEmptyList, parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

/** sandbox → sandboxes, process → processes, container → containers. */
function plural(noun: string): string {
  return /(s|x|z|ch|sh)$/.test(noun) ? `${noun}es` : `${noun}s`;
}

/** A reason as one line: an engine's error can span several. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

export const command: Command = {
  summary: "remove leftover sandboxes: Docker containers, Singularity instances (one run, or all runs with --all)",
  help: `Usage: hermes-batch gc (--run NAME | --all) [--env LIST] [--dry-run] [--json]

Removes the sandboxes a run left behind, running or not: Docker containers labelled hermes-batch.run=NAME
(with their anonymous volumes) and this user's Apptainer/Singularity instances named for the run. With
--all, those of every run, including runs still in progress. Normally a run removes its own sandboxes, and
an abandoned one ends by itself after the task timeout plus two minutes; gc is for removing what a crash
left at once. Backends that cannot run here (no engine, no runtime) are skipped unless named with --env.

Options:
  --run NAME   the sandboxes of this run
  --all        the sandboxes of every run, including runs in progress
  --env LIST   only these backends (comma-separated: docker, singularity)
  --dry-run    list what would be removed, remove nothing
  --json       machine-readable output
`,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      run: { type: "string" },
      all: { type: "boolean" },
      env: { type: "string" },
      "dry-run": { type: "boolean" },
      json: { type: "boolean" },
    });
    if (positionals.length > 0) throw new UserError(`unexpected argument '${positionals[0]}'`);
    if (values.run !== undefined && values.run.trim() === "") throw new UserError("--run needs a run name");
    if (values.run === undefined && !values.all) {
      throw new UserError(
        "name a run with --run NAME, or pass --all to remove the sandboxes of every run (including runs in progress)",
      );
    }
    if (values.run !== undefined && values.all) throw new UserError("--run and --all exclude each other");
    const only = nonEmptyList(values.env, "--env");
    for (const name of only ?? []) await environments.load(name); // an unknown name: the registry's one-line error
    const idle = only?.find((n) => n === "host" || n === "local"); // their processes end with the run
    if (idle)
      throw new UserError(`--env ${idle}: leaves no sandbox behind when a run ends; gc is for docker and singularity`);
    const dryRun = values["dry-run"] === true;
    const { results, unavailable } = await removeLeftoversEverywhere({ run: values.run, dryRun }, only);
    // Every backend skipped says why (a DOCKER_HOST nobody answers on must not read as "nothing to remove"); the
    // exit code fails only when a backend named with --env, or every backend, could not be asked.
    const named = unavailable.filter((u) => only !== undefined || results.length === 0);
    for (const u of unavailable)
      process.stderr.write(`hermes-batch gc: ${u.name}: ${named.includes(u) ? "" : "skipped: "}${oneLine(u.reason)}\n`);
    if (results.length === 0) return 1;
    if (values.json) {
      const removed = results.flatMap((r) => r.removed);
      const failed = results.flatMap((r) => r.failed.map((f) => ({ ...f.sandbox, error: f.error })));
      process.stdout.write(`${JSON.stringify({ dryRun, removed, failed, skipped: unavailable }, null, 2)}\n`);
    } else {
      for (const { backend, removed, failed } of results) {
        for (const s of removed)
          process.stdout.write(`${dryRun ? "would remove" : "removed"} ${backend.name} ${describeLeftover(s)}\n`);
        for (const f of failed)
          process.stderr.write(`could not remove ${backend.name} ${describeLeftover(f.sandbox)}: ${f.error}\n`);
        const scope = values.run !== undefined ? ` of run ${values.run}` : "";
        const n = removed.length;
        process.stdout.write(
          `${dryRun ? "would remove" : "removed"} ${n} ${n === 1 ? backend.sandboxNoun : plural(backend.sandboxNoun)}${scope}\n`,
        );
      }
    }
    return results.some((r) => r.failed.length > 0) || named.length > 0 ? 1 : 0;
  },
};
