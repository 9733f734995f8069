/**
 * Dangerous-command approval: detection (approval_patterns.ts), policies, smart approval by an
 * auxiliary LLM (approval_smart.ts), the user allowlist (approval_config.ts), and the record of
 * every decision.
 *
 * One gate per task. Order of a decision for a flagged command:
 *   policy `allow` → every matched pattern in the allowlist → every matched pattern approved for
 *   this task's session → policy `deny` → `smart` (cached per normalised command and cwd within
 *   the task) or `interactive` (once / session / always / deny, 60 s timeout → deny).
 * When several patterns match, allowlist and session approval need all of them, so approving
 * `git_reset_hard` never lets `git reset --hard && rm -rf /` through.
 */
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline/promises";
import type OpenAI from "openai";
import type { Usage } from "../../src/core/chat.js";
import { appendToAllowlist } from "./allowlist.js";
import { analyseCommand, matchPatterns, normalizeCommand } from "./patterns.js";
import { askApprover, createApproverClient, type ApproverVerdict, type SmartApprovalOptions } from "./smart.js";
import type { ApprovalGate, ApprovalRecord } from "../registry.js";

export { DANGEROUS_PATTERNS, detectDangerousCommand, normalizeCommand, analyseCommand } from "./patterns.js";
export type { DangerousPattern, Detection, CommandAnalysis } from "./patterns.js";
export { appendToAllowlist, loadUserAllowlist, userConfigDir, userConfigPath } from "./allowlist.js";
export { APPROVER_SYSTEM_PROMPT, VERDICT_JSON_SCHEMA, buildApproverMessages, quoteData } from "./smart.js";
export type { SmartApprovalOptions } from "./smart.js";

export const APPROVAL_POLICIES = ["interactive", "smart", "deny", "allow"] as const;
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];

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
  policy: ApprovalPolicy;
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
const DO_NOT_RETRY = "Do NOT retry this command; find a safer way.";

/** A record that is a deny because the approver failed. */
export function isApproverError(rec: ApprovalRecord): boolean {
  return (rec as ApprovalRecord & { error?: boolean }).error === true || (rec.by === "smart" && rec.reason.startsWith("approver error:"));
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

function parseChoice(answer: string): PromptChoice {
  const a = answer.trim().toLowerCase();
  if (a === "o" || a === "once") return "once";
  if (a === "s" || a === "session") return "session";
  if (a === "a" || a === "always") return "always";
  return "deny";
}

/** The default interactive prompt, on the terminal. */
export const ttyPrompt: PromptFn = async (req) => {
  if (!process.stdin.isTTY) throw new Error("no terminal to ask (stdin is not a TTY)");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    process.stderr.write(`\n⚠️  Potentially dangerous command (${req.description}):\n    ${req.command}\n`);
    const answer = await rl.question(`Allow? [o]nce | [s]ession | [a]lways | [d]eny (${Math.round(req.timeoutMs / 1000)} s → deny): `, { signal: req.signal });
    return parseChoice(answer);
  } finally {
    rl.close();
  }
};

class PromptTimeout extends Error {}

