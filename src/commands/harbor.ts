/** `hermes-batch harbor import DIR -o rows.jsonl`: Harbor task folders → the rows `run --harbor` makes of them. */
import { writeFileSync } from "node:fs";
import { UserError } from "../core/errors.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

const help = `Usage: hermes-batch harbor import DIR [-o, --output rows.jsonl|-] [--on-bad-row fail|skip]

Reads Harbor task folders (task.toml, instruction.md, environment/, tests/, optional solution/): DIR is one
task folder or a folder of them. Writes one JSONL row per task, the rows \`run --harbor DIR\` runs:
id = [task].name (else the folder name), prompt = instruction.md, metadata = [metadata] plus
{harbor: {task_dir, digest, schema}}, and the task's settings under "harbor". Without -o the rows go to stdout.

Accepted: the 1.0 form (version = "1.0") and schema_version 1.0 to 1.4. Refused, each with
"path/task.toml: reason": Windows tasks, multi-step tasks, docker-compose environments, allow-list
networking, separate verifier environments, task MCP servers. A refused task makes the command exit 2
(nothing written) unless --on-bad-row skip, which leaves it out and says so on stderr.
`;

export const command: Command = {
  summary: "harbor import: turn Harbor task folders into dataset rows",
  help,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      output: { type: "string", short: "o" },
      "on-bad-row": { type: "string" },
    });
    const [sub, dir, ...rest] = positionals;
    if (sub !== "import")
      throw new UserError(
        sub === undefined
          ? "missing subcommand: harbor import DIR (see --help)"
          : `unknown subcommand '${sub}': only 'harbor import DIR' (see --help)`,
      );
    if (dir === undefined) throw new UserError("harbor import: missing DIR (a task folder or a folder of them)");
    if (rest.length) throw new UserError(`harbor import: one DIR at a time, got also ${rest.join(" ")}`);
    const policy = values["on-bad-row"] ?? "fail";
    if (policy !== "fail" && policy !== "skip")
      throw new UserError(`--on-bad-row: must be fail or skip, got '${policy}'`);
    const { formatHarborBad, readHarborTasks } = await import("../harbor/task_dir.js");
    const { rows, bad } = readHarborTasks(dir);
    const lines = bad.map(formatHarborBad);
    if (bad.length && policy === "fail")
      throw new UserError(
        `${bad.length} task(s) cannot run (nothing written; fix them or pass --on-bad-row skip):\n  ${lines.join("\n  ")}`,
      );
    for (const l of lines) process.stderr.write(`skipped: ${l}\n`);
    const text = rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length ? "\n" : "");
    if (values.output && values.output !== "-") {
      writeFileSync(values.output, text);
      process.stderr.write(
        `${rows.length} task(s) → ${values.output}${bad.length ? ` (${bad.length} skipped)` : ""}\n`,
      );
    } else process.stdout.write(text);
    return 0;
  },
};
