/**
 * `statistics.json`: run aggregates, fed one result at a time (memory O(1) per task except one float
 * per task for the duration percentiles). The Hermes keys (run_name, distribution, total_prompts, model,
 * completed_at, duration_seconds, tool_statistics, reasoning_statistics) keep their meaning (§2.6).
 *
 * Fields of `statistics.json`, the original's ten first in the original's order (run_name, distribution,
 * total_prompts, total_batches, batch_size, model, completed_at, duration_seconds, tool_statistics,
 * reasoning_statistics), then ours (started_at, completed_at_utc, tasks, …, model_retries; reports.ts adds
 * model_calls, scores, cost after them):
 *   run_name, distribution, model       as configured (distribution null when fixed toolsets were used)
 *   total_prompts                       tasks planned for this invocation (null when not given)
 *   total_batches, batch_size           the original's: ceil(total_prompts / batch_size), --batch-size
 *   completed_at                        the end in the original's form, Python's `datetime.now().isoformat()`:
 *                                       naive local time, 6 fraction digits from milliseconds (`.089000`; the
 *                                       original has real microseconds), no fraction when the milliseconds are 0
 *   started_at, completed_at_utc        ISO UTC timestamps (`…Z`, milliseconds); duration_seconds between them (2 decimals)
 *   (every *_rate and duration_seconds is written as a float, 100.0 not 100, as Python writes them)
 *   tasks                               {total, trajectories, failed, dropped} recorded in this invocation
 *   outcomes                            count per Outcome class (every class listed, zeros included)
 *   completed, partial                  trajectories with completed / partial true
 *   completion_rate, partial_rate       percent of trajectories + failures, 2 decimals
 *   tool_statistics                     per tool used (as the original: only tools with a call or a result),
 *                                       {count, success, failure, success_rate, failure_rate}; rates are percent
 *                                       of success+failure, 2 decimals, 0 without results. Keys in first-use
 *                                       order: entries in the order they are fed (trajectories.jsonl line
 *                                       order), within an entry the message order of its tool calls (a result
 *                                       matched to no call counts where it stands); tools of an entry without
 *                                       `messages` follow in its tool_stats key order. The original's is first
 *                                       use too, per batch (prompts in index order), batches in the order they
 *                                       finished (imap_unordered), so with several batches it changes run to run
 *   reasoning_statistics                {total_assistant_turns, turns_with_reasoning, turns_without_reasoning,
 *                                        coverage_rate (percent of turns), trajectories_with_reasoning,
 *                                        trajectories_without_reasoning, turns_with_reasoning_only_in_details};
 *                                       a turn has reasoning as its Hermes conversation shows it: reasoning sent
 *                                       only in reasoning_details does not count (the original's streaming path
 *                                       drops it), and is counted in turns_with_reasoning_only_in_details
 *   tokens                              {agent, approver, judge, total}: total_tokens of every task (trajectories,
 *                                       failures, drops) by who spent them; total = agent + approver + judge,
 *                                       the same total the end-of-run line and the HTML report show
 *   token_usage                         {agent, approver, judge}: each as a Usage (prompt, completion, total and
 *                                       the cached/reasoning details when reported), summed over all tasks
 *   durations_ms                        {count, mean, p50, p95, max} of task wall time (linear-interpolated percentiles)
 *   api_calls                           {total, mean, max} over trajectories
 *   approvals                           {total, approved, denied, errors, cached, by_decider: {name: n},
 *                                        by_pattern: {pattern: {approved, denied, errors}}}
 *   verify                              {run, passed, failed, timed_out, pass_rate}
 *   filtered                            {dropped_unknown_tools, dropped_no_reasoning, dropped_empty_response}
 *   model_retries                       {total, tasks}: retried model requests (every purpose) and the tasks that had any
 * The counts cover whatever the caller feeds: the runner feeds every result of the run folder (reports.ts),
 * so a resumed run reports what an uninterrupted one would; started_at/duration are the last invocation's.
 */
import { addUsage, tokenTotals, type ChatMessage, type TokenTotals, type Usage } from "../core/chat.js";
import { reasoningStats } from "./tool_stats.js";
import { pythonLocalIsoformat } from "../core/python_time.js";
import { OUTCOMES, type Outcome } from "../core/outcomes.js";
import type { ApprovalRecord, DropReason, StoredFailureRecord, TrajectoryEntry } from "../core/records.js";