const duration = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`);

export function createApprovalGate(opts: ApprovalGateOptions): ApprovalService {
  const records: ApprovalRecord[] = [];
  const usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const allow = new Set(opts.allowlist ?? []);
  const session = new Set<string>();
  const verdicts = new Map<string, Promise<ApproverVerdict>>();
  const counters = { smart_calls: 0, cache_hits: 0 };
  const promptTimeoutMs = opts.promptTimeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS;
  const persist = opts.persistAllowlist ?? ((key: string) => appendToAllowlist(key));
  let client: OpenAI | undefined;
  let promptQueue: Promise<unknown> = Promise.resolve();

  const allowlisted = (m: { key: string; description: string }) => allow.has(m.key) || allow.has(m.description);

  async function smartVerdict(command: string, cwd: string | undefined, backend: string, matches: { key: string; description: string }[], comments: string[]) {
    const smart = opts.smart;
    // Never let a missing endpoint fall back to the SDK's default host.
    if (!smart || !smart.model || (!smart.baseURL && !smart.client)) {
      return { verdict: { decision: "deny", reason: "approver error: smart approval is not configured (needs a model and a base URL)", error: true } as ApproverVerdict, cached: false };
    }
    const key = `${normalizeCommand(command)}\u0000${cwd ?? ""}`;
    const pending = verdicts.get(key);
    if (pending) {
      counters.cache_hits++;
      return { verdict: await pending, cached: true };
    }
    client ??= createApproverClient(smart);
    counters.smart_calls++;
    const promise = askApprover(client, smart, { command, matches, cwd, backend, userTask: opts.userTask, comments }).then((v) => {
      if (v.usage) {
        usage.prompt_tokens += v.usage.prompt_tokens;
        usage.completion_tokens += v.usage.completion_tokens;
        usage.total_tokens += v.usage.total_tokens;
      }
      // A failure is not a verdict: the next identical command asks again.
      if (v.error) verdicts.delete(key);
      return v;
    });
    verdicts.set(key, promise);
    return { verdict: await promise, cached: false };
  }

  async function ask(req: Omit<PromptRequest, "signal" | "timeoutMs">): Promise<PromptChoice> {
    const prompt = opts.prompt ?? ttyPrompt;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new PromptTimeout());
      }, promptTimeoutMs);
    });
    try {
      return await Promise.race([prompt({ ...req, timeoutMs: promptTimeoutMs, signal: controller.signal }), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  const gate: ApprovalGate = async (command, info) => {
    const started = performance.now();
    const analysis = analyseCommand(command);
    const matches = matchPatterns(analysis);
    if (!matches.length) return { allowed: true };
    const keys = matches.map((m) => m.key);
    const description = matches.map((m) => m.description).join("; ");
    const decide = (decision: "approve" | "deny", by: string, reason: string, extra: { cached?: boolean; error?: boolean } = {}) => {
      const rec: ApprovalRecord = {
        command,
        pattern: keys[0]!,
        description,
        decision,
        by,
        reason,
        latency_ms: Math.round(performance.now() - started),
      };
      if (extra.cached) rec.cached = true;
      if (extra.error) (rec as ApprovalRecord & { error?: boolean }).error = true;
      records.push(rec);
      opts.onRecord?.(rec);
      return rec;
    };
    const approve = (by: string, reason: string, extra?: { cached?: boolean }) => ({ allowed: true, record: decide("approve", by, reason, extra) });
    const deny = (by: string, reason: string, message: string, extra?: { cached?: boolean; error?: boolean }) => ({
      allowed: false,
      message,
      record: decide("deny", by, reason, extra),
    });

    if (opts.policy === "allow") return approve("policy", "approval policy is 'allow'");
    if (matches.every(allowlisted)) return approve("allowlist", `pattern ${keys.join(", ")} is in command_allowlist`);
    if (matches.every((m) => session.has(m.key) || allowlisted(m))) return approve("session", "pattern approved earlier in this task's session");

    switch (opts.policy) {
      case "deny":
        return deny("policy", "approval policy is 'deny'", `BLOCKED: this command matched a dangerous pattern (${description}) and the approval policy is 'deny'. ${DO_NOT_RETRY}`);
      case "smart": {
        const { verdict, cached } = await smartVerdict(command, info.cwd, info.backend, matches, analysis.comments);
        if (verdict.decision === "approve") return approve("smart", verdict.reason, { cached });
        return deny("smart", verdict.reason, `BLOCKED by smart approval: ${description}. Reason: ${verdict.reason}. ${DO_NOT_RETRY}`, { cached, error: verdict.error });
      }
      case "interactive": {
        const turn = promptQueue.then(() => ask({ command, patternKey: keys[0]!, description, cwd: info.cwd, backend: info.backend }));
        promptQueue = turn.catch(() => undefined);
        let choice: PromptChoice;
        try {
          choice = await turn;
        } catch (err) {
          const reason = err instanceof PromptTimeout ? `no answer within ${duration(promptTimeoutMs)}` : `prompt failed: ${err instanceof Error ? err.message : String(err)}`;
          return deny("user", reason, `BLOCKED: ${reason}, so this potentially dangerous command (${description}) was denied. ${DO_NOT_RETRY}`);
        }
        if (choice === "once") return approve("user", "approved once");
        if (choice === "session") {
          for (const k of keys) session.add(k);
          return approve("user", "approved for this task's session");
        }
        if (choice === "always") {
          const failures: string[] = [];
          for (const k of keys) {
            session.add(k);
            allow.add(k);
            try {
              await persist(k);
            } catch (err) {
              failures.push(`${k}: ${err instanceof Error ? err.message : String(err)}`);
            }
          }
          return approve("user", failures.length ? `approved always (could not save to command_allowlist: ${failures.join("; ")})` : "approved always (saved to command_allowlist)");
        }
        return deny("user", "denied by the user", `BLOCKED: the user denied this potentially dangerous command (${description}). ${DO_NOT_RETRY}`);
      }
      default:
        return deny("policy", `unknown approval policy '${String(opts.policy)}'`, `BLOCKED: unknown approval policy '${String(opts.policy)}'. ${DO_NOT_RETRY}`);
    }
  };

  return {
    gate,
    records,
    usage,
    stats: () => ({ ...summarizeApprovals(records), ...counters, usage: { ...usage } }),
  };
}
