/**
 * The tokens of one model call as the inference engine reported them (vLLM's `return_token_ids` and
 * `logprobs`), for RL training with rollout correction (`--rl-capture`). Kept apart from chat.ts so the
 * capture can change without touching the chat types every provider shares.
 */

/** Sampling parameters of the request as it was sent (only the numeric ones that shape the distribution). */
export type SamplingSent = Partial<Record<(typeof SAMPLING_KEYS)[number], number>>;

export const SAMPLING_KEYS = [
  "temperature",
  "top_p",
  "top_k",
  "min_p",
  "max_tokens",
  "max_completion_tokens",
  "seed",
  "presence_penalty",
  "frequency_penalty",
  "repetition_penalty",
] as const;

export interface CallTokens {
  /** The prompt as the engine tokenised it (chat template applied); null when the answer carried none. */
  prompt_token_ids: number[] | null;
  /** The sampled tokens, null when the answer carried none. */
  completion_token_ids: number[] | null;
  /** One log-probability per sampled token; null when the answer carried none. */
  logprobs: number[] | null;
  sampling: SamplingSent;
}
