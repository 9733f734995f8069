/**
 * The identity of a run's configuration: the fingerprint written to run.yaml and checkpoint.json, and the
 * differences between two configs. `--resume` uses it to refuse a changed config; `merge` to refuse shards
 * run with different settings. Which hermes-batch build wrote a run folder is recorded beside the fingerprint,
 * never in it (src/store/build_identity.ts).
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { URL_KEYS, type RunConfig } from "../config/run_config.js";
import { HEADER_KEYS, publicHeaders } from "../config/headers.js";
import { scrubUrlCredentials } from "../core/url_credentials.js";
import { UserError } from "../core/errors.js";

/**
 * Keys that may differ between shards: where output goes, how hard one machine works, how this
 * invocation was started, secrets. Every other key (new ones included) must match, so a forgotten key
 * shows up as a visible mismatch rather than a silent one.
 */
export const FINGERPRINT_IGNORED_KEYS: ReadonlySet<string> = new Set([
  "run_name",
  "output_dir",
  "workers",
  "concurrency",
  "max_connections",
  "tool_concurrency",
  "max_sandboxes",
  "prewarm",
  "request_timeout",
  "max_retries",
  "pull",
  "keep_workspaces",
  "progress",
  "resume",
  "retry_failed",
  "retry_internal",
  "retry_unscored",
  "only",
  "dry_run",
  "on_bad_row",
  "api_key",
  "approval_api_key",
  "judge_api_key",
  "baseline",
  "stop_after_failures",
  "no_preflight",
  "fail_under",
  "allow_config_change",
  "max_drop",
  "allow_different_dataset",
  "group_by",
  "price_input",
  "price_output",
  "shard",
  "shard_count",
  "config_fingerprint",
  "allowed_config_changes",
  "dataset_sha256",
  // run.yaml's record of the MCP servers: their file (mcp_config) is compared by content.
  "mcp_servers",
  // Which build of hermes-batch wrote the folder: compared on its own (build_identity.ts), never as a setting.
  "hermes_batch_version",
  "hermes_batch_build",
]);

/** Keys naming files: their content counts, not their path (shards on different nodes see different paths). */
export const FINGERPRINT_FILE_KEYS = ["dataset", "distribution_file", "prefill_messages_file", "mcp_config"] as const;

/** The config keys that must match across shards, file paths left out: what `merge` shows when shards differ. */
export function comparableConfig(config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(config).sort()) {
    if (FINGERPRINT_IGNORED_KEYS.has(key) || (FINGERPRINT_FILE_KEYS as readonly string[]).includes(key)) continue;
    if (config[key] !== undefined) out[key] = config[key];
  }
  return out;
}

/** JSON with object keys sorted at every level, so equal configs hash equally. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Streaming sha256 of a file (never held in memory). */
export async function fileSha256(path: string, what: string): Promise<string> {
  const hash = createHash("sha256");
  try {
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  } catch (err) {
    throw new UserError(
      `${what} ${path}: cannot read it to fingerprint the config (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  return hash.digest("hex");
}

/**
 * `sha256:<hex>` over the settings that must be identical in every shard (see FINGERPRINT_IGNORED_KEYS)
 * and the content of the dataset, distribution file and prefill file. `contentSha256` gives the hash of a
 * file already read (a dataset from stdin or a pipe, which cannot be read a second time).
 */
export async function configFingerprint(
  config: RunConfig,
  contentSha256: Partial<Record<(typeof FINGERPRINT_FILE_KEYS)[number], string>> = {},
): Promise<string> {
  const files: Record<string, string> = {};
  for (const key of FINGERPRINT_FILE_KEYS) {
    const path = config[key];
    if (path !== undefined) files[key] = contentSha256[key] ?? (await fileSha256(path, key.replace(/_/g, " ")));
  }
  // Credentials never enter the hash (run.yaml holds everything else, so a short password could be guessed from it).
  const shown: Record<string, unknown> = { ...config };
  for (const k of URL_KEYS) if (typeof shown[k] === "string") shown[k] = scrubUrlCredentials(shown[k] as string);
  for (const k of HEADER_KEYS) if (shown[k] !== undefined) shown[k] = publicHeaders(config[k]);
  const body = canonicalJson({ v: 1, config: comparableConfig(shown), files });
  return `sha256:${createHash("sha256").update(body).digest("hex")}`;
}

/** `fields:<sha256>` of a run.yaml's comparable keys: the fingerprint of a folder that recorded none. */
export function fieldsFingerprint(runYaml: Record<string, unknown>): string {
  return `fields:${createHash("sha256")
    .update(canonicalJson(comparableConfig(runYaml)))
    .digest("hex")}`;
}

function shortValue(v: unknown): string {
  const s = v === undefined ? "(unset)" : JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 59)}…` : s;
}

/** The comparable keys whose values differ between two run.yaml files, as `key (a ≠ b)`. */
export function configDifferences(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const ca = comparableConfig(a);
  const cb = comparableConfig(b);
  const keys = [...new Set([...Object.keys(ca), ...Object.keys(cb)])].sort();
  return keys
    .filter((k) => canonicalJson(ca[k]) !== canonicalJson(cb[k]))
    .map((k) => `${k} (${shortValue(ca[k])} ≠ ${shortValue(cb[k])})`);
}