export interface ApprovalCounts {
  approved: number;
  denied: number;
  errors: number;
}

export interface ToolStatistic {
  count: number;
  success: number;
  failure: number;
  success_rate: number;
  failure_rate: number;
}

export interface RunStatisticsJson {
  run_name: string;
  distribution: string | null;
  total_prompts: number | null;
  /** The original's: batches of `batch_size` prompts over total_prompts (tasks run in any order here). */
  total_batches: number | null;
  batch_size: number;
  model: string | null;
  /** The original's form, Python's `datetime.now().isoformat()`: naive local time, 6 fraction digits from milliseconds. */
  completed_at: string;
  duration_seconds: number;
  /** Tools used, in first-use order (see above). */
  tool_statistics: Record<string, ToolStatistic>;
  reasoning_statistics: {
    total_assistant_turns: number;
    turns_with_reasoning: number;
    turns_without_reasoning: number;
    coverage_rate: number;
    trajectories_with_reasoning: number;
    trajectories_without_reasoning: number;
    /** Ours: turns whose reasoning came only in reasoning_details (kept in `messages`, not in `conversations`). */
    turns_with_reasoning_only_in_details: number;
  };
  /** ISO UTC, milliseconds (ours). */
  started_at: string;
  /** The same moment as `completed_at`, ISO UTC with milliseconds (ours, pairs with started_at). */
  completed_at_utc: string;
  tasks: { total: number; trajectories: number; failed: number; dropped: number };
  outcomes: Record<Outcome, number>;
  completed: number;
  partial: number;
  completion_rate: number;
  partial_rate: number;
  tokens: TokenTotals;
  token_usage: { agent: Usage; approver: Usage; judge: Usage };
  durations_ms: { count: number; mean: number; p50: number; p95: number; max: number };
  api_calls: { total: number; mean: number; max: number };
  approvals: {
    total: number;
    approved: number;
    denied: number;
    errors: number;
    cached: number;
    by_decider: Record<string, number>;
    by_pattern: Record<string, ApprovalCounts>;
  };
  verify: { run: number; passed: number; failed: number; timed_out: number; pass_rate: number };
  filtered: { dropped_unknown_tools: number; dropped_no_reasoning: number; dropped_empty_response: number };
  model_retries: { total: number; tasks: number };
}

export interface RunStatisticsInit {
  run_name: string;
  distribution?: string | null;
  model?: string | null;
  total_prompts?: number | null;
  /** Prompts per Hermes batch (--batch-size); default 10. */
  batch_size?: number;
  started_at?: Date;
}

/** Keys whose numbers are floats in the original's statistics.json (Python writes 100.0, not 100). */
const FLOAT_KEYS = new Set([
  "success_rate",
  "failure_rate",
  "completion_rate",
  "partial_rate",
  "coverage_rate",
  "pass_rate",
  "duration_seconds",
]);
const FLOAT_MARK = "__hermes_batch_float__";

/**
 * statistics.json text as Python's `json.dump(indent=2, ensure_ascii=False)` writes it: rates and
 * durations as floats (`100.0`, `0.0`) wherever they are whole numbers, every other number unchanged.
 */
export function statisticsJsonText(stats: unknown): string {
  const text = JSON.stringify(
    stats,
    (key, value) =>
      FLOAT_KEYS.has(key) && typeof value === "number" && Number.isInteger(value) ? `${FLOAT_MARK}${value}` : value,
    2,
  );
  return text.replace(new RegExp(`"${FLOAT_MARK}(-?\\d+)"`, "g"), "$1.0") + "\n";
}

/** Rounds to 2 decimals (Python's `round(x, 2)` for the values that occur here). */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** `part` as a percent of `whole`, 2 decimals; 0 when `whole` is 0. */
export function percent(part: number, whole: number): number {
  return whole > 0 ? round2((part / whole) * 100) : 0;
}

/** A growable Float64Array: 8 bytes per value, for percentiles over many tasks. */
export class NumberBuffer {
  private data = new Float64Array(1024);
  private n = 0;
  private sum = 0;
  private maxValue = 0;
  private sorted = true;

