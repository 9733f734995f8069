/**
 * A plain request goes out without the SDK (direct_completion.ts); it must be the SDK's request byte for byte
 * and fail the same ways. Each case runs through both paths against one server on 127.0.0.1: the direct one
 * (the default) and the SDK one (forced by injecting the same node:http fetch).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createNodeHttpFetch } from "../src/models/http_fetch.js";
import { openaiProvider } from "../src/models/openai_compatible.js";
import type { ModelEndpointOptions } from "../src/models/provider.js";

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
  rawHeaders: string[];
  body: string;
}

async function serve(handler: Handler): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const srv = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, rawHeaders: req.rawHeaders, body });
      handler(req, res);
    });
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  return { base: `127.0.0.1:${(srv.address() as AddressInfo).port}`, seen };
}

const completion = JSON.stringify({
  choices: [{ message: { role: "assistant", content: "pong" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});
const ok: Handler = (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(completion);
};
const ask = {
  messages: [{ role: "user" as const, content: "ping" }],
  tools: [{ type: "function" as const, function: { name: "todo", description: "d", parameters: { type: "object" } } }],
};

/** The same endpoint through both paths. */
function bothPaths(options: Omit<ModelEndpointOptions, "model">) {
  const transport = createNodeHttpFetch();
  return {
    direct: openaiProvider.create({ model: "m", ...options }),
    sdk: openaiProvider.create({ model: "m", ...options, fetch: transport.fetch }),
  };
}

async function outcome(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (r) => ({ ok: r }),
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

describe("the direct request is the SDK's request", () => {
  it("same method, URL, headers in the same order, and body; Bearer key, default headers, organisation from the environment", async () => {
    const s = await serve(ok);
    const before = process.env.OPENAI_ORG_ID;
    process.env.OPENAI_ORG_ID = " org-1 ";
    try {
      for (const base of [`http://${s.base}/v1`, `http://${s.base}/v1/`]) {
        const { direct, sdk } = bothPaths({
          baseURL: base,
          apiKey: "sk-test",
          headers: { "X-Title": "bench", "HTTP-Referer": "https://example.org" },
        });
        expect(await direct.complete(ask)).toEqual(await sdk.complete(ask));
      }
      const { direct, sdk } = bothPaths({ baseURL: `http://user:pw@${s.base}/v1`, apiKey: "sk-test" });
      await direct.complete(ask);
      await sdk.complete(ask);
    } finally {
      if (before === undefined) delete process.env.OPENAI_ORG_ID;
      else process.env.OPENAI_ORG_ID = before;
    }
    expect(s.seen).toHaveLength(6);
    for (let i = 0; i < 6; i += 2) expect(s.seen[i]).toEqual(s.seen[i + 1]);
    const names = s.seen[0]!.rawHeaders.filter((_, i) => i % 2 === 0);
    expect(names).toContain("openai-organization");
    expect(s.seen[0]!.rawHeaders[s.seen[0]!.rawHeaders.indexOf("authorization") + 1]).toBe("Bearer sk-test");
    expect(s.seen[4]!.rawHeaders[s.seen[4]!.rawHeaders.indexOf("authorization") + 1]).toBe(
      `Basic ${Buffer.from("user:pw").toString("base64")}`,
    );
  });
});

describe("the direct request fails as the SDK's does", () => {
  const cases: [string, Handler][] = [
    [
      "a 429 with retry-after",
      (_q, r) =>
        void r
          .writeHead(429, { "content-type": "application/json", "retry-after": "2" })
          .end('{"error":{"message":"slow down"}}'),
    ],
    [
      "a 503 HTML page",
      (_q, r) =>
        void r
          .writeHead(503, { "content-type": "text/html" })
          .end("<html><title>503 Service Unavailable</title></html>"),
    ],
    ["a 400 without a body", (_q, r) => void r.writeHead(400).end()],
    [
      "an HTML page with status 200",
      (_q, r) => void r.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Login</title>"),
    ],
    ["invalid JSON", (_q, r) => void r.writeHead(200, { "content-type": "application/json" }).end('{"choices": [')],
    [
      "an empty JSON body",
      (_q, r) => void r.writeHead(200, { "content-type": "application/json", "content-length": "0" }).end(),
    ],
    ["204", (_q, r) => void r.writeHead(204).end()],
    [
      "JSON without choices",
      (_q, r) =>
        void r.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end('{"object":"list","data":[]}'),
    ],
    [
      "a vendor JSON type",
      (_q, r) => void r.writeHead(200, { "content-type": "application/vnd.api+json" }).end(completion),
    ],
    [
      "a body cut off",
      (_q, r) => {
        r.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
        r.write(completion.slice(0, 10));
        setTimeout(() => r.socket?.destroy(), 10);
      },
    ],
    ["a connection closed before any answer", (q) => q.socket.destroy()],
  ];
  for (const [label, handler] of cases) {
    it(label, async () => {
      const s = await serve(handler);
      const { direct, sdk } = bothPaths({ baseURL: `http://${s.base}/v1`, apiKey: "k" });
      const fromDirect = await outcome(direct.complete(ask));
      expect(fromDirect).toEqual(await outcome(sdk.complete(ask)));
    });
  }

  it("a refused connection", async () => {
    const s = await serve(ok);
    servers.pop()!.close();
    const { direct, sdk } = bothPaths({ baseURL: `http://${s.base}/v1`, apiKey: "k" });
    const fromDirect = await outcome(direct.complete(ask));
    expect(fromDirect).toMatchObject({
      message: expect.stringMatching(/^connection error \(Connection error\.: .*ECONNREFUSED/),
      retryable: true,
    });
    expect(fromDirect).toEqual(await outcome(sdk.complete(ask)));
  });
});
