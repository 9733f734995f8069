/**
 * The light HTTP/1.1 client of the model client's plain requests (src/models/http1_client.ts), against real
 * servers on 127.0.0.1: framing, keep-alive reuse and its limits, interim replies, encodings, failures.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createHttp1Client } from "../src/models/http1_client.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function httpServer(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const sockets = new Set<Socket>();
  let maxOpen = 0;
  const srv = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      (req as IncomingMessage & { body: string }).body = body;
      handler(req, res);
    });
  });
  srv.on("connection", (s) => {
    sockets.add(s);
    maxOpen = Math.max(maxOpen, sockets.size);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  closers.push(async () => {
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
  });
  return {
    url: (path: string) => new URL(`http://127.0.0.1:${(srv.address() as AddressInfo).port}${path}`),
    connections: () => maxOpen,
    srv,
  };
}

/** A server that answers every request with the given raw bytes (for framings node:http would not write). */
async function rawServer(reply: (request: string) => string | Buffer, opts: { closeAfter?: boolean } = {}) {
  let connections = 0;
  const srv: Server = createTcpServer((s) => {
    connections++;
    let text = "";
    s.on("data", (d) => {
      text += d.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return;
      const len = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
      if (text.length < end + 4 + len) return;
      const req = text.slice(0, end + 4 + len);
      text = text.slice(end + 4 + len);
      s.write(reply(req));
      if (opts.closeAfter) s.end();
    });
    s.on("error", () => undefined);
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => srv.close(() => r())));
  return {
    url: new URL(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1/x`),
    connections: () => connections,
  };
}

const post = (body = "{}") => ({
  method: "POST",
  headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
  body,
});

describe("http1 client", () => {
  it("sends the headers in order with Host and Connection after them, and reads a content-length body", async () => {
    let seen: string[] = [];
    const s = await httpServer((req, res) => {
      seen = req.rawHeaders;
      res
        .writeHead(201, { "content-type": "application/json", "x-a": "1" })
        .end(JSON.stringify({ echo: (req as IncomingMessage & { body: string }).body }));
    });
    const c = createHttp1Client();
    const r = await c.request(s.url("/v1/chat"), {
      ...post('{"q":"é"}'),
      headers: { b: "2", a: "1", "content-length": String(Buffer.byteLength('{"q":"é"}')) },
    });
    expect(r.status).toBe(201);
    expect(r.kind).toBe("buffered");
    expect(JSON.parse((r as { body: Buffer }).body.toString())).toEqual({ echo: '{"q":"é"}' });
    expect(seen.filter((_, i) => i % 2 === 0)).toEqual(["b", "a", "content-length", "Host", "Connection"]);
    expect(r.rawHeaders).toContain("x-a");
    c.destroy();
  });

  it("reuses one keep-alive connection for requests in sequence, and opens at most maxSockets at once", async () => {
    const s = await httpServer((_req, res) => setTimeout(() => res.end("ok"), 20));
    const c = createHttp1Client({ maxSockets: 2 });
    for (let i = 0; i < 5; i++) expect((await c.request(s.url("/"), post())).status).toBe(200);
    expect(s.connections()).toBe(1);
    const replies = await Promise.all(Array.from({ length: 8 }, () => c.request(s.url("/"), post())));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(s.connections()).toBe(2);
    c.destroy();
  });

  it("reads chunked bodies (with trailers) and decodes gzip", async () => {
    const payload = JSON.stringify({ text: "x".repeat(5000) });
    const s = await httpServer((req, res) => {
      if (req.url === "/gz") {
        res.writeHead(200, { "content-encoding": "gzip" }).end(gzipSync(payload));
        return;
      }
      res.writeHead(200, { "content-type": "application/json", trailer: "x-t" });
      res.write(payload.slice(0, 100));
      setTimeout(() => {
        res.addTrailers({ "x-t": "done" });
        res.end(payload.slice(100));
      }, 10);
    });
    const c = createHttp1Client();
    expect((await c.request(s.url("/chunked"), post())) as { body: Buffer }).toMatchObject({ status: 200 });
    expect(((await c.request(s.url("/chunked"), post())) as { body: Buffer }).body.toString()).toBe(payload);
    expect(((await c.request(s.url("/gz"), post())) as { body: Buffer }).body.toString()).toBe(payload);
    c.destroy();
  });

  it("skips a 100 Continue, reads a body that ends with the connection, and does not reuse that connection", async () => {
    const s = await rawServer(
      () => "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end",
      { closeAfter: true },
    );
    const c = createHttp1Client();
    for (let i = 0; i < 2; i++) {
      const r = (await c.request(s.url, post())) as { status: number; body: Buffer };
      expect(r.status).toBe(200);
      expect(r.body.toString()).toBe("until the end");
    }
    expect(s.connections()).toBe(2);
    c.destroy();
  });

  it("204 and HEAD replies have no body", async () => {
    const s = await httpServer((req, res) =>
      req.url === "/204"
        ? res.writeHead(204).end()
        : res.writeHead(200, { "content-length": "5" }).end(req.method === "HEAD" ? undefined : "hello"),
    );
    const c = createHttp1Client();
    expect((await c.request(s.url("/204"), post())).kind).toBe("empty");
    expect((await c.request(s.url("/h"), { method: "HEAD", headers: {} })).kind).toBe("empty");
    expect(((await c.request(s.url("/h"), post())) as { body: Buffer }).body.toString()).toBe("hello");
    c.destroy();
  });

  it("fails like node:http: a hang-up before a reply, 'aborted' inside one, a refused connection", async () => {
    const early = await rawServer(() => "");
    const c = createHttp1Client();
    const cut = await httpServer((q) => q.socket.destroy());
    await expect(c.request(cut.url("/"), post())).rejects.toMatchObject({
      message: "socket hang up",
      code: "ECONNRESET",
    });
    const mid = await rawServer(() => "HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial", { closeAfter: true });
    await expect(c.request(mid.url, post())).rejects.toMatchObject({ message: "aborted", code: "ECONNRESET" });
    const closed = await httpServer(() => undefined);
    const url = closed.url("/");
    await closers.pop()!();
    await expect(c.request(url, post())).rejects.toMatchObject({ code: "ECONNREFUSED" });
    expect(early.connections()).toBe(0);
    c.destroy();
  });

  it("an abort rejects with the signal's reason and frees the connection slot", async () => {
    const s = await httpServer((req, res) =>
      req.url === "/slow" ? setTimeout(() => res.end("late"), 2000) : res.end("ok"),
    );
    const c = createHttp1Client({ maxSockets: 1 });
    const ac = new AbortController();
    const slow = c.request(s.url("/slow"), { ...post(), signal: ac.signal });
    const queued = c.request(s.url("/fast"), post());
    setTimeout(() => ac.abort(new Error("stop")), 50);
    await expect(slow).rejects.toThrow("stop");
    expect(((await queued) as { body: Buffer }).body.toString()).toBe("ok");
    c.destroy();
  });
});
