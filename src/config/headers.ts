/**
 * Extra HTTP headers for model requests (`--header 'Name: value'`, `headers:` in the config): their syntax,
 * `${VAR}` values read from the environment at start, which endpoint gets which, and how they are shown.
 */
import * as z from "zod";
import { EnvReferenceError, envReferences, expandEnvReferences } from "../core/env_refs.js";

/** An HTTP field name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What an HTTP/1.1 field value may hold (tab, visible ASCII, Latin-1): anything else fails every request. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers the transport owns: setting them would break the request. */
const RESERVED = new Set([
  "content-length",
  "transfer-encoding",
  "connection",
  "content-type",
  "accept-encoding",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
]);

// Issues name the header, never its value (it may be a key).
export const HeadersSchema = z
  .record(z.string(), z.string())
  .superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      const problem = !HEADER_NAME.test(name)
        ? `header name '${name.slice(0, 60)}' is not a valid HTTP header name (letters, digits and !#$%&'*+.^_\`|~- only)`
        : RESERVED.has(name.toLowerCase())
          ? `header '${name}' is set by the HTTP client itself and cannot be given`
          : !HEADER_VALUE.test(value)
            ? `header '${name}': the value must be one line of printable characters`
            : undefined;
      if (problem) ctx.addIssue({ code: "custom", message: problem, input: undefined });
    }
  })
  .optional();

export type HeaderMap = Record<string, string>;

/** `Name: value` → [name, value]; undefined when there is no `Name:` part. */
export function parseHeaderLine(line: string): [string, string] | undefined {
  const colon = line.indexOf(":");
  if (colon <= 0) return undefined;
  const name = line.slice(0, colon).trim();
  if (!name) return undefined;
  return [name, line.slice(colon + 1).trim()];
}

/** The header config keys and the flag of each. */
export const HEADER_KEYS = ["headers", "approval_headers", "judge_headers"] as const;
export type HeaderKey = (typeof HEADER_KEYS)[number];

/** Every header with its `${VAR}`s replaced from `env`; a missing variable throws naming `where` and the header. */
export function expandHeaders(headers: HeaderMap | undefined, env: NodeJS.ProcessEnv, where: string): HeaderMap {
  const out: HeaderMap = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const sent = expandEnvReferences(value, env, `${where} '${name}'`);
    // Checked after expansion: a variable holding a newline would otherwise fail every request, later.
    if (!HEADER_VALUE.test(sent))
      throw new EnvReferenceError(
        `${where} '${name}': the value read from the environment must be one line of printable characters`,
      );
    out[name] = sent;
  }
  return out;
}

/** Headers from two sources, the second winning per name (compared case-insensitively). */
export function mergeHeaders(base: HeaderMap, over: HeaderMap): HeaderMap {
  const out: HeaderMap = {};
  const overNames = new Set(Object.keys(over).map((n) => n.toLowerCase()));
  for (const [n, v] of Object.entries(base)) if (!overNames.has(n.toLowerCase())) out[n] = v;
  return { ...out, ...over };
}

/**
 * A value that may be shown as written: only `${VAR}` references, optionally after one scheme word
 * (`Bearer ${KEY}`). Any other literal text may be a secret and is redacted.
 */
export function isShowableHeaderValue(value: string): boolean {
  return (
    envReferences(value).length > 0 && /^(?:[A-Za-z][\w-]*\s+)?(?:\$\{[A-Za-z_][A-Za-z0-9_]*\}\s*)+$/.test(value.trim())
  );
}

/** Headers as run.yaml and the resume hint show them: references kept, literal values redacted. */
export function publicHeaders(headers: HeaderMap | undefined, redacted = "<redacted>"): HeaderMap | undefined {
  if (!headers) return undefined;
  return Object.fromEntries(Object.entries(headers).map(([n, v]) => [n, isShowableHeaderValue(v) ? v : redacted]));
}
