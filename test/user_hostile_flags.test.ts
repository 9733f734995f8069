/**
 * A first-time user's flag mistakes, and the flags each command's --help lists against the ones its parser
 * accepts. The accepted flags are read from the parser's own definitions (the options object each command hands
 * to parseCommandArgs, caught on a call with an unknown flag), so a flag added to a command without a help line,
 * or a help line left behind by a removed flag, fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { commandSummaries, main } from "../src/cli_main.js";
import { lastParsedOptions } from "../src/commands/args.js";
import { UserError } from "../src/core/errors.js";
import { runArgOptions } from "../src/config/run_flags.js";

const FLAG = /(?<![\w-])--[a-z][a-z-]*[a-z]/g;

async function call(args: string[]): Promise<{ code: number; stderr: string }> {
  const chunks: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await main(args);
    return { code, stderr: chunks.join("") };
  } finally {
    process.stderr.write = write;
  }
}

describe("a mistyped flag", () => {
  it.each([
    [["run", "data.jsonl", "--modle", "scripted"], "--modle", "--model"],
    [["run", "data.jsonl", "--model", "scripted", "--max-turn", "3"], "--max-turn", "--max-turns"],
    [["run", "data.jsonl", "--modle=scripted"], "--modle", "--model"],
    [["run", "data.jsonl", "--model", "scripted", "--concurency", "4"], "--concurency", "--concurrency"],
    [["run", "data.jsonl", "--model", "scripted", "--no-prefligth"], "--no-prefligth", "--no-preflight"],
    [["compare", "a", "b", "--max-drp", "3"], "--max-drp", "--max-drop"],
    [["compare", "a", "b", "--junt", "j.xml"], "--junt", "--junit"],
    [["sample", "--seeed", "3"], "--seeed", "--seed"],
    [["report", "r", "--baseine", "b"], "--baseine", "--baseline"],
    [["gc", "--dryrun", "--all"], "--dryrun", "--dry-run"],
  ])("%j: %s names %s", async (args, bad, flag) => {
    const r = await call(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`hermes-batch ${args[0]}: Unknown option '${bad}': did you mean ${flag}? (see --help)\n`);
  });

  it("suggests nothing when no flag is close", async () => {
    const r = await call(["run", "data.jsonl", "--model", "scripted", "--frobnicate"]);
    expect(r.stderr).toBe("hermes-batch run: Unknown option '--frobnicate' (see --help)\n");
    expect(r.code).toBe(2);
  });

  it("a flag whose value was forgotten before the next flag says the value is missing", async () => {
    // `--model --run-name x`: node calls it "ambiguous"; the user forgot the model, and must not be told to
    // write a model name that starts with '-'.
    const r = await call(["run", "data.jsonl", "--model", "--run-name", "x"]);
    expect(r.stderr).toBe(
      "hermes-batch run: Option '--model <value>' argument missing: the next word, '--run-name', is a flag (see --help)\n",
    );
    expect(r.code).toBe(2);
    const c = await call(["compare", "a", "b", "--junit", "-o"]);
    expect(c.stderr).toContain("write a value that starts with '-' as --junit=-…");
    const s = await call(["sample", "--seed", "-n", "3"]);
    expect(s.stderr).toBe(
      "hermes-batch sample: Option '--seed <value>' argument missing: the next word, '-n', is a flag (see --help)\n",
    );
  });

  it("a flag missing its value is one line naming it, exit 2", async () => {
    const r = await call(["compare", "a", "b", "--junit"]);
    expect(r.stderr).toBe("hermes-batch compare: Option '--junit <value>' argument missing (see --help)\n");
    expect(r.code).toBe(2);
  });
});

/**
 * The flags a command's parser accepts, from the options object it hands to parseCommandArgs. `export --format rl`
 * (and the other RL formats) has a parser of its own, so export is probed both ways.
 */
