/**
 * Dangerous-command approval: one gate per task that every flagged command passes. Detection
 * (patterns.ts, shell.ts), the policies (policy.ts, policies/), the user allowlist (allowlist.ts),
 * and the record of every decision.
 *
 * Order of a decision for a flagged command:
 *   policy `allow` → every matched pattern in the allowlist → every matched pattern approved for
 *   this task's session → the policy (`deny`, `smart`, `interactive`).
 * When several patterns match, allowlist and session approval need all of them, so approving
 * `git_reset_hard` never lets `git reset --hard && rm -rf /` through.
 */
import { performance } from "node:perf_hooks";
import { shellQuote } from "../environments/base.js";
import type { Usage } from "../../src/core/chat.js";
import type { ApprovalRecord } from "../../src/core/records.js";
import { analyseCommand, classNames, matchPatterns, resolvedMatches, type PathResolver } from "./patterns.js";
import { approvalPolicies, type ApprovalPolicyImpl, type GateState, type PolicyDecision } from "./policy.js";
import type { SmartApprovalOptions } from "./smart.js";

export {
  DANGEROUS_PATTERNS,
  HERMES_KEYS,
  detectDangerousCommand,
  detectDangerousCommandResolved,
  normalizeCommand,
  analyseCommand,
} from "./patterns.js";
export type { DangerousPattern, Detection, CommandAnalysis, PathResolver } from "./patterns.js";
export { appendToAllowlist, loadUserAllowlist, userConfigDir, userConfigPath } from "./allowlist.js";
export { APPROVER_SYSTEM_PROMPT, VERDICT_JSON_SCHEMA, buildApproverMessages, quoteData } from "./smart.js";
export type { SmartApprovalOptions } from "./smart.js";
export type { ApprovalRecord };

/** Decides one command (and records the decision when the command was flagged). */
export type ApprovalGate = (
  command: string,
  info: {
    cwd?: string;
    backend: string;
    /**
     * The task's working directory and its environment's realpath: given both, targets inside the
     * working directory are resolved through symlinks (symlink_outside_workdir). The pipeline passes
     * the environment's `realpath` where it has one (local sandbox, host).
     */
    workdir?: string;
    realpath?: PathResolver;
    /** The tool call the command belongs to: named in the record. */
    toolCallId?: string;
    /**
     * Reads a file's text where the command will run (undefined when it cannot be read). Given, the gate
     * remembers what each allowed call wrote and judges a later command that runs one of those files
     * (a script, Makefile, package.json script, conftest.py, git hook) by the file's text.
     */
    readFile?: (path: string) => Promise<string | undefined>;
    /** Judge it whatever detection says (an MCP call: `command` is its description, read as data). */
    flagged?: { key: string; description: string };
  },
) => Promise<{ allowed: boolean; message?: string; record?: ApprovalRecord }>;

export type PromptChoice = "once" | "session" | "always" | "deny";

export interface PromptRequest {
  command: string;
  patternKey: string;
  description: string;
  cwd?: string;
  backend: string;
  timeoutMs: number;
  /** Aborted when the prompt timed out: a prompt should stop waiting for input. */
  signal: AbortSignal;
}

export type PromptFn = (req: PromptRequest) => Promise<PromptChoice>;

export interface ApprovalGateOptions {
  /** A name in the policy registry (policy.ts): allow, deny, smart, interactive. Unknown names deny. */
  policy: string;
  taskId: string;
  /** The task's prompt, shown (truncated, as untrusted data) to the smart approver. */
  userTask?: string;
  smart?: SmartApprovalOptions;
  /** Interactive prompt; default asks on the terminal (denies when stdin is not a TTY). */
  prompt?: PromptFn;
  /** Interactive prompt timeout; default 60 s, after which the command is denied. */
  promptTimeoutMs?: number;
  /** Pattern keys from the user config's `command_allowlist`. */
  allowlist?: string[];
  /** Saves a pattern key approved "always"; default appends to the user config. */
  persistAllowlist?: (key: string) => Promise<void>;
  onRecord?: (rec: ApprovalRecord) => void;
  /** The gate of a task without an approval service: policy `deny`, saying so. */
  unconfigured?: boolean;
}

export interface ApprovalSummary {
  total: number;
  approved: number;
  /** Includes the errors. */
  denied: number;
  /** Denied because the auxiliary model failed (error, timeout, refusal, invalid answer). */
  errors: number;
  by_pattern: Record<string, { approved: number; denied: number; errors: number }>;
}

export interface ApprovalStats extends ApprovalSummary {
  /** Requests sent to the approver model. */
  smart_calls: number;
  /** Decisions answered from this task's verdict cache. */
  cache_hits: number;
  usage: Usage;
}

export interface ApprovalService {
  gate: ApprovalGate;
  records: ApprovalRecord[];
  /** The approver model's tokens, apart from the agent's. */
  usage: Usage;
  stats(): ApprovalStats;
}

export const DEFAULT_PROMPT_TIMEOUT_MS = 60_000;

/** A record that is a deny because the approver failed. */
export function isApproverError(rec: ApprovalRecord): boolean {
  return (
    (rec as ApprovalRecord & { error?: boolean }).error === true ||
    (rec.by === "smart" && rec.reason.startsWith("approver error:"))
  );
}

