/**
 * `--rl-capture` before the first task: one tiny chat completion to the agent's endpoint, on the same path
 * (streaming or not, same body fields) as the agent's calls. An answer without prompt ids, completion ids or
 * logprobs stops the run in `strict` mode (exit 2, saying which is missing); `best-effort` warns and goes on,
 * and the lines of rl.jsonl say `tokens: null`.
 */
import { UserError } from "../core/errors.js";
import type { ModelEndpoint } from "./factory.js";
import { modelProviders } from "./factory.js";

const PREFLIGHT_TIMEOUT_MS = 60_000;

/** What the endpoint left out of its answer, or an empty list when the capture works. */
async function missingTokenFields(ep: ModelEndpoint, signal?: AbortSignal): Promise<string[]> {
  const provider = await modelProviders.load(ep.provider);
  const model = provider.create({ ...ep.options, rlCapture: true, maxTokens: 8, maxSockets: 1 });
  const timeout = AbortSignal.timeout(PREFLIGHT_TIMEOUT_MS);
  const response = await model.complete({
    messages: [{ role: "user", content: "Reply with the word OK." }],
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  const t = response.tokens;
  const missing: string[] = [];
  if (!t?.prompt_token_ids) missing.push("prompt_token_ids");
  if (!t?.completion_token_ids) missing.push("choices[0].token_ids");
  if (!t?.logprobs) missing.push("choices[0].logprobs.content");
  else if (t.completion_token_ids && t.logprobs.length !== t.completion_token_ids.length)
    missing.push(`one logprob per token (${t.logprobs.length} for ${t.completion_token_ids.length} ids)`);
  return missing;
}

export async function preflightTokenCapture(
  ep: ModelEndpoint,
  mode: "strict" | "best-effort",
  opts: { warn: (line: string) => void; signal?: AbortSignal },
): Promise<void> {
  let missing: string[];
  if (ep.provider !== "openai") {
    missing = [`everything (the ${ep.provider} model has no inference engine)`];
  } else {
    try {
      missing = await missingTokenFields(ep, opts.signal);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      if (mode === "strict")
        throw new UserError(
          `--rl-capture: the model endpoint refused the request for token ids: ${why} (--rl-capture best-effort goes on without them)`,
        );
      opts.warn(
        `--rl-capture best-effort: the model endpoint refused the request for token ids (${why}); going on, rl.jsonl lines will say tokens: null`,
      );
      return;
    }
  }
  if (!missing.length) return;
  const what = `the model endpoint returned no ${missing.join(", ")} (vLLM ≥ 0.10.2 returns them for return_token_ids and logprobs${ep.options.stream ? "; some servers only without --stream" : ""})`;
  if (mode === "strict") throw new UserError(`--rl-capture: ${what}; --rl-capture best-effort goes on without them`);
  opts.warn(`--rl-capture best-effort: ${what}; going on, rl.jsonl lines will say tokens: null`);
}
