/**
 * What the HTML report shows, read from a run folder: the run's header, outcome and score metrics, the
 * chart series, one compact row per (task, epoch) for the table, and one detail record per row (the
 * conversation, approvals, verify and score) that the page parses only when a task is opened.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { OUTCOMES } from "../../core/outcomes.js";
import { runScoreMetrics, type RunScoreMetrics, type ScoredSample } from "../../score/summary.js";
import { RUN_FILES } from "../../store/checkpoint.js";
import { readJsonl } from "../../store/jsonl_file.js";
import { type CompareOptions, compareRuns, type Comparison } from "../compare.js";
import { loadRunSamples, sampleKey, type RunSamples } from "../run_samples.js";

/** One table row. Short keys: a 100,000-task report carries 100,000 of them. */
export interface TaskRow {
  /** task id # epoch */
  k: string;
  id: string;
  ep: number;
  /** outcome */
  o: string;
  /** passed: true/false, null unscored */
  p: boolean | null;
  /** score value */
  s: number | null;
  /** turns (assistant messages) */
  t: number;
  /** tokens of the task: agent + approver + judge (the total statistics.json and the console use) */
  tok: number;
  ms: number;
  /** toolsets, joined with "+" */
  ts: string;
  /** group label ("" when none) */
  g: string;
  /** tool calls and tool errors */
  tc: number;
  te: number;
  /** the start of the prompt, for the search box */
  q: string;
  /** why it failed or is unscored */
  r: string;
}

/** What the task view shows of one trajectory, failure or drop. */
export interface TaskDetail {
  key: string;
  task_id: string;
  epoch: number;
  source: "trajectory" | "dropped" | "failed";
  outcome: string;
  messages: unknown[];
  approvals: unknown[];
  verify?: unknown;
  score?: unknown;
  usage?: unknown;
  approval_usage?: unknown;
  judge_usage?: unknown;
  error?: string;
  dropped?: string;
  final_response?: string | null;
  toolsets_used: string[];
  metadata?: unknown;
  duration_ms?: number;
  api_calls?: number;
}

export interface ChartData {
  /** [tool, calls, errors] */
  tools: [string, number, number][];
  turns: number[];
  tokens: number[];
  durations_ms: number[];
  /** [pattern, approved, denied] */
  approvals: [string, number, number][];
  /** [outcome, count] of failed and dropped tasks */
  failures: [string, number][];
}

export interface RunHeader {
  name: string;
  dir: string;
  model: string;
  dataset: string;
  started_at: string | null;
  completed_at: string | null;
  duration_s: number | null;
  /** Key configuration: [key, value] */
  config: [string, string][];
  /** Progress for a run still going: done/failed/dropped of the dataset slice. */
  progress: { done: number; failed: number; dropped: number; total: number | null; finished: boolean } | null;
  /** tokens = agent + approver + judge, as in statistics.json `tokens.total`; token_breakdown says who spent them. */
  totals: {
    samples: number;
    tokens: number;
    token_breakdown: { agent: number; approver: number; judge: number };
    duration_ms: number;
    tool_calls: number;
    tool_errors: number;
    approvals: number;
  };
  outcomes: Record<string, number>;
  bad_lines: number;
}

export interface ScoreSummary extends RunScoreMetrics {
  /** unscored, by why: no scorer, infrastructure failure, dropped, undecided scorer */
  unscored_by: Record<string, number>;
}

export interface ReportModel {
  run: RunHeader;
  scores: ScoreSummary;
  charts: ChartData;
  rows: TaskRow[];
  details: TaskDetail[];
  group_label: string;
  baseline?: { run: RunHeader; comparison: Comparison; rows: TaskRow[]; details: TaskDetail[] };
}

const CONFIG_KEYS = [
  "distribution",
  "seed",
  "epochs",
  "max_turns",
  "env",
  "image",
  "workers",
  "concurrency",
  "approval",
  "judge_model",
  "task_timeout",
  "toolsets",
];

type Line = Record<string, unknown>;

