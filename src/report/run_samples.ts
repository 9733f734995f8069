/**
 * The scored samples of a run folder: one per (task, epoch), from trajectories.jsonl, dropped.jsonl
 * and the latest failure of tasks that never finished. A failed, dropped or unjudged sample is unscored
 * (passed: null), never a 0.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import * as z from "zod";
import { UserError } from "../core/errors.js";
import { checkRunFiles } from "../core/run_files.js";
import { RUN_FILES } from "../store/checkpoint.js";
import { readJsonl } from "../store/jsonl_file.js";

const TokensSchema = z.object({ total_tokens: z.number() }).partial().passthrough().optional();

const LineSchema = z
  .object({
    task_id: z.string(),
    epoch: z.number().int().nonnegative().optional(),
    outcome: z.string().optional(),
    score: z
      .object({
        passed: z.boolean().nullable(),
        value: z.number().nullable().optional(),
        scorers: z
          .array(
            z
              .object({
                name: z.string(),
                passed: z.boolean().nullable(),
                reason: z.string().optional(),
                details: z.record(z.string(), z.unknown()).optional(),
              })
              .passthrough(),
          )
          .optional(),
      })
      .passthrough()
      .optional(),
    usage: TokensSchema,
    approval_usage: TokensSchema,
    judge_usage: TokensSchema,
    duration_ms: z.number().optional(),
    cost_usd: z.number().optional(),
    final_response: z.string().nullable().optional(),
    error: z.string().optional(),
    dropped: z.string().optional(),
    verify: z.object({ exit_code: z.number(), output: z.string().optional() }).passthrough().optional(),
    messages: z.array(z.object({ role: z.string(), content: z.unknown() }).passthrough()).optional(),
    metadata: z.unknown().optional(),
    judge: z.unknown().optional(),
  })
  .passthrough();

export interface RunSample {
  key: string;
  taskId: string;
  epoch: number;
  /** true/false when scored; null when unscored (failed, dropped, no scorer, judge failed). */
  passed: boolean | null;
  /** Why it failed or is unscored: scorer reasons, the failure, the drop reason. */
  reason: string;
  /** Extra text for a report (verify output tail). */
  details?: string;
  prompt?: string;
  /** What the row was graded against (`score.criteria`, src/score/criteria.ts); absent in older runs. */
  criteria?: string;
  /** The agent's tokens; the approver's and the judge's are counted apart. */
  tokens: number;
  approverTokens: number;
  judgeTokens: number;
  durationMs: number;
  costUsd?: number;
  outcome: string;
  /** A result whose row names no scorer (a trajectory line without `score`): never a measurement. */
  noScorer?: boolean;
  /** When the run wrote this result (a trajectory line's `metadata.timestamp`): a copied line keeps it. */
  stamp?: string;
  /** The model that judged its rubric (the line's `judge.model`), when one did. */
  judgeModel?: string;
  /** Whether a Harbor reward decided it (a scorer named `harbor`): held to the run's --harbor-pass-threshold. */
  harbor?: boolean;
}

export interface RunSamples {
  dir: string;
  name: string;
  samples: Map<string, RunSample>;
  epochs: number;
  badLines: number;
  /** Epochs the run was started with (run.yaml `epochs`); undefined when run.yaml does not say. */
  plannedEpochs?: number;
  /** The reward a Harbor task needs to pass (run.yaml `harbor_pass_threshold`); undefined when run.yaml does not say. */
  harborThreshold?: number;
  /** Lines of trajectories.jsonl and dropped.jsonl for a (task, epoch) that already had one: the first stands. */
  duplicateLines: number;
  /** (task, epoch) results whose repeated lines disagree with the first (another outcome or verdict). */
  conflicting: number;
}

export function sampleKey(taskId: string, epoch: number): string {
  return `${taskId}#${epoch}`;
}

function firstUserPrompt(messages: { role: string; content: unknown }[] | undefined): string | undefined {
  const m = messages?.find((x) => x.role === "user");
  return typeof m?.content === "string" ? m.content : undefined;
}

