/** An agent loop stopped at a time limit, the task going on to be graded (Harbor's agent phase, a scored row). */
import type { LinkedAbort } from "../core/abort.js";
import { AgentLoopAborted, type AgentLoopResult } from "./loop.js";

/**
 * Runs the loop under `limit` (a deadline linked to the task's `signal`): when the deadline ends it, what the agent
 * did so far and `timeLimited`. Anything else that stops the loop (the task's own signal: cancel, a lost sandbox)
 * is thrown as it came.
 */
export async function loopUntilLimit(
  limit: LinkedAbort,
  agentLoop: (signal: AbortSignal) => Promise<AgentLoopResult>,
  signal: AbortSignal,
): Promise<{ loop: AgentLoopResult; timeLimited: boolean }> {
  try {
    return { loop: await agentLoop(limit.signal), timeLimited: false };
  } catch (err) {
    if (err instanceof AgentLoopAborted && limit.timedOut && !signal.aborted)
      return { loop: err.partialResult, timeLimited: true };
    throw err;
  }
}
