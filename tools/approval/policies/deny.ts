/** Policy `deny` (and the gate of a task with no approval service): every flagged command is refused. */
import { blocked, type ApprovalPolicyFactory } from "../types.js";

export const denyPolicy: ApprovalPolicyFactory = (opts) => {
  const why = opts.unconfigured ? "no approval service is configured" : "approval policy is 'deny'";
  const cause = opts.unconfigured ? why : `the ${why}`;
  return {
    consultsAllowlist: true,
    decide: async (req) =>
      blocked("policy", why, `this command matched a dangerous pattern (${req.description}) and ${cause}`),
  };
};
