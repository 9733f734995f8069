/** Policy `allow`: every flagged command runs; the decision is still recorded. */
import type { ApprovalPolicyFactory } from "../types.js";

export const allowPolicy: ApprovalPolicyFactory = () => ({
  consultsAllowlist: false,
  decide: async () => ({ decision: "approve", by: "policy", reason: "approval policy is 'allow'" }),
});
