/**
 * The agent loop's record of its model calls: when each ran, what it cost in tokens, how it ended, and which
 * saved message (if any) it produced; and which saved messages the harness wrote itself. Messages are tracked
 * by identity, so answers the loop later removes (a replaced reasoning-only answer) count as thrown away.
 */
import type { ChatMessage, ChatResponse } from "../core/chat.js";
import type { ModelCallRecord } from "../core/records.js";

interface LoggedCall {
  record: Omit<ModelCallRecord, "message_index">;
  message?: ChatMessage;
}

export class ModelCallLog {
  private readonly calls: LoggedCall[] = [];
  private readonly injected = new Set<ChatMessage>();

  constructor(private readonly configuredModel: string) {}

  /** Records a finished call; `started` is when its request was sent. */
  add(started: Date, response: ChatResponse): void {
    this.calls.push({
      record: {
        started_at: started.toISOString(),
        ended_at: new Date().toISOString(),
        model: response.model ?? this.configuredModel,
        finish_reason: response.finishReason,
        usage: { ...response.usage },
      },
    });
  }

  /** The message just saved came from the latest call. */
  keep(message: ChatMessage): void {
    const last = this.calls.at(-1);
    if (last) last.message = message;
  }

  /** The message just saved was written by the harness (a continuation or closing turn, a stand-in answer). */
  inject(message: ChatMessage): void {
    this.injected.add(message);
  }

  /** Every call in order, with the index of its message in `messages` when that message is still there. */
  records(messages: readonly ChatMessage[]): ModelCallRecord[] {
    return this.calls.map(({ record, message }) => {
      const index = message ? messages.indexOf(message) : -1;
      return index >= 0 ? { ...record, message_index: index } : { ...record };
    });
  }

  /** Indexes in `messages` of the harness-written messages still there. */
  injectedIndexes(messages: readonly ChatMessage[]): number[] {
    const out: number[] = [];
    messages.forEach((m, i) => this.injected.has(m) && out.push(i));
    return out;
  }
}
