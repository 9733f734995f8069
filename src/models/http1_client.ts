/**
 * A small HTTP/1.1 client for the model client's plain requests: one keep-alive socket per request in flight,
 * the request written in one piece, the reply read whole. It sends what `node:http` would send for the same
 * request (the given headers in their order, then `Host` and `Connection: keep-alive`), and fails the way the
 * `node:http` transport does ("socket hang up" before a reply, "aborted" inside one), so the two are
 * interchangeable (test/direct_completion, test/http1_client).
 *
 * Why: `node:http` costs about 0.15–0.2 ms of CPU per request in its JavaScript layers (ClientRequest,
 * IncomingMessage streams, the agent's events), two to four times this client's (`scripts/bench/http-clients.mjs`);
 * at 256 loops that is a tenth of an agent turn's budget.
 *
 * Scope: http: (https: works the same way over tls.connect, but http_fetch.ts keeps https on node:https, whose
 * TLS handling is the tested one), bodies framed by content-length, chunked encoding, or the end of the connection;
 * 1xx replies skipped; gzip, deflate and br bodies decoded. No redirects, no streaming (event streams are read
 * whole), no proxy (as `node:http`).
 */
import net from "node:net";
import tls from "node:tls";
import zlib from "node:zlib";
import type { RawReply } from "./http_fetch.js";

