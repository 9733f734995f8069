/**
 * A list flag given with nothing in it (`--pass-env "$UNSET"`): one line naming the flag (exit 2), never a silent
 * "none". (A one-value flag given twice keeps the last on purpose: scripts/slurm/hermes-batch.sbatch passes defaults
 * such as --workers and --progress before the user's own options, which may override them.)
 */
import { describe, expect, it } from "vitest";
import { configFromArgv } from "../src/commands/run.js";
import { UserError } from "../src/core/errors.js";

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    expect(err.message).not.toContain("\n");
    return err.message;
  }
  throw new Error("not refused");
}

const run =
  (...argv: string[]) =>
  () =>
    configFromArgv(["d.jsonl", "--model", "scripted", ...argv]);

describe("list flags given with nothing in them", () => {
  it("are refused, naming the flag", () => {
    for (const flag of ["--pass-env", "--allow-network", "--group-by", "--only", "--providers-allowed", "--sandbox-ro"])
      expect(refusal(run(flag, " , "))).toBe(`${flag} needs at least one value, got ' , '`);
    // --toolsets keeps its own reason.
    expect(refusal(run("--toolsets", ""))).toMatch(/^--toolsets is empty/);
    expect(run("--pass-env", "A,B")().pass_env).toEqual(["A", "B"]);
  });
});
