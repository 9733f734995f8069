/**
 * `hermes-batch export`: converts a run's trajectories.jsonl to a training format, streaming line by
 * line (never the whole file in memory). Bad lines are reported with file:line and skipped.
 */
import { RUN_FILES, recordKey } from "../store/checkpoint.js";
import { RlTokenIndex } from "../store/rl_tokens.js";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { createInterface } from "node:readline";
import {
  accessSync,
  constants,
  createReadStream,
  createWriteStream,
  existsSync,
  renameSync,
  rmSync,
  statSync,
  type WriteStream,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import * as z from "zod";
import { readJsonl } from "../store/jsonl_file.js";
import { reasoningStats } from "../report/tool_stats.js";
import { ReadableTrajectorySchema, type TrajectoryEntry } from "../core/records.js";
import { UserError } from "../core/errors.js";
import { exportFormats, loadAnyExportFormat, type ExportOptions } from "../formats/index.js";
import {
  BestEpochPicker,
  dedupKey,
  lineFilterReason,
  splitProblem,
  taskKeyOf,
  turnsOf,
  validationTasks,
  type CurateOptions,
} from "../formats/curate.js";
import { checkRunFiles, nonEmptyPath, parseCommandArgs } from "./args.js";
import { JsonFilesOutput } from "./export_files.js";
import { wellFormed } from "../formats/well_formed.js";
import { AtifTrajectorySchema } from "../formats/atif_schema.js";
import type { Command } from "./types.js";

const MAX_REPORTED_BAD_LINES = 20;

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message))
    .join("; ");
}

/** True when some assistant turn carries reasoning (from raw messages, else from the gpt turns' think blocks). */
function hasReasoning(entry: TrajectoryEntry, detailsReasoning: boolean): boolean {
  if (Array.isArray(entry.messages)) return reasoningStats(entry.messages, { detailsReasoning }).has_any_reasoning;
  return (entry.conversations ?? []).some((t) => t.from === "gpt" && hasThinkText(t.value));
}

/**
 * Whether the text has a `<think>` block with something but whitespace in it, in one pass (a backtracking regex
 * took seconds per line on a long turn full of unclosed `<think>` tags).
 */
function hasThinkText(text: string): boolean {
  let open = text.indexOf("<think>");
  let close = -1;
  while (open >= 0) {
    const start = open + "<think>".length;
    if (close < start) close = text.indexOf("</think>", start);
    if (close < 0) return false; // no block closes after this opener, nor after any later one
    if (/\S/.test(text.slice(start, close))) return true;
    open = text.indexOf("<think>", close); // openers before this close have the same (empty) block
  }
  return false;
}

