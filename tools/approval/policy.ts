/**
 * Approval policies: what decides a flagged command once the allowlist and this task's session
 * approvals did not. Each lives in its own module under policies/, loaded by name on first use.
 */
import { createRegistry } from "../../src/core/registry.js";
import type { ApprovalPolicyFactory } from "./types.js";

export const approvalPolicies = createRegistry<ApprovalPolicyFactory>("approval policy");
approvalPolicies.register("allow", async () => (await import("./policies/allow.js")).allowPolicy);
approvalPolicies.register("deny", async () => (await import("./policies/deny.js")).denyPolicy);
approvalPolicies.register("smart", async () => (await import("./policies/smart.js")).smartPolicy);
approvalPolicies.register("interactive", async () => (await import("./policies/interactive.js")).interactivePolicy);
