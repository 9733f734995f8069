import { describe, expect, it } from "vitest";
import { commandSummaries, main } from "../src/cli_main.js";

// `hermes-batch --help` lists the commands from copies of their summaries (so that it loads no command module):
// each copy must stay the command's own summary.
describe("hermes-batch --help command list", () => {
  it("shows every command's own summary", async () => {
    const entries = commandSummaries();
    expect(entries.map((e) => e.name)).toContain("run");
    for (const { name, summary, load } of entries) {
      expect({ name, summary }).toEqual({ name, summary: (await load()).summary });
    }
  });

  it("prints one line per command", async () => {
    const chunks: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => {
      chunks.push(chunk);
      return true;
    }) as typeof process.stdout.write;
    let code: number;
    try {
      code = await main(["--help"]);
    } finally {
      process.stdout.write = write;
    }
    expect(code).toBe(0);
    const text = chunks.join("");
    for (const { name, summary } of commandSummaries()) expect(text).toContain(`  ${name.padEnd(15)} ${summary}\n`);
  });
});