const HELP = `Usage: hermes-batch export RUN_DIR_OR_FILE [options]

Converts trajectories to a training format, one JSON object per line. RUN_DIR_OR_FILE is a run folder
(its trajectories.jsonl is read) or a trajectories JSONL file. The file is streamed; bad lines are
reported as file:line and skipped. Every written line is checked against its format's schema.

Options:
  --format NAME            output format (default sharegpt):
${exportFormats()
  .map((f) => `                             ${f.name}: ${f.description}`)
  .join("\n")}
  --out FILE               output file, '-' for stdout (default: export.<format>.jsonl beside the input)
  --split-files DIR        atif: one JSON file per trajectory in DIR (made if missing; refused if it already
                           holds .json files, which would be read with these) instead of one JSONL
                           file, named <task>.json (<task>.epoch-<k>.json with --epochs), as Harbor keeps
                           one trajectory.json per trial; unsafe characters of a task id become _ plus a hash
  --metadata               add a metadata object (task_id, prompt_index, outcome, run metadata);
                           not with hermes, whose metadata is the original's {batch_num, timestamp, model}
  --reasoning drop|think   openai format: leave reasoning out (default) or prepend it as <think>…</think>
  --reasoning-details      sharegpt/hermes: show reasoning the model sent only in reasoning_details as
                           <think> too (rebuilt from the raw messages); by default it is left out, as the
                           original's streaming path leaves it out. --require-reasoning then counts it too

Filters (a line must pass all): sharegpt, hermes and openai always leave out a line without a model turn
(a task cut before its first answer: nothing to learn from, and OpenAI refuses such an example). Any format:
a lone UTF-16 surrogate in the text (which UTF-8 cannot hold) is written as U+FFFD, and counted.
  --only-completed         keep only trajectories with completed: true
  --only-passed            keep only trajectories whose score passed
  --min-score X            keep only trajectories whose score value (or 1/0 for passed/failed) is at least X,
                           a number from 0 to 1
  --best-of-epochs         per task, only the best-scoring epoch (ties: fewer turns, then the first epoch);
                           reads the input twice, so not from a pipe
  --dedup                  drop a trajectory whose prompt and final answer repeat an earlier one
  --min-turns N, --max-turns N   assistant turns in the conversation
  --drop-tool-errors       drop trajectories with any failed tool call
  --require-reasoning      keep only trajectories with reasoning in at least one assistant turn
  --require-verify-pass    keep only trajectories whose verify command passed (alias --min-verify-pass)

Split:
  --split R --seed S       write OUT.train.jsonl and OUT.val.jsonl beside --out OUT.jsonl: of the n tasks
                           exported (after the filters), exactly round(R × n) in validation (0 < R < 1,
                           half rounds up), the first in an order hashed from S (default 0) and the task
                           ids, so the same seed and tasks give the same split; every epoch of a task is
                           on the same side. A split that would leave either side empty writes nothing
                           and exits 1, saying which R would do

RL formats (read rl.jsonl, written by run --rl-capture; see README "RL rollouts"):
  --format rl              the lines as they are, with group statistics and advantages filled in (JSONL)
  --format prime           prime-rl TrainingSample, one per branch (JSONL)
  --format skyrl           SkyRL GeneratorOutput, one row per trajectory (JSON; a trajectory of several
                           branches cannot be one row: skipped and counted, use skyrl-steps)
  --format skyrl-steps     SkyRL GeneratorOutput step-wise: one row per model call, with is_last_step
  --format verifiers       verifiers GenerateOutputs {outputs: RolloutOutput[], metadata} (JSON; reads the
                           run's trajectories.jsonl for the messages)
  --advantage grpo|mean    (reward - group mean) / (group std + 1e-6), or reward - group mean (default grpo)
  --include-excluded       --format rl: keep lines whose train verdict is excluded too
  --drop-zero-variance     leave out groups whose scored rewards are all equal (no learning signal)
  The last line of a task and epoch wins; lines whose train verdict is excluded are left out.

Exit codes: 0 written (bad lines only warn); 1 nothing written: no line left after bad lines and filters,
or a --split with an empty side (an earlier file at --out is left as it was); 2 bad arguments or missing
input, or (atif) a line that gives no valid ATIF document: the error names its task, and no JSONL file is
written (--split-files keeps the files already written, each of them valid).`;

function numberFlag(
  value: string | undefined,
  flag: string,
  check: (n: number) => boolean,
  what: string,
): number | undefined {
  if (value === undefined) return undefined;
  // Decimal points only, as run's flags: Number() would also take 0x1, 0b1 and 1e3 (a typo that moves a filter).
  const n = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || !check(n)) throw new UserError(`${flag} must be ${what}, got '${value}'`);
  return n;
}

/** The folder of an output file must exist and be writable: checked before reading anything. */
function checkOutput(path: string, flag: string): void {
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`${flag} ${path}: folder ${dir} does not exist`);
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    throw new UserError(`${flag} ${path}: folder ${dir} is not writable`);
  }
  if (existsSync(path) && statSync(path).isDirectory()) throw new UserError(`${flag} ${path}: is a folder`);
}

