/**
 * `sample` promises the draws "exactly as a run with this seed would". run reads --seed as a whole number
 * (`--seed 007` is seed 7, `--seed abc` is refused), so sample must read it the same way.
 */
import { describe, expect, it } from "vitest";
import { main } from "../src/cli_main.js";
import { flagsToConfig } from "../src/commands/run.js";
import { resolveRunConfig } from "../src/config/run_config.js";

async function call(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [w1, w2] = [process.stdout.write, process.stderr.write];
  process.stdout.write = ((c: string) => out.push(String(c)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((c: string) => err.push(String(c)) > 0) as typeof process.stderr.write;
  try {
    const code = await main(args);
    return { code, stdout: out.join(""), stderr: err.join("") };
  } finally {
    process.stdout.write = w1;
    process.stderr.write = w2;
  }
}

const draws = async (seed: string) => {
  const r = await call(["sample", "--distribution", "balanced", "-n", "8", "--json", `--seed=${seed}`]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { seed: string; draws: unknown[] };
};

describe("sample --seed reads the seed as run does", () => {
  it.each(["007", " 7", "0007"])("--seed '%s' draws what run reads it as: seed 7", async (seed) => {
    expect(resolveRunConfig(flagsToConfig(["d.jsonl", `--seed=${seed}`]).flags).seed).toBe(7);
    const [odd, seven] = [await draws(seed), await draws("7")];
    expect(odd).toEqual(seven);
    expect(odd.seed).toBe("7");
  });

  it.each(["abc", "1.5", "0x10", "+7"])("--seed %s is refused as run refuses it, exit 2", async (seed) => {
    const r = await call(["sample", `--seed=${seed}`]);
    expect(r).toEqual({
      code: 2,
      stdout: "",
      stderr: `hermes-batch sample: --seed must be a whole number, got '${seed}'\n`,
    });
    expect(() => flagsToConfig(["d.jsonl", `--seed=${seed}`])).toThrow(`--seed must be a whole number, got '${seed}'`);
  });
});
