/**
 * Policy `smart`: an auxiliary model judges each flagged command (tools/approval/smart.ts). Verdicts
 * are cached per normalised command and cwd within the task; a failure is a deny and is not cached.
 */
import { normalizeCommand } from "../normalize.js";
import { addUsage } from "../../../src/core/chat.js";
import { askApprover, type ApproverVerdict } from "../smart.js";
import { DO_NOT_RETRY, type ApprovalPolicyFactory, type FlaggedCommand } from "../types.js";

const NOT_CONFIGURED: ApproverVerdict = {
  decision: "deny",
  reason: "approver error: smart approval is not configured (needs a model and a base URL)",
  error: true,
};

export const smartPolicy: ApprovalPolicyFactory = (opts, state) => {
  const verdicts = new Map<string, Promise<ApproverVerdict>>();

  async function verdictFor(req: FlaggedCommand): Promise<ApproverVerdict & { cached?: boolean }> {
    // No approver model (the scripted demo, or no endpoint): fail-closed.
    if (!opts.smart) return NOT_CONFIGURED;
    const key = `${normalizeCommand(req.command)}\u0000${req.cwd ?? ""}`;
    const pending = verdicts.get(key);
    if (pending) {
      state.counters.cache_hits++;
      return { ...(await pending), cached: true };
    }
    state.counters.smart_calls++;
    const promise = askApprover(opts.smart, { ...req, userTask: opts.userTask }).then((v) => {
      addUsage(state.usage, v.usage);
      // A failure is not a verdict: the next identical command asks again.
      if (v.error) verdicts.delete(key);
      return v;
    });
    verdicts.set(key, promise);
    return promise;
  }

  return {
    consultsAllowlist: true,
    async decide(req) {
      const { decision, reason, error, cached } = await verdictFor(req);
      // The message is what the model is told on a deny.
      const message = `BLOCKED by smart approval: ${req.description}. Reason: ${reason}. ${DO_NOT_RETRY}`;
      return { decision, by: "smart", reason, message, cached, error };
    },
  };
};
