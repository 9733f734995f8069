/**
 * A non-streaming chat completion without the `openai` SDK in the way: the same request on the wire (URL,
 * headers, in the SDK's order, body), the reply body read as the SDK reads it, and each failure classified
 * as it would be had the SDK raised it (`transportFailure`).
 *
 * Why: the SDK's fixed work per request (headers built through undici `Headers`, request details formatted
 * for a logger that is off, its own AbortController, timeout timer and APIPromise) cost about 0.4 ms of CPU per
 * call at 128 loops and 200 ms latency, against 0.2 ms for the whole `node:http` exchange: half the 0.8 ms
 * budget of an agent turn (docs/benchmarks.md). Streaming, an injected fetch and base URLs with a query
 * string still go through the SDK (openai_compatible.ts).
 */
import { VERSION } from "openai/version";
import { ResponseHeaders } from "./buffered_response.js";
import { HttpStatusError } from "./error_body.js";
import type { NodeHttpFetch } from "./http_fetch.js";
import { ProviderError } from "./provider.js";

/** The SDK's names for Node's platform and architecture (its `X-Stainless-OS` / `X-Stainless-Arch`). */
function stainlessOs(platform: string): string {
  const p = platform.toLowerCase();
  if (p.includes("ios")) return "iOS";
  const known: Record<string, string> = {
    android: "Android",
    darwin: "MacOS",
    win32: "Windows",
    freebsd: "FreeBSD",
    openbsd: "OpenBSD",
    linux: "Linux",
  };
  return known[p] ?? (p ? `Other:${p}` : "Unknown");
}

function stainlessArch(arch: string): string {
  if (arch === "x32") return "x32";
  if (arch === "x86_64" || arch === "x64") return "x64";
  if (arch === "arm") return "arm";
  if (arch === "aarch64" || arch === "arm64") return "arm64";
  return arch ? `other:${arch}` : "unknown";
}

/**
 * The headers the SDK (this installed version) sends with `client.post` of a JSON body and no retry: its own,
 * the Bearer key, the client's default headers, then the content type; names lowercased, later sources
 * replacing earlier ones, sorted by name as undici's `Headers` iterate.
 */
export function sdkRequestHeaders(
  apiKey: string,
  defaultHeaders: Record<string, string>,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const headers = new Map<string, string>();
  const put = (name: string, value: string | undefined) => {
    if (value !== undefined) headers.set(name.toLowerCase(), value.trim());
  };
  put("accept", "application/json");
  put("user-agent", `OpenAI/JS ${VERSION}`);
  put("x-stainless-retry-count", "0");
  put("x-stainless-lang", "js");
  put("x-stainless-package-version", VERSION);
  put("x-stainless-os", stainlessOs(process.platform ?? "unknown"));
  put("x-stainless-arch", stainlessArch(process.arch ?? "unknown"));
  put("x-stainless-runtime", "node");
  put("x-stainless-runtime-version", process.version ?? "unknown");
  // The SDK reads these from the environment when the client is made without them.
  put("openai-organization", env.OPENAI_ORG_ID?.trim() || undefined);
  put("openai-project", env.OPENAI_PROJECT_ID?.trim() || undefined);
  put("authorization", `Bearer ${apiKey}`);
  for (const [name, value] of Object.entries(defaultHeaders)) put(name, value);
  put("content-type", "application/json");
  return Object.fromEntries([...headers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** `baseURL + /chat/completions` as the SDK joins them; undefined for a base URL with a query (left to the SDK). */
export function completionsUrl(baseURL: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(baseURL + (baseURL.endsWith("/") ? "chat/completions" : "/chat/completions"));
  } catch {
    return undefined;
  }
  return url.search ? undefined : url;
}

/**
 * POSTs one request and returns the body as the SDK's default parser would: JSON for a JSON media type
 * (undefined when `content-length: 0`), null for 204, else the text. A status outside 2xx throws
 * `HttpStatusError` with the body read (as `withErrorBodies` does under the SDK).
 */
export async function postCompletion(
  transport: NodeHttpFetch,
  url: URL,
  headers: Record<string, string>,
  body: string,
  signal?: AbortSignal,
): Promise<unknown> {
  const reply = await transport.request(url, {
    method: "POST",
    headers: { ...headers },
    body,
    signal,
    streamEventStreams: false,
  });
  const text = reply.kind === "buffered" ? reply.body.toString("utf8") : "";
  if (reply.status < 200 || reply.status > 299)
    throw new HttpStatusError(reply.status, new ResponseHeaders(reply.rawHeaders) as unknown as Headers, text);
  if (reply.status === 204 || reply.kind === "empty") return null;
  const mediaType = headerValue(reply.rawHeaders, "content-type")?.split(";")[0]?.trim();
  if (mediaType?.includes("application/json") || mediaType?.endsWith("+json")) {
    if (headerValue(reply.rawHeaders, "content-length") === "0") return undefined;
    return JSON.parse(text);
  }
  return text;
}

/** A field of a raw header list as `Headers.get` reads it (repeated fields joined with ", "). */
function headerValue(raw: readonly string[], name: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.length === name.length && raw[i]!.toLowerCase() === name)
      value = value === undefined ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
  }
  return value;
}

/**
 * A request that failed before any status (reset, refused, cut-off body): the failure the SDK path reports
 * for it (the SDK wraps it as an APIConnectionError, or a timeout when its text says so).
 */
export function transportFailure(err: unknown): ProviderError {
  const text =
    String(err) + (err && typeof err === "object" && "cause" in err ? String((err as { cause?: unknown }).cause) : "");
  if ((err instanceof Error && err.name === "AbortError") || /timed? ?out/i.test(text))
    return new ProviderError("request timed out", { retryable: true });
  const detail = err instanceof Error ? `: ${err.message}` : "";
  return new ProviderError(`connection error (Connection error.${detail})`, { retryable: true });
}
