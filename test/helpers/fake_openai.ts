/**
 * A local OpenAI-compatible chat-completions server for tests, on 127.0.0.1 only.
 * Each request is answered by a handler the test gives; requests are recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  index: number;
  /** Date.now() when the request arrived. */
  at: number;
  path: string;
  headers: IncomingMessage["headers"];
  body: any;
}

export interface ToolCallSpec {
  name: string;
  arguments: unknown; // an object (serialised) or a raw string (sent as is, e.g. bad JSON)
  id?: string;
}

/** What the handler returns for one request. */
export type Reply =
  | { kind: "json"; status?: number; headers?: Record<string, string>; body: unknown }
  | { kind: "raw"; status: number; headers?: Record<string, string>; text: string }
  /** A 200 event stream of these chunks as given (objects are JSON-encoded), then `[DONE]` unless `done: false`. */
  | { kind: "sse"; chunks: unknown[]; done?: boolean }
  | { kind: "hang" }
  | { kind: "reset" };

export type Handler = (req: RecordedRequest) => Reply | Promise<Reply>;

let callCounter = 0;

function toolCallsOf(calls: ToolCallSpec[]) {
  return calls.map((c) => ({
    id: c.id ?? `call_${++callCounter}`,
    type: "function",
    function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) },
  }));
}

/** A chat completion whose assistant message has the given text, tool calls and reasoning. */
export function completion(opts: {
  content?: string | null;
  toolCalls?: ToolCallSpec[];
  reasoning?: string;
  reasoningField?: "reasoning_content" | "reasoning";
  finishReason?: string;
  /** null: the reply carries no usage at all (some servers and gateways). Extra keys (token details) are sent as given. */
  usage?: { prompt_tokens: number; completion_tokens: number; [detail: string]: unknown } | null;
  model?: string;
}): Reply {
  const message: Record<string, unknown> = { role: "assistant", content: opts.content ?? null };
  if (opts.toolCalls?.length) message.tool_calls = toolCallsOf(opts.toolCalls);
  if (opts.reasoning) message[opts.reasoningField ?? "reasoning_content"] = opts.reasoning;
  const usage = opts.usage === null ? undefined : (opts.usage ?? { prompt_tokens: 10, completion_tokens: 5 });
  return {
    kind: "json",
    body: {
      id: `chatcmpl-${++callCounter}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: opts.model ?? "fake-model",
      choices: [
        { index: 0, message, finish_reason: opts.finishReason ?? (opts.toolCalls?.length ? "tool_calls" : "stop") },
      ],
      ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
    },
  };
}

export const text = (content: string, extra: { reasoning?: string } = {}): Reply => completion({ content, ...extra });
export const toolCalls = (calls: ToolCallSpec[], content: string | null = null): Reply =>
  completion({ content, toolCalls: calls });
export const httpError = (status: number, message: string, headers: Record<string, string> = {}): Reply => ({
  kind: "json",
  status,
  headers,
  body: { error: { message, type: "test_error", code: status } },
});

/** Server-sent-event chunks equivalent to a completion reply, for `stream: true` requests. */
function streamChunks(reply: Extract<Reply, { kind: "json" }>): string[] {
  const body = reply.body as any;
  const choice = body.choices[0];
  const msg = choice.message;
  const base = { id: body.id, object: "chat.completion.chunk", created: body.created, model: body.model };
  const chunks: unknown[] = [];
  chunks.push({ ...base, choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }] });
  for (const field of ["reasoning_content", "reasoning"]) {
    if (msg[field])
      chunks.push({ ...base, choices: [{ index: 0, delta: { [field]: msg[field] }, finish_reason: null }] });
  }
  if (msg.content) {
    const mid = Math.ceil(msg.content.length / 2);
    for (const part of [msg.content.slice(0, mid), msg.content.slice(mid)]) {
      if (part) chunks.push({ ...base, choices: [{ index: 0, delta: { content: part }, finish_reason: null }] });
    }
  }
  (msg.tool_calls ?? []).forEach((tc: any, i: number) => {
    const args: string = tc.function.arguments;
    const mid = Math.ceil(args.length / 2);
    chunks.push({
      ...base,
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: i,
                id: tc.id,
                type: "function",
                function: { name: tc.function.name, arguments: args.slice(0, mid) },
              },
            ],
          },
          finish_reason: null,
        },
      ],
    });
    chunks.push({
      ...base,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: i, function: { arguments: args.slice(mid) } }] },
          finish_reason: null,
        },
      ],
    });
  });
  chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: choice.finish_reason }] });
  if (body.usage) chunks.push({ ...base, choices: [], usage: body.usage });
  return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).concat("data: [DONE]\n\n");
}

/** The `task:ID` a test prompt names, and how many assistant turns the conversation already holds. */
export function taskTurn(req: RecordedRequest): { id: string; turn: number } {
  const prompt: string = req.body.messages.find((m: { role: string }) => m.role === "user").content;
  const id = /task:(\S+)/.exec(prompt)![1]!;
  return { id, turn: req.body.messages.filter((m: { role: string }) => m.role === "assistant").length };
}

/** A handler that plays each task's scripted tool calls, one per turn, then answers "done". */
export function scriptedPerTask(callsOf: (id: string) => ToolCallSpec[]): Handler {
  return (req) => {
    const { id, turn } = taskTurn(req);
    const calls = callsOf(id);
    return turn < calls.length ? toolCalls([calls[turn]!]) : text("done");
  };
}

export interface FakeOpenAI {
  baseURL: string;
  url: string;
  requests: RecordedRequest[];
  setHandler(h: Handler): void;
  close(): Promise<void>;
}

export interface FakeOpenAIOptions {
  /**
   * The answer to `GET …/models` (the run's preflight). By default an empty list, answered apart from the
   * handler and not recorded, so scripted chat replies are never consumed by it.
   */
  models?: () => Reply;
}

export async function startFakeOpenAI(handler: Handler, options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  let current = handler;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: any = undefined;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    } catch {
      body = Buffer.concat(chunks).toString("utf8");
    }
    const recorded: RecordedRequest = {
      index: requests.length,
      at: Date.now(),
      path: req.url ?? "",
      headers: req.headers,
      body,
    };
    const isModelList = req.method === "GET" && /\/models\/?(\?.*)?$/.test(req.url ?? "");
    if (!isModelList) requests.push(recorded);
    let reply: Reply;
    try {
      reply = isModelList
        ? (options.models?.() ?? { kind: "json", body: { object: "list", data: [] } })
        : await current(recorded);
    } catch (err) {
      reply = httpError(500, `test handler threw: ${String(err)}`);
    }
    if (reply.kind === "hang") return; // never answer: exercises client timeouts
    if (reply.kind === "reset") {
      req.socket.destroy();
      return;
    }
    if (reply.kind === "sse") {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const c of reply.chunks) res.write(`data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`);
      if (reply.done !== false) res.write("data: [DONE]\n\n");
      res.end();
      return;
    }
    if (reply.kind === "raw") {
      res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      res.end(reply.text);
      return;
    }
    const status = reply.status ?? 200;
    if (status === 200 && body?.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...reply.headers });
      for (const chunk of streamChunks(reply)) res.write(chunk);
      res.end();
      return;
    }
    res.writeHead(status, { "content-type": "application/json", ...reply.headers });
    res.end(JSON.stringify(reply.body));
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseURL: `${url}/v1`,
    requests,
    setHandler: (h) => {
      current = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
