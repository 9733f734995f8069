/**
 * `hermes-batch export --format rl|prime|skyrl|skyrl-steps|verifiers`: a run's rl.jsonl (`--rl-capture`) with
 * group statistics and advantages filled in, as is or in the form a trainer reads. The last line of a task
 * and epoch wins (a rerun supersedes an earlier attempt); excluded lines are left out unless asked for.
 */
import { existsSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type * as z from "zod";
import { UserError } from "../core/errors.js";
import { RlLineSchema, type RlLine } from "../core/rl_record.js";
import type { ChatMessage } from "../core/chat.js";
import { applyGroupAdvantages, type AdvantageMode } from "../formats/rl/groups.js";
import { rlLineInconsistency } from "../formats/rl/branches.js";
import {
  addSkySteps,
  addSkyTrajectory,
  emptySkyOutput,
  toPrimeSamples,
  toVerifiersRollout,
  type TrajectoryView,
} from "../formats/rl/adapters.js";
import { PrimeTrainingSampleSchema, SkyGeneratorOutputSchema, VfGenerateOutputsSchema } from "../formats/rl/schemas.js";
import { readJsonl } from "../store/jsonl_file.js";
import { ReadableTrajectorySchema } from "../core/records.js";
import { wellFormed } from "../formats/well_formed.js";
import { RUN_FILES, recordKey } from "../store/checkpoint.js";
import { parseCommandArgs } from "./args.js";

export const RL_FORMATS = ["rl", "prime", "skyrl", "skyrl-steps", "verifiers"] as const;
type RlFormat = (typeof RL_FORMATS)[number];

const MAX_REPORTED_BAD_LINES = 20;

interface Loaded {
  lines: RlLine[];
  bad: number;
  superseded: number;
}

async function loadRlLines(input: string): Promise<Loaded> {
  const byKey = new Map<string, RlLine>();
  let bad = 0;
  let superseded = 0;
  for await (const l of readJsonl<unknown>(input)) {
    const parsed = l.error === undefined ? RlLineSchema().safeParse(l.value) : undefined;
    const inconsistent = parsed?.success ? rlLineInconsistency(parsed.data) : undefined;
    if (!parsed?.success || inconsistent) {
      bad++;
      const why =
        l.error ??
        inconsistent ??
        parsed!
          .error!.issues.slice(0, 2)
          .map((i) => `${i.path.join(".")}: ${i.message}`)
          .join("; ");
      if (bad <= MAX_REPORTED_BAD_LINES) process.stderr.write(`${input}:${l.line}: skipped bad line: ${why}\n`);
      continue;
    }
    const key = recordKey(parsed.data.task_id, parsed.data.epoch);
    if (byKey.has(key)) {
      superseded++;
      byKey.delete(key); // re-inserted last: the file's order of the surviving lines
    }
    byKey.set(key, parsed.data);
  }
  return { lines: [...byKey.values()], bad, superseded };
}

/**
 * The results the run beside rl.jsonl holds (trajectories, dropped and failed lines), by task and epoch; undefined
 * when it has none of those files (an rl.jsonl copied on its own). An rl line is written before its result and
 * stays where it is when the run later sets the result aside (superseded.jsonl: a task gone from the dataset, an
 * epoch beyond --epochs) or a crash cuts the result's own line: such a line is no result of the run.
 */
async function resultKeys(runDir: string): Promise<Set<string> | undefined> {
  const files = [RUN_FILES.trajectories, RUN_FILES.dropped, RUN_FILES.failed]
    .map((f) => join(runDir, f))
    .filter((f) => existsSync(f));
  if (!files.length) return undefined;
  const keys = new Set<string>();
  for (const file of files) {
    for await (const l of readJsonl<{ task_id?: unknown; epoch?: unknown }>(file)) {
      const v = l.value;
      if (v && typeof v.task_id === "string")
        keys.add(recordKey(v.task_id, typeof v.epoch === "number" ? v.epoch : undefined));
    }
  }
  return keys;
}

interface Grade {
  value: number | null;
  passed: boolean | null;
  scorers: { name: string; value: number | null; passed: boolean | null }[];
}

/**
 * Each result's grade as trajectories.jsonl holds it now (the first line of a task and epoch, as every report takes
 * it): `hermes-batch score` grades a run again by rewriting that file, while rl.jsonl keeps the rewards its lines
 * were written with.
 */
async function currentGrades(runDir: string): Promise<Map<string, Grade | undefined>> {
  const out = new Map<string, Grade | undefined>();
  const path = join(runDir, RUN_FILES.trajectories);
  if (!existsSync(path)) return out;
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const bool = (v: unknown) => (typeof v === "boolean" ? v : null);
  for await (const l of readJsonl<{ task_id?: unknown; epoch?: unknown; score?: unknown }>(path)) {
    const v = l.value;
    if (!v || typeof v.task_id !== "string") continue;
    const key = recordKey(v.task_id, typeof v.epoch === "number" ? v.epoch : undefined);
    if (out.has(key)) continue;
    const score = v.score as { value?: unknown; passed?: unknown; scorers?: unknown } | undefined;
    out.set(
      key,
      score && typeof score === "object"
        ? {
            value: num(score.value),
            passed: bool(score.passed),
            scorers: (Array.isArray(score.scorers) ? score.scorers : [])
              .filter((x): x is { name: string; value?: unknown; passed?: unknown } => typeof x?.name === "string")
              .map((x) => ({ name: x.name, value: num(x.value), passed: bool(x.passed) })),
          }
        : undefined,
    );
  }
  return out;
}

/**
 * Brings an rl line's reward, rewards and `passed` to its result's current grade, and the verdict where it rests
 * on the reward alone (`unscored` ⇄ trained). A context-window overflow keeps its reward 0. True when it changed.
 */
function regrade(line: RlLine, grade: Grade | undefined): boolean {
  if (line.outcome === "context_length") return false;
  const reward = grade?.value ?? null;
  const passed = grade?.passed ?? null;
  if (reward === line.reward && passed === line.passed) return false;
  line.reward = reward;
  line.passed = passed;
  line.rewards = { reward };
  for (const s of grade?.scorers ?? []) line.rewards[s.name] = s.value ?? (s.passed === null ? null : s.passed ? 1 : 0);
  if (reward !== null && line.train === "excluded" && line.train_cause === "unscored") {
    line.train = "full";
    line.train_cause = line.stop_reason;
  } else if (reward === null && line.train === "full" && line.train_cause === line.stop_reason) {
    line.train = "excluded";
    line.train_cause = "unscored";
  }
  return true;
}

/** The saved conversation of each result, by task and epoch (verifiers needs the messages). */
async function loadTrajectories(path: string): Promise<Map<string, TrajectoryView>> {
  const out = new Map<string, TrajectoryView>();
  if (!existsSync(path))
    throw new UserError(
      `--format verifiers needs the run's ${RUN_FILES.trajectories} beside rl.jsonl: ${path} is missing`,
    );
  for await (const l of readJsonl<{ task_id?: unknown; epoch?: unknown; prompt_index?: unknown; messages?: unknown }>(
    path,
  )) {
    const v = l.value;
    if (!v || typeof v.task_id !== "string" || typeof v.prompt_index !== "number" || !Array.isArray(v.messages))
      continue;
    // Messages in shapes no run writes (a hand-edited line): reported, and the rollout left out.
    const parsed = ReadableTrajectorySchema.safeParse(v);
    if (!parsed.success) {
      const why = parsed.error.issues
        .slice(0, 2)
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ");
      process.stderr.write(`${path}:${l.line}: skipped bad line: ${why}\n`);
      continue;
    }
    out.set(recordKey(v.task_id, typeof v.epoch === "number" ? v.epoch : undefined), {
      prompt_index: v.prompt_index,
      messages: v.messages as ChatMessage[],
    });
  }
  return out;
}

function checked<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success)
    throw new Error(
      `export: ${what} does not match its schema: ${r.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
    );
  return r.data;
}

/** The output text of one format, and how many lines it could not use. */
async function render(
  format: RlFormat,
  lines: RlLine[],
  input: string,
): Promise<{ text: string; records: number; skipped: number }> {
  switch (format) {
    case "rl":
      return {
        text: lines
          .map((l) => JSON.stringify(checked(RlLineSchema(), l, `line ${l.task_id}#${l.epoch}`)) + "\n")
          .join(""),
        records: lines.length,
        skipped: 0,
      };
    case "prime": {
      const samples = lines.flatMap((l) =>
        toPrimeSamples(l).map((s) => checked(PrimeTrainingSampleSchema, s, `sample of ${l.task_id}#${l.epoch}`)),
      );
      return { text: samples.map((s) => JSON.stringify(s) + "\n").join(""), records: samples.length, skipped: 0 };
    }
    case "skyrl":
    case "skyrl-steps": {
      const out = emptySkyOutput(format === "skyrl-steps");
      let skipped = 0;
      for (const l of lines) {
        if (format === "skyrl-steps") addSkySteps(out, l);
        else if (!addSkyTrajectory(out, l)) skipped++;
      }
      return {
        text: JSON.stringify(checked(SkyGeneratorOutputSchema, out, "GeneratorOutput")) + "\n",
        records: out.response_ids.length,
        skipped,
      };
    }
    case "verifiers": {
      const views = await loadTrajectories(join(dirname(input), RUN_FILES.trajectories));
      const outputs = [];
      const used: RlLine[] = [];
      let skipped = 0;
      for (const l of lines) {
        const view = views.get(recordKey(l.task_id, l.epoch));
        if (view) {
          outputs.push(toVerifiersRollout(l, view));
          used.push(l);
        } else skipped++;
      }
      // The metadata describes the outputs written, not the lines left out. The messages are the model's text: a
      // lone surrogate in it would be unreadable as UTF-8 (wellFormed).
      const doc = wellFormed({ outputs, metadata: verifiersMetadata(used, outputs.length) });
      return {
        text: JSON.stringify(checked(VfGenerateOutputsSchema, doc, "GenerateOutputs")) + "\n",
        records: outputs.length,
        skipped,
      };
    }
  }
}