export function summarizeApprovals(records: readonly ApprovalRecord[]): ApprovalSummary {
  const out: ApprovalSummary = { total: 0, approved: 0, denied: 0, errors: 0, by_pattern: {} };
  for (const rec of records) {
    const p = (out.by_pattern[rec.pattern] ??= { approved: 0, denied: 0, errors: 0 });
    out.total++;
    if (rec.decision === "approve") {
      out.approved++;
      p.approved++;
    } else {
      out.denied++;
      p.denied++;
      if (isApproverError(rec)) {
        out.errors++;
        p.errors++;
      }
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
  if (!info.cwd || !info.cwd.startsWith("/")) return undefined;
  if (command.startsWith(`cd ${shellQuote(info.cwd)} && `)) return undefined;
  return info.cwd;
}

/** Files named by their role, run by a runner (make, npm, pytest, git) without being named. */
const RUN_BY_ROLE = /(^|\/)(Makefile|makefile|GNUmakefile|package\.json|conftest\.py|\.git\/hooks\/[\w-]+)$/;
const MAX_REMEMBERED = 64;
const MAX_FILE_CHARS = 256 * 1024;

/**
 * What this task's earlier calls wrote, and the classes a command falls in by running those files.
 * The rebuilt analyser (next/) does both; it is loaded only by a gate that can read files.
 */
function crossCallTracker() {
  const written = new Set<string>();
  const load = () => import("./next/cross_call.js");
  return {
    async remember(command: string, cwd: string | undefined, root: string | undefined): Promise<void> {
      for (const p of (await load()).writtenPaths(command, {
        ...(cwd ? { cwd } : {}),
        ...(root ? { defaultCwd: root } : {}),
      })) {
        written.delete(p);
        written.add(p);
        if (written.size > MAX_REMEMBERED) written.delete(written.values().next().value!);
      }
    },
    async matches(
      command: string,
      cwd: string | undefined,
      root: string | undefined,
      read: (path: string) => Promise<string | undefined>,
    ) {
      const names = [...written].map((p) => p.slice(p.lastIndexOf("/") + 1));
      if (!names.some((n, i) => command.includes(n) || RUN_BY_ROLE.test([...written][i]!))) return [];
      const files = new Map<string, string>();
      for (const p of written) {
        const text = await read(p).catch(() => undefined);
        if (text !== undefined) files.set(p, text.slice(0, MAX_FILE_CHARS));
      }
      return (await load()).crossCallMatches(
        command,
        { ...(cwd ? { cwd } : {}), ...(root ? { defaultCwd: root } : {}) },
        files,
      );
    },
  };
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
  const loadPolicy = () => (policy ??= approvalPolicies.load(opts.policy).then((factory) => factory(opts, state)));

  const allowlisted = (m: { key: string; description: string }) => classNames(m).some((n) => state.allow.has(n));

  const crossCall = crossCallTracker();

  const decideCommand: ApprovalGate = async (command, info) => {
    const started = performance.now();
    const root = workingDirectory(command, info);
    const detectOpts = root ? { cwd: info.cwd, defaultCwd: root } : undefined;
    const analysis = analyseCommand(info.flagged ? "" : command, detectOpts);
    const matches = [
      ...(root && info.realpath
        ? await resolvedMatches(analysis, { ...detectOpts, workdir: root, realpath: info.realpath })
        : matchPatterns(analysis)),
    ];
    if (info.flagged) matches.push(info.flagged);
    if (info.readFile)
      matches.push(...(await crossCall.matches(command, info.cwd, root ?? info.workdir, info.readFile)));
    if (!matches.length) return { allowed: true };
    const keys = matches.map((m) => m.key);
    const description = matches.map((m) => m.description).join("; ");
    const decide = (d: PolicyDecision) => {
      const rec: ApprovalRecord = {
        command,
        pattern: keys[0]!,
        description,
        decision: d.decision,
        by: d.by,
        reason: d.reason,
        latency_ms: Math.round(performance.now() - started),
      };
      if (d.cached) rec.cached = true;
      if (info.toolCallId) rec.tool_call_id = info.toolCallId;
      if (d.error) (rec as ApprovalRecord & { error?: boolean }).error = true;
      records.push(rec);
      opts.onRecord?.(rec);
      return d.decision === "approve"
        ? { allowed: true, record: rec }
        : { allowed: false, message: d.message ?? `BLOCKED: ${d.reason}`, record: rec };
    };

    let impl: ApprovalPolicyImpl;
    try {
      impl = await loadPolicy();
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return decide({
        decision: "deny",
        by: "policy",
        reason,
        message: `BLOCKED: ${reason}. Do NOT retry this command; find a safer way.`,
      });
    }
    if (impl.consultsAllowlist) {
      if (matches.every(allowlisted))
        return decide({
          decision: "approve",
          by: "allowlist",
          reason: `pattern ${keys.join(", ")} is in command_allowlist`,
        });
      if (matches.every((m) => state.session.has(m.key) || allowlisted(m))) {
        return decide({
          decision: "approve",
          by: "session",
          reason: "pattern approved earlier in this task's session",
        });
      }
    }
    return decide(
      await impl.decide({
        command,
        cwd: info.cwd,
        backend: info.backend,
        matches,
        keys,
        description,
        comments: analysis.comments,
      }),
    );
  };

  const gate: ApprovalGate = async (command, info) => {
    const verdict = await decideCommand(command, info);
    // Only a call that runs can have written anything.
    // A failure to remember must not turn an allowed call into a blocked one; the later run is still judged alone.
    if (verdict.allowed && info.readFile)
      await crossCall
        .remember(command, info.cwd, workingDirectory(command, info) ?? info.workdir)
        .catch(() => undefined);
    return verdict;
  };

  return {
    gate,
    records,
    usage: state.usage,
    stats: () => ({ ...summarizeApprovals(records), ...state.counters, usage: { ...state.usage } }),
  };
}
