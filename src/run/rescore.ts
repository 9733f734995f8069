/**
 * Re-scoring a finished run without running its agents again (`hermes-batch score`): every trajectory line's
 * score is recomputed from its saved final answer and the dataset rows' scoring fields, and trajectories.jsonl
 * is replaced in one rename. Until the rename the original file is untouched; after it the new file is whole.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import type { RunConfig } from "../config/run_config.js";
import type { ChatModel, Usage } from "../core/chat.js";
import type { TrajectoryEntry, VerifyResult } from "../core/records.js";
import { readLines, repairTornTail } from "../store/jsonl_file.js";
import { RUN_FILES, recordKey } from "../store/checkpoint.js";
import type { Redactor } from "../store/redact.js";
import type { ScorerResult } from "../score/summary.js";
import type { ScorerOutput } from "../score/scorers.js";
import type { DatasetLine } from "./dataset.js";
import { runVerify, scoreFields, taskCost, taskDirName } from "./task.js";
import { TaskEnvironment } from "../../tools/environments/manager.js";
import { specKey } from "./task_spec.js";
import { taskFoldersDir } from "./task_folders.js";
import { scoringCriteria } from "../score/criteria.js";

/** Environments whose task folder on the host is the task's file system: a kept one can run `verify` again. */
export const VERIFY_RERUN_ENVS: ReadonlySet<string> = new Set(["local", "host"]);

/** The scorers `score` can compute again. */
export const RESCORABLE_SCORERS = ["expected", "rubric", "verify"] as const;
export type RescorableScorer = (typeof RESCORABLE_SCORERS)[number];

export interface RescoreOptions {
  runDir: string;
  /** The run's configuration (run.yaml) with this invocation's judge flags. */
  config: RunConfig;
  /** Dataset rows by task id. */
  rows: Map<string, DatasetLine>;
  /** Where verify_files of a row are, beside the dataset. */
  verifyFilesDir: (row: DatasetLine["row"]) => string | undefined;
  judge?: ChatModel;
  /** Only these scorers are computed again (default all); the others keep the run's result. */
  scorers?: ReadonlySet<RescorableScorer>;
  /** Tasks scored at once (judge calls in flight). */
  concurrency: number;
  signal: AbortSignal;
  redact: Redactor;
  /** Called after each task is scored (progress). */
  onTask?: () => void;
}

export interface RescoreSummary {
  /** Trajectory lines whose score was recomputed. */
  rescored: number;
  passToFail: string[];
  failToPass: string[];
  /** Tasks the dataset gives a scorer that are unscored now, with the reason. */
  unscored: { key: string; reason: string }[];
  /** Lines whose row names no scorer (any earlier score removed). */
  noScorer: number;
  /** verify results kept from the run because its task folder was not kept (or its environment cannot rerun it). */
  verifyKept: number;
  verifyRerun: number;
  /** Tokens of the judge calls this re-score made. */
  judgeUsage: Usage;
  passed: number;
  scored: number;
  /** Unparsable lines copied unchanged. */
  badLines: number;
}

export class RescoreInterrupted extends Error {
  override name = "RescoreInterrupted";
}

/** The prompt the agent was given: the first user turn of the saved conversation, else the row's. */
function promptOf(entry: TrajectoryEntry, row: DatasetLine["row"]): string {
  const first = (entry.messages as { role?: string; content?: unknown }[] | undefined)?.find((m) => m.role === "user");
  return typeof first?.content === "string" ? first.content : row.prompt;
}

/**
 * The verify result to score with: run again in the kept task folder when the run kept it and its environment
 * holds the task's files there; otherwise the run's own result when the row's command is the one that ran.
 */
async function verifyFor(
  entry: TrajectoryEntry,
  row: DatasetLine["row"],
  o: RescoreOptions,
): Promise<{ result?: VerifyResult; undecided?: ScorerResult; rerun: boolean }> {
  const command = row.verify!;
  const folder = join(
    taskFoldersDir(o.config.output_dir, o.runDir),
    taskDirName(specKey({ id: entry.task_id, epoch: entry.epoch })),
  );
  if (VERIFY_RERUN_ENVS.has(o.config.env) && existsSync(folder)) {
    const env = new TaskEnvironment(
      o.config.env,
      {
        runName: o.config.run_name ?? basename(o.runDir),
        taskId: specKey({ id: entry.task_id, epoch: entry.epoch }),
        hostTaskDir: folder,
        cwd: row.cwd,
        network: row.network ?? o.config.network,
        taskTimeoutSec: o.config.verify_timeout,
        signal: o.signal,
      },
      {
        removeTaskDirOnCleanup: false,
        passEnv: o.config.pass_env,
        sandboxRo: o.config.sandbox_ro,
        pidsLimit: o.config.pids_limit,
        network: o.config.network,
      },
    );
    try {
      const spec = {
        verify: command,
        ...(row.verify_files !== undefined ? { verifyFiles: o.verifyFilesDir(row) } : {}),
      };
      return {
        result: await runVerify(spec, env, { timeoutSec: o.config.verify_timeout, isolated: false }, o.signal),
        rerun: true,
      };
    } finally {
      await env.cleanup().catch(() => undefined);
    }
  }
  const why = VERIFY_RERUN_ENVS.has(o.config.env)
    ? "its task folder was not kept (run with --keep-workspaces to re-score verify)"
    : `--env ${o.config.env} does not keep a task's files in its task folder`;
  // The verify scorer is a function of the recorded result alone: scoring it again gives the run's verdict.
  if (entry.verify && entry.verify.command === command) return { result: entry.verify, rerun: false };
  return {
    undecided: {
      name: "verify",
      passed: null,
      value: null,
      reason: `verify not run again: ${why}${entry.verify ? "; the row's command differs from the one the run ran" : ""}`,
    },
    rerun: false,
  };
}

