/**
 * A vLLM-like handler for the fake OpenAI server (fake_openai.ts): it renders each request with a small chat
 * template, tokenises it with a real BPE tokenizer (gpt-tokenizer, cl100k), and answers the scripted turn with
 * `prompt_token_ids`, `choices[0].token_ids` and `logprobs.content` when the request asks for them
 * (`return_token_ids`, `logprobs`), streaming (prompt ids in the first chunk, id deltas per chunk) or not.
 *
 * The template renders each message as `[[start]]ROLE\nBODY[[end]]\n`, each piece tokenised on its own (as
 * special tokens bound real templates), so an answer rendered back in the next prompt has the same ids as
 * the completion — unless the completion carried reasoning, which the template drops from earlier turns (as
 * Qwen3's does): then the next prompt no longer extends prompt + completion.
 */
import { encode } from "gpt-tokenizer";
import type { Handler, RecordedRequest, Reply, ToolCallSpec } from "./fake_openai.js";

export interface ScriptedTurn {
  content?: string | null;
  reasoning?: string;
  toolCalls?: ToolCallSpec[];
  finishReason?: string;
}

/** What the server sent for one request: the ids a capture must reproduce exactly. */
export interface ServedCall {
  requestIndex: number;
  prompt_token_ids: number[];
  token_ids: number[];
  logprobs: number[];
}

export interface TokenServerOptions {
  /** Added to the reported usage's prompt_tokens (a server whose ids disagree with its usage). */
  usagePromptSkew?: number;
  /** Leave every `n`-th logprob out (a server whose logprob count differs from its ids). */
  dropLogprob?: boolean;
}

const START = "[[start]]";
const END = "[[end]]";

const ids = (...pieces: string[]) => pieces.filter((p) => p !== "").flatMap((p) => encode(p));

function toolCallText(name: string, args: string): string {
  return `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;
}

function bodyOf(content: string | null | undefined, calls: { name: string; arguments: string }[]): string {
  return (content ?? "") + calls.map((c) => toolCallText(c.name, c.arguments)).join("");
}

/** The prompt ids of a request: tools, every message, then the generation prompt. */
export function renderPrompt(body: { messages: any[]; tools?: unknown[] }): number[] {
  const out: number[] = [];
  if (body.tools?.length) out.push(...ids(START, "tools\n", JSON.stringify(body.tools), END, "\n"));
  for (const m of body.messages) {
    const calls = (m.tool_calls ?? []).map((c: any) => ({ name: c.function.name, arguments: c.function.arguments }));
    out.push(
      ...ids(
        START,
        `${m.role}\n`,
        m.role === "assistant" ? bodyOf(m.content, calls) : String(m.content ?? ""),
        END,
        "\n",
      ),
    );
  }
  out.push(...ids(START, "assistant\n"));
  return out;
}

/** A fake but deterministic logprob per token. */
const logprobOf = (id: number) => -(((id % 97) + 1) / 100);

function logprobContent(tokens: number[]) {
  return {
    content: tokens.map((id) => ({ token: `token_id:${id}`, logprob: logprobOf(id), bytes: [], top_logprobs: [] })),
  };
}

let replyCounter = 0;

export function tokenizingHandler(
  script: (req: RecordedRequest) => ScriptedTurn,
  opts: TokenServerOptions = {},
): { handler: Handler; served: ServedCall[] } {
  const served: ServedCall[] = [];
  const handler: Handler = (req) => {
    const turn = script(req);
    const wantIds = req.body.return_token_ids === true;
    const wantLogprobs = req.body.logprobs === true;
    const calls = (turn.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_t${++replyCounter}_${i}`,
      name: c.name,
      arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
    }));
    const thinkIds = turn.reasoning ? ids(`<think>${turn.reasoning}</think>`) : [];
    const restIds = ids(bodyOf(turn.content, calls), END);
    const prompt = renderPrompt(req.body);
    const completion = [...thinkIds, ...restIds];
    let logprobs = completion.map(logprobOf);
    if (opts.dropLogprob) logprobs = logprobs.slice(1);
    served.push({ requestIndex: req.index, prompt_token_ids: prompt, token_ids: completion, logprobs });
    const message: Record<string, unknown> = {
      role: "assistant",
      content: turn.content ?? null,
      ...(turn.reasoning ? { reasoning_content: turn.reasoning } : {}),
      ...(calls.length
        ? {
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: "function",
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : {}),
    };
    const finish = turn.finishReason ?? (calls.length ? "tool_calls" : "stop");
    const usage = {
      prompt_tokens: prompt.length + (opts.usagePromptSkew ?? 0),
      completion_tokens: completion.length,
      total_tokens: prompt.length + completion.length,
    };
    const base = {
      id: `chatcmpl-tok-${++replyCounter}`,
      created: Math.floor(Date.now() / 1000),
      model: req.body.model,
    };
    const lpsOf = (from: number, to: number) =>
      wantLogprobs ? { logprobs: logprobContent(completion.slice(from, to)) } : {};
    if (req.body.stream === true)
      return streamReply(base, { prompt, completion, thinkIds, message, finish, usage, wantIds, lpsOf, calls });
    const choice = {
      index: 0,
      message,
      finish_reason: finish,
      ...(wantIds ? { token_ids: completion } : {}),
      ...(wantLogprobs
        ? { logprobs: opts.dropLogprob ? logprobContent(completion.slice(1)) : logprobContent(completion) }
        : {}),
    };
    return {
      kind: "json",
      body: {
        ...base,
        object: "chat.completion",
        choices: [choice],
        usage,
        ...(wantIds ? { prompt_token_ids: prompt } : {}),
      },
    };
  };
  return { handler, served };
}

interface StreamParts {
  prompt: number[];
  completion: number[];
  thinkIds: number[];
  message: Record<string, unknown>;
  finish: string;
  usage: unknown;
  wantIds: boolean;
  lpsOf: (from: number, to: number) => object;
  calls: { id: string; name: string; arguments: string }[];
}

/** vLLM's chunked form: prompt ids in the first chunk, each chunk's `token_ids` the delta it carries. */
function streamReply(base: object, p: StreamParts): Reply {
  const chunk = (delta: object, from: number, to: number, finish: string | null = null) => ({
    ...base,
    object: "chat.completion.chunk",
    choices: [
      {
        index: 0,
        delta,
        finish_reason: finish,
        ...(p.wantIds ? { token_ids: p.completion.slice(from, to) } : {}),
        ...(to > from ? p.lpsOf(from, to) : {}),
      },
    ],
  });
  const think = p.thinkIds.length;
  const chunks: object[] = [
    { ...chunk({ role: "assistant", content: "" }, 0, 0), ...(p.wantIds ? { prompt_token_ids: p.prompt } : {}) },
  ];
  if (think) chunks.push(chunk({ reasoning_content: p.message.reasoning_content }, 0, think));
  const mid = think + Math.ceil((p.completion.length - think) / 2);
  chunks.push(chunk({ content: p.message.content ?? "" }, think, mid));
  const toolCalls = p.calls.map((c, index) => ({
    index,
    id: c.id,
    type: "function",
    function: { name: c.name, arguments: c.arguments },
  }));
  chunks.push(chunk(toolCalls.length ? { tool_calls: toolCalls } : {}, mid, p.completion.length));
  chunks.push(chunk({}, 0, 0, p.finish));
  chunks.push({ ...base, object: "chat.completion.chunk", choices: [], usage: p.usage });
  return { kind: "sse", chunks };
}