export interface Http1Request {
  method: string;
  /** Sent as given, in this order; content-length must be among them for a body. */
  headers: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

export interface Http1Client {
  request(url: URL, init: Http1Request): Promise<RawReply & { kind: "buffered" | "empty" }>;
  /** Closes idle sockets; later requests open new ones. */
  destroy(): void;
}

type Socket = net.Socket | tls.TLSSocket;

interface Origin {
  idle: Socket[];
  busy: number;
  waiting: (() => void)[];
}

const NO_BODY = new Set([204, 304]);

function hangUp(): Error {
  return Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
}

function originKey(url: URL): string {
  return `${url.protocol}//${url.host}`;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** One reply being read off a socket: headers first, then the body by its framing. */
class ReplyParser {
  status = 0;
  statusText = "";
  rawHeaders: string[] = [];
  keepAlive = true;
  private buf: Buffer = Buffer.alloc(0);
  private headDone = false;
  private framing: "length" | "chunked" | "close" | "none" = "none";
  private remaining = 0;
  private chunks: Buffer[] = [];
  private chunkState: "size" | "data" | "data-crlf" | "trailers" = "size";
  done = false;
  sawBytes = false;

  constructor(private readonly head: boolean) {}

  /** Feeds bytes; returns true once the reply is complete. Throws on a malformed reply. */
  feed(data: Buffer): boolean {
    this.sawBytes = true;
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
    while (!this.headDone) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end < 0) {
        if (this.buf.length > 256 * 1024) throw new Error("Parse Error: Header overflow");
        return false;
      }
      const lines = this.buf.toString("latin1", 0, end).split("\r\n");
      this.buf = this.buf.subarray(end + 4);
      const m = /^HTTP\/(\d)\.(\d) (\d{3})(?: (.*))?$/.exec(lines[0]!);
      if (!m) throw new Error("Parse Error: Invalid response status");
      const status = Number(m[3]);
      // 1xx: an interim reply; the real one follows.
      if (status >= 100 && status < 200) continue;
      this.status = status;
      this.statusText = m[4] ?? "";
      let length: number | undefined;
      let chunked = false;
      let connection = "";
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i]!;
        const colon = line.indexOf(":");
        if (colon <= 0) continue;
        const name = line.slice(0, colon);
        const value = line.slice(colon + 1).trim();
        this.rawHeaders.push(name, value);
        const lower = name.toLowerCase();
        if (lower === "content-length") length = Number(value);
        else if (lower === "transfer-encoding") chunked = /(^|,)\s*chunked\s*$/i.test(value);
        else if (lower === "connection") connection = value.toLowerCase();
      }
      const http10 = m[1] === "1" && m[2] === "0";
      this.keepAlive = http10 ? /\bkeep-alive\b/.test(connection) : !/\bclose\b/.test(connection);
      this.headDone = true;
      if (this.head || NO_BODY.has(status)) this.framing = "none";
      else if (chunked) this.framing = "chunked";
      else if (length !== undefined && Number.isInteger(length) && length >= 0) {
        this.framing = "length";
        this.remaining = length;
      } else {
        this.framing = "close";
        this.keepAlive = false;
      }
    }
    return this.readBody();
  }

  private readBody(): boolean {
    if (this.framing === "none") return (this.done = true);
    if (this.framing === "close") {
      if (this.buf.length) this.chunks.push(this.buf);
      this.buf = Buffer.alloc(0);
      return false;
    }
    if (this.framing === "length") {
      const take = Math.min(this.remaining, this.buf.length);
      if (take) this.chunks.push(this.buf.subarray(0, take));
      this.remaining -= take;
      // Bytes past the body on a keep-alive socket: the connection cannot be trusted any more.
      if (this.buf.length > take) this.keepAlive = false;
      this.buf = Buffer.alloc(0);
      return (this.done = this.remaining === 0);
    }
    for (;;) {
      if (this.chunkState === "size") {
        const nl = this.buf.indexOf("\r\n");
        if (nl < 0) return false;
        const size = parseInt(this.buf.toString("latin1", 0, nl).split(";")[0]!.trim(), 16);
        if (!Number.isFinite(size) || size < 0) throw new Error("Parse Error: Invalid character in chunk size");
        this.buf = this.buf.subarray(nl + 2);
        if (size === 0) this.chunkState = "trailers";
        else {
          this.remaining = size;
          this.chunkState = "data";
        }
      } else if (this.chunkState === "data") {
        const take = Math.min(this.remaining, this.buf.length);
        if (take) this.chunks.push(this.buf.subarray(0, take));
        this.remaining -= take;
        this.buf = this.buf.subarray(take);
        if (this.remaining > 0) return false;
        this.chunkState = "data-crlf";
      } else if (this.chunkState === "data-crlf") {
        if (this.buf.length < 2) return false;
        this.buf = this.buf.subarray(2);
        this.chunkState = "size";
      } else {
        const nl = this.buf.indexOf("\r\n");
        if (nl < 0) return false;
        this.buf = this.buf.subarray(nl + 2);
        if (nl === 0) {
          if (this.buf.length) this.keepAlive = false;
          return (this.done = true);
        }
      }
    }
  }

  /** The connection ended: a body framed by the end is complete now; anything else was cut off. */
  ended(): boolean {
    if (this.headDone && this.framing === "close") return (this.done = true);
    return false;
  }

  get headComplete(): boolean {
    return this.headDone;
  }

  body(): Buffer {
    const raw = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const enc = (this.header("content-encoding") ?? "").trim().toLowerCase();
    if (enc === "gzip" || enc === "x-gzip") return zlib.gunzipSync(raw);
    if (enc === "deflate") return zlib.inflateSync(raw);
    if (enc === "br") return zlib.brotliDecompressSync(raw);
    return raw;
  }

  private header(name: string): string | undefined {
    for (let i = 0; i + 1 < this.rawHeaders.length; i += 2)
      if (this.rawHeaders[i]!.toLowerCase() === name) return this.rawHeaders[i + 1];
    return undefined;
  }
}

