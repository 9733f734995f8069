/**
 * Secret values never reach an output file: the main-thread writer passes every line through this.
 * A model or a tool can echo a key it found (e.g. a local command reading its parent's environment);
 * redaction by value catches it wherever it appears.
 */
import type { RunConfig } from "../config/run_config.js";
import { looksLikeSecretName } from "../../tools/environments/local.js";

const MIN_SECRET_LENGTH = 8;

export type Redactor = (text: string) => string;

/** The secrets of a run: its API keys and every environment variable whose name looks like a secret. */
export function secretValues(config: RunConfig, env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  for (const v of [config.api_key, config.approval_api_key, config.judge_api_key]) if (v && v.length >= MIN_SECRET_LENGTH) values.add(v);
  for (const [k, v] of Object.entries(env)) if (v && v.length >= MIN_SECRET_LENGTH && looksLikeSecretName(k)) values.add(v);
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
  if (forms.size === 0) return (t) => t;
  const re = new RegExp([...forms].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|"), "g");
  return (text) => text.replace(re, "<redacted>");
}
