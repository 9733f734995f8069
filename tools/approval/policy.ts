/**
 * Approval policies: what decides a flagged command once the allowlist and this task's session
 * approvals did not. Each lives in its own module under policies/, loaded by name on first use.
 */
import { createRegistry } from "../../src/core/registry.js";
import type { Usage } from "../../src/core/chat.js";
import type { ApprovalGateOptions } from "./gate.js";

export const DO_NOT_RETRY = "Do NOT retry this command; find a safer way.";

/** A command the detection flagged, as a policy sees it. */
export interface FlaggedCommand {
  command: string;
  cwd?: string;
  backend: string;
  /** Every pattern that matched (trusted: from our detector). */
  matches: { key: string; description: string }[];
  keys: string[];
  /** The matched patterns' descriptions, joined. */
  description: string;
  /** Shell comments in the command (untrusted). */
  comments: string[];
}

export interface PolicyDecision {
  decision: "approve" | "deny";
  /** Who decided: policy, smart, user. */
  by: string;
  reason: string;
  /** What the model is told on a deny. */
  message?: string;
  cached?: boolean;
  /** A deny because the deciding service failed. */
  error?: boolean;
}

/** What a task's gate shares with its policy. */
export interface GateState {
  /** Pattern keys approved for the rest of this task. */
  session: Set<string>;
  /** Pattern keys of the allowlist (grows with "always" answers). */
  allow: Set<string>;
  /** The approver model's tokens. */
  usage: Usage;
  counters: { smart_calls: number; cache_hits: number };
}

export interface ApprovalPolicyImpl {
  /** False when the policy decides before the allowlist and the session approvals (allow). */
  consultsAllowlist: boolean;
  decide(req: FlaggedCommand): Promise<PolicyDecision>;
}

export type ApprovalPolicyFactory = (opts: ApprovalGateOptions, state: GateState) => ApprovalPolicyImpl;

export const approvalPolicies = createRegistry<ApprovalPolicyFactory>("approval policy");
approvalPolicies.register("allow", async () => (await import("./policies/allow.js")).allowPolicy);
approvalPolicies.register("deny", async () => (await import("./policies/deny.js")).denyPolicy);
approvalPolicies.register("smart", async () => (await import("./policies/smart.js")).smartPolicy);
approvalPolicies.register("interactive", async () => (await import("./policies/interactive.js")).interactivePolicy);