/** One line's new scoring fields: score, judge, judge_usage (and cost_usd with prices). */
async function rescoreEntry(
  entry: TrajectoryEntry,
  row: DatasetLine["row"],
  o: RescoreOptions,
): Promise<{ entry: TrajectoryEntry; verifyKept: boolean; verifyRerun: boolean; judgeUsage?: Usage }> {
  const { score: _s, judge: _j, judge_usage: _u, ...rest } = entry;
  const redo = (name: RescorableScorer) => !o.scorers || o.scorers.has(name);
  // Scorers left out by --scorers keep the run's result (or are undecided when the run has none).
  const kept: ScorerResult[] = [];
  const keep = (name: RescorableScorer) =>
    kept.push(
      entry.score?.scorers.find((x) => x.name === name) ?? {
        name,
        passed: null,
        value: null,
        reason: `not scored again (--scorers) and the run has no ${name} result`,
      },
    );
  let verify: VerifyResult | undefined;
  let verifyRerun = false;
  if (row.verify !== undefined) {
    if (redo("verify")) {
      const v = await verifyFor(entry, row, o);
      verify = v.result;
      if (v.undecided) kept.push(v.undecided);
      verifyRerun = v.rerun;
    } else keep("verify");
  }
  // A Harbor task's verifier ran in its container, gone since: its verdict is kept from the run.
  if (row.harbor !== undefined) {
    kept.push(
      entry.score?.scorers.find((x) => x.name === "harbor") ?? {
        name: "harbor",
        passed: null,
        value: null,
        reason: "the Harbor verifier is not run again, and the run has no harbor result",
      },
    );
  }
  const expected = row.expected !== undefined && redo("expected") ? row.expected : undefined;
  if (row.expected !== undefined && !redo("expected")) keep("expected");
  const rubric = row.rubric !== undefined && redo("rubric") ? row.rubric : undefined;
  const keptJudge = row.rubric !== undefined && !redo("rubric");
  if (keptJudge) keep("rubric");
  let scored: ScorerOutput[] | undefined;
  if (expected !== undefined || rubric !== undefined || verify || kept.length) {
    const { scoreTask } = await import("../score/scorers.js");
    scored = await scoreTask({
      prompt: promptOf(entry, row),
      finalResponse: entry.final_response ?? null,
      expected,
      rubric,
      verify,
      judge: o.judge,
      signal: o.signal,
    });
    scored = [...scored, ...kept].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  const fields = scoreFields(scored);
  // Graded against the dataset given now: its criteria, not the run's.
  const criteria =
    fields.score &&
    scoringCriteria({
      expected: row.expected,
      verify: row.verify,
      rubric: row.rubric,
      verifyFiles: row.verify_files === undefined ? undefined : o.verifyFilesDir(row),
    });
  if (fields.score && criteria) fields.score.criteria = criteria;
  // A rubric result kept from the run keeps the judge call it came from.
  if (keptJudge && entry.judge)
    Object.assign(fields, { judge: entry.judge, ...(entry.judge_usage ? { judge_usage: entry.judge_usage } : {}) });
  if (o.signal.aborted) throw new RescoreInterrupted("interrupted");
  const next: TrajectoryEntry = { ...rest, ...(verifyRerun && verify ? { verify } : {}), ...fields };
  if (next.cost_usd !== undefined || o.config.price_input !== undefined || o.config.price_output !== undefined) {
    const cost = taskCost(o.config, [next.usage, next.approval_usage, next.judge_usage]);
    if (cost !== undefined) next.cost_usd = cost;
  }
  // The cost stays after the score fields, where a run writes it.
  if (next.cost_usd !== undefined) {
    const c = next.cost_usd;
    delete next.cost_usd;
    next.cost_usd = c;
  }
  return {
    entry: next,
    verifyKept: row.verify !== undefined && redo("verify") && !verifyRerun,
    verifyRerun,
    judgeUsage: keptJudge ? undefined : next.judge_usage,
  };
}

/** Task ids of the trajectory lines that have no row in the dataset (the command refuses to go on with them). */
export async function missingRows(
  runDir: string,
  rows: Map<string, DatasetLine>,
): Promise<{ missing: string[]; lines: number }> {
  const missing = new Set<string>();
  let lines = 0;
  for await (const { text } of readLines(join(runDir, RUN_FILES.trajectories))) {
    let id: unknown;
    try {
      id = (JSON.parse(text) as { task_id?: unknown }).task_id;
    } catch {
      continue;
    }
    if (typeof id !== "string") continue;
    lines++;
    if (!rows.has(id)) missing.add(id);
  }
  return { missing: [...missing].sort(), lines };
}

/** The temporary file of a rewrite: in the run folder (same file system, so the rename is atomic). */
export function rescoreTempPath(runDir: string): string {
  return join(runDir, `${RUN_FILES.trajectories}.rescore.tmp`);
}

/**
 * Recomputes every line's score into a temporary file beside trajectories.jsonl, fsyncs it, and renames it
 * over the original (then fsyncs the folder). Interrupted (the signal) before the rename: the temporary
 * file is removed and the original is as it was.
 */
export async function rescoreRun(o: RescoreOptions): Promise<RescoreSummary> {
  const path = join(o.runDir, RUN_FILES.trajectories);
  const tmp = rescoreTempPath(o.runDir);
  rmSync(tmp, { force: true }); // a leftover of a killed re-score
  // A torn last line (a run that crashed mid-write) goes to trajectories.jsonl.torn, as --resume does with it.
  repairTornTail(path);
  const fd = openSync(tmp, "wx");
  const summary: RescoreSummary = {
    rescored: 0,
    passToFail: [],
    failToPass: [],
    unscored: [],
    noScorer: 0,
    verifyKept: 0,
    verifyRerun: 0,
    judgeUsage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    passed: 0,
    scored: 0,
    badLines: 0,
  };
  let renamed = false;
  try {
    // Lines are scored `concurrency` at a time and written in their original order.
    const window: Promise<string>[] = [];
    const flush = async () => {
      const text = await window.shift()!;
      writeSync(fd, text + "\n");
    };
    for await (const { text } of readLines(path)) {
      if (o.signal.aborted) throw new RescoreInterrupted("interrupted");
      window.push(rescoreLine(text, o, summary));
      // A rejection is awaited in order by flush; keep the others from being reported as unhandled meanwhile.
      window.at(-1)!.catch(() => undefined);
      if (window.length >= o.concurrency) await flush();
    }
    while (window.length) await flush();
    if (o.signal.aborted) throw new RescoreInterrupted("interrupted");
    fsyncSync(fd);
    closeSync(fd);
    // The reports describe the old scores: removed before the new lines take their place, so a kill before they
    // are rebuilt leaves no statistics.json claiming the old pass rate (score again, or --resume, rebuilds them).
    for (const report of [RUN_FILES.statistics, RUN_FILES.summary, RUN_FILES.atif])
      rmSync(join(o.runDir, report), { force: true });
    renameSync(tmp, path);
    renamed = true;
    syncFolder(o.runDir);
    summary.passToFail.sort();
    summary.failToPass.sort();
    summary.unscored.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  } finally {
    if (!renamed) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      rmSync(tmp, { force: true });
    }
  }
  return summary;
}

