/** A first-time user's way into the command list: `help NAME`, and a mistyped command name. */
import { describe, expect, it } from "vitest";
import { main } from "../src/cli_main.js";

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

describe("the command list", () => {
  it("`help compare` prints compare's help, as `compare --help` does", async () => {
    const direct = await call(["compare", "--help"]);
    const viaHelp = await call(["help", "compare"]);
    expect(viaHelp).toEqual({ code: 0, stdout: direct.stdout, stderr: "" });
    expect(viaHelp.stdout).toMatch(/^Usage: hermes-batch compare /);
  });

  it("`help nosuch` is an unknown command, exit 2", async () => {
    const r = await call(["help", "nosuch"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^hermes-batch: unknown command 'nosuch'\. Commands: run, /);
  });

  it.each([
    ["comapre", "compare"],
    ["rnu", "run"],
    ["exprot", "export"],
    ["shard", "shards"],
  ])("a mistyped command '%s' names '%s'", async (typed, meant) => {
    const r = await call([typed, "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`^hermes-batch: unknown command '${typed}': did you mean '${meant}'\\? Commands: `),
    );
    expect(r.stderr.split("\n").length).toBe(2);
  });

  it("an option before the command says where options go", async () => {
    const r = await call(["--model", "scripted", "run", "datasets/smoke.jsonl"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "hermes-batch: '--model' comes before the command: options go after it (hermes-batch run --model …)\n",
    );
    const bare = await call(["--verbose"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(
      /^hermes-batch: unknown option '--verbose'\. Usage: hermes-batch <command> \[options\]; commands: run, /,
    );
  });
});
