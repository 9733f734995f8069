/**
 * The run configuration: a YAML file (`--config run.yaml`) and flags, flags winning, validated by zod.
 * Keys are the flag names in snake_case (`--max-turns` ⇔ `max_turns`).
 */
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import YAML from "yaml";
import { z } from "zod";
import { UserError } from "../core/errors.js";

export const OUTCOME_POLICIES = ["skip", "fail"] as const;
export const APPROVAL_POLICIES = ["smart", "deny", "allow", "interactive"] as const;

const positiveInt = z.number().int().min(1);

export const RunConfigSchema = z
  .object({
    dataset: z.string().min(1),
    run_name: z.string().regex(/^[A-Za-z0-9._-]+$/, "use letters, digits, '.', '_' and '-' only").optional(),
    output_dir: z.string().default("runs"),
    model: z.string().min(1).optional(),
    base_url: z.string().url().optional(),
    api_key: z.string().optional(),
    distribution: z.string().default("default"),
    distribution_file: z.string().optional(),
    toolsets: z.array(z.string()).optional(),
    seed: z.number().int().default(0),
    workers: positiveInt.default(Math.max(1, cpus().length)),
    concurrency: positiveInt.default(32),
    max_connections: positiveInt.optional(),
    max_turns: positiveInt.default(10),
    task_timeout: z.number().positive().default(1800),
    request_timeout: z.number().positive().default(600),
    max_retries: z.number().int().min(0).default(6),
    max_samples: positiveInt.optional(),
    offset: z.number().int().min(0).default(0),
    resume: z.boolean().default(false),
    retry_failed: z.boolean().default(false),
    retry_internal: z.boolean().default(false),
    only: z.array(z.string()).optional(),
    dry_run: z.boolean().default(false),
    on_bad_row: z.enum(OUTCOME_POLICIES).default("fail"),
    env: z.enum(["local", "docker", "singularity"]).default("local"),
    image: z.string().optional(),
    network: z.string().optional(),
    memory_mb: positiveInt.optional(),
    cpus: z.number().positive().optional(),
    pids_limit: positiveInt.optional(),
    read_only_root: z.boolean().default(false),
    pull: z.boolean().default(false),
    max_sandboxes: positiveInt.optional(),
    /** Docker sandboxes started ahead of the tasks, split between the workers; 0 = off. */
    prewarm: z.number().int().min(0).optional(),
    max_tokens: positiveInt.optional(),
    temperature: z.number().min(0).max(2).optional(),
    reasoning_effort: z.enum(["none", "minimal", "low", "medium", "high", "xhigh"]).optional(),
    stream: z.boolean().default(false),
    extra_body: z.record(z.string(), z.unknown()).optional(),
    system_prompt: z.string().optional(),
    ephemeral_system_prompt: z.string().optional(),
    prefill_messages_file: z.string().optional(),
    max_consecutive_tool_errors: positiveInt.default(3),
    tool_concurrency: positiveInt.default(8),
    require_reasoning: z.boolean().default(false),
    approval: z.enum(APPROVAL_POLICIES).default("smart"),
    approval_model: z.string().optional(),
    approval_base_url: z.string().url().optional(),
    approval_api_key: z.string().optional(),
    verify_timeout: z.number().positive().default(300),
    keep_workspaces: z.boolean().default(false),
    plugins: z.array(z.string()).default([]),
    progress: z.enum(["auto", "bar", "log", "none"]).default("auto"),
  })
  .strict();

export type RunConfig = z.infer<typeof RunConfigSchema>;
export type RunConfigInput = z.input<typeof RunConfigSchema>;

/** Keys whose values never reach an output file. */
export const SECRET_KEYS = ["api_key", "approval_api_key"] as const;

export function formatZodIssues(error: z.ZodError, where: string): string {
  return error.issues
    .map((i) => {
      const key = i.path.length ? i.path.join(".") : "(top level)";
      if (i.code === "unrecognized_keys") return `${where}: unknown key(s) ${i.keys.map((k) => `'${k}'`).join(", ")}`;
      return `${where}: '${key}': ${i.message}`;
    })
    .join("; ");
}

/** The 1-based line of a top-level key in a YAML text, if it is there. */
export function lineOfKey(text: string, key: string): number | undefined {
  try {
    const doc = YAML.parseDocument(text);
    const map = doc.contents;
    if (!YAML.isMap(map)) return undefined;
    const pair = map.items.find((p) => YAML.isScalar(p.key) && p.key.value === key);
    const offset = (pair?.key as YAML.Scalar | undefined)?.range?.[0];
    return offset === undefined ? undefined : text.slice(0, offset).split("\n").length;
  } catch {
    return undefined;
  }
}

export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UserError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let parsed: unknown;
  try {
    parsed = YAML.parse(text);
  } catch (err) {
    const e = err as { linePos?: { line: number }[]; message: string };
    const line = e.linePos?.[0]?.line;
    throw new UserError(`${path}${line ? `:${line}` : ""}: invalid YAML: ${e.message.split("\n")[0]}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) throw new UserError(`${path}: the config must be a YAML mapping of keys to values`);
  return parsed as Record<string, unknown>;
}

/**
 * The key from the environment that belongs to the endpoint: OPENROUTER_API_KEY for OpenRouter (the
 * default endpoint), OPENAI_API_KEY elsewhere; the other one only as a fallback.
 */
export function defaultApiKey(baseURL: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const openRouter = baseURL === undefined || /openrouter\.ai/i.test(baseURL);
  return openRouter ? (env.OPENROUTER_API_KEY ?? env.OPENAI_API_KEY) : (env.OPENAI_API_KEY ?? env.OPENROUTER_API_KEY);
}

/** Merges the YAML file (if any), then the flags; applies environment fallbacks for keys. */
export function resolveRunConfig(flags: Record<string, unknown>, configPath?: string): RunConfig {
  const fromFile = configPath ? readConfigFile(configPath) : {};
  const merged: Record<string, unknown> = { ...fromFile };
  for (const [k, v] of Object.entries(flags)) if (v !== undefined) merged[k] = v;
  const parsed = RunConfigSchema.safeParse(merged);
  if (!parsed.success) {
    // Name the flag when the bad value came from the command line, the file (and key) otherwise.
    const messages = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "");
      const fromFlag = key !== "" && flags[key] !== undefined;
      let where = fromFlag ? `--${key.replace(/_/g, "-")}` : (configPath ?? "flags");
      if (!fromFlag && configPath) {
        const badKey = issue.code === "unrecognized_keys" ? issue.keys[0] : key;
        const line = badKey ? lineOfKey(readFileSync(configPath, "utf8"), badKey) : undefined;
        if (line) where = `${configPath}:${line}`;
      }
      return formatZodIssues(new z.ZodError([issue]), where);
    });
    throw new UserError(messages.join("; "));
  }
  const config = parsed.data;
  config.api_key ??= defaultApiKey(config.base_url);
  return config;
}

/** The configuration as saved in run.yaml: secrets redacted, the ephemeral prompt left out by design. */
export function publicConfig(config: RunConfig): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const k of SECRET_KEYS) if (out[k] !== undefined) out[k] = "<redacted>";
  if (out.ephemeral_system_prompt !== undefined) out.ephemeral_system_prompt = "<used, not saved>";
  return out;
}
