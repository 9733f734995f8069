/**
 * The run configuration: a YAML file (`--config run.yaml`) and flags, flags winning, validated by the
 * schema of the option table (run_options.ts). Keys are the flag names in snake_case (`--max-turns` ⇔ `max_turns`).
 */
import { realpathSync, statSync } from "node:fs";
import { cpus, homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import YAML from "yaml";
import * as z from "zod";
import { UserError, errorMessage } from "../core/errors.js";
import { scrubUrlCredentials } from "../core/url_credentials.js";
import { HEADER_KEYS, expandHeaders, publicHeaders } from "./headers.js";
import { nearestName } from "../core/nearest_name.js";
import { parseSettingsYaml, readSettingsText } from "../core/settings_file.js";
import { RunConfigSchema, defaultWorkers, flagOf } from "./run_options.js";

export { APPROVAL_POLICIES, OUTCOME_POLICIES, RunConfigSchema } from "./run_options.js";

export type RunConfig = z.infer<typeof RunConfigSchema>;
export type RunConfigInput = z.input<typeof RunConfigSchema>;

/** Keys whose values never reach an output file. */
export const SECRET_KEYS = ["api_key", "approval_api_key", "judge_api_key"] as const;
/** Endpoint URLs: shown without their `user:pass@` part. */
export const URL_KEYS = ["base_url", "approval_base_url", "judge_base_url"] as const;

function shown(value: unknown): string {
  if (typeof value === "string")
    return /[\u0000-\u001f\u007f-\u009f]/.test(value) ? JSON.stringify(value) : `'${value}'`;
  // JSON.stringify writes Infinity and NaN as null.
  if (typeof value === "number") return String(value);
  return JSON.stringify(value) ?? "nothing";
}

/** What is wrong with a value, as the end of a sentence about it ("must be at least 1, got 0"). */
export function issueText(issue: z.core.$ZodIssue, value: unknown): string {
  const got = `, got ${shown(value)}`;
  switch (issue.code) {
    case "too_small":
      if (issue.origin === "string") return "must not be empty";
      return `must be ${issue.inclusive ? "at least" : "greater than"} ${String(issue.minimum)}${got}`;
    case "too_big":
      return `must be ${issue.inclusive ? "at most" : "less than"} ${String(issue.maximum)}${got}`;
    case "invalid_value":
      return `must be one of ${issue.values.map(String).join("|")}${got}`;
    case "invalid_format":
      return issue.format === "url" ? `must be a URL${got}` : `${issue.message}${got}`;
    case "invalid_type": {
      const expected =
        issue.expected === "int"
          ? "a whole number"
          : issue.expected === "array"
            ? "a list"
            : issue.expected === "record" || issue.expected === "object"
              ? "a mapping"
              : `a ${issue.expected}`;
      return `must be ${expected}${got}`;
    }
    default:
      return issue.message;
  }
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const k of path) v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

/** `'modle': did you mean 'model'?`: each unknown top-level key with the run option it resembles, if one does. */
function unknownKeysText(keys: string[], path: readonly PropertyKey[]): string {
  const known = path.length === 0 ? Object.keys(RunConfigSchema.shape) : [];
  const near = keys.map((k) => nearestName(k, known));
  if (keys.length === 1) return `'${keys[0]}'${near[0] ? `: did you mean '${near[0]}'?` : ""}`;
  return keys.map((k, n) => `'${k}'${near[n] ? ` (did you mean '${near[n]}'?)` : ""}`).join(", ");
}

/** Every issue as `where: 'key' must …`, joined into one line. */
export function formatZodIssues(error: z.ZodError, where: string, input?: unknown): string {
  return error.issues
    .map((i) => {
      if (i.code === "unrecognized_keys") return `${where}: unknown key(s) ${unknownKeysText(i.keys, i.path)}`;
      const key = i.path.length ? i.path.map(String).join(".") : "(top level)";
      return `${where}: '${key}' ${issueText(i, valueAt(input, i.path))}`;
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
  return readConfigText(path).values;
}

/** The `--config` file's text (for line lookups) and its mapping; any problem is one UserError line. */
function readConfigText(path: string): { text: string; values: Record<string, unknown> } {
  const text = readSettingsText(path, "--config");
  const { value: parsed } = parseSettingsYaml(text, path, "YAML");
  if (parsed === null || parsed === undefined) return { text, values: {} };
  if (typeof parsed !== "object" || Array.isArray(parsed))
    throw new UserError(`${path}: the config must be a YAML mapping of keys to values`);
  return { text, values: parsed as Record<string, unknown> };
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
/**
 * Flags over the config file, validated. With `combinations`, settings that contradict each other or would
 * do nothing are refused too (the run command; the option-table tests set every key at once).
 */
export function resolveRunConfig(
  flags: Record<string, unknown>,
  configPath?: string,
  opts: { combinations?: boolean } = {},
): RunConfig {
  // An empty --config is a mistake (an unset variable in a script), not "no file": readSettingsText refuses it.
  const file = configPath !== undefined ? readConfigText(configPath) : undefined;
  const fromFile = file?.values ?? {};
  const merged: Record<string, unknown> = { ...fromFile };
  for (const [k, v] of Object.entries(flags)) if (v !== undefined) merged[k] = v;
  // Parsed once per process: zod's compiled fast path for an object of ~100 keys costs more to generate (~4 ms)
  // than it saves on one parse.
  const parsed = RunConfigSchema.safeParse(merged, { jitless: true });
  if (!parsed.success) {
    // Name the flag when the bad value came from the command line, the file (and line) otherwise.
    const messages = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? "");
      const flag = key !== "" && flags[key] !== undefined ? flagOf(key) : undefined;
      if (flag) return `${flag} ${issueText(issue, valueAt(merged, issue.path))}`;
      let where = configPath ?? "config";
      if (configPath) {
        const badKey = issue.code === "unrecognized_keys" ? issue.keys[0] : key;
        const line = badKey && file ? lineOfKey(file.text, badKey) : undefined;
        if (line) where = `${configPath}:${line}`;
      }
      return formatZodIssues(new z.ZodError([issue]), where, merged);
    });
    throw new UserError(messages.join("; "));
  }
  const config = parsed.data;
  // The default depends on --concurrency, which the schema's per-key defaults cannot see.
  if (merged.workers === undefined) config.workers = defaultWorkers(config.concurrency);
  checkHeaderReferences(config, flags, configPath);
  if (opts.combinations) checkCombinations(config, merged);
  config.api_key ??= defaultApiKey(config.base_url);
  return config;
}

/** Every `${VAR}` of a header must be set now, not discovered missing at the first request (exit 2 naming it). */
function checkHeaderReferences(
  config: RunConfig,
  flags: Record<string, unknown>,
  configPath: string | undefined,
): void {
  for (const key of HEADER_KEYS) {
    const where = flags[key] !== undefined ? flagOf(key)! : `${configPath ?? "config"}: ${key}`;
    try {
      expandHeaders(config[key], process.env, where);
    } catch (err) {
      throw new UserError(errorMessage(err));
    }
  }
}

/** Worker threads beyond this many per core only cost memory (each is a V8 isolate). */
const WORKERS_PER_CORE = 4;
const MAX_CONCURRENCY = 4096;

/** Settings that contradict each other, or that would do nothing: one clear line before anything runs. */
function checkCombinations(config: RunConfig, given: Record<string, unknown>): void {
  const f = (key: string) => flagOf(key) ?? key;
  if (config.toolsets !== undefined && config.toolsets.length === 0) {
    throw new UserError(
      `${f("toolsets")} is empty: the run would offer the model no tool (name toolsets, or leave it out to draw from --distribution)`,
    );
  }
  if (config.toolsets !== undefined && given.distribution !== undefined) {
    throw new UserError(
      `${f("toolsets")} and ${f("distribution")} both given: fixed toolsets replace the distribution; give one of them`,
    );
  }
  if (config.retry_failed && config.only) {
    throw new UserError(
      `${f("retry_failed")} reruns the failed tasks: it does not combine with ${f("only")} (which reruns the tasks named)`,
    );
  }
  if (config.retry_unscored && config.only) {
    throw new UserError(
      `${f("retry_unscored")} reruns the unscored tasks: it does not combine with ${f("only")} (which reruns the tasks named)`,
    );
  }
  const cores = Math.max(1, cpus().length);
  if (config.workers > WORKERS_PER_CORE * cores) {
    throw new UserError(
      `${f("workers")} ${config.workers} is more than ${WORKERS_PER_CORE} per core (${cores} core(s)): at most ${WORKERS_PER_CORE * cores}; raise ${f("concurrency")} for more loops in flight`,
    );
  }
  if (config.concurrency > MAX_CONCURRENCY)
    throw new UserError(`${f("concurrency")} ${config.concurrency} is more than ${MAX_CONCURRENCY}`);
  if (config.env === "local" || config.env === "host") {
    // The local sandbox takes --network none|host (checked by its backend); the host has whatever it has.
    const ignored = ["prewarm", "image", ...(config.env === "host" ? ["network"] : [])].filter(
      (k) => given[k] !== undefined,
    );
    if (ignored.length)
      throw new UserError(
        `${ignored.map(f).join(", ")} ${ignored.length === 1 ? "applies" : "apply"} to container environments (--env docker|singularity), not --env ${config.env}`,
      );
  }
  checkSandboxReadOnly(config, f);
  for (const name of config.pass_env) {
    const value = process.env[name];
    const key = value
      ? SECRET_KEYS.find((k) => config[k] === value || (k === "api_key" && defaultApiKey(config.base_url) === value))
      : undefined;
    if (key)
      throw new UserError(
        `${f("pass_env")} ${name}: it holds the run's ${f(key)}; the keys of the endpoint, approver and judge never enter a task's environment`,
      );
  }
}

/**
 * `--sandbox-ro` folders (local sandbox only): absolute, existing folders that neither hold nor lie inside the
 * dataset's folder or the output dir, and do not hold the harness user's home; each is resolved to its real path.
 */
function checkSandboxReadOnly(config: RunConfig, f: (key: string) => string): void {
  if (config.sandbox_ro.length === 0) return;
  if (config.env !== "local")
    throw new UserError(`${f("sandbox_ro")} applies to the local sandbox (--env local), not --env ${config.env}`);
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const within = (inner: string, outer: string) => inner === outer || outer === "/" || inner.startsWith(`${outer}/`);
  const guarded: { what: string; path: string; inside: boolean }[] = [
    { what: "the output dir", path: real(config.output_dir), inside: true },
    { what: "your home", path: real(homedir()), inside: false },
    // Where the tasks' own file systems (the disk quota) are mounted.
    { what: "the temporary folder", path: real(tmpdir()), inside: false },
  ];
  if (config.dataset !== "-" && config.dataset !== undefined)
    guarded.push({ what: "the dataset's folder", path: real(dirname(resolve(config.dataset))), inside: true });
  config.sandbox_ro = config.sandbox_ro.map((given) => {
    if (!isAbsolute(given)) throw new UserError(`${f("sandbox_ro")} ${given}: give an absolute path`);
    let path: string;
    try {
      path = realpathSync(given);
    } catch {
      throw new UserError(`${f("sandbox_ro")} ${given}: no such folder`);
    }
    if (!statSync(path).isDirectory()) throw new UserError(`${f("sandbox_ro")} ${given}: not a folder`);
    for (const g of guarded) {
      if (within(g.path, path) || (g.inside && within(path, g.path))) {
        throw new UserError(
          `${f("sandbox_ro")} ${given}: it ${within(g.path, path) ? "holds" : "lies inside"} ${g.what} (${g.path}), which a task must never see`,
        );
      }
    }
    return path;
  });
}

/** The configuration as saved in run.yaml: secrets redacted, the ephemeral prompt left out by design. */
export function publicConfig(config: RunConfig): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const k of SECRET_KEYS) if (out[k] !== undefined) out[k] = "<redacted>";
  for (const k of URL_KEYS) if (typeof out[k] === "string") out[k] = scrubUrlCredentials(out[k] as string);
  for (const k of HEADER_KEYS) if (out[k] !== undefined) out[k] = publicHeaders(config[k]);
  if (out.ephemeral_system_prompt !== undefined) out.ephemeral_system_prompt = "<used, not saved>";
  return out;
}