  get length(): number {
    return this.n;
  }

  push(v: number): void {
    if (!Number.isFinite(v)) return;
    if (this.n === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    if (this.n > 0 && v < this.data[this.n - 1]!) this.sorted = false;
    this.data[this.n++] = v;
    this.sum += v;
    if (this.n === 1 || v > this.maxValue) this.maxValue = v;
  }

  mean(): number {
    return this.n ? this.sum / this.n : 0;
  }

  max(): number {
    return this.n ? this.maxValue : 0;
  }

  /** Percentile `p` in [0, 100] with linear interpolation between closest ranks (numpy's default). */
  percentile(p: number): number {
    if (this.n === 0) return 0;
    if (!this.sorted) {
      this.data.subarray(0, this.n).sort();
      this.sorted = true;
    }
    const rank = (Math.min(100, Math.max(0, p)) / 100) * (this.n - 1);
    const lo = Math.floor(rank);
    const hi = Math.min(lo + 1, this.n - 1);
    const a = this.data[lo]!;
    return a + (this.data[hi]! - a) * (rank - lo);
  }
}

/** An approval record that ended in deny because the decider failed (error, timeout, unparsable answer). */
export function isApprovalError(rec: ApprovalRecord): boolean {
  const r = rec as ApprovalRecord & { error?: unknown };
  if (r.error) return true;
  if (/error/i.test(rec.by)) return true;
  return (
    rec.decision === "deny" &&
    /^(error|timeout|timed out|unparsable|invalid|approval (error|failed|timed out))/i.test(rec.reason.trim())
  );
}

/**
 * Tool names of one task in the order they first appear in its messages: each assistant turn's tool calls
 * in order, and a tool result under its call's name (so it adds a name only when matched to no call, under
 * its own `name`, as extractToolStats counts it).
 */
export function toolsByFirstUse(messages: readonly ChatMessage[]): string[] {
  const seen = new Set<string>();
  const callNames = new Map<string, string>();
  for (const msg of messages) {
    if (msg.role === "assistant") {
      for (const call of msg.tool_calls ?? []) {
        seen.add(call.function.name);
        callNames.set(call.id, call.function.name);
      }
    } else if (msg.role === "tool") {
      const name = callNames.get(msg.tool_call_id) ?? msg.name;
      if (name !== undefined) seen.add(name);
    }
  }
  return [...seen];
}

const addTo = addUsage;

const zeroUsage = (): Usage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

export class RunStatistics {
  private readonly startedAt: Date;
  private trajectories = 0;
  private failed = 0;
  private readonly dropped: Record<DropReason, number> = { unknown_tools: 0, no_reasoning: 0, empty_response: 0 };
  private readonly outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  private completed = 0;
  private partial = 0;
  private readonly tools = new Map<string, { count: number; success: number; failure: number }>();
  private readonly reasoning = { turns: 0, withReasoning: 0, trajWith: 0, trajWithout: 0, onlyInDetails: 0 };
  private readonly agentUsage = zeroUsage();
  private readonly approvalUsage = zeroUsage();
  private readonly judgeUsage = zeroUsage();
  private readonly durations = new NumberBuffer();
  private apiCallsTotal = 0;
  private apiCallsMax = 0;
  private readonly approvals = { total: 0, approved: 0, denied: 0, errors: 0, cached: 0 };
  private readonly byDecider = new Map<string, number>();
  private readonly byPattern = new Map<string, ApprovalCounts>();
  private readonly verify = { run: 0, passed: 0, timed_out: 0 };
  private readonly retries = { total: 0, tasks: 0 };

  private readonly batchSize: number;

  constructor(private readonly init: RunStatisticsInit) {
    this.startedAt = init.started_at ?? new Date();
    this.batchSize = init.batch_size && init.batch_size > 0 ? init.batch_size : 10;
  }

  private tool(name: string) {
    let t = this.tools.get(name);
    if (!t) this.tools.set(name, (t = { count: 0, success: 0, failure: 0 }));
    return t;
  }

