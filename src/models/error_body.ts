/**
 * What an endpoint said when it refused a request, whatever the body's shape: OpenAI's `{"error": {...}}`,
 * another JSON (`{"detail": …}`, `{"message": …}`, `{"errors": [...]}`), HTML from a proxy, plain text or
 * nothing. The transport (http_transport.ts) reads the body of every refusal and hands it over as `HttpStatusError`.
 */

/** Response headers as `node:http` gives them (names lowercased). */
export type ReplyHeaders = Record<string, string | string[] | undefined>;

/** Characters of an error body kept in messages (failed.jsonl, events.log). */
export const ERROR_BODY_MAX_CHARS = 600;

/**
 * A response with a status outside 2xx, thrown by the transport. Its `message` never holds the body: a body
 * saying "Gateway Timeout" must not read as a client timeout.
 */
export class HttpStatusError extends Error {
  override readonly name = "HttpStatusError";
  constructor(
    readonly status: number,
    readonly headers: ReplyHeaders,
    readonly body: string,
  ) {
    super(`HTTP status ${status}`);
  }

  /** The body as one readable line, truncated. */
  get detail(): string {
    return describeErrorBody(this.body, String(this.headers["content-type"] ?? ""));
  }
}

function truncate(text: string, max = ERROR_BODY_MAX_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function looksLikeHtml(text: string): boolean {
  return /^<(!doctype|html|head|body|h1|p|div)\b/i.test(text.trim());
}

/**
 * The message inside a JSON error body of any common shape; undefined when none is recognisable. A bare
 * `error` string next to a `message` is a type name ("TypeError"): the message is what it says. A
 * validation `detail` list (FastAPI, vLLM: `[{loc, msg, type}]`) reads `body.messages.0.content: field
 * required`. HTML inside JSON (a gateway's `{"html-message": "<!DOCTYPE…"}`) is reduced to title and text.
 */
export function messageOfJson(data: unknown): string | undefined {
  if (typeof data === "string") {
    const text = data.trim();
    if (!text) return undefined;
    return looksLikeHtml(text) ? textOfHtml(text) || undefined : text;
  }
  if (!data || typeof data !== "object") return undefined;
  if (Array.isArray(data)) {
    const parts = data.map(messageOfJson).filter((m): m is string => !!m);
    return parts.length ? parts.join("; ") : undefined;
  }
  const o = data as Record<string, unknown>;
  if (typeof o.msg === "string" && o.msg.trim() && Array.isArray(o.loc) && o.loc.length > 0) {
    return `${o.loc.map(String).join(".")}: ${o.msg.trim()}`;
  }
  if (typeof o.error === "string" && typeof o.message === "string" && o.message.trim()) return messageOfJson(o.message);
  for (const key of ["error", "message", "detail", "error_description", "errors", "msg", "title", "reason"]) {
    const m = messageOfJson(o[key]);
    if (m) {
      // OpenAI-style `error: {message, metadata: {raw}}` (OpenRouter) keeps the upstream's own words too.
      const raw = (o[key] as { metadata?: { raw?: unknown } } | undefined)?.metadata?.raw;
      return typeof raw === "string" && raw.trim() && !m.includes(raw.trim()) ? `${m} (${raw.trim()})` : m;
    }
  }
  // Any other key holding an HTML page.
  for (const v of Object.values(o)) {
    if (typeof v === "string" && looksLikeHtml(v)) return textOfHtml(v) || undefined;
  }
  return undefined;
}

function textOfHtml(html: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const body = html
    .replace(/<(script|style|head)[^>]*>[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
  const text = oneLine(body);
  const t = title ? oneLine(title) : "";
  if (!t) return text;
  return text.startsWith(t) ? text : `${t}: ${text}`;
}

/** One line saying what the body held: its message, else its text; "(empty body)" for nothing. */
export function describeErrorBody(body: string, contentType = ""): string {
  const trimmed = body.trim();
  if (!trimmed) return "(empty body)";
  let json: unknown;
  let isJson = false;
  try {
    json = JSON.parse(trimmed);
    isJson = true;
  } catch {
    // not JSON
  }
  if (isJson) return truncate(oneLine(messageOfJson(json) ?? trimmed));
  if (/html/i.test(contentType) || looksLikeHtml(trimmed))
    return truncate(textOfHtml(trimmed) || "(HTML page without text)");
  return truncate(oneLine(trimmed));
}
