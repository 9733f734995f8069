/**
 * `--rl-capture` on the wire: what an agent request adds (vLLM's `return_token_ids` and `logprobs`), and
 * the token ids and logprobs read back from a whole completion or from stream chunks. vLLM puts
 * `prompt_token_ids` at the top of the body (in streaming: of the first chunk), the sampled ids in
 * `choices[0].token_ids` (in streaming: one delta per chunk), and one `logprobs.content[].logprob` per token.
 */
import { SAMPLING_KEYS, type CallTokens, type SamplingSent } from "../core/rl_tokens.js";

/** Added to an agent request body by `--rl-capture` (before `extra_body`, which may still override them). */
export const RL_CAPTURE_FIELDS: Readonly<Record<string, unknown>> = {
  logprobs: true,
  top_logprobs: 0,
  return_token_ids: true,
};

/** The sampling parameters a request body carries. */
export function samplingSent(body: Record<string, unknown>): SamplingSent {
  const out: SamplingSent = {};
  for (const key of SAMPLING_KEYS) {
    const v = body[key];
    if (typeof v === "number" && Number.isFinite(v)) out[key] = v;
  }
  return out;
}

/** An array of token ids (non-negative integers), else null. */
function tokenIds(v: unknown): number[] | null {
  if (!Array.isArray(v)) return null;
  for (const x of v) if (!Number.isInteger(x) || (x as number) < 0) return null;
  return v as number[];
}

/** The logprob of each entry of `logprobs.content`, else null (an entry without a finite logprob spoils it). */
function logprobsOf(v: unknown): number[] | null {
  const content = (v as { content?: unknown } | null | undefined)?.content;
  if (!Array.isArray(content)) return null;
  const out: number[] = [];
  for (const entry of content) {
    const lp = (entry as { logprob?: unknown } | null)?.logprob;
    if (typeof lp !== "number" || Number.isNaN(lp)) return null;
    // -Infinity is a real answer (a token sampled at probability 0 by a greedy tie); JSON cannot carry it.
    out.push(Math.max(lp, -1e30));
  }
  return out;
}

/** The tokens of a non-streaming completion body (first choice). */
export function tokensOfCompletion(
  body: Record<string, unknown>,
  choice: Record<string, unknown>,
  sampling: SamplingSent,
): CallTokens {
  return {
    prompt_token_ids: tokenIds(body.prompt_token_ids) ?? tokenIds(choice.prompt_token_ids),
    completion_token_ids: tokenIds(choice.token_ids),
    logprobs: logprobsOf(choice.logprobs),
    sampling,
  };
}

/** Collects the ids and logprobs of a stream, chunk by chunk (vLLM's chunked form). */
export class StreamTokens {
  private prompt: number[] | null = null;
  private readonly completion: number[] = [];
  private readonly logprobs: number[] = [];
  private sawIds = false;
  private sawLogprobs = false;
  private broken = false;

  push(chunk: Record<string, unknown>, choice: Record<string, unknown> | undefined): void {
    this.prompt ??= tokenIds(chunk.prompt_token_ids) ?? (choice ? tokenIds(choice.prompt_token_ids) : null);
    if (!choice) return;
    if (choice.token_ids !== undefined && choice.token_ids !== null) {
      const ids = tokenIds(choice.token_ids);
      if (ids) {
        this.sawIds = true;
        for (const id of ids) this.completion.push(id);
      } else this.broken = true;
    }
    if (choice.logprobs !== undefined && choice.logprobs !== null) {
      const lps = logprobsOf(choice.logprobs);
      if (lps) {
        this.sawLogprobs = true;
        for (const lp of lps) this.logprobs.push(lp);
      } else this.broken = true;
    }
  }

  result(sampling: SamplingSent): CallTokens {
    return {
      prompt_token_ids: this.prompt,
      completion_token_ids: this.sawIds && !this.broken ? this.completion : null,
      logprobs: this.sawLogprobs && !this.broken ? this.logprobs : null,
      sampling,
    };
  }
}