function tail(text: string, max = 800): string {
  return text.length > max ? `…${text.slice(-max)}` : text;
}

function toSample(line: z.infer<typeof LineSchema>, source: "trajectory" | "dropped" | "failed"): RunSample {
  const epoch = line.epoch ?? 0;
  const score = line.score;
  let passed: boolean | null = null;
  let reason: string;
  if (source === "failed") reason = `${line.outcome ?? "failed"}: ${line.error ?? "no detail"}`;
  else if (source === "dropped" && typeof score?.passed !== "boolean")
    reason = `dropped: ${line.dropped ?? "filtered"}`;
  else if (!score) reason = "no scorer for this task";
  else {
    // A dropped task's decided score stands: the filters keep a line out of the training data, they do not
    // undo its grade (an empty answer or a made-up tool must not leave a failure out of the pass rate).
    passed = score.passed;
    const reasons = (score.scorers ?? [])
      .filter((s) => s.passed !== true)
      .map((s) => `${s.name}: ${s.reason ?? (s.passed === null ? "undecided" : "failed")}`);
    reason = reasons.join("; ") || (passed ? "passed" : passed === null ? "unscored" : "failed");
    if (source === "dropped") reason = `${reason} (dropped: ${line.dropped ?? "filtered"})`;
  }
  return {
    key: sampleKey(line.task_id, epoch),
    taskId: line.task_id,
    epoch,
    passed,
    reason,
    details: line.verify?.output ? `verify exit ${line.verify.exit_code}: ${tail(line.verify.output)}` : undefined,
    prompt: firstUserPrompt(line.messages),
    criteria: typeof score?.criteria === "string" ? score.criteria : undefined,
    tokens: line.usage?.total_tokens ?? 0,
    approverTokens: line.approval_usage?.total_tokens ?? 0,
    judgeTokens: line.judge_usage?.total_tokens ?? 0,
    durationMs: line.duration_ms ?? 0,
    costUsd: line.cost_usd,
    outcome: line.outcome ?? (source === "trajectory" ? "completed" : source),
    stamp: source === "trajectory" ? timestampOf(line.metadata) : undefined,
    judgeModel: judgeModelOf(line.judge),
    ...((score?.scorers ?? []).some((s) => s.name === "harbor") ? { harbor: true } : {}),
    ...(source === "trajectory" && !score ? { noScorer: true } : {}),
  };
}

const finite = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/**
 * An unscored sample for a result line that names its task (and a valid epoch) but is not in the form a result has;
 * undefined for a line that does not say which result it is.
 */
function unreadableSample(value: unknown, error: z.ZodError): RunSample | undefined {
  const line = value as {
    task_id?: unknown;
    epoch?: unknown;
    usage?: { total_tokens?: unknown };
    approval_usage?: { total_tokens?: unknown };
    judge_usage?: { total_tokens?: unknown };
    duration_ms?: unknown;
  } | null;
  if (typeof line !== "object" || line === null || typeof line.task_id !== "string") return undefined;
  const epoch = line.epoch === undefined ? 0 : line.epoch;
  if (typeof epoch !== "number" || !Number.isSafeInteger(epoch) || epoch < 0) return undefined;
  const issue = error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  return {
    key: sampleKey(line.task_id, epoch),
    taskId: line.task_id,
    epoch,
    passed: null,
    reason: `unreadable line: ${where}${issue?.message ?? "not a result"}`,
    // What the line spent, where it says so in a readable form: the task's tokens and time are still the task's.
    tokens: finite(line.usage?.total_tokens),
    approverTokens: finite(line.approval_usage?.total_tokens),
    judgeTokens: finite(line.judge_usage?.total_tokens),
    durationMs: finite(line.duration_ms),
    outcome: "unreadable line",
  };
}

function timestampOf(metadata: unknown): string | undefined {
  const t = (metadata as { timestamp?: unknown } | null | undefined)?.timestamp;
  return typeof metadata === "object" && typeof t === "string" && t !== "" ? t : undefined;
}

