/**
 * A `fetch` for the `openai` SDK built on `node:http`/`node:https` with one keep-alive Agent per instance.
 *
 * Why: undici's fetch costs several times more CPU per request than `node:http` with a keep-alive Agent (web
 * streams for every body, its own header and body machinery), and it opened far more connections than there
 * were loops. The SDK only needs a standard `Response`, so it keeps doing the protocol work.
 *
 * Behaviour that differs from the global fetch, on purpose:
 * - A response that is not an event stream is read whole before the promise resolves, and becomes a
 *   `Response` over one buffer with read-only headers (buffered_response.ts: no Node → web stream bridge, no
 *   undici objects per request). The SDK reads such bodies whole anyway.
 * - `text/event-stream` responses resolve at the headers and stream chunk by chunk, with backpressure.
 * - No redirects are followed, no cookies, no cache; `accept-encoding` is not sent (gzip/deflate/br replies are
 *   still decoded). Bodies other than strings and byte arrays, and `Request` objects, go to the global fetch.
 * The signal is honoured until the last byte: aborting destroys the request and rejects (or errors the stream)
 * with the signal's reason.
 */
import http from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import zlib from "node:zlib";
import { BufferedResponse, ResponseHeaders } from "./buffered_response.js";
import { createHttp1Client } from "./http1_client.js";

export interface NodeHttpFetchOptions {
  /** Sockets per origin (the run's connection limit). Default: unlimited. */
  maxSockets?: number;
  /** Idle keep-alive sockets kept per origin. Default: `maxSockets`. */
  maxFreeSockets?: number;
}

export interface NodeHttpFetch {
  fetch: typeof fetch;
  /** The same transport without the fetch API's objects (the model client's non-streaming requests). */
  request(url: URL, init: RawRequest): Promise<RawReply>;
  /** Closes idle sockets; later requests open new ones. */
  destroy(): void;
}

/** Statuses whose responses carry no body (a `Response` refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

function plainHeaders(init: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!init) return out;
  if (init instanceof Headers) {
    init.forEach((value, name) => {
      out[name] = value;
    });
  } else if (Array.isArray(init)) {
    for (const [name, value] of init) out[name!.toLowerCase()] = value!;
  } else {
    for (const name of Object.keys(init)) {
      const value = (init as Record<string, string | undefined>)[name];
      if (value !== undefined) out[name.toLowerCase()] = value;
    }
  }
  return out;
}

function webHeaders(raw: string[]): Headers {
  const h = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) h.append(raw[i]!, raw[i + 1]!);
  return h;
}

function decoded(res: http.IncomingMessage): Readable {
  const enc = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  let decoder: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined;
  if (enc === "gzip" || enc === "x-gzip") decoder = zlib.createGunzip();
  else if (enc === "deflate") decoder = zlib.createInflate();
  else if (enc === "br") decoder = zlib.createBrotliDecompress();
  if (!decoder) return res;
  res.on("error", (err) => decoder!.destroy(err));
  return res.pipe(decoder);
}

function isEventStream(res: http.IncomingMessage): boolean {
  return String(res.headers["content-type"] ?? "")
    .toLowerCase()
    .includes("text/event-stream");
}

/** A web stream over a Node stream that pauses the socket while the reader is behind. */
function webStream(source: Readable, onCancel: () => void): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      source.on("data", (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) source.pause();
      });
      source.once("end", () => controller.close());
      source.on("error", (err) => controller.error(err));
    },
    pull() {
      source.resume();
    },
    cancel() {
      onCancel();
    },
  });
}

/** A reply as `node:http` gave it: read whole, a stream still arriving (`text/event-stream`), or no body. */
export type RawReply = { status: number; statusText: string; rawHeaders: string[] } & (
  | { kind: "buffered"; body: Buffer }
  | { kind: "stream"; source: Readable; cancel: () => void }
  | { kind: "empty" }
);

export interface RawRequest {
  method: string;
  /** Sent as given (names as written, in this order); content-length is added for a body when absent. */
  headers: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
  /** Resolve event streams at their headers (default); false reads every body whole. */
  streamEventStreams?: boolean;
}

