/**
 * Which model calls of one agent loop reached the saved conversation (`--rl-capture`). The loop reports
 * every answer it got (`sent`) and the message it made of an answer (`link`); a call is kept when its
 * message is still in the conversation at the end. Everything else was retried or thrown away by the loop
 * (empty answers, unrepairable tool-call arguments, a reasoning-only answer replaced later, a cut tool
 * call asked again, an empty closing summary): the model never saw those tokens again, so they are only
 * counted, never trained on.
 */
import type { ChatMessage, ChatResponse, Usage } from "../core/chat.js";
import type { CallTokens } from "../core/rl_tokens.js";

/** One kept call: where its answer sits in the saved conversation, and what the engine said about it. */
export interface KeptCall {
  /** Position among all model calls of the loop (0-based, discarded ones included). */
  call: number;
  message_index: number;
  finish_reason: string;
  /** Undefined when the provider returned no token data at all. */
  tokens: CallTokens | undefined;
  /** Undefined when the endpoint sent no usage (nothing to check the ids against). */
  usage: Usage | undefined;
}

export class TokenLedger {
  private readonly callOf = new WeakMap<ChatResponse, number>();
  private readonly byMessage = new Map<ChatMessage, { call: number; response: ChatResponse }>();
  private calls = 0;

  /** Every answer the loop received, in order. */
  sent(response: ChatResponse): void {
    this.callOf.set(response, this.calls++);
  }

  /** `message` was made from `response` and joined the conversation. */
  link(message: ChatMessage, response: ChatResponse): void {
    const call = this.callOf.get(response);
    if (call !== undefined) this.byMessage.set(message, { call, response });
  }

  /** The kept calls in conversation order, and how many calls were left out. */
  collect(messages: readonly ChatMessage[]): { turns: KeptCall[]; discarded: number } {
    const turns: KeptCall[] = [];
    for (const [index, m] of messages.entries()) {
      const hit = this.byMessage.get(m);
      if (!hit) continue;
      const r = hit.response;
      turns.push({
        call: hit.call,
        message_index: index,
        finish_reason: r.finishReason,
        tokens: r.tokens,
        usage: r.usageMissing ? undefined : r.usage,
      });
    }
    return { turns, discarded: this.calls - turns.length };
  }
}
