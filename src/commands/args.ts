import { parseArgs, type ParseArgsConfig } from "node:util";
import { UserError } from "../core/errors.js";
import { nearestName } from "../core/nearest_name.js";

export { nearestName };

type Options = NonNullable<ParseArgsConfig["options"]>;

let lastOptions: Options | undefined;

/**
 * The options object of the latest parseCommandArgs call: the flags a command accepts, straight from its parser
 * (test/user_hostile_flags.test.ts holds each command's --help to it).
 */
export function lastParsedOptions(): Options | undefined {
  return lastOptions;
}

/** parseArgs with user-facing errors (exit 2) instead of stack traces; an unknown flag names the one it resembles. */
export function parseCommandArgs<O extends Options>(argv: string[], options: O, allowPositionals = true) {
  lastOptions = options;
  try {
    return parseArgs({ args: joinNegativeNumbers(argv, options), options, allowPositionals, strict: true });
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    // node's messages can span lines: keep the first, and the `--flag=-value` hint when there is one.
    const dashValue = /use '(--[^'=]+)=-XYZ'/.exec(text);
    const first = text.split("\n")[0]!.replace(/\. To specify a positional argument.*$/, "");
    const unknown = /^Unknown option '--([^'=]+)'\.?$/.exec(first);
    const near = unknown ? nearestName(unknown[1]!, Object.keys(options)) : undefined;
    const flagBefore = dashValue ? forgottenValue(first, argv, options) : undefined;
    const msg = flagBefore
      ? `Option '${dashValue![1]} <value>' argument missing: the next word, '${flagBefore}', is a flag`
      : dashValue
        ? `${first.replace(/\.$/, "")}: write a value that starts with '-' as ${dashValue[1]}=-…`
        : near
          ? `${first.replace(/\.$/, "")}: did you mean --${near}?`
          : first;
    throw new UserError(`${msg} (see --help)`);
  }
}

/**
 * node calls `--model --run-name x` "ambiguous": `--run-name` could be the model's name. When the word after the
 * flag is one of this command's flags, the value was forgotten: that word, else undefined (a value such as `-x`).
 */
function forgottenValue(first: string, argv: string[], options: Options): string | undefined {
  const flag = /^Option '(-[^']+)' argument is ambiguous/.exec(first)?.[1];
  const at = flag === undefined ? -1 : argv.indexOf(flag);
  const next = at >= 0 ? argv[at + 1] : undefined;
  if (next === undefined) return undefined;
  const name = next.replace(/=.*$/, "");
  const known = name.startsWith("--")
    ? Object.hasOwn(options, name.slice(2))
    : Object.values(options).some((o) => o.short !== undefined && `-${o.short}` === name);
  return known ? next : undefined;
}

/**
 * `--task-timeout -3` means the value -3 (then refused by the option's own check with a clear reason), not
 * a flag `-3`: a negative number after a flag that takes a value is joined to it as `--task-timeout=-3`.
 */
function joinNegativeNumbers(argv: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    const name = arg.startsWith("--") && !arg.includes("=") ? arg.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === "string" && next !== undefined && /^-\d+(\.\d+)?$/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

export function parseIntFlag(value: string | undefined, flag: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value.trim())) throw new UserError(`${flag} must be a whole number, got '${value}'`);
  const n = Number.parseInt(value, 10);
  if (n < min) throw new UserError(`${flag} must be at least ${min}, got ${n}`);
  // Past 2^53 the number is no longer the one written (and `sample -n 1e20` would draw for ever).
  if (!Number.isSafeInteger(n))
    throw new UserError(`${flag} must be at most ${Number.MAX_SAFE_INTEGER}, got '${value.trim()}'`);
  return n;
}

/** A comma list that was given must name something: `--env ""` or `--toolsets ,,` is a mistake, not "all". */
export function nonEmptyList(value: string | undefined, flag: string): string[] | undefined {
  const list = splitList(value);
  if (list !== undefined && list.length === 0) throw new UserError(`${flag} needs at least one name, got '${value}'`);
  return list;
}

/** A path flag that was given must name something: `--out ""` is an unset variable, not the current folder. */
export function nonEmptyPath(value: string | undefined, flag: string, what: "file" | "folder"): string | undefined {
  if (value !== undefined && value.trim() === "")
    throw new UserError(`${flag}: give a ${what} name (got an empty one)`);
  return value;
}

export { checkRunFiles } from "../core/run_files.js";

export function splitList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}
