/**
 * Before the first task: can the run's endpoints work at all? One cheap request per endpoint (`GET /models`,
 * never a chat completion, so nothing is spent and no scripted reply is consumed):
 * - nobody listening, or a name that does not resolve → stop (exit 2);
 * - the key refused (401/403) → stop;
 * - a non-empty model list without the run's model → stop, naming some that are listed;
 * - anything else (no /models route, 5xx, a list of another shape) → go on: the endpoint answers.
 * A remote endpoint without a key stops before asking anything. `--no-preflight` skips the requests.
 */
import { UserError } from "../core/errors.js";
import { basicAuthorization, splitUrlCredentials } from "../core/url_credentials.js";
import type { ModelEndpoint } from "./factory.js";
import { getText } from "./http_transport.js";

const PREFLIGHT_TIMEOUT_MS = 20_000;
const SKIP_HINT = "(--no-preflight skips this check)";

/** Loopback, private and link-local hosts, and single-label names: endpoints a user runs without a key. */
export function isLocalHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost") || h.endsWith(".local") || h.endsWith(".internal")) return true;
  if (h === "::1") return true;
  if (h.includes(":")) return /^(fc|fd|fe80:)/.test(h);
  const v4 = h.match(/^(\d+)\.(\d+)\.\d+\.\d+$/);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return (
      a === 127 ||
      a === 10 ||
      (a === 192 && b === 168) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 169 && b === 254) ||
      a === 0
    );
  }
  return !h.includes(".") && !h.includes(":");
}

/** A remote endpoint with no key at all is a configuration mistake, not 10,000 failed tasks. */
export function requireKeys(endpoints: Array<[role: string, ModelEndpoint]>): void {
  for (const [role, ep] of endpoints) {
    if (ep.provider !== "openai" || ep.options.apiKey) continue;
    let host: string;
    try {
      host = new URL(ep.options.baseURL).hostname;
    } catch {
      continue;
    }
    if (isLocalHost(host)) continue;
    const flag =
      role === "agent"
        ? "--api-key (or OPENROUTER_API_KEY / OPENAI_API_KEY)"
        : role === "approver"
          ? "--approval-api-key"
          : `--${role}-api-key`;
    throw new UserError(
      `no API key for the ${role === "agent" ? "model" : role} endpoint ${safeURL(ep.options.baseURL)}: pass ${flag}`,
    );
  }
}

/** The URL without user:password. */
function safeURL(url: string): string {
  return splitUrlCredentials(url).url.replace(/\/$/, "");
}

function bodyExcerpt(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (!t) return "(empty body)";
  return t.length > 200 ? `${t.slice(0, 200)}…` : t;
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

/**
 * Checks each distinct endpoint once (by base URL and model), with the endpoint's own headers and credentials
 * as its model requests send them; `warn` gets what is worth knowing but not worth stopping for.
 */
export async function preflightEndpoints(
  endpoints: Array<[role: string, ModelEndpoint]>,
  opts: { warn: (line: string) => void; signal?: AbortSignal },
): Promise<void> {
  const seen = new Set<string>();
  const checks: Promise<void>[] = [];
  for (const [role, ep] of endpoints) {
    if (ep.provider !== "openai" || seen.has(ep.key)) continue;
    seen.add(ep.key);
    checks.push(preflightOne(role, ep, opts));
  }
  await Promise.all(checks);
}

async function preflightOne(
  role: string,
  ep: ModelEndpoint,
  opts: { warn: (line: string) => void; signal?: AbortSignal },
): Promise<void> {
  const credentials = splitUrlCredentials(ep.options.baseURL);
  const base = credentials.url.replace(/\/+$/, "");
  const what = `${role === "agent" ? "model" : role} endpoint ${base}`;
  const basic = basicAuthorization(credentials);
  const headers: Record<string, string> = { accept: "application/json" };
  if (basic) headers.authorization = basic;
  else if (ep.options.apiKey) headers.authorization = `Bearer ${ep.options.apiKey}`;
  for (const [name, value] of Object.entries(ep.options.headers ?? {})) headers[name.toLowerCase()] = value;
  let response: { status: number; ok: boolean };
  let text: string;
  try {
    const signal = opts.signal
      ? AbortSignal.any([opts.signal, AbortSignal.timeout(PREFLIGHT_TIMEOUT_MS)])
      : AbortSignal.timeout(PREFLIGHT_TIMEOUT_MS);
    ({ text, ...response } = await getText(`${base}/models`, headers, signal));
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    const cause = causeOf(err);
    if (/TimeoutError|aborted/i.test(cause) || (err as Error)?.name === "TimeoutError") {
      opts.warn(`preflight: the ${what} did not answer GET /models within ${PREFLIGHT_TIMEOUT_MS / 1000} s; going on`);
      return;
    }
    throw new UserError(`cannot reach the ${what}: ${cause} ${SKIP_HINT}`);
  }
  if (response.status === 401 || response.status === 403) {
    throw new UserError(`the ${what} refused the key (HTTP ${response.status}): ${bodyExcerpt(text)} ${SKIP_HINT}`);
  }
  if (!response.ok) {
    if (response.status >= 500 || response.status === 429)
      opts.warn(`preflight: the ${what} answered GET /models with HTTP ${response.status}; going on`);
    return; // 404/405: a gateway without a /models route — it answers, the model cannot be checked here.
  }
  const ids = modelIds(text);
  if (ids && ids.length > 0 && !ids.includes(ep.options.model)) {
    const near = ids
      .filter((id) => id.toLowerCase().includes(ep.options.model.toLowerCase().split("/").pop() ?? ""))
      .slice(0, 5);
    const shown = (near.length ? near : ids.slice(0, 5)).join(", ");
    throw new UserError(
      `the ${what} does not list model '${ep.options.model}' (${ids.length} listed${shown ? `, e.g. ${shown}` : ""}) ${SKIP_HINT}`,
    );
  }
}

/** The ids of an OpenAI-shaped model list (`{data: [{id}]}`), or null for any other answer. */
function modelIds(text: string): string[] | null {
  try {
    const parsed = JSON.parse(text) as { data?: unknown };
    if (!Array.isArray(parsed?.data)) return null;
    return parsed.data
      .map((m) =>
        m && typeof m === "object" && typeof (m as { id?: unknown }).id === "string" ? (m as { id: string }).id : "",
      )
      .filter(Boolean);
  } catch {
    return null;
  }
}
