/**
 * web_search and web_extract (toolset "web") through a Firecrawl-compatible HTTP API.
 * Available only when FIRECRAWL_API_KEY is set; FIRECRAWL_API_URL points at another compatible server.
 */
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { noEffects, registry, toolFailure, type ToolContext, type ToolResult } from "./registry.js";
import { integerArg, nonEmptyString } from "./tool_args.js";

export const DEFAULT_FIRECRAWL_URL = "https://api.firecrawl.dev";
const MAX_EXTRACT_URLS = 5;
/** Pages up to this size are returned whole; longer ones are cut (Hermes summarises them with an LLM). */
export const EXTRACT_PAGE_CHARS = 20_000;
/** Pages bigger than this are refused outright. */
const EXTRACT_REFUSE_CHARS = 2_000_000;
const REQUEST_TIMEOUT_MS = 60_000;

const webAvailable = (): boolean => Boolean(process.env.FIRECRAWL_API_KEY);

function firecrawlBase(): string {
  return (process.env.FIRECRAWL_API_URL || DEFAULT_FIRECRAWL_URL).replace(/\/+$/, "");
}

class FirecrawlError extends Error {}

async function firecrawlPost(path: string, body: unknown, signal?: AbortSignal): Promise<any> {
  const key = process.env.FIRECRAWL_API_KEY;
  if (!key) throw new FirecrawlError("FIRECRAWL_API_KEY is not set");
  const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(`${firecrawlBase()}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (err) {
    throw new FirecrawlError(`request failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = undefined;
  }
  if (!res.ok || json === undefined || json.success === false) {
    const detail = (json && (json.error || json.message)) || text.slice(0, 300);
    throw new FirecrawlError(`HTTP ${res.status}${detail ? `: ${String(detail).slice(0, 300)}` : ""}`);
  }
  return json;
}

// ---------------------------------------------------------------- web_search

const searchArgs = lazy(() =>
  z.object({
    query: nonEmptyString({ blankOk: false }).describe("The search query."),
    limit: integerArg({ min: 1, max: 100 }).optional().describe("Number of results (default 5)."),
  }),
);

export async function handleWebSearch(
  args: z.infer<ReturnType<typeof searchArgs>>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const { query } = args;
  const limit = args.limit ?? 5;
  let json: any;
  try {
    json = await firecrawlPost("/v1/search", { query, limit }, ctx.signal);
  } catch (err) {
    return toolFailure(`web_search failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  // v1 answers {data: [...]}, v2 {data: {web: [...]}}.
  const raw: any[] = Array.isArray(json.data) ? json.data : Array.isArray(json.data?.web) ? json.data.web : [];
  const results = raw.slice(0, limit).map((r) => ({
    title: String(r?.title ?? r?.metadata?.title ?? ""),
    url: String(r?.url ?? r?.metadata?.sourceURL ?? ""),
    description: String(r?.description ?? r?.snippet ?? r?.metadata?.description ?? ""),
  }));
  return { content: { success: true, query, results } };
}

// ---------------------------------------------------------------- web_extract

function isUrl(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

const extractArgs = lazy(() =>
  z.object({
    urls: z
      .array(z.string().refine(isUrl, "must be an http(s) URL"))
      .refine((urls) => urls.length > 0, "needs at least one URL")
      // More URLs are cut to the first ones with a note, so the limit is advertised, not enforced.
      .meta({ maxItems: MAX_EXTRACT_URLS })
      .describe("The http(s) URLs to read."),
  }),
);

interface ExtractResult {
  url: string;
  title?: string;
  content?: string;
  truncated?: boolean;
  error?: string;
}

async function extractOne(url: string, signal?: AbortSignal): Promise<ExtractResult> {
  if (!/^https?:\/\//i.test(url)) return { url, error: "only http and https URLs can be extracted" };
  let json: any;
  try {
    json = await firecrawlPost("/v1/scrape", { url, formats: ["markdown"], onlyMainContent: true }, signal);
  } catch (err) {
    return { url, error: err instanceof Error ? err.message : String(err) };
  }
  const markdown = String(json.data?.markdown ?? json.data?.content ?? "");
  const title = json.data?.metadata?.title ? String(json.data.metadata.title) : undefined;
  if (markdown.length > EXTRACT_REFUSE_CHARS) {
    return { url, title, error: `page too large (${markdown.length} chars; limit ${EXTRACT_REFUSE_CHARS})` };
  }
  if (markdown.length > EXTRACT_PAGE_CHARS) {
    return {
      url,
      title,
      content: `${markdown.slice(0, EXTRACT_PAGE_CHARS)}\n\n... [page truncated: showing ${EXTRACT_PAGE_CHARS} of ${markdown.length} chars]`,
      truncated: true,
    };
  }
  return { url, title, content: markdown };
}

export async function handleWebExtract(
  args: z.infer<ReturnType<typeof extractArgs>>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const urls = args.urls.slice(0, MAX_EXTRACT_URLS);
  const results = await Promise.all(urls.map((u) => extractOne(u, ctx.signal)));
  const out: Record<string, unknown> = { results };
  if (args.urls.length > MAX_EXTRACT_URLS) {
    out.note = `Only the first ${MAX_EXTRACT_URLS} URLs were extracted (${args.urls.length} given)`;
  }
  if (results.every((r) => r.error)) out.error = `web_extract failed for every URL: ${results[0]?.error}`;
  return { content: out };
}

// ---------------------------------------------------------------- registration

registry.register({
  name: "web_search",
  toolset: "web",
  emoji: "🔍",
  requiresEnv: ["FIRECRAWL_API_KEY"],
  checkFn: webAvailable,
  isAsync: true,
  schema: {
    name: "web_search",
    description:
      "Search the web. Returns up to `limit` results (default 5), each with title, url and description. Use web_extract to read a page.",
  },
  args: searchArgs,
  handler: handleWebSearch,
  effects: noEffects,
});

registry.register({
  name: "web_extract",
  toolset: "web",
  emoji: "📄",
  requiresEnv: ["FIRECRAWL_API_KEY"],
  checkFn: webAvailable,
  isAsync: true,
  schema: {
    name: "web_extract",
    description:
      `Fetch web pages and return their main content as markdown (at most ${MAX_EXTRACT_URLS} URLs per call; ` +
      `pages longer than ${EXTRACT_PAGE_CHARS} characters are cut).`,
  },
  args: extractArgs,
  handler: handleWebExtract,
  effects: noEffects,
});
