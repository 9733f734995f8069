/** Picks the chat model for a run: the built-in scripted demo, or an OpenAI-compatible endpoint. */
import type { RunConfig } from "../config/run_config.js";
import { UserError } from "../core/errors.js";
import { createOpenAIChatModel } from "./openai_compatible.js";
import { limiterKey, sharedLimiter } from "../scheduler/concurrency.js";
import { ScriptedModel } from "./scripted.js";
import type { ChatModel } from "../core/chat.js";

export const DEFAULT_BASE_URL = "https://openrouter.ai/api/v1";

/** `scripted` or `scripted:<latency ms>` (the latency simulates a remote model, for benchmarks). */
export function parseScriptedModel(name: string | undefined): { latencyMs: number } | undefined {
  const m = /^scripted(?::(\d+))?$/.exec(name ?? "");
  return m ? { latencyMs: m[1] ? Number(m[1]) : 0 } : undefined;
}

export function createChatModel(config: RunConfig, opts: { workers: number }): ChatModel {
  const scripted = parseScriptedModel(config.model);
  if (scripted) return new ScriptedModel(scripted.latencyMs);
  if (!config.model) throw new UserError("--model is required (use --model scripted for the built-in demo model)");
  const baseURL = config.base_url ?? DEFAULT_BASE_URL;
  const maxConnections = config.max_connections ?? config.concurrency;
  // Each worker thread has its own limiter: the run-wide cap is split between them.
  const perWorker = Math.max(1, Math.ceil(maxConnections / Math.max(1, opts.workers)));
  return createOpenAIChatModel({
    model: config.model,
    baseURL,
    apiKey: config.api_key,
    maxTokens: config.max_tokens,
    temperature: config.temperature,
    reasoningEffort: config.reasoning_effort,
    extraBody: config.extra_body,
    stream: config.stream,
    requestTimeoutMs: config.request_timeout * 1000,
    maxRetries: config.max_retries,
    limiter: sharedLimiter(limiterKey(baseURL, config.model), perWorker),
  });
}