/** An output file written to a temporary name and renamed into place only when complete. */
class AtomicOutput {
  readonly tmp: string;
  private readonly stream: WriteStream | NodeJS.WriteStream;
  written = 0;
  constructor(readonly path: string) {
    this.tmp = path === "-" ? "" : `${resolve(path)}.tmp-${process.pid}`;
    this.stream = path === "-" ? process.stdout : createWriteStream(this.tmp, { encoding: "utf8" });
  }
  async write(record: unknown): Promise<void> {
    await this.writeLine(JSON.stringify(record));
  }
  /** One line already serialised (without its newline). */
  async writeLine(line: string): Promise<void> {
    if (!this.stream.write(line + "\n")) await once(this.stream, "drain");
    this.written++;
  }
  /** Ends the temporary file (complete on disk under `tmp`) without renaming it. */
  async finish(): Promise<void> {
    if (this.path === "-") return;
    const file = this.stream as WriteStream;
    await new Promise<void>((res, rej) => file.end((err?: Error | null) => (err ? rej(err) : res())));
  }
  async commit(): Promise<void> {
    if (this.path === "-") return;
    await this.finish();
    renameSync(this.tmp, this.path);
  }
  abort(): void {
    if (this.path === "-") return;
    (this.stream as WriteStream).destroy();
    rmSync(this.tmp, { force: true });
  }
}

const FORMAT_NAMES = exportFormats().map((f) => f.name);

/** The formats that read rl.jsonl (src/commands/export_rl.ts); listed here so --help needs no import. */
const RL_FORMAT_NAMES = ["rl", "prime", "skyrl", "skyrl-steps", "verifiers"];

function rlFormatOf(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = a === "--format" ? argv[i + 1] : a.startsWith("--format=") ? a.slice("--format=".length) : undefined;
    if (value !== undefined) return RL_FORMAT_NAMES.includes(value) ? value : undefined;
  }
  return undefined;
}