function verifiersMetadata(lines: RlLine[], n: number) {
  const rewards = lines.map((l) => l.reward ?? 0);
  const groups = new Set(lines.map((l) => l.group_id));
  return {
    env_id: lines[0]?.env_name ?? "",
    env_args: {},
    model: lines[0]?.model ?? "",
    base_url: "",
    num_examples: groups.size,
    rollouts_per_example: groups.size ? Math.round(n / groups.size) : 0,
    sampling_args: { ...(lines[0]?.turns[0]?.sampling ?? {}) },
    date: new Date().toISOString(),
    time: 0,
    avg_reward: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : 0,
    avg_metrics: {},
    avg_error: 0,
    pass_at_k: {},
    pass_all_k: {},
    pass_threshold: 0.5,
    usage: null,
    version_info: { vf_version: "hermes-batch export", vf_commit: null, env_version: null, env_commit: null },
    state_columns: [],
    path_to_save: "",
    tools: null,
  };
}

export async function exportRl(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    format: { type: "string" },
    out: { type: "string" },
    advantage: { type: "string" },
    "include-excluded": { type: "boolean" },
    "drop-zero-variance": { type: "boolean" },
  });
  const format = values.format as RlFormat;
  if (!RL_FORMATS.includes(format))
    throw new UserError(`--format must be one of ${RL_FORMATS.join(", ")} here, got '${values.format}'`);
  const mode = (values.advantage ?? "grpo") as AdvantageMode;
  if (mode !== "grpo" && mode !== "mean")
    throw new UserError(`--advantage must be grpo or mean, got '${values.advantage}'`);
  if (values["include-excluded"] && format !== "rl")
    throw new UserError("--include-excluded is for --format rl (trainers cannot use excluded lines)");
  if (positionals.length !== 1) throw new UserError("expected exactly one RUN_DIR_OR_FILE (see --help)");
  const target = resolve(positionals[0]!);
  if (!existsSync(target)) throw new UserError(`no such file or folder: ${positionals[0]}`);
  const input = statSync(target).isDirectory() ? join(target, RUN_FILES.rl) : target;
  if (!existsSync(input)) throw new UserError(`no ${RUN_FILES.rl} in ${positionals[0]} (run with --rl-capture)`);

  const loaded = await loadRlLines(input);
  // Before the groups: a result the run no longer holds counts in no group's statistics either.
  const results = await resultKeys(dirname(input));
  const read = loaded.lines.length;
  let withoutResult = 0;
  if (results) {
    loaded.lines = loaded.lines.filter((l) => results.has(recordKey(l.task_id, l.epoch)) || (withoutResult++, false));
  }
  // A run graded again (`score`) since: its current grades, before the groups' statistics are made from them.
  const grades = await currentGrades(dirname(input));
  let regraded = 0;
  for (const l of loaded.lines) {
    const key = recordKey(l.task_id, l.epoch);
    if (grades.has(key) && regrade(l, grades.get(key))) regraded++;
  }
  applyGroupAdvantages(loaded.lines, mode);
  const counts = { excluded: 0, noTokens: 0, zeroVariance: 0 };
  const kept = loaded.lines.filter((l) => {
    if (l.train === "excluded" && !values["include-excluded"]) return (counts.excluded++, false);
    if (format !== "rl" && l.branches.length === 0) return (counts.noTokens++, false);
    if (values["drop-zero-variance"] && l.group?.zero_variance) return (counts.zeroVariance++, false);
    return true;
  });
  const { text, records, skipped } = await render(format, kept, input);
  const ext = format === "rl" || format === "prime" ? "jsonl" : "json";
  const out = values.out ?? join(dirname(input), `export.${format}.${ext}`);
  const notes = [
    `${read} result(s) read`,
    loaded.superseded ? `${loaded.superseded} superseded by a later attempt` : "",
    loaded.bad ? `${loaded.bad} bad line(s)` : "",
    regraded ? `${regraded} with the grade \`score\` gave them since the run` : "",
    withoutResult
      ? `${withoutResult} without a result in the run (set aside to superseded.jsonl, or cut by a crash), left out`
      : "",
    counts.excluded ? `${counts.excluded} excluded (train verdict)` : "",
    counts.noTokens ? `${counts.noTokens} without usable tokens` : "",
    counts.zeroVariance ? `${counts.zeroVariance} in zero-variance groups` : "",
    skipped
      ? `${skipped} skipped (${format === "skyrl" ? "several branches: use skyrl-steps" : "no trajectory line"})`
      : "",
  ].filter(Boolean);
  if (records === 0) {
    process.stderr.write(`export ${format}: nothing to write (${notes.join(", ")})\n`);
    return 1;
  }
  if (out === "-") process.stdout.write(text);
  else {
    const tmp = `${resolve(out)}.tmp-${process.pid}`;
    writeFileSync(tmp, text);
    renameSync(tmp, resolve(out));
  }
  process.stderr.write(`export ${format}: ${records} record(s) to ${out} (${notes.join(", ")})\n`);
  return 0;
}