  /** One written trajectory. */
  addEntry(entry: TrajectoryEntry): void {
    this.trajectories++;
    this.outcomes[entry.outcome] = (this.outcomes[entry.outcome] ?? 0) + 1;
    if (entry.completed) this.completed++;
    if (entry.partial) this.partial++;
    // Entries list every known tool with zeros (their tool_stats); the original lists only the tools used,
    // in first-use order: a used tool is registered here in its message order, the first time any entry uses it.
    // (for-in, not Object.entries: ~70 tools per entry, all but a few of them zeros)
    const toolStats = entry.tool_stats ?? {};
    const usedNames = new Set<string>();
    for (const name in toolStats) {
      const s = toolStats[name]!;
      if (s.count > 0 || s.success > 0 || s.failure > 0) usedNames.add(name);
    }
    for (const name of toolsByFirstUse(entry.messages ?? [])) if (usedNames.has(name)) this.tool(name);
    for (const name of usedNames) {
      const s = toolStats[name]!;
      const t = this.tool(name);
      t.count += s.count;
      t.success += s.success;
      t.failure += s.failure;
    }
    const r = reasoningStats(entry.messages ?? []);
    this.reasoning.turns += r.total_assistant_turns;
    this.reasoning.withReasoning += r.turns_with_reasoning;
    this.reasoning.onlyInDetails += r.turns_with_reasoning_only_in_details;
    if (r.has_any_reasoning) this.reasoning.trajWith++;
    else this.reasoning.trajWithout++;
    addTo(this.agentUsage, entry.usage);
    addTo(this.approvalUsage, entry.approval_usage);
    addTo(this.judgeUsage, entry.judge_usage);
    this.durations.push(entry.duration_ms);
    this.apiCallsTotal += entry.api_calls;
    this.apiCallsMax = Math.max(this.apiCallsMax, entry.api_calls);
    this.addApprovals(entry.approvals ?? []);
    this.addRetries(entry.model_retries);
    if (entry.verify) {
      this.verify.run++;
      if (entry.verify.passed) this.verify.passed++;
      if (entry.verify.timed_out) this.verify.timed_out++;
    }
  }

  /** One task that ended without a trajectory (failed.jsonl). */
  addFailure(rec: StoredFailureRecord): void {
    this.failed++;
    this.outcomes[rec.outcome] = (this.outcomes[rec.outcome] ?? 0) + 1;
    addTo(this.agentUsage, rec.usage);
    addTo(this.approvalUsage, rec.approval_usage);
    addTo(this.judgeUsage, (rec as { judge_usage?: Partial<Usage> }).judge_usage);
    if (rec.duration_ms !== undefined) this.durations.push(rec.duration_ms);
    this.addRetries(rec.model_retries);
  }

  private addRetries(n: number | undefined): void {
    if (typeof n !== "number" || !(n > 0)) return;
    this.retries.total += n;
    this.retries.tasks++;
  }

  /** A trajectory removed by a filter: counted, its tool statistics not aggregated (as in Hermes); its tokens were spent and count. */
  addDropped(
    reason: DropReason,
    spent?: { usage?: Partial<Usage>; approval_usage?: Partial<Usage>; judge_usage?: Partial<Usage> },
  ): void {
    this.dropped[reason]++;
    addTo(this.agentUsage, spent?.usage);
    addTo(this.approvalUsage, spent?.approval_usage);
    addTo(this.judgeUsage, spent?.judge_usage);
  }

  private droppedCount(): number {
    return Object.values(this.dropped).reduce((a, b) => a + b, 0);
  }

  /** Approval decision records (those of one task, or any batch of them). */
  addApprovals(records: readonly ApprovalRecord[]): void {
    for (const rec of records) {
      const error = isApprovalError(rec);
      this.approvals.total++;
      if (rec.decision === "approve") this.approvals.approved++;
      else this.approvals.denied++;
      if (error) this.approvals.errors++;
      if (rec.cached) this.approvals.cached++;
      this.byDecider.set(rec.by, (this.byDecider.get(rec.by) ?? 0) + 1);
      const p = this.pattern(rec.pattern);
      if (rec.decision === "approve") p.approved++;
      else p.denied++;
      if (error) p.errors++;
    }
  }

