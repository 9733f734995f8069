/**
 * The one HTTP transport of every model call (chat completions, plain and streaming, and the preflight's
 * `GET /models`): `node:http`/`node:https` with one keep-alive Agent per model.
 *
 * Why this one (scripts/bench/http-clients.mjs, docs/benchmarks.md): undici's fetch costs ~3.5× the CPU of a
 * `node:http` request and the `openai` SDK over it ~6×; undici's `Pool.request` is ~30 % cheaper than
 * `node:http` per request, but it is a dependency whose load costs ~90 ms of CPU in every thread that makes
 * model calls, more than it saves in a run of a few thousand calls.
 *
 * What it does not do: follow redirects, keep cookies, retry (the scheduler owns retries and deadlines, through
 * the request's signal). A gzip/deflate/br body is decoded although none is asked for. Aborting destroys the
 * request; a body being read then fails.
 */
import http from "node:http";
import type https from "node:https";
import { createRequire } from "node:module";
import type { Readable } from "node:stream";
import type zlib from "node:zlib";
import { HttpStatusError, type ReplyHeaders } from "./error_body.js";

// node:https (with tls and crypto) and node:zlib load on first use: a thread whose endpoint is http:// and whose
// replies are not compressed never needs them, and loading them costs every worker thread a few ms of CPU.
const require = createRequire(import.meta.url);
let httpsModule: typeof https | undefined;
let zlibModule: typeof zlib | undefined;
const loadHttps = (): typeof https => (httpsModule ??= require("node:https") as typeof https);
const loadZlib = (): typeof zlib => (zlibModule ??= require("node:zlib") as typeof zlib);

export interface HttpTransportOptions {
  /** Sockets per origin (the run's connection limit). Default: unlimited. */
  maxSockets?: number;
}

/** A reply at its headers, with its (decoded) body still to read. */
export interface HttpReply {
  readonly status: number;
  /** All its headers (node makes this object on first read: a reply that is read as it should never does). */
  readonly headers: ReplyHeaders;
  /** Its content-type's media type, lowercased (`application/json`); "" without one. */
  readonly mediaType: string;
  readonly body: Readable;
}

/** A reply whose two headers the transport reads (content-type, content-encoding) come from its raw list. */
class Reply implements HttpReply {
  readonly status: number;
  readonly mediaType: string;
  readonly body: Readable;

  constructor(private readonly res: http.IncomingMessage) {
    this.status = res.statusCode ?? 0;
    this.mediaType = mediaTypeOf(rawHeader(res.rawHeaders, "content-type", false));
    this.body = decoded(res);
  }

  get headers(): ReplyHeaders {
    return this.res.headers;
  }
}

/**
 * A header's value from a raw name/value list, as node's header object has it: the first value of a header it
 * keeps once (content-type), else every value joined by ", " (content-encoding). Names match case-insensitively.
 */
function rawHeader(raw: readonly string[], name: string, joined: boolean): string | undefined {
  let value: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const field = raw[i]!;
    if (field.length !== name.length || field.toLowerCase() !== name) continue;
    if (!joined) return raw[i + 1];
    value = value === undefined ? raw[i + 1] : `${value}, ${raw[i + 1]}`;
  }
  return value;
}

/** Where one model's requests go and with which headers, validated and laid out once. */
export interface PostTarget {
  readonly isHttps: boolean;
  readonly options: { host: string; port: number; path: string; method: "POST" };
  /** Header names and values, alternating, `host` first (node:http sends such a list as is). */
  readonly headers: readonly string[];
}

/** Prepares the target of `POST url` with `headers` (names are sent lowercased). Throws on a bad header. */
export function postTarget(url: URL, headers: Record<string, string>): PostTarget {
  const list = ["host", url.host];
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === "host" || lower === "content-length") continue;
    http.validateHeaderName(lower);
    http.validateHeaderValue(lower, value);
    list.push(lower, value);
  }
  const isHttps = url.protocol === "https:";
  if (!isHttps && url.protocol !== "http:") throw new TypeError(`unsupported protocol ${url.protocol} in ${url.href}`);
  return {
    isHttps,
    options: {
      host: url.hostname.replace(/^\[|\]$/g, ""),
      port: Number(url.port) || (isHttps ? 443 : 80),
      path: url.pathname + url.search,
      method: "POST",
    },
    headers: list,
  };
}

