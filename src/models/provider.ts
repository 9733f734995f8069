/**
 * A model provider turns one chat request into one request to its backend. It never retries and never
 * waits for a connection slot: the scheduler (src/scheduler/) wraps every provider with the one retry
 * layer and the run's limiter. A failure the scheduler may retry is a `ProviderError` with `retryable`.
 */
import { ModelError, type ChatModel } from "../core/chat.js";

/** Everything a provider needs to reach one endpoint. */
export interface ModelEndpointOptions {
  model: string;
  baseURL: string;
  /** Omitted: a placeholder is sent, for key-less local servers (the CLI resolves env keys itself). */
  apiKey?: string;
  maxTokens?: number;
  temperature?: number;
  reasoningEffort?: string;
  /** Merged into every request body last (provider routing, vendor options, …). */
  extraBody?: Record<string, unknown>;
  stream?: boolean;
  /** Extra HTTP headers on every request (gateways); they win over ours, `Authorization` included. */
  headers?: Record<string, string>;
  /** OpenRouter provider routing, sent as the body's `provider` (before extraBody, which may replace it). */
  providerRouting?: ProviderRouting;
  /** Send assistant `reasoning` back to the endpoint as `reasoning_content` (off by default). */
  sendReasoningBack?: boolean;
  /** Ask for the engine's token ids and logprobs and return them with each answer (`--rl-capture`; agent calls only). */
  rlCapture?: boolean;
  /** Sockets of the keep-alive pool (the run's connection limit). */
  maxSockets?: number;
}

/** OpenRouter's `provider` preferences, named as in Hermes' flags (providers_allowed → only, …). */
export interface ProviderRouting {
  only?: string[];
  ignore?: string[];
  order?: string[];
  sort?: string;
}

/** OpenRouter and Nous endpoints take `reasoning` and `provider` in the body (Hermes' test on the URL). */
export function isOpenRouter(baseURL: string): boolean {
  return /openrouter|nousresearch/i.test(baseURL);
}

/** The effort Hermes asks OpenRouter for when none is configured. */
export const OPENROUTER_DEFAULT_REASONING_EFFORT = "medium";

export interface ModelProvider {
  readonly name: string;
  /** A ChatModel whose `complete` makes exactly one attempt; the request's signal ends it. */
  create(options: ModelEndpointOptions): ChatModel;
}

const settlingOnAbort = new WeakSet<ChatModel>();

/**
 * Marks a model whose `complete` settles by itself as soon as its request's signal aborts (it rejects with
 * the signal's reason): the scheduler then awaits it directly instead of racing it against the signal.
 */
export function settlesOnAbort<M extends ChatModel>(model: M): M {
  settlingOnAbort.add(model);
  return model;
}

export function isSettlingOnAbort(model: ChatModel): boolean {
  return settlingOnAbort.has(model);
}

/** One failed attempt, classified by the provider for the retry layer. */
export class ProviderError extends ModelError {
  readonly rateLimited: boolean;
  /** What the endpoint asked for (`retry-after`), in ms. */
  readonly retryAfterMs?: number;
  constructor(
    message: string,
    opts: { status?: number; retryable: boolean; rateLimited?: boolean; retryAfterMs?: number },
  ) {
    super(message, opts.status, opts.retryable);
    this.name = "ProviderError";
    this.rateLimited = opts.rateLimited ?? false;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** The error the scheduler throws when the caller's signal aborted the call (also while waiting or backing off). */
export class ModelAbortError extends Error {
  override readonly name = "AbortError";
  constructor(reason?: unknown) {
    super("model request aborted", { cause: reason });
  }
}
