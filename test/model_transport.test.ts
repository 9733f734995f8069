/**
 * The one transport of model calls (src/models/http_transport.ts) under the `openai` provider, against raw
 * HTTP servers on 127.0.0.1: what goes on the wire, how each kind of failure is classified, keep-alive reuse
 * (streaming too), content-encoding, server-sent events as they arrive, and aborts.
 */
import { getEventListeners } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createTcpServer } from "node:net";
import { Readable } from "node:stream";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createHttpTransport, postTarget, readText, serverSentEvents } from "../src/models/http_transport.js";
import { openaiProvider, serializeRequestBody } from "../src/models/openai_compatible.js";
import type { ModelEndpointOptions } from "../src/models/provider.js";
import { scheduleModel } from "../src/scheduler/scheduler.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const servers: Server[] = [];
afterEach(async () => {
  while (servers.length) {
    const s = servers.pop()!;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

interface Seen {
  method?: string;
  url?: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A raw server that records each request and counts the TCP connections it accepted and saw closed. */
async function serve(handler: Handler) {
  const seen: Seen[] = [];
  const stats = { connections: 0, closed: 0 };
  const srv = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      handler(req, res);
    });
  });
  srv.on("connection", (sock) => {
    stats.connections++;
    sock.on("close", () => stats.closed++);
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, seen, stats };
}

const completionBody = JSON.stringify({
  choices: [{ message: { role: "assistant", content: "pong" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});
const ok: Handler = (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(completionBody);
};
const sse = (chunks: object[]) => chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
const streamed: Handler = (_req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(
    sse([
      { choices: [{ index: 0, delta: { role: "assistant", content: "po" } }] },
      { choices: [{ index: 0, delta: { content: "ng" }, finish_reason: "stop" }] },
      { choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } },
    ]),
  );
};
const ask = {
  messages: [{ role: "user" as const, content: "ping" }],
  tools: [{ type: "function" as const, function: { name: "todo", description: "d", parameters: { type: "object" } } }],
};

function client(options: Omit<ModelEndpointOptions, "model">) {
  return openaiProvider.create({ model: "m", ...options });
}

async function outcome(p: Promise<{ message: { content: string | null } }>): Promise<unknown> {
  return p.then(
    (r) => ({ content: r.message.content }),
    (e: any) => ({
      name: e?.name,
      message: e?.message,
      status: e?.status,
      retryable: e?.retryable,
      rateLimited: e?.rateLimited,
      retryAfterMs: e?.retryAfterMs,
    }),
  );
}

describe("the request on the wire", () => {
  it.each([false, true])(
    "POST to <base>/chat/completions with our headers only and the serialised body (stream: %s)",
    async (stream) => {
      const s = await serve(stream ? streamed : ok);
      const opts = { baseURL: `${s.url}/v1/`, apiKey: "k", stream, headers: { "X-Gateway": " g1 " } };
      expect(await outcome(client(opts).complete(ask))).toEqual({ content: "pong" });
      const [req] = s.seen;
      expect([req!.method, req!.url]).toEqual(["POST", "/v1/chat/completions"]);
      expect(req!.body).toBe(serializeRequestBody({ model: "m", ...opts }, ask));
      expect(JSON.parse(req!.body).stream).toBe(stream ? true : undefined);
      const { host, connection, ...rest } = req!.headers;
      expect(rest).toEqual({
        accept: "application/json",
        "content-type": "application/json",
        "user-agent": "hermes-batch",
        authorization: "Bearer k",
        "x-gateway": "g1",
        "content-length": String(Buffer.byteLength(req!.body)),
      });
      expect(connection).toBe("keep-alive");
    },
  );

  it("sends a body with characters beyond ASCII whole, its content-length in bytes", async () => {
    const s = await serve(ok);
    const text = { messages: [{ role: "user" as const, content: "é ü € 😀 — naïve" }] };
    expect(await outcome(client({ baseURL: s.url }).complete(text))).toEqual({ content: "pong" });
    const [req] = s.seen;
    expect(req!.body).toBe(serializeRequestBody({ model: "m", baseURL: s.url }, text));
    expect(Number(req!.headers["content-length"])).toBe(Buffer.byteLength(req!.body));
    expect(Buffer.byteLength(req!.body)).toBeGreaterThan(req!.body.length);
  });

  it("keeps the base URL's query; a configured Authorization replaces the key's", async () => {
    const s = await serve(ok);
    const m = client({
      baseURL: `${s.url}/openai?api-version=2024-10-21`,
      apiKey: "k",
      headers: { Authorization: "Key x" },
    });
    await m.complete(ask);
    expect(s.seen[0]!.url).toBe("/openai/chat/completions?api-version=2024-10-21");
    expect(s.seen[0]!.headers.authorization).toBe("Key x");
  });
});

describe("each failure, classified for the retry layer", () => {
  const cases: [string, Handler, object][] = [
    [
      "a 429 with retry-after",
      (_q, r) =>
        void r
          .writeHead(429, { "content-type": "application/json", "retry-after": "2" })
          .end('{"error":{"message":"slow down"}}'),
      { message: "429 rate limited: slow down", status: 429, retryable: true, rateLimited: true, retryAfterMs: 2000 },
    ],
    [
      "a 503 HTML page",
      (_q, r) =>
        void r
          .writeHead(503, { "content-type": "text/html" })
          .end("<html><title>503 Service Unavailable</title></html>"),
      { message: "503: 503 Service Unavailable", status: 503, retryable: true, rateLimited: false },
    ],
    [
      "a 401 (the key refused)",
      (_q, r) => void r.writeHead(401, { "content-type": "application/json" }).end('{"error":{"message":"bad key"}}'),
      { message: "model endpoint returned 401: bad key", status: 401, retryable: false },
    ],
    [
      "a 400 without a body",
      (_q, r) => void r.writeHead(400).end(),
      { message: "model endpoint returned 400: (empty body)", status: 400, retryable: false },
    ],
    [
      "an HTML page with status 200",
      (_q, r) => void r.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Login</title>"),
      { message: expect.stringMatching(/^the endpoint answered with an HTML page \("Login"\)/), retryable: true },
    ],
    [
      "invalid JSON",
      (_q, r) => void r.writeHead(200, { "content-type": "application/json" }).end('{"choices": ['),
      { message: expect.stringMatching(/^unparsable response: /), retryable: true },
    ],
    [
      "an empty JSON body",
      (_q, r) => void r.writeHead(200, { "content-type": "application/json", "content-length": "0" }).end(),
      { message: "model returned empty choices", retryable: true },
    ],
    ["204", (_q, r) => void r.writeHead(204).end(), { message: "model returned empty choices", retryable: true }],
    [
      "JSON without choices",
      (_q, r) =>
        void r.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end('{"object":"list","data":[]}'),
      {
        message: 'the endpoint answered with JSON that is not a chat completion (no "choices"; keys: object, data)',
        retryable: true,
      },
    ],
    [
      "a vendor JSON type",
      (_q, r) => void r.writeHead(200, { "content-type": "application/vnd.api+json" }).end(completionBody),
      { content: "pong" },
    ],
    [
      "a body cut off",
      (_q, r) => {
        r.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
        r.write(completionBody.slice(0, 10));
        setTimeout(() => r.socket?.destroy(), 10);
      },
      { message: expect.stringMatching(/^connection error: aborted \(ECONNRESET\)/), retryable: true },
    ],
    [
      "a connection closed before any answer",
      (q) => q.socket.destroy(),
      { message: "connection error: socket hang up (ECONNRESET)", retryable: true },
    ],
  ];
  for (const [label, handler, expected] of cases) {
    it(label, async () => {
      const s = await serve(handler);
      expect(await outcome(client({ baseURL: `${s.url}/v1`, apiKey: "k" }).complete(ask))).toMatchObject(expected);
    });
  }

  it("a refused connection", async () => {
    const s = await serve(ok);
    servers.pop()!.close();
    expect(await outcome(client({ baseURL: `${s.url}/v1` }).complete(ask))).toMatchObject({
      message: expect.stringMatching(/^connection error: connect ECONNREFUSED 127\.0\.0\.1:\d+$/),
      retryable: true,
    });
  });
});

describe("the transport", () => {
  it("reuses keep-alive connections, streaming or not; concurrent requests open at most maxSockets", async () => {
    for (const stream of [false, true]) {
      const s = await serve((req, res) => setTimeout(() => (stream ? streamed : ok)(req, res), 20));
      const m = client({ baseURL: `${s.url}/v1`, stream, maxSockets: 3 });
      for (let i = 0; i < 5; i++) expect(await outcome(m.complete(ask))).toEqual({ content: "pong" });
      expect(s.stats.connections).toBe(1);
      const all = await Promise.all(Array.from({ length: 12 }, () => outcome(m.complete(ask))));
      expect(all.every((r) => (r as { content?: string }).content === "pong")).toBe(true);
      expect(s.stats.connections).toBe(3);
    }
  });

  it.each([
    ["gzip", gzipSync],
    ["deflate", deflateSync],
    ["br", brotliCompressSync],
  ] as const)("decodes a %s reply it did not ask for, plain and streamed", async (encoding, compress) => {
    const s = await serve((req, res) => {
      const isStream = req.headers["x-stream"] === "1";
      res.writeHead(200, {
        "content-type": isStream ? "text/event-stream" : "application/json",
        "content-encoding": encoding,
      });
      res.end(
        compress(
          isStream ? sse([{ choices: [{ delta: { content: "pong" }, finish_reason: "stop" }] }]) : completionBody,
        ),
      );
    });
    expect(await outcome(client({ baseURL: s.url }).complete(ask))).toEqual({ content: "pong" });
    const streaming = client({ baseURL: s.url, stream: true, headers: { "x-stream": "1" } });
    expect(await outcome(streaming.complete(ask))).toEqual({ content: "pong" });
  });

  it("reads content-type and content-encoding as node's header object has them: any case, first type, codings joined", async () => {
    const reply = (head: string, body: Buffer) =>
      Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\n${head}content-length: ${body.length}\r\n\r\n`), body]);
    const replies = [
      // Upper-case names and values; a second content-type is ignored, as node ignores it.
      reply(
        "CONTENT-TYPE: Application/JSON; charset=utf-8\r\nContent-Type: text/plain\r\nContent-Encoding: GZIP\r\n",
        gzipSync(completionBody),
      ),
      // Two content-encoding lines are one list ("gzip, gzip"), which is not decoded: the body is read as it came.
      reply(
        "content-type: text/plain\r\ncontent-encoding: gzip\r\ncontent-encoding: gzip\r\n",
        Buffer.from("plain text"),
      ),
    ];
    const srv = createTcpServer((sock) => sock.once("data", () => sock.end(replies.shift())));
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const transport = createHttpTransport();
    try {
      const url = new URL(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1/chat/completions`);
      const first = await transport.post(postTarget(url, {}), "{}");
      expect(first.mediaType).toBe("application/json");
      expect(await readText(first)).toBe(completionBody);
      const second = await transport.post(postTarget(url, {}), "{}");
      expect([second.mediaType, second.headers["content-encoding"]]).toEqual(["text/plain", "gzip, gzip"]);
      expect(await readText(second)).toBe("plain text");
    } finally {
      transport.destroy();
      srv.close();
    }
  });

  it("speaks TLS to an https:// endpoint (a ClientHello), and a peer that is not TLS fails the request", async () => {
    const firstBytes: Buffer[] = [];
    const srv = createTcpServer((sock) =>
      sock.once("data", (b: Buffer) => {
        firstBytes.push(b);
        sock.end("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n");
      }),
    );
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const transport = createHttpTransport();
    try {
      const url = new URL(`https://127.0.0.1:${(srv.address() as AddressInfo).port}/v1/chat/completions`);
      await expect(transport.post(postTarget(url, {}), "{}")).rejects.toThrow();
      // A TLS handshake record (0x16) of version 3.x, not an HTTP request line.
      expect([firstBytes[0]?.[0], firstBytes[0]?.[1]]).toEqual([0x16, 0x03]);
    } finally {
      transport.destroy();
      await new Promise((r) => srv.close(r));
    }
  });

  it("reads a JSON answer to a streaming request as a completion", async () => {
    const s = await serve(ok);
    expect(await outcome(client({ baseURL: s.url, stream: true }).complete(ask))).toEqual({ content: "pong" });
  });

  it("gives the events of a stream as they arrive", async () => {
    let sendRest!: () => void;
    const restAllowed = new Promise<void>((r) => (sendRest = r));
    const s = await serve(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"n":1}\n\n');
      await restAllowed; // nothing more until the reader has seen the first event
      res.end('data: {"n":2}\n\n');
    });
    const transport = createHttpTransport();
    try {
      const reply = await transport.post(postTarget(new URL(s.url), {}), "{}");
      const seen: string[] = [];
      for await (const ev of serverSentEvents(reply.body)) {
        seen.push(ev.data);
        if (seen.length === 1) sendRest();
      }
      expect(seen).toEqual(['{"n":1}', '{"n":2}']);
    } finally {
      transport.destroy();
    }
  });

  it("parses events split anywhere, with CRLF, comments, event names and multi-line data", async () => {
    const text = ': keep-alive\r\nevent: delta\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata: x\n\nid: 7\ndata: tail';
    const pieces = text.match(/.{1,3}/gs)!;
    const events = [];
    for await (const ev of serverSentEvents(Readable.from(pieces.map((p) => Buffer.from(p))))) events.push(ev);
    expect(events).toEqual([
      { event: "delta", data: '{"a":\n1}' },
      { event: null, data: "x" },
      { event: null, data: "tail" },
    ]);
  });

  it.each([false, true])(
    "many calls under one signal leave at most one listener on it; its abort still ends the next call (stream: %s)",
    async (stream) => {
      let answer = true;
      const s = await serve((req, res) => (answer ? (stream ? streamed : ok)(req, res) : undefined));
      const model = scheduleModel(client({ baseURL: s.url, stream }), { endpoint: "e", purpose: "agent" });
      const task = new AbortController();
      for (let i = 0; i < 5; i++)
        expect((await model.complete({ ...ask, signal: task.signal })).message.content).toBe("pong");
      expect(getEventListeners(task.signal, "abort").length).toBeLessThanOrEqual(1);
      answer = false;
      const pending = model.complete({ ...ask, signal: task.signal });
      await expect.poll(() => s.seen.length).toBe(6);
      const reason = new Error("task cancelled");
      task.abort(reason);
      await expect(pending).rejects.toMatchObject({ name: "AbortError", cause: reason });
      await expect.poll(() => s.stats.closed).toBe(1);
    },
  );

  it("an abort of a signal whose requests all ended leaves alone the connection they used, now another's", async () => {
    let held: ServerResponse | undefined;
    const s = await serve((req, res) => (s.seen.length === 2 ? (held = res) : ok(req, res)));
    const transport = createHttpTransport({ maxSockets: 1 });
    const target = postTarget(new URL(`${s.url}/v1/chat/completions`), {});
    const first = new AbortController();
    expect(await readText(await transport.post(target, "{}", first.signal))).toBe(completionBody);
    const second = new AbortController();
    const pending = transport.post(target, "{}", second.signal);
    await expect.poll(() => held !== undefined).toBe(true);
    first.abort(new Error("the first task is cancelled"));
    ok(undefined as unknown as IncomingMessage, held!);
    expect(await readText(await pending)).toBe(completionBody);
    expect(s.stats).toEqual({ connections: 1, closed: 0 });
    transport.destroy();
  });

  it.each([false, true])(
    "an abort before the answer or inside a stream rejects and closes the connection (stream: %s)",
    async (stream) => {
      const s = await serve((req, res) => {
        if (!stream) return; // never answers
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: "par" } }] })}\n\n`);
      });
      const ac = new AbortController();
      const pending = client({ baseURL: s.url, stream }).complete({ ...ask, signal: ac.signal });
      await expect.poll(() => s.seen.length).toBe(1);
      setTimeout(() => ac.abort(new Error("stop")), 30);
      await expect(pending).rejects.toThrow("stop");
      await expect.poll(() => s.stats.closed).toBe(1);
      await expect(client({ baseURL: s.url }).complete({ ...ask, signal: AbortSignal.abort() })).rejects.toMatchObject({
        name: "AbortError",
      });
      expect(s.seen).toHaveLength(1);
    },
  );
});