export interface HttpTransport {
  /** POSTs `body`; a status outside 2xx rejects with `HttpStatusError` carrying the body read whole. */
  post(target: PostTarget, body: string | Buffer, signal?: AbortSignal): Promise<HttpReply>;
  /** Closes the idle sockets; later requests open new ones. */
  destroy(): void;
}

export function createHttpTransport(opts: HttpTransportOptions = {}): HttpTransport {
  const maxSockets = opts.maxSockets ?? Infinity;
  const agentOptions: http.AgentOptions = {
    keepAlive: true,
    maxSockets,
    maxFreeSockets: Number.isFinite(maxSockets) ? maxSockets : 256,
    scheduling: "lifo",
  };
  const httpAgent = new http.Agent(agentOptions);
  let httpsAgent: https.Agent | undefined;
  const watch = new AbortWatch();

  function post(target: PostTarget, body: string | Buffer, signal?: AbortSignal): Promise<HttpReply> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const data = typeof body === "string" ? Buffer.from(body) : body;
    const { host, port, path, method } = target.options;
    let req: http.ClientRequest;
    try {
      req = (target.isHttps ? loadHttps() : http).request({
        host,
        port,
        path,
        method,
        headers: target.headers.concat("content-length", String(data.length)) as unknown as http.OutgoingHttpHeaders,
        agent: target.isHttps ? (httpsAgent ??= new (loadHttps().Agent)(agentOptions)) : httpAgent,
      });
    } catch (err) {
      return Promise.reject(err);
    }
    if (signal) watch.add(req, signal);
    // The listeners keep only what they use while the answer is awaited (not the body or the options); `on`,
    // not `once` (a wrapper per listener): a request emits one response, and errors only until it closes.
    const reply = new Promise<HttpReply>((resolve, reject) => {
      req.on("response", (res: http.IncomingMessage) => settle(res, resolve, reject));
      req.on("error", (err) => reject(signal?.aborted ? signal.reason : err));
    });
    req.end(data);
    return reply;
  }

  return {
    post,
    destroy() {
      httpAgent.destroy();
      httpsAgent?.destroy();
    },
  };
}

/**
 * Destroys the requests of a signal (and with them a body being read) when it aborts, from their start until
 * they close (after the body was read, or on failure). One listener per signal, whatever the number of its
 * requests (a model's attempts share their signal while none is aborted, src/scheduler/attempt_signal.ts),
 * where node's own `signal` option adds a listener and an end-of-stream watcher to every request.
 * A closed request is dropped from its signal's set when the next one is added, not by a `close` listener of
 * its own (a listener, its once-wrapper and closure per request, kept for the whole wait for the answer):
 * node marks a request `destroyed` when it closes, and destroying it again does nothing.
 */
class AbortWatch {
  private readonly requests = new WeakMap<AbortSignal, Set<http.ClientRequest>>();

  add(req: http.ClientRequest, signal: AbortSignal): void {
    let open = this.requests.get(signal);
    if (!open) {
      const requests = new Set<http.ClientRequest>();
      open = requests;
      this.requests.set(signal, requests);
      signal.addEventListener(
        "abort",
        () => {
          for (const r of requests) r.destroy(abortError(signal));
          requests.clear();
        },
        { once: true },
      );
    } else {
      for (const r of open) if (r.destroyed) open.delete(r);
    }
    open.add(req);
  }
}

/** A reply at its headers: resolved when 2xx, else rejected with its status and body once read. */
function settle(res: http.IncomingMessage, resolve: (r: HttpReply) => void, reject: (e: unknown) => void): void {
  const reply = new Reply(res);
  if (reply.status >= 200 && reply.status < 300) return resolve(reply);
  readText(reply).then(
    (text) => reject(new HttpStatusError(reply.status, res.headers, text)),
    (err: unknown) => reject(new HttpStatusError(reply.status, res.headers, `(body unreadable: ${messageOf(err)})`)),
  );
}

