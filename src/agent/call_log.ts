/**
 * The agent loop's record of its model calls: when each ran, what it cost in tokens, how it ended, and which
 * saved message (if any) it produced; and which saved messages the harness wrote itself. Messages are tracked
 * by identity, so answers the loop later removes (a replaced reasoning-only answer) count as thrown away.
 */
import type { ChatMessage, ChatResponse } from "../core/chat.js";
import type { ModelCallRecord } from "../core/records.js";
import { isoTime } from "./iso_time.js";

/**
 * A finished call as it was seen: times as epoch ms and the answer's own usage object. The record's ISO strings
 * and usage copy are made once, at the end of the loop: made per call, they would be kept across every later
 * model call of the task (and copied by the young-generation GC each time).
 */
interface LoggedCall {
  startedMs: number;
  endedMs: number;
  model: string;
  finishReason: ModelCallRecord["finish_reason"];
  usage: ModelCallRecord["usage"];
  message?: ChatMessage;
}

export class ModelCallLog {
  private readonly calls: LoggedCall[] = [];
  /** Made on the first harness message (most loops have none). */
  private injected: Set<ChatMessage> | undefined;

  constructor(private readonly configuredModel: string) {}

  /** Records a finished call; `startedMs` is when its request was sent (`Date.now()`). */
  add(startedMs: number, response: ChatResponse): void {
    this.calls.push({
      startedMs,
      endedMs: Date.now(),
      model: response.model ?? this.configuredModel,
      finishReason: response.finishReason,
      usage: response.usage,
    });
  }

  /** The message just saved came from the latest call. */
  keep(message: ChatMessage): void {
    const last = this.calls.at(-1);
    if (last) last.message = message;
  }

  /** The message just saved was written by the harness (a continuation or closing turn, a stand-in answer). */
  inject(message: ChatMessage): void {
    (this.injected ??= new Set()).add(message);
  }

  /** Every call in order, with the index of its message in `messages` when that message is still there. */
  records(messages: readonly ChatMessage[]): ModelCallRecord[] {
    return this.calls.map((call) => {
      const record: ModelCallRecord = {
        started_at: isoTime(call.startedMs),
        ended_at: isoTime(call.endedMs),
        model: call.model,
        finish_reason: call.finishReason,
        usage: { ...call.usage },
      };
      const index = call.message ? messages.indexOf(call.message) : -1;
      if (index >= 0) record.message_index = index;
      return record;
    });
  }

  /** Indexes in `messages` of the harness-written messages still there. */
  injectedIndexes(messages: readonly ChatMessage[]): number[] {
    const out: number[] = [];
    const injected = this.injected;
    if (injected) messages.forEach((m, i) => injected.has(m) && out.push(i));
    return out;
  }
}
