import { parseArgs, type ParseArgsConfig } from "node:util";
import { UserError } from "../core/errors.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** parseArgs with user-facing errors (exit 2) instead of stack traces. */
export function parseCommandArgs<O extends Options>(argv: string[], options: O, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    const msg = err instanceof Error ? err.message.replace(/\. To specify a positional argument.*$/s, "") : String(err);
    throw new UserError(`${msg} (see --help)`);
  }
}

export function parseIntFlag(value: string | undefined, flag: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value.trim())) throw new UserError(`${flag} must be a whole number, got '${value}'`);
  const n = Number.parseInt(value, 10);
  if (n < min) throw new UserError(`${flag} must be at least ${min}, got ${n}`);
  return n;
}

export function parseNumberFlag(value: string | undefined, flag: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min) throw new UserError(`${flag} must be a number ≥ ${min}, got '${value}'`);
  return n;
}

export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value.split(",").map((s) => s.trim()).filter(Boolean);
}
