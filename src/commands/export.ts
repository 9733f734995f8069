/**
 * `hermes-batch export`: converts a run's trajectories.jsonl to a training format, streaming line by
 * line (never the whole file in memory). Bad lines are reported with file:line and skipped.
 */
import { once } from "node:events";
import { createWriteStream, existsSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { z } from "zod";
import { readJsonl } from "../store/jsonl_file.js";
import { reasoningStats } from "../report/tool_stats.js";
import { ReadableTrajectorySchema, type TrajectoryEntry } from "../core/records.js";
import { UserError } from "../core/errors.js";
import { exportFormats, loadExportFormat, type ExportOptions } from "../formats/index.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

const MAX_REPORTED_BAD_LINES = 20;

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message))
    .join("; ");
}

/** True when some assistant turn carries reasoning (from raw messages, else from the gpt turns' think blocks). */
function hasReasoning(entry: TrajectoryEntry): boolean {
  if (Array.isArray(entry.messages)) return reasoningStats(entry.messages).has_any_reasoning;
  return (entry.conversations ?? []).some((t) => t.from === "gpt" && /<think>\s*\S[\s\S]*?<\/think>/.test(t.value));
}

const HELP = `Usage: hermes-batch export RUN_DIR_OR_FILE [options]

Converts trajectories to a training format, one JSON object per line. RUN_DIR_OR_FILE is a run folder
(its trajectories.jsonl is read) or a trajectories JSONL file. The file is streamed; bad lines are
reported as file:line and skipped.

Options:
  --format NAME            output format (default sharegpt):
${exportFormats()
  .map((f) => `                             ${f.name}: ${f.description}`)
  .join("\n")}
  --out FILE               output file, '-' for stdout (default: export.<format>.jsonl beside the input)
  --only-completed         keep only trajectories with completed: true
  --require-reasoning      keep only trajectories with reasoning in at least one assistant turn
  --require-verify-pass    keep only trajectories whose verify command passed (alias --min-verify-pass)
  --metadata               add a metadata object (task_id, prompt_index, outcome, run metadata)
  --reasoning drop|think   openai format: leave reasoning out (default) or prepend it as <think>…</think>

Exit codes: 0 written (bad lines only warn), 1 no usable line at all, 2 bad arguments or missing input.`;

export const command: Command = {
  summary: "convert trajectories to sharegpt, hermes or openai fine-tuning JSONL",
  help: HELP,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      format: { type: "string" },
      out: { type: "string" },
      "only-completed": { type: "boolean" },
      "require-reasoning": { type: "boolean" },
      "require-verify-pass": { type: "boolean" },
      "min-verify-pass": { type: "boolean" },
      metadata: { type: "boolean" },
      reasoning: { type: "string" },
    });
    if (positionals.length !== 1) throw new UserError("expected exactly one RUN_DIR_OR_FILE (see --help)");
    const format = values.format ?? "sharegpt";
    const convert = await loadExportFormat(format);
    const reasoning = values.reasoning ?? "drop";
    if (reasoning !== "drop" && reasoning !== "think") throw new UserError(`--reasoning must be drop or think, got '${reasoning}'`);
    const opts: ExportOptions = { withMetadata: values.metadata ?? false, reasoning };

    const target = resolve(positionals[0]!);
    if (!existsSync(target)) throw new UserError(`no such file or folder: ${positionals[0]}`);
    const input = statSync(target).isDirectory() ? join(target, "trajectories.jsonl") : target;
    if (!existsSync(input)) throw new UserError(`no trajectories.jsonl in ${positionals[0]}`);
    const outPath = values.out ?? join(dirname(input), `export.${format}.jsonl`);
    const toStdout = outPath === "-";
    if (!toStdout && resolve(outPath) === input) throw new UserError("--out must differ from the input file");

    const onlyCompleted = values["only-completed"] ?? false;
    const requireReasoning = values["require-reasoning"] ?? false;
    const requireVerify = (values["require-verify-pass"] ?? false) || (values["min-verify-pass"] ?? false);

    const tmpPath = toStdout ? "" : `${resolve(outPath)}.tmp-${process.pid}`;
    const out = toStdout ? process.stdout : createWriteStream(tmpPath, { encoding: "utf8" });
    const counts = { read: 0, written: 0, bad: 0, notCompleted: 0, noReasoning: 0, notVerified: 0 };
    const name = basename(input);
    try {
      for await (const l of readJsonl<unknown>(input)) {
        const where = `${input}:${l.line}`;
        let entry: TrajectoryEntry | undefined;
        let problem = l.error;
        if (!problem) {
          const parsed = ReadableTrajectorySchema.safeParse(l.value);
          if (!parsed.success) problem = describeIssues(parsed.error);
          else if (format === "openai" && !parsed.data.messages) problem = "has no `messages` (needed for the openai format)";
          else entry = parsed.data as unknown as TrajectoryEntry;
        }
        if (!entry) {
          counts.bad++;
          if (counts.bad <= MAX_REPORTED_BAD_LINES) process.stderr.write(`${where}: skipped bad line: ${problem}\n`);
          continue;
        }
        counts.read++;
        if (onlyCompleted && entry.completed !== true) {
          counts.notCompleted++;
          continue;
        }
        if (requireReasoning && !hasReasoning(entry)) {
          counts.noReasoning++;
          continue;
        }
        if (requireVerify && entry.verify?.passed !== true) {
          counts.notVerified++;
          continue;
        }
        if (!out.write(JSON.stringify(convert(entry, opts)) + "\n")) await once(out, "drain");
        counts.written++;
      }
      if (!toStdout) {
        const file = out as ReturnType<typeof createWriteStream>;
        await new Promise<void>((res, rej) => file.end((err?: Error | null) => (err ? rej(err) : res())));
        renameSync(tmpPath, outPath);
      }
    } catch (err) {
      if (!toStdout) {
        (out as ReturnType<typeof createWriteStream>).destroy();
        rmSync(tmpPath, { force: true });
      }
      throw err;
    }

    if (counts.bad > MAX_REPORTED_BAD_LINES) process.stderr.write(`… and ${counts.bad - MAX_REPORTED_BAD_LINES} more bad lines\n`);
    const filtered = [
      counts.notCompleted && `${counts.notCompleted} not completed`,
      counts.noReasoning && `${counts.noReasoning} without reasoning`,
      counts.notVerified && `${counts.notVerified} without a passing verify`,
    ].filter(Boolean);
    const parts = [`exported ${counts.written} of ${counts.read} trajectories from ${name} as ${format} to ${toStdout ? "stdout" : outPath}`];
    if (filtered.length) parts.push(`filtered: ${filtered.join(", ")}`);
    if (counts.bad) parts.push(`${counts.bad} bad line${counts.bad === 1 ? "" : "s"} skipped`);
    process.stderr.write(parts.join("; ") + "\n");
    return counts.read === 0 && counts.bad > 0 ? 1 : 0;
  },
};
