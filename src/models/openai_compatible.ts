/**
 * Provider `openai`: any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, vLLM, …), plain or
 * streaming, over the one keep-alive transport (http_transport.ts). One attempt per call: the scheduler's
 * retry layer retries, and every failure is classified into a ProviderError for it (failure.ts).
 */
import { basicAuthorization, splitUrlCredentials } from "../core/url_credentials.js";
import type { ChatModel, ChatRequest, ChatResponse } from "../core/chat.js";
import type { SamplingSent } from "../core/rl_tokens.js";
import { buildRequestBody, requestBodySerializer } from "./chat_request.js";
import { parseCompletion, StreamAssembler } from "./chat_response.js";
import { HttpStatusError } from "./error_body.js";
import { classifyFailure, ConnectionFailure, StreamErrorEvent } from "./failure.js";
import {
  createHttpTransport,
  postTarget,
  readText,
  serverSentEvents,
  type HttpReply,
  type PostTarget,
} from "./http_transport.js";
import {
  isOpenRouter,
  ProviderError,
  settlesOnAbort,
  type ModelEndpointOptions,
  type ModelProvider,
} from "./provider.js";
import { samplingSent } from "./token_capture.js";

export { isOpenRouter };
export { buildRequestBody, serializeRequestBody, toApiMessages } from "./chat_request.js";
export {
  describeNonCompletion,
  invalidUsageFields,
  normalizeUsage,
  parseCompletion,
  StreamAssembler,
  usageMissing,
} from "./chat_response.js";
export { classifyFailure, parseRetryAfter } from "./failure.js";

/** `<base URL>/chat/completions`, the base URL's query kept (Azure-style `?api-version=`). */
export function completionsUrl(baseURL: string): URL {
  const url = new URL(baseURL);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
  return url;
}

/**
 * The headers of every request of one model: JSON both ways, the key as a Bearer token (or the URL's
 * credentials as Basic auth), then the configured headers, which win over ours (`Authorization` included).
 */
export function requestHeaders(opts: ModelEndpointOptions, basic: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    accept: "application/json",
    "content-type": "application/json",
    "user-agent": "hermes-batch",
    // Never the OPENAI_API_KEY of the environment: the endpoint may be another host.
    authorization: basic ?? `Bearer ${opts.apiKey || "no-key"}`,
  };
  for (const [name, value] of Object.entries(opts.headers ?? {})) headers[name.toLowerCase()] = value.trim();
  return headers;
}

/** A 2xx body that is not an event stream, as the completion parser takes it (undefined/null when empty). */
async function jsonOrText(reply: HttpReply, type: string): Promise<unknown> {
  const text = await readText(reply);
  if (reply.status === 204) return null;
  if (type.includes("application/json") || type.endsWith("+json")) return text === "" ? undefined : JSON.parse(text);
  return text;
}

/** The chunks of a completion stream into one response; an error event throws, `[DONE]` ends it. */
async function readStream(reply: HttpReply, capture: SamplingSent | undefined): Promise<ChatResponse> {
  const acc = new StreamAssembler(capture);
  let done = false;
  for await (const { data } of serverSentEvents(reply.body)) {
    // After [DONE] the body is still read to its end, so that its socket can serve the next request.
    if (done || data.startsWith("[DONE]")) {
      done = true;
      continue;
    }
    const chunk = JSON.parse(data) as { error?: unknown } | null;
    if (chunk?.error) throw new StreamErrorEvent(chunk.error);
    acc.push(chunk);
  }
  return acc.result();
}

function createOpenAIChatModel(opts: ModelEndpointOptions): ChatModel {
  // One keep-alive pool per model; the run's connection limit bounds how many requests want a socket at once.
  const transport = createHttpTransport({ maxSockets: opts.maxSockets });
  const credentials = splitUrlCredentials(opts.baseURL);
  // A base URL or header that cannot be sent fails each call (as a non-retryable model error), not the run's start.
  let target: PostTarget | Error;
  try {
    target = postTarget(completionsUrl(credentials.url), requestHeaders(opts, basicAuthorization(credentials)));
  } catch (err) {
    target = err instanceof Error ? err : new Error(String(err));
  }
  // The sampling parameters every request of this model sends (the same for each: they come from the options).
  const capture = opts.rlCapture ? samplingSent(buildRequestBody(opts, { messages: [] })) : undefined;
  const requestBody = requestBodySerializer(opts);

  // One async function per call (not an attempt inside a wrapper): its frame is kept while the answer is awaited.
  async function complete(req: ChatRequest): Promise<ChatResponse> {
    try {
      if (target instanceof Error)
        throw new ProviderError(`model request failed: ${target.message}`, { retryable: false });
      let reply: HttpReply;
      try {
        reply = await transport.post(target, requestBody(req), req.signal);
      } catch (err) {
        throw err instanceof HttpStatusError ? err : new ConnectionFailure(err);
      }
      // A server that ignores `stream: true` and answers with one JSON body is read as such.
      const type = reply.mediaType;
      let response: ChatResponse;
      try {
        response =
          type === "text/event-stream"
            ? await readStream(reply, capture)
            : parseCompletion(await jsonOrText(reply, type), capture);
      } catch (err) {
        throw isTransportError(err) ? new ConnectionFailure(err) : err;
      }
      // A stream cut by an abort may end quietly: never take the partial answer.
      req.signal?.throwIfAborted();
      return response;
    } catch (err) {
      // Whatever broke when the signal fired, the abort is what happened (the scheduler names it).
      if (req.signal?.aborted) throw req.signal.reason;
      throw classifyFailure(err);
    }
  }

  // Every wait of a call ends when its signal aborts: the transport destroys the request (and a body being
  // read), and what is read after an abort is never taken.
  return settlesOnAbort({ name: opts.model, complete });
}

/** An error of the socket or of the body's decoding (not of our parsing): it has a Node error code. */
function isTransportError(err: unknown): boolean {
  return typeof (err as { code?: unknown })?.code === "string";
}

export const openaiProvider: ModelProvider = { name: "openai", create: createOpenAIChatModel };
