/**
 * The body of one chat-completions request: our messages in the API's shape, the run's options as fields,
 * serialised with each message's JSON made once per conversation.
 */
import type { ChatMessage, ChatRequest } from "../core/chat.js";
import { isOpenRouter, type ModelEndpointOptions } from "./provider.js";
import { RL_CAPTURE_FIELDS } from "./token_capture.js";

/** Our messages in the API's shape. Assistant reasoning stays local unless `sendReasoningBack`. */
export function toApiMessages(messages: ChatMessage[], sendReasoningBack = false): Record<string, unknown>[] {
  return messages.map((m) => {
    switch (m.role) {
      case "system":
      case "user":
        return { role: m.role, content: m.content };
      case "tool":
        return { role: "tool", tool_call_id: m.tool_call_id, content: m.content };
      case "assistant": {
        const out: Record<string, unknown> = { role: "assistant" };
        const hasCalls = !!m.tool_calls?.length;
        out.content = m.content ?? (hasCalls ? null : "");
        if (hasCalls)
          out.tool_calls = m.tool_calls!.map((tc) => ({ id: tc.id, type: "function", function: { ...tc.function } }));
        if (sendReasoningBack && m.reasoning) out.reasoning_content = m.reasoning;
        return out;
      }
    }
  });
}

/** The JSON body of one chat-completions request. */
export function buildRequestBody(opts: ModelEndpointOptions, req: ChatRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: opts.model,
    messages: toApiMessages(req.messages, opts.sendReasoningBack),
  };
  if (req.tools?.length) body.tools = req.tools;
  if (opts.maxTokens !== undefined) body.max_tokens = opts.maxTokens;
  if (opts.temperature !== undefined) body.temperature = opts.temperature;
  if (opts.reasoningEffort) {
    if (isOpenRouter(opts.baseURL)) {
      body.reasoning =
        opts.reasoningEffort === "none" ? { effort: "none" } : { enabled: true, effort: opts.reasoningEffort };
    } else {
      body.reasoning_effort = opts.reasoningEffort;
    }
  }
  if (opts.providerRouting && Object.keys(opts.providerRouting).length) body.provider = { ...opts.providerRouting };
  if (opts.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  if (req.responseFormat) body.response_format = req.responseFormat;
  if (opts.rlCapture) Object.assign(body, RL_CAPTURE_FIELDS);
  if (opts.extraBody) Object.assign(body, opts.extraBody);
  return body;
}

/**
 * The JSON text of each message and tool list already sent, by object identity: a loop's history is sent again
 * with every turn, so each message is serialised once instead of once per turn. Messages are never changed after
 * they join a conversation (the loop builds a new object for every change), which is what makes this safe.
 * One cache per `sendReasoningBack` value, since that changes an assistant message's JSON.
 */
const messageJsonCache = [new WeakMap<ChatMessage, string>(), new WeakMap<ChatMessage, string>()] as const;
const toolsJsonCache = new WeakMap<readonly unknown[], string>();

function messageJson(m: ChatMessage, sendReasoningBack: boolean): string {
  const cache = messageJsonCache[sendReasoningBack ? 1 : 0];
  let json = cache.get(m);
  if (json === undefined) {
    json = JSON.stringify(toApiMessages([m], sendReasoningBack)[0]);
    cache.set(m, json);
  }
  return json;
}

function toolsJson(tools: readonly unknown[]): string {
  let json = toolsJsonCache.get(tools);
  if (json === undefined) {
    json = JSON.stringify(tools);
    toolsJsonCache.set(tools, json);
  }
  return json;
}

/** The JSON around the messages and tools of one request: `{"model":…,"messages":[` and the fields after them. */
interface BodyFrame {
  head: string;
  /** `}`, or `,"max_tokens":…}` and the other fields after the tools. */
  tail: string;
}

function bodyFrame(opts: ModelEndpointOptions, responseFormat: ChatRequest["responseFormat"]): BodyFrame {
  const { model, messages: _none, ...rest } = buildRequestBody(opts, { messages: [], responseFormat });
  const fields = JSON.stringify(rest);
  return {
    head: `{"model":${JSON.stringify(model)},"messages":[`,
    tail: fields === "{}" ? "}" : `,${fields.slice(1)}`,
  };
}

/**
 * `JSON.stringify(buildRequestBody(opts, req))` with the same keys in the same order, built from cached message
 * and tool JSON; what surrounds them is made once for `opts` (a model's options never change). An `extraBody`
 * that sets `messages` or `tools` itself takes the plain path.
 */
export function requestBodySerializer(opts: ModelEndpointOptions): (req: ChatRequest) => string {
  if (opts.extraBody && ("messages" in opts.extraBody || "tools" in opts.extraBody))
    return (req) => JSON.stringify(buildRequestBody(opts, req));
  const plain = bodyFrame(opts, undefined);
  const reasoningBack = !!opts.sendReasoningBack;
  return (req) => {
    const { head, tail } = req.responseFormat ? bodyFrame(opts, req.responseFormat) : plain;
    let json = head;
    const messages = req.messages;
    for (let i = 0; i < messages.length; i++) json += (i ? "," : "") + messageJson(messages[i]!, reasoningBack);
    json += "]";
    if (req.tools?.length) json += `,"tools":${toolsJson(req.tools)}`;
    return json + tail;
  };
}

/** One request's body (see `requestBodySerializer`, which a model client keeps). */
export function serializeRequestBody(opts: ModelEndpointOptions, req: ChatRequest): string {
  return requestBodySerializer(opts)(req);
}
