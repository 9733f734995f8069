/** The CI gate's flags, shared by `compare` and `report --baseline` (so the page shows the verdict CI's compare gives). */
import { UserError } from "../core/errors.js";
import { type CompareOptions, parseUnscoredLimit } from "../report/compare.js";

export const GATE_OPTIONS = {
  "max-drop": { type: "string" },
  "significant-only": { type: "boolean" },
  "max-unscored": { type: "string" },
  "allow-different-dataset": { type: "boolean" },
} as const;

type GateFlagValues = {
  "max-drop"?: string;
  "significant-only"?: boolean;
  "max-unscored"?: string;
  "allow-different-dataset"?: boolean;
};

/** The comparison options the gate flags give (a bad value: a UserError naming the flag). */
export function gateOptions(values: GateFlagValues): CompareOptions {
  const maxDropPp = numberFlag(values["max-drop"], "--max-drop");
  const maxUnscored = values["max-unscored"] === undefined ? undefined : parseUnscoredLimit(values["max-unscored"]);
  if (maxUnscored === null)
    throw new UserError(
      `--max-unscored must be a whole number of tasks or a percentage (e.g. 5 or 10%), got '${values["max-unscored"]}'`,
    );
  if (values["significant-only"] && maxDropPp === undefined)
    throw new UserError("--significant-only needs --max-drop P");
  return {
    maxDropPp,
    significantOnly: values["significant-only"],
    maxUnscored,
    allowDifferentDataset: values["allow-different-dataset"],
  };
}

function numberFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  // Decimal points only: Number() would also take 0x10, 0b11 and 1e1.
  const n = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || n > 100)
    throw new UserError(`${flag} must be a number of points from 0 to 100, got '${value}'`);
  return n;
}
