/**
 * Dangerous-command approval: one gate per task that every command passes. Detection (detect.ts over
 * the analyser in next/), the policies (policy.ts, policies/), the user allowlist (allowlist.ts), the
 * files earlier calls wrote (written_files.ts), and the record of every decision. README.md tells the whole.
 *
 * Order of a decision for a flagged command:
 *   policy `allow` → every matched class in the allowlist → every matched class approved for
 *   this task's session → the policy (`deny`, `smart`, `interactive`).
 * When several classes match, allowlist and session approval need all of them, so approving
 * `git_reset_hard` never lets `git reset --hard && rm -rf /` through.
 */
import { performance } from "node:perf_hooks";
import { errorMessage } from "../../src/core/errors.js";
import type { ApprovalRecord } from "../../src/core/records.js";
import { shellQuote } from "../environments/base.js";
import { classNames } from "./allowlist.js";
import { analyseCommand, shellComments, withSymlinkClass, type DetectOptions, type PatternMatch } from "./detect.js";
import { approvalPolicies } from "./policy.js";
import {
  blocked,
  type ApprovalGate,
  type ApprovalGateOptions,
  type ApprovalPolicyImpl,
  type ApprovalService,
  type ApprovalSummary,
  type FlaggedCommand,
  type GateInfo,
  type GateState,
  type PolicyDecision,
} from "./types.js";
import { writtenFilesTracker, type WrittenFiles } from "./written_files.js";

// The API the rest of the program and the tests use, in one place.
export {
  PATTERN_CLASSES,
  analyseCommand,
  detectDangerousCommand,
  detectDangerousCommandResolved,
  normalizeCommand,
} from "./detect.js";
export type { PathResolver } from "./detect.js";
export { appendToAllowlist, loadUserAllowlist, userConfigPath } from "./allowlist.js";
export { APPROVER_SYSTEM_PROMPT } from "./smart.js";
export type * from "./types.js";

export function summarizeApprovals(records: readonly ApprovalRecord[]): ApprovalSummary {
  const out: ApprovalSummary = { total: 0, approved: 0, denied: 0, errors: 0, by_pattern: {} };
  for (const rec of records) {
    const field = rec.decision === "approve" ? "approved" : "denied";
    // A deny because the approver failed (older records say so only in the reason).
    const error = field === "denied" && (rec.error || (rec.by === "smart" && rec.reason.startsWith("approver error:")));
    out.total++;
    // The run's counts, then the class's.
    for (const counts of [out, (out.by_pattern[rec.pattern] ??= { approved: 0, denied: 0, errors: 0 })]) {
      counts[field]++;
      if (error) counts.errors++;
    }
  }
  return out;
}

/**
 * The task's working directory for judging a command: `info.workdir`, or else `info.cwd` unless the
 * command was prefixed with `cd <cwd> &&` by commandAsRun (a cwd outside the working directory, which
 * must not count as inside). Absolute paths under it count as inside (`write_file > /workspace/x`).
 */
function workingDirectory(command: string, info: { cwd?: string; workdir?: string }): string | undefined {
  if (info.workdir) return info.workdir;
  if (!info.cwd?.startsWith("/") || command.startsWith(`cd ${shellQuote(info.cwd)} && `)) return undefined;
  return info.cwd;
}

/** The classes a command falls in, as the gate judges it where it runs (`where.defaultCwd`: the working directory). */
async function matchesFor(
  command: string,
  info: GateInfo,
  where: DetectOptions,
  tracker: WrittenFiles,
): Promise<PatternMatch[]> {
  if (info.flagged) return [info.flagged];
  const root = where.defaultCwd;
  let matches = analyseCommand(command, root ? where : {}).matches;
  if (root && info.realpath)
    matches = await withSymlinkClass(command, matches, { cwd: info.cwd, workdir: root, realpath: info.realpath });
  if (info.readFile) matches.push(...(await tracker.matches(command, where, info.readFile)));
  return matches;
}

/** What the allowlist and this task's session approvals decide, before the policy is asked. */
function approvedBefore(matches: PatternMatch[], state: GateState): PolicyDecision | undefined {
  const allowlisted = (m: PatternMatch) => classNames(m).some((n) => state.allow.has(n));
  const keys = matches.map((m) => m.key).join(", ");
  if (matches.every(allowlisted))
    return { decision: "approve", by: "allowlist", reason: `pattern ${keys} is in command_allowlist` };
  if (matches.every((m) => state.session.has(m.key) || allowlisted(m)))
    return { decision: "approve", by: "session", reason: "pattern approved earlier in this task's session" };
  return undefined;
}

export function createApprovalGate(opts: ApprovalGateOptions): ApprovalService {
  const records: ApprovalRecord[] = [];
  const state: GateState = {
    session: new Set<string>(),
    allow: new Set(opts.allowlist ?? []),
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    counters: { smart_calls: 0, cache_hits: 0 },
  };
  let policy: Promise<ApprovalPolicyImpl> | undefined;
  // A policy that cannot be loaded (an unknown name) denies every flagged command, allowlisted or not.
  const loadPolicy = () =>
    (policy ??= approvalPolicies
      .load(opts.policy)
      .then((factory) => factory(opts, state))
      .catch((err) => ({ consultsAllowlist: false, decide: async () => blocked("policy", errorMessage(err)) })));
  const tracker = writtenFilesTracker();

  const decide = async (req: FlaggedCommand): Promise<PolicyDecision> => {
    const impl = await loadPolicy();
    return (impl.consultsAllowlist && approvedBefore(req.matches, state)) || impl.decide(req);
  };

  /** Decides a flagged command and records the decision. */
  const judgeFlagged = async (command: string, info: GateInfo, matches: PatternMatch[], started: number) => {
    const description = matches.map((m) => m.description).join("; ");
    const comments = info.flagged ? [] : shellComments(command);
    const d = await decide({ command, cwd: info.cwd, backend: info.backend, matches, description, comments });
    const rec: ApprovalRecord = {
      command,
      pattern: matches[0]!.key,
      description,
      decision: d.decision,
      by: d.by,
      reason: d.reason,
      latency_ms: Math.round(performance.now() - started),
    };
    if (d.cached) rec.cached = true;
    if (info.toolCallId) rec.tool_call_id = info.toolCallId;
    if (d.error) rec.error = true;
    records.push(rec);
    opts.onRecord?.(rec);
    return d.decision === "approve"
      ? { allowed: true, record: rec }
      : { allowed: false, message: d.message ?? `BLOCKED: ${d.reason}`, record: rec };
  };

  const gate: ApprovalGate = async (command, info) => {
    const started = performance.now();
    // An empty cwd is none.
    const where = { cwd: info.cwd || undefined, defaultCwd: workingDirectory(command, info) };
    const matches = await matchesFor(command, info, where, tracker);
    const verdict = matches.length ? await judgeFlagged(command, info, matches, started) : { allowed: true };
    // Only a call that runs can have written anything. A failure to remember must not turn an allowed
    // call into a blocked one; the later run is still judged alone.
    if (verdict.allowed && info.readFile) {
      try {
        tracker.remember(command, where);
      } catch {
        /* judged alone later */
      }
    }
    return verdict;
  };

  return {
    gate,
    records,
    usage: state.usage,
    stats: () => ({ ...summarizeApprovals(records), ...state.counters, usage: { ...state.usage } }),
  };
}
