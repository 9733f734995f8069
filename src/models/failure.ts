/**
 * One failed attempt classified for the scheduler's retry layer (src/scheduler/): a rate limit (429, also in a
 * stream), a server error (5xx, 408) or a broken connection is retryable, with the endpoint's `retry-after`;
 * any other status (auth, context length, a bad request) is not, and says what the body said.
 */
import { ModelError } from "../core/chat.js";
import { HttpStatusError, messageOfJson, type ReplyHeaders } from "./error_body.js";
import { ProviderError } from "./provider.js";

/** Milliseconds asked by `retry-after-ms` or `retry-after` (seconds or an HTTP date); undefined if absent/bad. */
export function parseRetryAfter(headers: ReplyHeaders | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const get = (name: string): string | undefined => {
    const value = headers[name] ?? headers[name.toLowerCase()];
    return Array.isArray(value) ? value[0] : value;
  };
  const ms = get("retry-after-ms");
  if (ms != null && ms.trim() !== "") {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const ra = get("retry-after");
  if (ra == null || ra.trim() === "") return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs)) return secs >= 0 ? secs * 1000 : undefined;
  const date = Date.parse(ra);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * A request that failed before a complete answer (refused, reset, cut off, a name that does not resolve):
 * retried as a broken connection. Thrown by the model client around any transport failure.
 */
export class ConnectionFailure extends Error {
  override readonly name = "ConnectionFailure";
  constructor(cause: unknown) {
    const code = (cause as { code?: unknown })?.code;
    const text = cause instanceof Error ? cause.message : String(cause);
    super(typeof code === "string" && !text.includes(code) ? `${text} (${code})` : text, { cause });
  }
}

/** An error event inside a 200 stream (`data: {"error": {...}}`), with the event's `error` value. */
export class StreamErrorEvent extends Error {
  override readonly name = "StreamErrorEvent";
  constructor(readonly error: unknown) {
    super("error event in the stream");
  }
}

/** A failure answered with an HTTP status; the message carries the body's own words, whatever its shape. */
function statusFailure(status: number, detail: string, headers: ReplyHeaders | undefined): ProviderError {
  const retryAfterMs = parseRetryAfter(headers);
  if (status === 429)
    return new ProviderError(`429 rate limited: ${detail}`, {
      status,
      retryable: true,
      rateLimited: true,
      retryAfterMs,
    });
  if (status >= 500 || status === 408)
    return new ProviderError(`${status}: ${detail}`, { status, retryable: true, retryAfterMs });
  return new ProviderError(`model endpoint returned ${status}: ${detail}`, { status, retryable: false });
}

const RATE_LIMIT_WORDS = /rate.?limit|too many requests|resource.?exhausted|quota/i;

/**
 * An error chunk in the middle of a stream (`data: {"error": {...}}`): the HTTP status was 200, so the
 * status is the error's own `code`/`status`. A rate limit counts as a 429 for the limiter; any other
 * mid-stream error is retried as a broken stream.
 */
function streamFailure(error: unknown): ProviderError {
  const e = (error && typeof error === "object" ? error : {}) as Record<string, unknown>;
  const codeOf = (v: unknown) =>
    typeof v === "number" ? v : typeof v === "string" && /^\d{3}$/.test(v.trim()) ? Number(v) : undefined;
  const code = codeOf(e.code) ?? codeOf(e.status) ?? codeOf(e.status_code);
  const detail = messageOfJson(error) ?? "error event without a message";
  const words = [detail, e.type, e.code, e.status].filter((v) => typeof v === "string").join(" ");
  if (code === 429 || RATE_LIMIT_WORDS.test(words)) {
    return new ProviderError(`429 rate limited (in stream): ${detail}`, {
      status: 429,
      retryable: true,
      rateLimited: true,
    });
  }
  return new ProviderError(`stream error${code ? ` ${code}` : ""}: ${detail}`, { status: code, retryable: true });
}

/** One failed attempt as the retry layer sees it. */
export function classifyFailure(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  if (err instanceof ModelError)
    return new ProviderError(err.message, { status: err.status, retryable: err.retryable });
  if (err instanceof HttpStatusError) return statusFailure(err.status, err.detail, err.headers);
  if (err instanceof StreamErrorEvent) return streamFailure(err.error);
  if (err instanceof ConnectionFailure) {
    if (/timed? ?out/i.test(err.message)) return new ProviderError("request timed out", { retryable: true });
    return new ProviderError(`connection error: ${err.message}`, { retryable: true });
  }
  if (err instanceof SyntaxError) return new ProviderError(`unparsable response: ${err.message}`, { retryable: true });
  return new ProviderError(`model request failed: ${err instanceof Error ? err.message : String(err)}`, {
    retryable: false,
  });
}
