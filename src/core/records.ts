/** What flows between the planner, the workers and the writer. Keep it small: it crosses threads. */
import type { ChatMessage, Usage } from "./chat.js";

/** One approval decision, as recorded in the trajectory's `approvals`. */
export interface ApprovalRecord {
  command: string;
  pattern: string;
  description?: string;
  decision: "approve" | "deny";
  by: string;
  reason: string;
  latency_ms: number;
  cached?: boolean;
}

/** Outcome classes. Infrastructure failures (model_error, environment_error, timeout, cancelled) are retried on resume. */
export type Outcome = "completed" | "max_turns" | "partial" | "model_error" | "environment_error" | "timeout" | "cancelled";

export const DONE_OUTCOMES: ReadonlySet<Outcome> = new Set(["completed", "max_turns", "partial"]);

export interface ToolStat {
  count: number;
  success: number;
  failure: number;
}

export interface VerifyResult {
  command: string;
  exit_code: number;
  passed: boolean;
  output: string;
  timed_out: boolean;
}

/** One line of trajectories.jsonl (Hermes-compatible `conversations` plus raw `messages`). */
export interface TrajectoryEntry {
  prompt_index: number;
  task_id: string;
  conversations: { from: "system" | "human" | "gpt" | "tool"; value: string }[];
  messages: ChatMessage[];
  tools: readonly unknown[];
  metadata: Record<string, unknown>;
  completed: boolean;
  partial: boolean;
  outcome: Outcome;
  api_calls: number;
  toolsets_used: string[];
  tool_stats: Record<string, ToolStat>;
  tool_error_counts: Record<string, number>;
  usage: Usage;
  approval_usage?: Usage;
  approvals: ApprovalRecord[];
  verify?: VerifyResult;
  final_response: string | null;
  error?: string;
  duration_ms: number;
}
