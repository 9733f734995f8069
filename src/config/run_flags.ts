/** `hermes-batch run`'s flags and `--help`, generated from the option table (run_options.ts). */
import type * as z from "zod";
import { UserError } from "../core/errors.js";
import { parseHeaderLine } from "./headers.js";
import { INVOCATION_FLAGS, RUN_OPTIONS, SECTIONS, flagOf, type OptionDef } from "./run_options.js";

const OPTIONS = RUN_OPTIONS as readonly OptionDef[];
const HELP_COLUMN = 28;
/** Characters of help text after the column, so lines stay under ~110. */
const HELP_WIDTH = 82;

/** The default of a schema with `.default(v)`, else undefined. */
function schemaDefault(schema: z.ZodType): unknown {
  const def = (schema as { def?: { type?: string; defaultValue?: unknown } }).def;
  return def?.type === "default" ? def.defaultValue : undefined;
}

function defaultText(o: OptionDef): string | undefined {
  if (o.defaultHelp !== undefined) return o.defaultHelp ?? undefined;
  const value = schemaDefault(o.schema);
  if (value === undefined || value === false || (Array.isArray(value) && value.length === 0)) return undefined;
  return Array.isArray(value) ? value.join(",") : String(value);
}

function helpEntry(flag: string, arg: string | undefined, help: string): string {
  const left = `  --${flag}${arg ? ` ${arg}` : ""}`;
  const lines = help.split("\n");
  const indent = " ".repeat(HELP_COLUMN);
  const first = left.length < HELP_COLUMN ? left.padEnd(HELP_COLUMN) + lines[0] : `${left}\n${indent}${lines[0]}`;
  return [first, ...lines.slice(1).map((l) => indent + l)].join("\n");
}

/** The option sections of `run --help`: every flag, with its default, from the table. */
export function runOptionsHelp(): string {
  const out: string[] = [];
  for (const section of SECTIONS) {
    const entries: string[] = [];
    for (const f of INVOCATION_FLAGS)
      if (f.section === section && f.flag === "config") entries.push(helpEntry(f.flag, f.arg, f.help));
    for (const o of OPTIONS) {
      if (o.section !== section) continue;
      const d = defaultText(o);
      const last = o.help.split("\n").at(-1)!;
      const help =
        d === undefined ? o.help : `${o.help}${last.length + d.length > HELP_WIDTH - 12 ? "\n" : " "}(default: ${d})`;
      entries.push(helpEntry(flagOf(o.key)!.slice(2), o.arg, help));
    }
    for (const f of INVOCATION_FLAGS)
      if (f.section === section && f.flag !== "config") entries.push(helpEntry(f.flag, f.arg, f.help));
    if (entries.length) out.push(section, ...entries, "");
  }
  const fileOnly = OPTIONS.filter((o) => !o.section && o.key !== "dataset");
  out.push("Config file only (no flag)");
  for (const o of fileOnly) {
    const d = defaultText(o);
    out.push(`  ${o.key.padEnd(HELP_COLUMN - 2)}${o.help}${d === undefined ? "" : ` (default: ${d})`}`);
  }
  return out.join("\n");
}

/** node:util parseArgs options for every flag of the table. */
export function runArgOptions(): Record<string, { type: "string" | "boolean"; multiple?: boolean }> {
  const options: Record<string, { type: "string" | "boolean"; multiple?: boolean }> = {};
  for (const f of INVOCATION_FLAGS) options[f.flag] = { type: "string" };
  for (const o of OPTIONS) {
    const flag = flagOf(o.key);
    // A list flag may be repeated (`--group-by a --group-by b`) as well as comma-separated.
    const repeatable = o.kind === "list" || o.kind === "headers";
    if (flag)
      options[flag.slice(2)] = repeatable
        ? { type: "string", multiple: true }
        : { type: o.kind === "boolean" ? "boolean" : "string" };
  }
  return options;
}

/** A flag's text as the value its kind says; ranges and choices are the schema's to check. */
function flagValue(o: OptionDef, flag: string, raw: string | boolean | (string | boolean)[]): unknown {
  if (typeof raw === "boolean") return raw;
  if (o.kind === "headers") return headerFlagValues(flag, Array.isArray(raw) ? raw.map(String) : [raw]);
  if (Array.isArray(raw)) {
    const list = raw
      .flatMap((r) => String(r).split(","))
      .map((s) => s.trim())
      .filter(Boolean);
    // Given with nothing in it (`--pass-env "$UNSET"`): a mistake, not "none". --toolsets says why in its own words.
    if (list.length === 0 && o.key !== "toolsets")
      throw new UserError(`${flag} needs at least one value, got '${raw.join(",")}'`);
    return list;
  }
  switch (o.kind) {
    case "int":
      if (!/^-?\d+$/.test(raw.trim())) throw new UserError(`${flag} must be a whole number, got '${raw}'`);
      return Number.parseInt(raw, 10);
    case "number": {
      // Decimal points only: Number() would also take 0x10, 0b11, 0o7 and 1e1 (a typo that moves a CI gate).
      const n = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)\s*$/.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isFinite(n)) throw new UserError(`${flag} must be a number, got '${raw}'`);
      return n;
    }
    case "list":
      return raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      return raw;
  }
}

/** Repeated `--header 'Name: value'` → a mapping (a later one wins for the same name). Values may hold commas. */
function headerFlagValues(flag: string, lines: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    const parsed = parseHeaderLine(line);
    // The text is not echoed: it may be a key given without its name.
    if (!parsed) throw new UserError(`${flag} must be 'Name: value' (a header name, a colon, then the value)`);
    out[parsed[0]] = parsed[1];
  }
  return out;
}

/** Parsed flag values → config keys (only the flags given), plus the invocation flags by name. */
export function flagsToConfigValues(values: Record<string, string | boolean | (string | boolean)[] | undefined>): {
  flags: Record<string, unknown>;
  invocation: Record<string, string | undefined>;
} {
  const flags: Record<string, unknown> = {};
  for (const o of OPTIONS) {
    const flag = flagOf(o.key);
    const raw = flag ? values[flag.slice(2)] : undefined;
    if (flag && raw !== undefined) flags[o.key] = flagValue(o, flag, raw);
  }
  const invocation: Record<string, string | undefined> = {};
  for (const f of INVOCATION_FLAGS) invocation[f.flag] = values[f.flag] as string | undefined;
  return { flags, invocation };
}

/**
 * A flag whose value may be left out (`--rl-capture` alone means `--rl-capture strict`): when the next
 * argument is not one of its values, the default is put in, so parseArgs (which has no optional values)
 * does not take the dataset for the flag's value.
 */
export function withOptionalValue(argv: string[], flag: string, values: readonly string[], fallback: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") return [...out, ...argv.slice(i)];
    out.push(a);
    if (a === flag && !values.includes(argv[i + 1] ?? "")) out.push(fallback);
  }
  return out;
}
