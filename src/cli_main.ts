/**
 * The `hermes-batch` commands behind one function: picks a subcommand, maps errors to exit codes (2 = bad input).
 * src/cli.ts is the executable that calls it; tests call it in process (test/helpers/cli.ts `runCliInProcess`).
 */
import { UserError, errorMessage } from "./core/errors.js";
import { packageVersion } from "./core/package_version.js";
import type { Command } from "./commands/types.js";

/**
 * Every command with its one-line summary for `hermes-batch --help`. The summaries are copies of the commands' own
 * (test/cli_summaries.test.ts keeps them equal) so that the command list loads no command module: loading them all
 * cost ~0.2 s of CPU, more than the rest of `--help`.
 */
/** The exit code of a bug of hermes-batch itself (an internal error). */
export const EXIT_INTERNAL = 70;

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  run: {
    summary: "run an agent over every row of a JSONL dataset (the main job)",
    load: async () => (await import("./commands/run.js")).command,
  },
  tools: {
    summary: "list the tools: toolset, available or not, and why",
    load: async () => (await import("./commands/tools.js")).command,
  },
  toolsets: {
    summary: "list the toolsets with their resolved tools (or show one)",
    load: async () => (await import("./commands/toolsets.js")).command,
  },
  distributions: {
    summary: "list the toolset distributions and their probabilities",
    load: async () => (await import("./commands/distributions.js")).command,
  },
  sample: {
    summary: "show seeded toolset draws from a distribution",
    load: async () => (await import("./commands/sample.js")).command,
  },
  approval: {
    summary: "check commands against the dangerous-command classes; explain a verdict; list the classes",
    load: async () => (await import("./commands/approval.js")).command,
  },
  gc: {
    summary: "remove leftover sandboxes: Docker containers, Singularity instances (one run, or all runs with --all)",
    load: async () => (await import("./commands/gc.js")).command,
  },
  export: {
    summary: "convert trajectories to sharegpt, hermes, openai, atif or groups fine-tuning JSONL, with quality filters",
    load: async () => (await import("./commands/export.js")).command,
  },
  merge: {
    summary: "merge the shard folders of a sharded run (Slurm array, Kubernetes Indexed Job) into one",
    load: async () => (await import("./commands/merge.js")).command,
  },
  shards: {
    summary: "status of each shard of a sharded run, and the exact commands that rerun the unfinished ones",
    load: async () => (await import("./commands/shards.js")).command,
  },
  compare: {
    summary: "compare two runs task by task; exit 1 on a regression (CI gate)",
    load: async () => (await import("./commands/compare.js")).command,
  },
  score: {
    summary: "recompute a run's scores from its saved trajectories (corrected dataset, another judge)",
    load: async () => (await import("./commands/score.js")).command,
  },
  report: {
    summary: "one self-contained HTML report of a run (optionally against a baseline run)",
    load: async () => (await import("./commands/report.js")).command,
  },
  view: {
    summary: "serve the report of a run (also one in progress), or an index of a folder of runs, on 127.0.0.1",
    load: async () => (await import("./commands/view.js")).command,
  },
  harbor: {
    summary: "harbor import: turn Harbor task folders into dataset rows",
    load: async () => (await import("./commands/harbor.js")).command,
  },
};

/** The command names and summaries `hermes-batch --help` lists (for the test that keeps them equal). */
export function commandSummaries(): Array<{ name: string; summary: string; load: () => Promise<Command> }> {
  return Object.entries(COMMANDS).map(([name, { summary, load }]) => ({ name, summary, load }));
}

function mainHelp(): string {
  const lines = [
    "hermes-batch — run tool-using LLM agents over whole datasets",
    "",
    "Usage: hermes-batch <command> [options]      (hermes-batch <command> --help for details)",
    "",
    "Commands:",
  ];
  for (const [name, { summary }] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(15)} ${summary}`);
  lines.push("", "Options:", "  --help, -h      this text", "  --version, -v   print the version");
  lines.push("", "Try it without an API key:  hermes-batch run datasets/smoke.jsonl --model scripted");
  return lines.join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  // `hermes-batch help compare`, as `git help commit`: that command's help.
  if (name === "help" && rest[0] !== undefined) return main([rest[0], "--help"]);
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(mainHelp() + "\n");
    return name ? 0 : 2;
  }
  if (name === "--version" || name === "-v") {
    process.stdout.write(packageVersion() + "\n");
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry && name.startsWith("-")) {
    // `hermes-batch --model scripted run data.jsonl`: the options of a command follow it.
    const command = rest.find((a) => Object.hasOwn(COMMANDS, a));
    process.stderr.write(
      command
        ? `hermes-batch: '${name}' comes before the command: options go after it (hermes-batch ${command} ${name} …)\n`
        : `hermes-batch: unknown option '${name}'. Usage: hermes-batch <command> [options]; commands: ${Object.keys(COMMANDS).join(", ")}\n`,
    );
    return 2;
  }
  if (!entry) {
    const { nearestName } = await import("./commands/args.js");
    const near = nearestName(name, Object.keys(COMMANDS));
    const hint = near ? `: did you mean '${near}'?` : ".";
    process.stderr.write(
      `hermes-batch: unknown command '${name}'${hint} Commands: ${Object.keys(COMMANDS).join(", ")}\n`,
    );
    return 2;
  }
  const command = await entry.load();
  // Only a leading -h asks for help: later ones may belong to a quoted command (`approval check ls -h`).
  const beforeDashes = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  if (beforeDashes.includes("--help") || rest[0] === "-h") {
    process.stdout.write(command.help.trimEnd() + "\n");
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UserError) {
      process.stderr.write(`hermes-batch ${name}: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`hermes-batch ${name}: internal error: ${errorMessage(err)}\n`);
    if (process.env.HERMES_BATCH_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    // Not 1: that is a finding of the command (some tasks failed, compare's regression); a CI gate must not read
    // a bug of hermes-batch as one. 70 is sysexits' EX_SOFTWARE.
    return EXIT_INTERNAL;
  }
}