export const command: Command = {
  summary: `convert trajectories to ${FORMAT_NAMES.slice(0, -1).join(", ")} or ${FORMAT_NAMES.at(-1)} fine-tuning JSONL, with quality filters`,
  help: HELP,
  async run(argv) {
    // The RL formats read rl.jsonl, not trajectories.jsonl: their own module and flags.
    const rlFormat = rlFormatOf(argv);
    if (rlFormat) return (await import("./export_rl.js")).exportRl(argv);
    const { values, positionals } = parseCommandArgs(argv, {
      format: { type: "string" },
      out: { type: "string" },
      "only-completed": { type: "boolean" },
      "only-passed": { type: "boolean" },
      "min-score": { type: "string" },
      "best-of-epochs": { type: "boolean" },
      dedup: { type: "boolean" },
      "min-turns": { type: "string" },
      "max-turns": { type: "string" },
      "drop-tool-errors": { type: "boolean" },
      "require-reasoning": { type: "boolean" },
      "require-verify-pass": { type: "boolean" },
      "min-verify-pass": { type: "boolean" },
      split: { type: "string" },
      seed: { type: "string" },
      metadata: { type: "boolean" },
      reasoning: { type: "string" },
      "reasoning-details": { type: "boolean" },
      "split-files": { type: "string" },
    });
    if (positionals.length !== 1) throw new UserError("expected exactly one RUN_DIR_OR_FILE (see --help)");
    const format = values.format ?? "sharegpt";
    const loaded = await loadAnyExportFormat(format);
    const outputSchema = loaded.perTask
      ? format === "groups"
        ? GroupsRecordSchema
        : z.record(z.string(), z.unknown())
      : outputSchemaOf(format);
    const reasoning = values.reasoning ?? "drop";
    if (reasoning !== "drop" && reasoning !== "think")
      throw new UserError(`--reasoning must be drop or think, got '${reasoning}'`);
    if (format === "hermes" && values.metadata) {
      throw new UserError(
        "--metadata: the hermes format has the original's metadata {batch_num, timestamp, model} and nothing else (more keys would stop it loading with the original's files); use --format sharegpt or openai for ours",
      );
    }
    const reasoningDetails = values["reasoning-details"] ?? false;
    if (reasoningDetails && format !== "sharegpt" && format !== "hermes")
      throw new UserError(
        `--reasoning-details is for the sharegpt and hermes formats (openai keeps all reasoning with --reasoning think)`,
      );
    const splitFiles = nonEmptyPath(values["split-files"], "--split-files", "folder");
    nonEmptyPath(values.out, "--out", "file");
    if (splitFiles !== undefined) {
      if (format !== "atif")
        throw new UserError("--split-files is for --format atif (one JSON document per trajectory)");
      if (values.out !== undefined || values.split !== undefined)
        throw new UserError("--split-files writes one file per trajectory: not with --out or --split");
    }
    if (format === "atif" && values.metadata)
      throw new UserError("--metadata: ATIF documents carry the task's facts in their own `extra`");
    const isInt = (n: number) => Number.isInteger(n) && n >= 0;
    const curate: CurateOptions = {
      onlyPassed: values["only-passed"],
      // Score values and the 1/0 of passed/failed are in 0..1: a bound outside keeps everything or nothing.
      minScore: numberFlag(
        values["min-score"],
        "--min-score",
        (n) => n >= 0 && n <= 1,
        "a number from 0 to 1 (score values are in 0..1)",
      ),
      minTurns: numberFlag(values["min-turns"], "--min-turns", isInt, "a whole number ≥ 0"),
      maxTurns: numberFlag(values["max-turns"], "--max-turns", isInt, "a whole number ≥ 0"),
      dropToolErrors: values["drop-tool-errors"],
      bestOfEpochs: values["best-of-epochs"],
      dedup: values.dedup,
    };
    const split = numberFlag(
      values.split,
      "--split",
      (n) => n > 0 && n < 1,
      "a fraction between 0 and 1 (the validation share)",
    );
    const seed = numberFlag(values.seed, "--seed", Number.isInteger, "a whole number") ?? 0;
    if (values.seed !== undefined && split === undefined) throw new UserError("--seed is for --split (see --help)");

    const target = resolve(positionals[0]!);
    if (!existsSync(target)) throw new UserError(`no such file or folder: ${positionals[0]}`);
    const input = statSync(target).isDirectory() ? join(target, "trajectories.jsonl") : target;
    // A run folder's files must be files; a file named directly may be a pipe (`export <(…)`), not a device.
    if (input !== target) checkRunFiles([input, join(target, RUN_FILES.rl)]);
    else if (!statSync(target).isFIFO()) checkRunFiles([target]);
    if (!existsSync(input)) throw new UserError(`no trajectories.jsonl in ${positionals[0]}`);
    // A pipe gives its lines once: the second pass would find it empty (or wait for a writer that is gone).
    if (curate.bestOfEpochs && !statSync(input).isFile())
      throw new UserError(
        `--best-of-epochs reads the input twice (to choose, then to write), and ${positionals[0]} is a pipe that gives its lines once: save it to a file first`,
      );
    const outPath = values.out ?? join(dirname(input), `export.${format}.jsonl`);
    // The run's name (the ATIF session_id): the run folder's name, or the file's folder when a file is given.
    const opts: ExportOptions = {
      withMetadata: values.metadata ?? false,
      reasoning,
      reasoningDetails,
      runName: basename(dirname(input)),
    };
    if (format === "atif") {
      // The engine's token ids of a run made with --rl-capture, as atif.jsonl carries them.
      const rl = RlTokenIndex.open(join(dirname(input), RUN_FILES.rl));
      if (rl) opts.tokensFor = (taskId, epoch) => rl.tokensFor(taskId, epoch);
    }
    const toStdout = outPath === "-";
    if (split !== undefined && toStdout)
      throw new UserError("--split writes two files: give --out NAME.jsonl, not '-'");
    const outPaths =
      splitFiles !== undefined
        ? []
        : split === undefined
          ? [outPath]
          : [0, 1].map((i) => outPath.replace(/(\.jsonl)?$/, i === 0 ? ".train.jsonl" : ".val.jsonl"));
    for (const p of outPaths) {
      if (p === "-") continue;
      if (resolve(p) === input) throw new UserError("--out must differ from the input file");
      checkOutput(resolve(p), "--out");
    }

    const onlyCompleted = values["only-completed"] ?? false;
    const requireReasoning = values["require-reasoning"] ?? false;
    const requireVerify = (values["require-verify-pass"] ?? false) || (values["min-verify-pass"] ?? false);
    const name = basename(input);
    const counts = { read: 0, bad: 0, repeated: 0, surrogates: 0, filtered: new Map<string, number>() };
    const drop = (why: string) => counts.filtered.set(why, (counts.filtered.get(why) ?? 0) + 1);

    /**
     * Streams the valid entries of the input; bad lines are reported once (first pass only). A line of a task and
     * epoch already read (a hand-merged file, a line written again) is left out: the first stands, as in the run's
     * statistics.json.
     */
    const lineOf = new WeakMap<TrajectoryEntry, number>();
    const reportBad = (line: number | undefined, problem: string) => {
      counts.bad++;
      if (counts.bad <= MAX_REPORTED_BAD_LINES)
        process.stderr.write(`${input}:${line ?? "?"}: skipped bad line: ${problem}\n`);
    };
    async function* entries(report: boolean): AsyncGenerator<TrajectoryEntry> {
      const firstLines = new Set<string>();
      for await (const l of readJsonl<unknown>(input)) {
        let entry: TrajectoryEntry | undefined;
        let problem = l.error;
        if (!problem) {
          const parsed = ReadableTrajectorySchema.safeParse(l.value);
          if (!parsed.success) problem = describeIssues(parsed.error);
          else if ((format === "openai" || format === "atif" || loaded.perTask) && !parsed.data.messages)
            problem = `has no \`messages\` (needed for the ${format} format)`;
          else if (loaded.perTask && typeof parsed.data.task_id !== "string")
            problem = `has no \`task_id\` (needed for the ${format} format: a line per task)`;
          else entry = parsed.data as unknown as TrajectoryEntry;
        }
        if (!entry) {
          if (report) reportBad(l.line, problem!);
          continue;
        }
        // The original's own lines have no task_id: one of them repeats another only when it is the same line.
        const key =
          typeof entry.task_id === "string"
            ? recordKey(entry.task_id, entry.epoch)
            : `${taskKeyOf(entry)}\u0000${createHash("sha256").update(JSON.stringify(entry)).digest("hex")}`;
        if (firstLines.has(key)) {
          if (report) counts.repeated++;
          continue;
        }
        firstLines.add(key);
        lineOf.set(entry, l.line);
        yield entry;
      }
    }

    const keep = (entry: TrajectoryEntry): boolean => {
      // A line cut before the model's first turn has nothing to train on (OpenAI refuses such an example).
      if (TRAINING_FORMATS.has(format) && turnsOf(entry) === 0) return (drop("without a model turn"), false);
      if (onlyCompleted && entry.completed !== true) return (drop("not completed"), false);
      if (requireReasoning && !hasReasoning(entry, reasoningDetails)) return (drop("without reasoning"), false);
      if (requireVerify && entry.verify?.passed !== true) return (drop("without a passing verify"), false);
      const why = lineFilterReason(entry, curate);
      if (why) return (drop(why), false);
      return true;
    };

    // --best-of-epochs needs every epoch of a task before choosing: a first pass picks, a second writes.
    let picker: BestEpochPicker | undefined;
    if (curate.bestOfEpochs) {
      picker = new BestEpochPicker();
      for await (const entry of entries(true)) if (keep(entry)) picker.offer(entry);
      counts.filtered.clear();
    }

    const outputs = outPaths.map((p) => new AtomicOutput(p));
    const files = splitFiles === undefined ? undefined : new JsonFilesOutput(resolve(splitFiles));
    // A split needs every exported task id before it can choose: lines go to one staging file first (with
    // their task ids in memory), then to their side once the validation tasks are known.
    const staging = split === undefined ? undefined : new AtomicOutput(`${resolve(outPaths[1]!)}.staging`);
    const stagedTasks: string[] = [];
    const seen = new Set<string>();
    const byTask = new Map<string, TrajectoryEntry[]>();
    const emit = async (taskId: string, converted: unknown, epoch?: number) => {
      const record = wellFormed(converted);
      if (record !== converted) counts.surrogates++;
      const checked = outputSchema.safeParse(record);
      if (!checked.success)
        throw new Error(
          `export ${format}: line for task ${taskId} does not match the format's schema: ${describeIssues(checked.error)}`,
        );
      if (files) files.write(taskId, epoch, record);
      else if (staging) {
        stagedTasks.push(taskId);
        await staging.write(record);
      } else await outputs[0]!.write(record);
    };
    let splitRefused: string | undefined;
    let splitTasks: number[] = [];
    try {
      for await (const entry of entries(!picker)) {
        counts.read++;
        if (!keep(entry)) continue;
        if (picker && !picker.isBest(entry)) {
          drop("not the best epoch");
          continue;
        }
        if (curate.dedup) {
          const key = dedupKey(entry);
          if (seen.has(key)) {
            drop("duplicate");
            continue;
          }
          seen.add(key);
        }
        if (loaded.perTask) {
          // A task's line needs all of its epochs: held per task until the end (memory grows with the kept lines).
          byTask.set(entry.task_id, [...(byTask.get(entry.task_id) ?? []), entry]);
          continue;
        }
        let record: Record<string, unknown>;
        try {
          record = loaded.convert(entry, opts);
        } catch (err) {
          // A field no run writes in that shape (a hand-edited line, another tool's): this line, not the export.
          if (err instanceof UserError) throw err;
          counts.read--;
          reportBad(lineOf.get(entry), `cannot be converted to ${format}: ${(err as Error).message}`);
          continue;
        }
        await emit(taskKeyOf(entry), record, entry.epoch);
      }
      if (loaded.perTask) {
        for (const [taskId, list] of byTask) {
          const record = loaded.convert(taskId, list);
          if (record) await emit(taskId, record);
          else drop("no scored epoch");
        }
      }
      if (staging && split !== undefined) {
        await staging.finish();
        const exportedTasks = new Set(stagedTasks);
        splitRefused = stagedTasks.length ? splitProblem(exportedTasks.size, split) : undefined;
        if (stagedTasks.length && !splitRefused) {
          const validation = validationTasks(exportedTasks, split, seed);
          let i = 0;
          for await (const line of createInterface({
            input: createReadStream(staging.tmp, { encoding: "utf8" }),
            crlfDelay: Infinity,
          })) {
            await outputs[validation.has(stagedTasks[i++]!) ? 1 : 0]!.writeLine(line);
          }
          splitTasks = [exportedTasks.size - validation.size, validation.size];
        }
        staging.abort();
      }
      const written = outputs.reduce((n, o) => n + o.written, files?.written ?? 0);
      if (written === 0) for (const o of outputs) o.abort();
      else for (const o of outputs) await o.commit();
    } catch (err) {
      for (const o of outputs) o.abort();
      staging?.abort();
      throw err;
    }

    if (counts.bad > MAX_REPORTED_BAD_LINES)
      process.stderr.write(`… and ${counts.bad - MAX_REPORTED_BAD_LINES} more bad lines\n`);
    const written = outputs.reduce((n, o) => n + o.written, files?.written ?? 0);
    const kept = loaded.perTask
      ? `${written} task lines of ${counts.read} trajectories`
      : `${written} of ${counts.read} trajectories`;
    const details: string[] = [];
    if (counts.filtered.size)
      details.push(`filtered: ${[...counts.filtered].map(([why, n]) => `${n} ${why}`).join(", ")}`);
    if (counts.surrogates)
      details.push(
        `${counts.surrogates} line${counts.surrogates === 1 ? "" : "s"} with lone UTF-16 surrogates (replaced by U+FFFD)`,
      );
    if (counts.bad) details.push(`${counts.bad} bad line${counts.bad === 1 ? "" : "s"} skipped`);
    if (counts.repeated)
      details.push(
        `${counts.repeated} repeat${counts.repeated === 1 ? "" : "s"} of a task and epoch already read (the first stands)`,
      );
    if (splitRefused) {
      process.stderr.write(`${[`export: nothing written: ${splitRefused}`, ...details].join("; ")}\n`);
      return 1;
    }
    if (written === 0) {
      const why =
        counts.read === 0 ? (counts.bad ? "no valid line" : "the input has no lines") : "no line passed the filters";
      process.stderr.write(
        `${[`export: nothing written: ${why} (0 of ${counts.read} trajectories from ${name})`, ...details].join("; ")}\n`,
      );
      return 1;
    }
    const lines = (n: number) => `${n} line${n === 1 ? "" : "s"}`;
    const where = files
      ? `${files.dir} (one file per trajectory)`
      : toStdout
        ? "stdout"
        : outputs.length === 1
          ? outputs[0]!.path
          : outputs
              .map((o, i) => `${o.path} (${lines(o.written)}, ${splitTasks[i]} task${splitTasks[i] === 1 ? "" : "s"})`)
              .join(" and ");
    process.stderr.write(`${[`exported ${kept} from ${name} as ${format} to ${where}`, ...details].join("; ")}\n`);
    return 0;
  },
};

