/**
 * Secret values never reach an output file: the main-thread writer passes every line through this.
 * A model or a tool can echo a key it found (e.g. a local command reading its parent's environment);
 * redaction by value catches it wherever it appears.
 */
import { URL_KEYS, type RunConfig } from "../config/run_config.js";
import { HEADER_KEYS } from "../config/headers.js";
import { expandEnvReferences } from "../core/env_refs.js";
import { credentialValues, scrubUrlCredentials } from "../core/url_credentials.js";
import { looksLikeSecretName } from "../core/secret_names.js";

const MIN_SECRET_LENGTH = 8;

export type Redactor = (text: string) => string;

/**
 * The secrets of a run: its API keys, the values of its extra headers (as sent, `${VAR}`s read), the
 * credentials in its endpoint URLs, and every environment variable whose name looks like a secret.
 */
export function secretValues(config: RunConfig, env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  const add = (v: string | undefined) => {
    if (v && v.length >= MIN_SECRET_LENGTH) values.add(v);
  };
  for (const v of [config.api_key, config.approval_api_key, config.judge_api_key]) add(v);
  for (const key of HEADER_KEYS) {
    for (const [name, value] of Object.entries(config[key] ?? {})) {
      let sent: string;
      try {
        sent = expandEnvReferences(value, env, name);
      } catch {
        sent = value; // checked at start; a variable unset since then sends nothing
      }
      add(sent);
      // `Bearer <token>`: the token alone is the secret too.
      const token = /^(?:Bearer|Basic|Token|Key|ApiKey|Api-Key|Digest)\s+(\S.*)$/i.exec(sent)?.[1];
      add(token);
    }
  }
  for (const key of URL_KEYS) for (const v of credentialValues(config[key])) add(v);
  for (const [k, v] of Object.entries(env)) if (looksLikeSecretName(k)) add(v);
  return [...values];
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** One regular expression over all secrets (and their JSON-escaped forms), built once per run. */
export function createRedactor(secrets: string[]): Redactor {
  const forms = new Set<string>();
  for (const s of secrets) {
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1));
  }
  // A URL's `user:pass@` is scrubbed whatever its length (a short password is still a password).
  if (forms.size === 0) return (t) => scrubUrlCredentials(t);
  const re = new RegExp(
    [...forms]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join("|"),
    "g",
  );
  return (text) => scrubUrlCredentials(text.replace(re, "<redacted>"));
}