function judgeModelOf(judge: unknown): string | undefined {
  const model = (judge as { model?: unknown } | null | undefined)?.model;
  return typeof judge === "object" && typeof model === "string" && model !== "" ? model : undefined;
}

/** What run.yaml says of the run's epochs (`--epochs`) and Harbor threshold, where it says. */
function runYamlOf(dir: string): { plannedEpochs?: number; harborThreshold?: number } {
  try {
    const config = YAML.parse(readFileSync(join(dir, "run.yaml"), "utf8")) as Record<string, unknown> | null;
    const k = config?.epochs;
    const t = config?.harbor_pass_threshold;
    return {
      ...(typeof k === "number" && Number.isInteger(k) && k >= 1 ? { plannedEpochs: k } : {}),
      ...(typeof t === "number" && Number.isFinite(t) ? { harborThreshold: t } : {}),
    };
  } catch {
    return {};
  }
}

/** Reads a run folder's samples. A missing folder or one without result files is a UserError. */
export async function loadRunSamples(dir: string): Promise<RunSamples> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UserError(`${dir}: no such run folder`);
  const files = [RUN_FILES.trajectories, RUN_FILES.dropped, RUN_FILES.failed] as const;
  // A FIFO would hold the read (and a CI job) forever, a link to /dev/zero fill the memory.
  checkRunFiles([...files, RUN_FILES.config].map((name) => join(dir, name)));
  if (!files.some((f) => existsSync(join(dir, f))))
    throw new UserError(`${dir}: not a run folder (no ${RUN_FILES.trajectories})`);
  const samples = new Map<string, RunSample>();
  const failures = new Map<string, RunSample>();
  // Lines that are JSON and name their task and epoch but not in the form a result has (a hand edit's "passed":
  // "false"): the task is there, unscored, its reason the line; a readable result for the same epoch stands over it.
  const unreadable = new Map<string, RunSample>();
  let badLines = 0;
  let duplicateLines = 0;
  const conflicting = new Set<string>();
  let epochs = 1;
  for (const file of files) {
    const source = file === RUN_FILES.trajectories ? "trajectory" : file === RUN_FILES.dropped ? "dropped" : "failed";
    for await (const { value, error } of readJsonl(join(dir, file))) {
      const parsed = error ? undefined : LineSchema.safeParse(value);
      if (!parsed?.success) {
        badLines++;
        const named = !error && source !== "failed" ? unreadableSample(value, parsed!.error) : undefined;
        if (named && !unreadable.has(named.key)) unreadable.set(named.key, named);
        continue;
      }
      const sample = toSample(parsed.data, source);
      epochs = Math.max(epochs, sample.epoch + 1);
      // Failures are attempts: the latest one stands, and only for tasks that never finished.
      if (source === "failed") {
        failures.set(sample.key, sample);
        continue;
      }
      // A second result for one (task, epoch) (a hand-merged file, a line written again after a crash): the first
      // line stands, as for --resume, merge and statistics.json, never whichever came last; counted, and those
      // that disagree with it named apart, for compare's warning.
      const first = samples.get(sample.key);
      if (!first) {
        samples.set(sample.key, sample);
        continue;
      }
      duplicateLines++;
      if (first.passed !== sample.passed || first.outcome !== sample.outcome) conflicting.add(sample.key);
    }
  }
  // A finished result that cannot be read still ended the task: an earlier failed attempt does not stand over it.
  for (const [key, line] of unreadable) {
    if (samples.has(key)) continue;
    samples.set(key, line);
    epochs = Math.max(epochs, line.epoch + 1);
  }
  for (const [key, failure] of failures) if (!samples.has(key)) samples.set(key, failure);
  return {
    dir,
    name: dir.split(/[\\/]/).filter(Boolean).at(-1) ?? dir,
    samples,
    epochs,
    badLines,
    ...runYamlOf(dir),
    duplicateLines,
    conflicting: conflicting.size,
  };
}