export function createNodeHttpFetch(opts: NodeHttpFetchOptions = {}): NodeHttpFetch {
  const maxSockets = opts.maxSockets ?? Infinity;
  const agentOpts: http.AgentOptions = {
    keepAlive: true,
    maxSockets,
    maxFreeSockets: opts.maxFreeSockets ?? (Number.isFinite(maxSockets) ? maxSockets : 256),
    scheduling: "lifo",
  };
  const httpAgent = new http.Agent(agentOpts);
  const httpsAgent = new https.Agent(agentOpts);
  // Replies read whole over http: (the model client's plain requests to a local server) take the lighter client (http1_client.ts).
  const whole = createHttp1Client({ maxSockets });

  /** One request over the keep-alive agents (http: or https: URLs only). */
  function request(url: URL, init: RawRequest): Promise<RawReply> {
    const { method, body, signal } = init;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const isHttps = url.protocol === "https:";
    const headers = init.headers;
    if (body != null && headers["content-length"] === undefined) {
      headers["content-length"] = String(typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
    }
    // https stays on node:https (its TLS set-up and session reuse are the tested ones).
    if (init.streamEventStreams === false && !isHttps)
      return whole.request(url, { method, headers, body: body ?? undefined, signal });

    return new Promise<RawReply>((resolve, reject) => {
      let settled = false;
      let streaming = false;
      let response: http.IncomingMessage | undefined;
      const onAbort = () => {
        const reason = abortReason(signal!);
        const err = reason instanceof Error ? reason : new DOMException("This operation was aborted", "AbortError");
        // The response first, so a stream being read errors with the abort reason rather than a reset.
        response?.destroy(err);
        req.destroy();
        if (!settled) {
          settled = true;
          reject(reason);
        }
      };
      const done = () => signal?.removeEventListener("abort", onAbort);
      const fail = (err: unknown) => {
        done();
        if (!settled) {
          settled = true;
          reject(signal?.aborted ? abortReason(signal) : err);
        }
      };

      const req = (isHttps ? https : http).request(
        url,
        { method, headers, agent: isHttps ? httpsAgent : httpAgent },
        (res) => {
          response = res;
          const head = { status: res.statusCode ?? 0, statusText: res.statusMessage ?? "", rawHeaders: res.rawHeaders };
          if (method === "HEAD" || NULL_BODY.has(head.status)) {
            res.resume();
            done();
            settled = true;
            resolve({ ...head, kind: "empty" });
            return;
          }
          const source = decoded(res);
          // A socket that closes before the body ended: the reader must see an error, not a clean end.
          res.once("aborted", () =>
            source.destroy(Object.assign(new Error("response aborted"), { code: "ECONNRESET" })),
          );
          if (init.streamEventStreams !== false && isEventStream(res)) {
            streaming = true;
            source.once("end", done);
            source.on("error", done);
            settled = true;
            resolve({ ...head, kind: "stream", source, cancel: () => req.destroy() });
            return;
          }
          const chunks: Buffer[] = [];
          source.on("data", (c: Buffer) => chunks.push(c));
          source.on("error", fail);
          source.once("end", () => {
            done();
            if (settled) return;
            settled = true;
            resolve({ ...head, kind: "buffered", body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
          });
        },
      );
      req.on("error", (err) => {
        if (!streaming) fail(err);
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      req.end(body ?? undefined);
    });
  }

  async function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    const body = init.body;
    const simpleBody = body == null || typeof body === "string" || body instanceof Uint8Array;
    if (input instanceof Request || !simpleBody) return globalThis.fetch(input, init);
    const url = typeof input === "string" ? new URL(input) : input;
    if (url.protocol !== "https:" && url.protocol !== "http:") return globalThis.fetch(input, init);
    const method = (init.method ?? "GET").toUpperCase();
    const reply = await request(url, {
      method,
      headers: plainHeaders(init.headers),
      body: body ?? undefined,
      signal: init.signal ?? undefined,
    });
    const { status, statusText } = reply;
    if (reply.kind === "buffered") {
      return new BufferedResponse(reply.body, {
        status,
        statusText,
        headers: new ResponseHeaders(reply.rawHeaders) as unknown as Headers,
      }) as unknown as Response;
    }
    const headers = webHeaders(reply.rawHeaders);
    if (reply.kind === "empty") return new Response(null, { status, statusText, headers });
    return new Response(webStream(reply.source, reply.cancel), { status, statusText, headers });
  }

  return {
    fetch: nodeFetch as typeof fetch,
    request,
    destroy() {
      httpAgent.destroy();
      httpsAgent.destroy();
      whole.destroy();
    },
  };
}