function syncFolder(dir: string): void {
  try {
    const d = openSync(dir, "r");
    try {
      fsyncSync(d);
    } finally {
      closeSync(d);
    }
  } catch {
    // some file systems cannot fsync a folder; the rename is still atomic
  }
}

async function rescoreLine(text: string, o: RescoreOptions, s: RescoreSummary): Promise<string> {
  let entry: TrajectoryEntry;
  try {
    entry = JSON.parse(text) as TrajectoryEntry;
  } catch {
    s.badLines++;
    return text; // copied as written, never lost
  }
  const row = typeof entry?.task_id === "string" ? o.rows.get(entry.task_id) : undefined;
  if (!row) {
    s.badLines++;
    return text;
  }
  const before = entry.score?.passed ?? null;
  const r = await rescoreEntry(entry, row.row, o);
  const after = r.entry.score;
  const key = recordKey(entry.task_id, entry.epoch);
  s.rescored++;
  if (r.verifyKept) s.verifyKept++;
  if (r.verifyRerun) s.verifyRerun++;
  if (r.judgeUsage) {
    s.judgeUsage.prompt_tokens += r.judgeUsage.prompt_tokens;
    s.judgeUsage.completion_tokens += r.judgeUsage.completion_tokens;
    s.judgeUsage.total_tokens += r.judgeUsage.total_tokens;
  }
  if (!after) s.noScorer++;
  else if (after.passed === null)
    s.unscored.push({
      key,
      reason: after.scorers
        .filter((x) => x.passed === null)
        .map((x) => `${x.name}: ${x.reason ?? "undecided"}`)
        .join("; "),
    });
  else {
    s.scored++;
    if (after.passed) s.passed++;
    if (before === true && !after.passed) s.passToFail.push(key);
    if (before === false && after.passed) s.failToPass.push(key);
  }
  o.onTask?.();
  return o.redact(JSON.stringify(r.entry));
}
