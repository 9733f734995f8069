/**
 * The types the gate, its policies and its callers share (no code but the deny they all build), so
 * that the policies, loaded by name from policy.ts, need not import the gate that loads them.
 */
import type { ChatModel, Usage } from "../../src/core/chat.js";
import type { ApprovalRecord } from "../../src/core/records.js";
import type { PatternMatch } from "./detect.js";
import type { PathResolver } from "./symlinks.js";

/** What the gate knows about a command besides its text. */
export interface GateInfo {
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
  flagged?: PatternMatch;
}

/** Decides one command (and records the decision when the command was flagged). */
export type ApprovalGate = (
  command: string,
  info: GateInfo,
) => Promise<{ allowed: boolean; message?: string; record?: ApprovalRecord }>;

export interface SmartApprovalOptions {
  /** The approver model, built by the worker through the run's scheduler (its retries and connection limit). */
  model: ChatModel;
  /** Whole-decision deadline, retries included. Default 30 s. */
  timeoutMs?: number;
}

export type PromptChoice = "once" | "session" | "always" | "deny";

/** What a person is asked about: the flagged command, its first class, the time to answer. */
export interface PromptRequest extends Pick<FlaggedCommand, "command" | "description" | "cwd" | "backend"> {
  patternKey: string;
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

/** `denied` includes the `errors`: denies because the auxiliary model failed (error, timeout, refusal, invalid answer). */
type DecisionCounts = { approved: number; denied: number; errors: number };

export type ApprovalSummary = DecisionCounts & { total: number; by_pattern: Record<string, DecisionCounts> };

export type ApprovalStats = ApprovalSummary & GateState["counters"] & { usage: Usage };

export interface ApprovalService {
  gate: ApprovalGate;
  records: ApprovalRecord[];
  /** The approver model's tokens, apart from the agent's. */
  usage: Usage;
  stats(): ApprovalStats;
}

export const DO_NOT_RETRY = "Do NOT retry this command; find a safer way.";

/** A command the detection flagged, as a policy sees it. */
export interface FlaggedCommand extends Pick<GateInfo, "cwd" | "backend"> {
  command: string;
  /** Every class that matched (trusted: from our detector). */
  matches: PatternMatch[];
  /** The matched patterns' descriptions, joined. */
  description: string;
  /** Shell comments in the command (untrusted). */
  comments: string[];
}

/** A policy's decision: the fields of the record it sets, and what the model is told on a deny. */
export type PolicyDecision = Pick<ApprovalRecord, "decision" | "by" | "reason" | "cached" | "error"> & {
  message?: string;
};

/** A deny by `by` (policy, user): the model is told `BLOCKED: <said>` and not to retry. */
export function blocked(by: string, reason: string, said = reason): PolicyDecision {
  return { decision: "deny", by, reason, message: `BLOCKED: ${said}. ${DO_NOT_RETRY}` };
}

/** What a task's gate shares with its policy. */
export interface GateState {
  /** Pattern keys approved for the rest of this task. */
  session: Set<string>;
  /** Pattern keys of the allowlist (grows with "always" answers). */
  allow: Set<string>;
  /** The approver model's tokens. */
  usage: Usage;
  /** Requests sent to the approver model, and decisions answered from this task's verdict cache. */
  counters: { smart_calls: number; cache_hits: number };
}

export interface ApprovalPolicyImpl {
  /** False when the policy decides before the allowlist and the session approvals (allow). */
  consultsAllowlist: boolean;
  decide(req: FlaggedCommand): Promise<PolicyDecision>;
}

export type ApprovalPolicyFactory = (opts: ApprovalGateOptions, state: GateState) => ApprovalPolicyImpl;