export function createHttp1Client(opts: { maxSockets?: number } = {}): Http1Client {
  const maxSockets = opts.maxSockets ?? Infinity;
  const origins = new Map<string, Origin>();

  const originOf = (key: string): Origin => {
    let o = origins.get(key);
    if (!o) origins.set(key, (o = { idle: [], busy: 0, waiting: [] }));
    return o;
  };

  const release = (o: Origin, socket: Socket | undefined) => {
    o.busy--;
    if (socket) {
      socket.unref();
      o.idle.push(socket);
    }
    o.waiting.shift()?.();
  };

  const connect = (url: URL): Socket => {
    const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    const socket =
      url.protocol === "https:"
        ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host })
        : net.connect({ host, port });
    socket.setNoDelay(true);
    // While idle it has no request to fail: an error or end just takes it out of the pool.
    socket.on("error", () => undefined);
    socket.once("close", () => {
      const o = origins.get(originKey(url));
      const i = o ? o.idle.indexOf(socket) : -1;
      if (i >= 0) o!.idle.splice(i, 1);
    });
    socket.on("end", () => {
      if (origins.get(originKey(url))?.idle.includes(socket)) socket.destroy();
    });
    return socket;
  };

  function request(url: URL, init: Http1Request): Promise<RawReply & { kind: "buffered" | "empty" }> {
    const { signal } = init;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const o = originOf(originKey(url));
    const hostHeader = url.host;
    let head = `${init.method} ${url.pathname}${url.search} HTTP/1.1\r\n`;
    for (const name of Object.keys(init.headers)) head += `${name}: ${init.headers[name]}\r\n`;
    head += `Host: ${hostHeader}\r\nConnection: keep-alive\r\n\r\n`;

    return new Promise((resolve, reject) => {
      let settled = false;
      let socket: Socket | undefined;
      let queued: (() => void) | undefined;
      const parser = new ReplyParser(init.method === "HEAD");

      const cleanup = () => {
        signal?.removeEventListener("abort", onAbort);
        if (socket) {
          socket.off("data", onData);
          socket.off("end", onEnd);
          socket.off("close", onEnd);
          socket.off("error", onError);
        }
      };
      const finish = (err: unknown, reuse: boolean) => {
        if (settled) return;
        settled = true;
        cleanup();
        if (queued) {
          const i = o.waiting.indexOf(queued);
          if (i >= 0) o.waiting.splice(i, 1);
        }
        if (socket) {
          if (!reuse) socket.destroy();
          release(o, reuse ? socket : undefined);
        }
        if (err !== undefined) {
          reject(err);
          return;
        }
        try {
          const reply = { status: parser.status, statusText: parser.statusText, rawHeaders: parser.rawHeaders };
          resolve(
            init.method === "HEAD" || NO_BODY.has(parser.status)
              ? { ...reply, kind: "empty" }
              : { ...reply, kind: "buffered", body: parser.body() },
          );
        } catch (e) {
          reject(e);
        }
      };
      const onData = (data: Buffer) => {
        let complete: boolean;
        try {
          complete = parser.feed(data);
        } catch (err) {
          finish(err, false);
          return;
        }
        if (complete) finish(undefined, parser.keepAlive);
      };
      const onEnd = () => {
        if (parser.ended()) finish(undefined, false);
        else
          finish(parser.headComplete ? Object.assign(new Error("aborted"), { code: "ECONNRESET" }) : hangUp(), false);
      };
      const onError = (err: Error) => finish(signal?.aborted ? abortReason(signal) : err, false);
      const onAbort = () => finish(abortReason(signal!), false);

      const start = () => {
        queued = undefined;
        if (settled) return;
        o.busy++;
        // The newest idle socket first (the most likely still open at the server).
        let s = o.idle.pop();
        while (s && (s.destroyed || !s.writable)) s = o.idle.pop();
        socket = s ?? connect(url);
        socket.ref();
        socket.on("data", onData);
        socket.once("end", onEnd);
        socket.once("close", onEnd);
        socket.on("error", onError);
        socket.write(
          init.body === undefined
            ? head
            : typeof init.body === "string"
              ? head + init.body
              : Buffer.concat([Buffer.from(head, "latin1"), init.body]),
        );
      };

      signal?.addEventListener("abort", onAbort, { once: true });
      if (o.busy < maxSockets) start();
      else {
        queued = start;
        o.waiting.push(start);
      }
    });
  }

  return {
    request,
    destroy() {
      for (const o of origins.values()) for (const s of o.idle.splice(0)) s.destroy();
    },
  };
}
