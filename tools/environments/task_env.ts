/**
 * The environment variables a task sees, for every backend: built from an allow-list of harmless names, never
 * from the harness's own environment minus a deny-list. Whatever holds a key (`OPENAI_API_KEY`, the
 * `--api-key` the CLI was given, `DATABASE_URL`, a webhook URL) stays out unless the user names it with
 * `--pass-env NAME`.
 */

/** Passed on from the harness's environment when set. */
export const TASK_ENV_NAMES: readonly string[] = [
  "PATH",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TZ",
  "USER",
  "LOGNAME",
  "COLUMNS",
  "LINES",
];

/** Name prefixes passed on (locale categories). */
export const TASK_ENV_PREFIXES: readonly string[] = ["LC_"];

/** When the harness has no PATH: what a Debian shell would use. */
export const DEFAULT_TASK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** A name a `--pass-env` may give: what a shell can export. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

function allowed(name: string, extra: ReadonlySet<string>): boolean {
  return TASK_ENV_NAMES.includes(name) || TASK_ENV_PREFIXES.some((p) => name.startsWith(p)) || extra.has(name);
}

/**
 * The task's environment: the allow-listed variables of `source` plus those named in `passEnv`, with PATH
 * always set. `overrides` (HOME of the sandbox, a marker) win over both.
 */
export function taskEnvironment(
  source: NodeJS.ProcessEnv = process.env,
  passEnv: readonly string[] = [],
  overrides: Record<string, string> = {},
): Record<string, string> {
  const extra = new Set(passEnv);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && allowed(name, extra)) env[name] = value;
  }
  env.PATH = absolutePath(env.PATH) || DEFAULT_TASK_PATH;
  return { ...env, ...overrides };
}

/**
 * A PATH value with only its absolute folders. An empty entry (`:/usr/bin`, `a::b`, a trailing `:`), `.` or any
 * other relative folder is searched from the current folder, which in a task is the agent's folder: a verify run
 * there would start the agent's own `python3` or `pytest` instead of the system's.
 */
export function absolutePath(path: string | undefined): string {
  return (path ?? "")
    .split(":")
    .filter((dir) => dir.startsWith("/"))
    .join(":");
}