async function parsedFlags(name: string, run: (argv: string[]) => Promise<number>): Promise<Set<string>> {
  const probes = name === "export" ? [[], ["--format", "rl"]] : [[]];
  const flags = new Set<string>();
  for (const probe of probes) {
    await expect(run([...probe, "--zz-not-a-flag"])).rejects.toBeInstanceOf(UserError);
    const options = lastParsedOptions();
    expect(options).toBeDefined();
    for (const [flag, def] of Object.entries(options!)) {
      // a one-letter long name (`sample`'s n) is its short flag's: `-n N` lists both
      if (flag.length > 1 || !def.short) flags.add(`--${flag}`);
      if (def.short) flags.add(`-${def.short}`);
    }
  }
  return flags;
}

describe("each command's --help against its parser", () => {
  // run: test/run_options.test.ts checks its help, generated from the same table as its parser. approval has a
  // parser of its own per subcommand (checked below).
  const commands = commandSummaries().filter((c) => c.name !== "run" && c.name !== "approval");

  it.each(commands.map((c) => [c.name, c] as const))("%s --help lists every flag it accepts", async (_name, c) => {
    const command = await c.load();
    for (const flag of await parsedFlags(c.name, (argv) => command.run(argv)))
      expect(command.help, `${c.name} accepts ${flag} but its --help does not list it`).toMatch(
        new RegExp(`(^|[\\s\\[(,|])${flag}(?![\\w-])`),
      );
  });

  it.each(commands.map((c) => [c.name, c] as const))("%s --help names no flag it refuses", async (_name, c) => {
    const command = await c.load();
    const accepted = await parsedFlags(c.name, (argv) => command.run(argv));
    const runFlags = new Set(Object.keys(runArgOptions()).map((f) => `--${f}`));
    const [usage, ...rest] = command.help.split("\n");
    // The usage line and the option rows (a line that starts with a flag) describe this command's own flags.
    const own = [usage!, ...rest.filter((l) => /^\s+-/.test(l))].join("\n");
    for (const flag of own.match(FLAG) ?? [])
      expect(accepted.has(flag) || flag === "--help", `${c.name} --help lists ${flag}, which it refuses`).toBe(true);
    // Prose may name flags of `run` (`run --rl-capture`, "written by --shard i/N"), but no other.
    for (const flag of command.help.match(FLAG) ?? [])
      expect(
        accepted.has(flag) || runFlags.has(flag) || flag === "--help",
        `${c.name} --help names ${flag}, which neither it nor run accepts`,
      ).toBe(true);
  });

  it("approval: every flag its help names is accepted", async () => {
    const patterns = await call(["approval", "patterns", "--json", "--zz"]);
    expect(patterns.code).toBe(2);
    for (const args of [
      ["approval", "check", "--explain", "--cwd", "/w", "ls"],
      ["approval", "explain", "--cwd", "/w", "ls"],
    ]) {
      const r = await call(args);
      expect(r.stderr).toBe("");
    }
  });
});

describe("the README's command table", () => {
  const readme = readFileSync(join(import.meta.dirname, "..", "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("## Commands"), readme.indexOf("\nExit codes:"));
  const rows = table.split("\n").filter((l) => l.startsWith("| `"));

  it("has a row for every command, and names only flags that command accepts", async () => {
    const named = new Set(rows.map((r) => /^\| `([a-z]+)/.exec(r)![1]!));
    for (const c of commandSummaries()) expect(named.has(c.name), `no README row for ${c.name}`).toBe(true);
    for (const row of rows) {
      const name = /^\| `([a-z]+)/.exec(row)![1]!;
      const c = commandSummaries().find((x) => x.name === name)!;
      const accepted =
        name === "run"
          ? new Set(Object.keys(runArgOptions()).map((f) => `--${f}`))
          : name === "approval"
            ? new Set(["--explain", "--cwd", "--file", "--json"])
            : await parsedFlags(name, async (argv) => (await c.load()).run(argv));
      // `run --harbor DIR` in another command's row is run's flag
      const own = name === "run" ? row : row.replace(/`run [^`]*`/g, "");
      for (const flag of own.match(FLAG) ?? [])
        expect(accepted.has(flag) || flag === "--help", `README row of ${name} names ${flag}`).toBe(true);
    }
  });
});