/** The formats written for fine-tuning on the model's turns: a line without one is left out. */
const TRAINING_FORMATS = new Set(["sharegpt", "hermes", "openai"]);

const TurnSchema = z.object({ from: z.enum(["system", "human", "gpt", "tool"]), value: z.string() });
const MessageSchema = z.looseObject({ role: z.enum(["system", "user", "assistant", "tool"]) });
const OUTPUT_SCHEMAS: Record<string, z.ZodType> = {
  sharegpt: z.looseObject({ conversations: z.array(TurnSchema).min(1) }),
  // Exactly the original's keys: a stray key would break loading with the original's own files.
  hermes: z.strictObject({
    prompt_index: z.number().int(),
    conversations: z.array(TurnSchema).min(1),
    metadata: z.strictObject({ batch_num: z.number().int(), timestamp: z.string(), model: z.string() }),
    completed: z.boolean(),
    partial: z.boolean(),
    api_calls: z.number().int(),
    toolsets_used: z.array(z.string()),
    tool_stats: z.record(
      z.string(),
      z.strictObject({ count: z.number().int(), success: z.number().int(), failure: z.number().int() }),
    ),
    tool_error_counts: z.record(z.string(), z.number().int()),
  }),
  openai: z.looseObject({ messages: z.array(MessageSchema).min(1) }),
  atif: AtifTrajectorySchema,
};

const GroupsRecordSchema = z.object({
  task_id: z.string(),
  prompt: z.string(),
  mean_reward: z.number(),
  samples: z
    .array(
      z.object({
        epoch: z.number().int(),
        messages: z.array(MessageSchema),
        reward: z.number(),
        advantage: z.number(),
      }),
    )
    .min(1),
});

/** Formats a plugin registers have no schema here: their lines are checked for being JSON objects only. */
function outputSchemaOf(format: string): z.ZodType {
  return OUTPUT_SCHEMAS[format] ?? z.record(z.string(), z.unknown());
}