  /** Approval counts already summarised per pattern (e.g. by the approval service). */
  addApprovalSummary(summary: Record<string, Partial<ApprovalCounts>>): void {
    for (const [pattern, c] of Object.entries(summary)) {
      const p = this.pattern(pattern);
      const approved = c.approved ?? 0;
      const denied = c.denied ?? 0;
      const errors = c.errors ?? 0;
      p.approved += approved;
      p.denied += denied;
      p.errors += errors;
      this.approvals.total += approved + denied;
      this.approvals.approved += approved;
      this.approvals.denied += denied;
      this.approvals.errors += errors;
    }
  }

  private pattern(pattern: string): ApprovalCounts {
    let p = this.byPattern.get(pattern);
    if (!p) this.byPattern.set(pattern, (p = { approved: 0, denied: 0, errors: 0 }));
    return p;
  }

  toJSON(completedAt: Date = new Date()): RunStatisticsJson {
    const decided = this.trajectories + this.failed;
    const tool_statistics: Record<string, ToolStatistic> = {};
    for (const [name, t] of this.tools) {
      const judged = t.success + t.failure;
      tool_statistics[name] = {
        ...t,
        success_rate: percent(t.success, judged),
        failure_rate: percent(t.failure, judged),
      };
    }
    const sortedRecord = <V>(m: Map<string, V>): Record<string, V> =>
      Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    // The original's keys in the original's order, then ours.
    return {
      run_name: this.init.run_name,
      distribution: this.init.distribution ?? null,
      total_prompts: this.init.total_prompts ?? null,
      total_batches: this.init.total_prompts == null ? null : Math.ceil(this.init.total_prompts / this.batchSize),
      batch_size: this.batchSize,
      model: this.init.model ?? null,
      completed_at: pythonLocalIsoformat(completedAt),
      duration_seconds: round2((completedAt.getTime() - this.startedAt.getTime()) / 1000),
      tool_statistics,
      reasoning_statistics: {
        total_assistant_turns: this.reasoning.turns,
        turns_with_reasoning: this.reasoning.withReasoning,
        turns_without_reasoning: this.reasoning.turns - this.reasoning.withReasoning,
        coverage_rate: percent(this.reasoning.withReasoning, this.reasoning.turns),
        trajectories_with_reasoning: this.reasoning.trajWith,
        trajectories_without_reasoning: this.reasoning.trajWithout,
        turns_with_reasoning_only_in_details: this.reasoning.onlyInDetails,
      },
      started_at: this.startedAt.toISOString(),
      completed_at_utc: completedAt.toISOString(),
      tasks: {
        total: decided + this.droppedCount(),
        trajectories: this.trajectories,
        failed: this.failed,
        dropped: this.droppedCount(),
      },
      outcomes: { ...this.outcomes },
      completed: this.completed,
      partial: this.partial,
      completion_rate: percent(this.completed, decided),
      partial_rate: percent(this.partial, decided),
      tokens: tokenTotals(this.agentUsage.total_tokens, this.approvalUsage.total_tokens, this.judgeUsage.total_tokens),
      token_usage: {
        agent: { ...this.agentUsage },
        approver: { ...this.approvalUsage },
        judge: { ...this.judgeUsage },
      },
      durations_ms: {
        count: this.durations.length,
        mean: round2(this.durations.mean()),
        p50: round2(this.durations.percentile(50)),
        p95: round2(this.durations.percentile(95)),
        max: round2(this.durations.max()),
      },
      api_calls: {
        total: this.apiCallsTotal,
        mean: this.trajectories ? round2(this.apiCallsTotal / this.trajectories) : 0,
        max: this.apiCallsMax,
      },
      approvals: {
        ...this.approvals,
        by_decider: sortedRecord(this.byDecider),
        by_pattern: sortedRecord(this.byPattern),
      },
      verify: {
        run: this.verify.run,
        passed: this.verify.passed,
        failed: this.verify.run - this.verify.passed,
        timed_out: this.verify.timed_out,
        pass_rate: percent(this.verify.passed, this.verify.run),
      },
      filtered: {
        dropped_unknown_tools: this.dropped.unknown_tools,
        dropped_no_reasoning: this.dropped.no_reasoning,
        dropped_empty_response: this.dropped.empty_response,
      },
      model_retries: { ...this.retries },
    };
  }
}
