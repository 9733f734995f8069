/**
 * Credentials written into a URL (`https://user:pass@host/v1`): taken out before the URL is used or shown,
 * sent as HTTP Basic auth, and scrubbed from any text that is written or printed.
 */

export interface UrlCredentials {
  /** The URL without its `user:pass@` part. */
  url: string;
  /** Decoded user and password, when the URL had any. */
  username?: string;
  password?: string;
}

export function splitUrlCredentials(raw: string): UrlCredentials {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return { url: raw };
  }
  if (!u.username && !u.password) return { url: raw };
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const username = decode(u.username);
  const password = decode(u.password);
  u.username = "";
  u.password = "";
  // URL serialisation adds a "/" to a bare origin; keep the caller's form otherwise.
  const url = raw.endsWith("/") || new URL(raw).pathname !== "/" ? u.toString() : u.toString().replace(/\/$/, "");
  return { url, username, password };
}

/** The `Authorization` value for a URL's credentials, or undefined when it has none. */
export function basicAuthorization(c: UrlCredentials): string | undefined {
  if (c.username === undefined && c.password === undefined) return undefined;
  return `Basic ${Buffer.from(`${c.username ?? ""}:${c.password ?? ""}`).toString("base64")}`;
}

// scheme://user:password@ — a user name alone (`ssh://git@host`) is not a secret and stays.
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:"'<>]*:[^\s/@"'<>]*@/gi;

/** Text with the `user:pass@` part of every URL in it replaced by `<redacted>@`. */
export function scrubUrlCredentials(text: string, replacement = "<redacted>"): string {
  // Every trajectory line passes here: a text without both marks (most) is not scanned by the regex.
  if (!text.includes("@") || !text.includes("://")) return text;
  return text.replace(USERINFO, `$1${replacement}@`);
}

/** The secret strings of a URL's credentials (raw and decoded forms) to redact by value. */
export function credentialValues(raw: string | undefined): string[] {
  if (!raw) return [];
  const c = splitUrlCredentials(raw);
  if (c.username === undefined) return [];
  const out = new Set<string>();
  let u: URL | undefined;
  try {
    u = new URL(raw);
  } catch {
    return [];
  }
  for (const v of [u.password, c.password, `${u.username}:${u.password}`, `${c.username}:${c.password}`])
    if (v) out.add(v);
  // As sent: the Basic authorization token (an endpoint may echo it back).
  out.add(basicAuthorization(c)!.slice("Basic ".length));
  return [...out];
}
