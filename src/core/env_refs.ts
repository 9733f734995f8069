/** `${NAME}` references to environment variables inside option values (headers), resolved at start. */

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The variable names a value refers to, in order. */
export function envReferences(value: string): string[] {
  return [...value.matchAll(REFERENCE)].map((m) => m[1]!);
}

/**
 * The value with every `${NAME}` replaced from `env`. A variable that is not set (or empty) is an error
 * naming it, never an empty substitution: a header silently sent empty is a confusing 401 later.
 */
export function expandEnvReferences(value: string, env: NodeJS.ProcessEnv, where: string): string {
  return value.replace(REFERENCE, (_, name: string) => {
    const v = env[name];
    if (v === undefined || v === "") throw new EnvReferenceError(`${where}: environment variable ${name} is not set`);
    return v;
  });
}

export class EnvReferenceError extends Error {
  override readonly name = "EnvReferenceError";
}