function readJson(path: string): Record<string, unknown> | null {
  if (!existsSync(path)) return null;
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return v && typeof v === "object" ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function readRunYaml(dir: string): Record<string, unknown> {
  const path = join(dir, RUN_FILES.config);
  if (!existsSync(path)) return {};
  try {
    const v = parseYaml(readFileSync(path, "utf8")) as unknown;
    return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const str = (v: unknown): string =>
  typeof v === "string"
    ? v
    : v === undefined || v === null
      ? ""
      : typeof v === "object"
        ? JSON.stringify(v)
        : String(v);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The grouping key of the run: the first `--group-by`, else a metadata `group` or `category` when rows have one. */
function groupKey(config: Record<string, unknown>): string[] {
  const groupBy = arr(config.group_by).map(str).filter(Boolean);
  return groupBy.length ? groupBy : ["metadata.group", "metadata.category"];
}

function groupOf(line: Line, keys: string[]): [string, string] {
  for (const key of keys) {
    const path = key.split(".");
    let v: unknown = line;
    for (const p of path) v = v && typeof v === "object" ? (v as Record<string, unknown>)[p] : undefined;
    if (v !== undefined && v !== null && v !== "") return [key, str(v)];
  }
  return ["", ""];
}

function firstUser(messages: unknown[]): string {
  for (const m of messages) {
    const msg = m as { role?: unknown; content?: unknown };
    if (msg?.role === "user" && typeof msg.content === "string") return msg.content;
  }
  return "";
}

interface RunRead {
  header: RunHeader;
  rows: TaskRow[];
  details: TaskDetail[];
  charts: ChartData;
  scores: ScoreSummary;
  groupLabel: string;
  samples: RunSamples;
}

async function readRun(dir: string): Promise<RunRead> {
  const samples = await loadRunSamples(dir);
  const config = readRunYaml(dir);
  const stats = readJson(join(dir, RUN_FILES.statistics));
  const checkpoint = readJson(join(dir, RUN_FILES.checkpoint));
  const keys = groupKey(config);

  const byKey = new Map<string, { line: Line; source: TaskDetail["source"] }>();
  const failures = new Map<string, Line>();
  for (const [file, source] of [
    [RUN_FILES.trajectories, "trajectory"],
    [RUN_FILES.dropped, "dropped"],
    [RUN_FILES.failed, "failed"],
  ] as const) {
    for await (const { value, error } of readJsonl<Line>(join(dir, file))) {
      if (error || !value || typeof value !== "object" || typeof value.task_id !== "string") continue;
      const key = sampleKey(value.task_id, num(value.epoch));
      // A result line present twice counts once, the first one, as in statistics.json and for --resume.
      if (source === "failed") failures.set(key, value);
      else if (!byKey.has(key)) byKey.set(key, { line: value, source });
    }
  }
  for (const [key, line] of failures) if (!byKey.has(key)) byKey.set(key, { line, source: "failed" });

  const rows: TaskRow[] = [];
  const details: TaskDetail[] = [];
  const tools = new Map<string, [number, number]>();
  const approvals = new Map<string, [number, number]>();
  const outcomes: Record<string, number> = Object.fromEntries([...OUTCOMES, "dropped"].map((o) => [o, 0]));
  const failuresByOutcome = new Map<string, number>();
  const scored: ScoredSample[] = [];
  const unscoredBy: Record<string, number> = {};
  let groupLabel = "";
  const totals = {
    samples: 0,
    tokens: 0,
    token_breakdown: { agent: 0, approver: 0, judge: 0 },
    duration_ms: 0,
    tool_calls: 0,
    tool_errors: 0,
    approvals: 0,
  };

  for (const [key, { line, source }] of byKey) {
    const sample = samples.samples.get(key);
    const messages = arr(line.messages);
    const toolsets = arr(line.toolsets_used).map(str);
    const outcome = str(line.outcome) || (source === "trajectory" ? "completed" : source);
    const [gk, g] = groupOf(line, keys);
    if (gk && !groupLabel) groupLabel = gk;
    let tc = 0;
    let te = 0;
    for (const [name, stat] of Object.entries(
      (line.tool_stats as Record<string, { count?: number; failure?: number }>) ?? {},
    )) {
      const t = tools.get(name) ?? [0, 0];
      t[0] += num(stat?.count);
      t[1] += num(stat?.failure);
      tools.set(name, t);
      tc += num(stat?.count);
      te += num(stat?.failure);
    }
    const lineApprovals = arr(line.approvals);
    for (const a of lineApprovals) {
      const rec = a as { pattern?: unknown; decision?: unknown };
      const t = approvals.get(str(rec.pattern) || "(none)") ?? [0, 0];
      if (rec.decision === "approve") t[0]++;
      else t[1]++;
      approvals.set(str(rec.pattern) || "(none)", t);
    }
    const turns =
      typeof line.api_calls === "number"
        ? line.api_calls
        : messages.filter((m) => (m as { role?: unknown })?.role === "assistant").length;
    const spent = (u: unknown) => num((u as { total_tokens?: unknown } | undefined)?.total_tokens);
    const tokens = { agent: spent(line.usage), approver: spent(line.approval_usage), judge: spent(line.judge_usage) };
    const score = line.score as { value?: unknown } | undefined;
    const row: TaskRow = {
      k: key,
      id: str(line.task_id),
      ep: num(line.epoch),
      o: source === "dropped" ? "dropped" : outcome,
      p: sample?.passed ?? null,
      s: typeof score?.value === "number" ? score.value : null,
      t: turns,
      tok: tokens.agent + tokens.approver + tokens.judge,
      ms: num(line.duration_ms),
      ts: toolsets.join("+"),
      g,
      tc,
      te,
      q: firstUser(messages).slice(0, 160),
      r: sample?.reason ?? "",
    };
    rows.push(row);
    details.push({
      key,
      task_id: row.id,
      epoch: row.ep,
      source,
      outcome,
      messages,
      approvals: lineApprovals,
      verify: line.verify,
      score: line.score,
      usage: line.usage,
      approval_usage: line.approval_usage,
      judge_usage: line.judge_usage,
      error: typeof line.error === "string" ? line.error : undefined,
      dropped: typeof line.dropped === "string" ? line.dropped : undefined,
      final_response:
        typeof line.final_response === "string" || line.final_response === null
          ? (line.final_response as string | null)
          : undefined,
      toolsets_used: toolsets,
      metadata: line.metadata,
      duration_ms: typeof line.duration_ms === "number" ? line.duration_ms : undefined,
      api_calls: typeof line.api_calls === "number" ? line.api_calls : undefined,
    });
    outcomes[row.o] = (outcomes[row.o] ?? 0) + 1;
    if (source !== "trajectory") {
      const label = source === "dropped" ? `dropped: ${str(line.dropped) || "filtered"}` : outcome;
      failuresByOutcome.set(label, (failuresByOutcome.get(label) ?? 0) + 1);
    }
    totals.samples++;
    totals.tokens += row.tok;
    totals.token_breakdown.agent += tokens.agent;
    totals.token_breakdown.approver += tokens.approver;
    totals.token_breakdown.judge += tokens.judge;
    totals.duration_ms += row.ms;
    totals.tool_calls += tc;
    totals.tool_errors += te;
    totals.approvals += lineApprovals.length;
    const groups: Record<string, string> = { toolsets: row.ts || "(none)" };
    if (gk) groups[gk] = g;
    scored.push({ taskId: row.id, epoch: row.ep, passed: row.p, groups });
    if (row.p === null) {
      const why =
        source === "failed"
          ? "infrastructure failure"
          : source === "dropped"
            ? "dropped"
            : line.score
              ? "scorer undecided"
              : "no scorer";
      unscoredBy[why] = (unscoredBy[why] ?? 0) + 1;
    }
  }

  const metrics = runScoreMetrics(scored, samples.epochs);
  const progress = checkpoint
    ? {
        done: num(checkpoint.done),
        failed: num(checkpoint.failed),
        dropped: num(checkpoint.dropped),
        total: typeof checkpoint.total_in_dataset_slice === "number" ? checkpoint.total_in_dataset_slice : null,
        finished: checkpoint.finished === true,
      }
    : null;
  const configRows: [string, string][] = CONFIG_KEYS.filter(
    (k) => config[k] !== undefined && config[k] !== null && str(config[k]) !== "",
  ).map((k) => [k, str(config[k])]);
  return {
    header: {
      name: str(stats?.run_name) || str(config.run_name) || samples.name,
      dir,
      model: str(stats?.model) || str(config.model),
      dataset: str(config.dataset),
      started_at: str(stats?.started_at) || null,
      completed_at: str(stats?.completed_at_utc) || str(stats?.completed_at) || null,
      duration_s: typeof stats?.duration_seconds === "number" ? stats.duration_seconds : null,
      config: configRows,
      progress,
      totals,
      outcomes,
      bad_lines: samples.badLines,
    },
    rows,
    details,
    charts: {
      tools: [...tools]
        .filter(([, [c]]) => c > 0)
        .map(([n, [c, e]]) => [n, c, e] as [string, number, number])
        .sort((a, b) => b[1] - a[1]),
      turns: rows.map((r) => r.t),
      tokens: rows.map((r) => r.tok),
      durations_ms: rows.map((r) => r.ms),
      approvals: [...approvals]
        .map(([p, [a, d]]) => [p, a, d] as [string, number, number])
        .sort((a, b) => b[1] + b[2] - (a[1] + a[2])),
      failures: [...failuresByOutcome].sort((a, b) => b[1] - a[1]),
    },
    scores: { ...metrics, unscored_by: unscoredBy },
    groupLabel,
    samples,
  };
}

/** Reads the run (and the baseline run) into what the page shows. A missing or empty folder is a UserError. */
export async function buildReportModel(
  dir: string,
  baselineDir?: string,
  gate: CompareOptions = {},
): Promise<ReportModel> {
  const current = await readRun(dir);
  const model: ReportModel = {
    run: current.header,
    scores: current.scores,
    charts: current.charts,
    rows: current.rows,
    details: current.details,
    group_label: current.groupLabel,
  };
  if (baselineDir) {
    const base = await readRun(baselineDir);
    model.baseline = {
      run: base.header,
      comparison: compareRuns(base.samples, current.samples, gate),
      rows: base.rows,
      details: base.details,
    };
  }
  return model;
}