/** The error node's `signal` option destroys a request with (its AbortError), so a failure reads the same. */
function abortError(signal: AbortSignal): Error {
  return Object.assign(new Error("The operation was aborted", { cause: signal.reason }), {
    name: "AbortError",
    code: "ABORT_ERR",
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The body with its content-encoding undone (a socket closed early errors the result, not ends it). */
function decoded(res: http.IncomingMessage): Readable {
  const enc = String(rawHeader(res.rawHeaders, "content-encoding", true) ?? "")
    .trim()
    .toLowerCase();
  let decoder: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined;
  if (enc === "gzip" || enc === "x-gzip") decoder = loadZlib().createGunzip();
  else if (enc === "deflate") decoder = loadZlib().createInflate();
  else if (enc === "br") decoder = loadZlib().createBrotliDecompress();
  // A reader's own listeners see a body's error; this one only keeps an unread one from being uncaught.
  if (!decoder) return res.on("error", ignore);
  res.on("error", (err) => decoder!.destroy(err));
  // A reader that stops early destroys the decoder: the socket must go too (it still holds unread bytes).
  decoder.once("close", () => res.complete || res.destroy());
  return res.pipe(decoder).on("error", ignore);
}

function ignore(): void {}

/** The whole body as UTF-8 text. */
export function readText(reply: { body: Readable }): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const body = reply.body;
    // `on`, not `once` (a wrapper per listener): a body ends once, and a settled promise ignores the rest.
    body.on("data", (c: Buffer) => chunks.push(c));
    body.on("error", reject);
    body.on("end", () => resolve((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString("utf8")));
  });
}

/** The content type's media type, lowercased (`application/json` of `application/json; charset=utf-8`). */
function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/** One server-sent event: its `event` name (null when none) and its data lines joined by "\n". */
export interface ServerSentEvent {
  event: string | null;
  data: string;
}

/**
 * The events of a `text/event-stream` body as they arrive, up to the end of the body. Comments and fields
 * other than `event` and `data` are skipped; lines may end in LF or CRLF.
 */
export async function* serverSentEvents(body: Readable): AsyncGenerator<ServerSentEvent> {
  body.setEncoding("utf8");
  let pending = "";
  let event: string | null = null;
  let data: string[] = [];
  const line = (text: string): ServerSentEvent | undefined => {
    if (text === "") {
      const done = data.length || event !== null ? { event, data: data.join("\n") } : undefined;
      event = null;
      data = [];
      return done;
    }
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    return undefined;
  };
  for await (const chunk of body as AsyncIterable<string>) {
    pending += chunk;
    let start = 0;
    let nl: number;
    while ((nl = pending.indexOf("\n", start)) !== -1) {
      const ev = line(pending.slice(start, pending.charCodeAt(nl - 1) === 13 ? nl - 1 : nl));
      start = nl + 1;
      if (ev) yield ev;
    }
    pending = pending.slice(start);
  }
  // A body that ends inside an event still gives it (a lenient reading: the standard drops it).
  const rest = pending.replace(/\r$/, "");
  if (rest) line(rest);
  const last = line("");
  if (last) yield last;
}

/**
 * One GET with a fresh connection (the preflight's `GET /models`): status and body text. A failure before a
 * status is a `TypeError("fetch failed")` with the socket error as `cause`, as fetch's are; an abort rejects
 * with the signal's reason.
 */
export async function getText(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<{ status: number; ok: boolean; text: string }> {
  const target = new URL(url);
  if (target.protocol !== "http:" && target.protocol !== "https:")
    throw new TypeError(`unsupported protocol ${target.protocol}`, {
      cause: { message: `unsupported protocol ${target.protocol}` },
    });
  signal.throwIfAborted();
  const failed = (err: unknown) => (signal.aborted ? signal.reason : new TypeError("fetch failed", { cause: err }));
  return new Promise((resolve, reject) => {
    const request = target.protocol === "https:" ? loadHttps().request : http.request;
    const req = request(target, { method: "GET", headers, signal, agent: false }, (res) => {
      readText({ body: decoded(res) }).then(
        (text) => {
          const status = res.statusCode ?? 0;
          resolve({ status, ok: status >= 200 && status < 300, text });
        },
        (err: unknown) => reject(failed(err)),
      );
    });
    req.on("error", (err) => reject(failed(err)));
    req.end();
  });
}
