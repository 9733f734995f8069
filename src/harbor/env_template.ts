/**
 * Harbor's `${VAR}` / `${VAR:-default}` in [environment].env, [verifier].env and [solution].env: resolved from
 * the host, but only from variables the user named with --pass-env (a batch run has nobody to ask, and a
 * task.toml must not read the harness's keys on its own).
 */
const TEMPLATE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Variables the table needs from the host that --pass-env does not name (those with a default are optional). */
export function unpassedVariables(env: Record<string, string>, passEnv: readonly string[]): string[] {
  const missing = new Set<string>();
  for (const value of Object.values(env)) {
    for (const m of value.matchAll(TEMPLATE)) if (m[2] === undefined && !passEnv.includes(m[1]!)) missing.add(m[1]!);
  }
  return [...missing];
}

/** The table with every template replaced: a passed variable's value, else its default, else "". */
export function resolveEnvTable(
  env: Record<string, string>,
  passEnv: readonly string[],
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(env)) {
    out[k] = value.replace(TEMPLATE, (_, name: string, dflt: string | undefined) => {
      const v = passEnv.includes(name) ? source[name] : undefined;
      return v ?? dflt ?? "";
    });
  }
  return out;
}
