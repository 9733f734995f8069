/**
 * `run --fail-under` takes a percent (issue 22): `50` or `50%`; a fraction such as 0.5 would silently have
 * meant 0.5 %, so a value in (0, 1) is refused with the percent it probably meant (exit 2, one line).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flagsToConfig } from "../src/commands/run.js";
import { resolveRunConfig } from "../src/config/run_config.js";
import { runOptionsHelp } from "../src/config/run_flags.js";
import { assertBuilt, runCliInProcess, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";

const failUnder = (value: string) =>
  resolveRunConfig(flagsToConfig(["d.jsonl", "--fail-under", value]).flags).fail_under;
const errorOf = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  return "(no error)";
};

describe("--fail-under takes a percent", () => {
  beforeAll(() => assertBuilt());

  it("50, 50% and 50 % are all 50; 0, 1 and 100% are accepted", () => {
    expect(failUnder("50")).toBe(50);
    expect(failUnder("50%")).toBe(50);
    expect(failUnder("50 %")).toBe(50);
    expect(failUnder("0")).toBe(0);
    expect(failUnder("1")).toBe(1);
    expect(failUnder("100%")).toBe(100);
    expect(failUnder("0.5%")).toBe(0.5); // with the sign it can only mean half a percent
  });

  it("a fraction in (0, 1) is refused, naming the percent it meant; out of range or not a number too", () => {
    expect(errorOf(() => failUnder("0.5"))).toBe(
      "--fail-under takes a percent: 0.5 would mean 0.5 %; did you mean 50 %? (write 50 or 50%)",
    );
    expect(errorOf(() => failUnder("0.07"))).toContain("did you mean 7 %?");
    expect(errorOf(() => failUnder("150"))).toBe("--fail-under must be a percent from 0 to 100 (50 or 50%), got '150'");
    expect(errorOf(() => failUnder("-5"))).toContain("must be a percent from 0 to 100");
    expect(errorOf(() => failUnder("half"))).toContain("got 'half'");
  });

  it("the config file key follows the same rule, naming the file and line", () => {
    const dir = tempDir();
    const file = join(dir, "run.yaml");
    writeFileSync(file, "dataset: d.jsonl\nfail_under: 0.8\n");
    expect(errorOf(() => resolveRunConfig({}, file))).toBe(
      `${file}:2: 'fail_under' takes a percent: 0.8 would mean 0.8 %; did you mean 80 %? (write 80 or 80%)`,
    );
    writeFileSync(file, "dataset: d.jsonl\nfail_under: 80%\n");
    expect(resolveRunConfig({}, file).fail_under).toBe(80);
  });

  it("--help says percent", () => {
    const help = runOptionsHelp().replace(/\s+/g, " ");
    expect(help).toContain(
      "--fail-under PCT exit 1 when the pass rate (scored rows) or else the completion rate is under PCT percent, 0 to 100: 50 or 50%",
    );
  });

  it("through the CLI: --fail-under 0.5 is exit 2 with one line; --fail-under 50% gates at 50 %", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      [
        '{"id": "a", "prompt": "say hi", "expected": "no such answer"}',
        '{"id": "b", "prompt": "say hi", "expected": "no such answer either"}',
      ].join("\n") + "\n",
    );
    const base = ["run", dataset, "--model", "scripted", "--output-dir", join(dir, "runs"), "--progress", "none"];
    const bad = await runCliInProcess([...base, "--run-name", "frac", "--fail-under", "0.5"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toContain("--fail-under takes a percent: 0.5 would mean 0.5 %; did you mean 50 %?");
    const gated = await runCliInProcess([...base, "--run-name", "pct", "--fail-under", "50%"]);
    expect(gated.stdout).toMatch(/pass rate 0\.0 % is under --fail-under 50 %/);
    expect(gated.exitCode).toBe(1);
  }, 120_000);
});

describe("--fail-under with tasks whose scorer could not decide", () => {
  let judge: FakeOpenAI;
  beforeAll(async () => {
    // The judge grades the one row that asks for it and talks garbage for the rest (a broken judge).
    judge = await startFakeOpenAI((req) => {
      const asked: string = req.body.messages.at(-1).content;
      return asked.includes("judge-yes")
        ? text(JSON.stringify({ score: 0.9, passed: true, reason: "meets the rubric" }))
        : text("Looks fine to me!");
    });
  });
  afterAll(async () => {
    await judge.close();
  });

  it("is not met while more than --max-unscored of the scored rows are undecided (exit 1, saying so)", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    const rows = Array.from({ length: 10 }, (_, i) =>
      JSON.stringify({
        id: `t${i}`,
        prompt: i === 0 ? "say hi (judge-yes)" : `say hi (${i})`,
        rubric: "a friendly greeting",
      }),
    );
    writeFileSync(dataset, `${rows.join("\n")}\n`);
    const base = [
      "run",
      dataset,
      "--model",
      "scripted",
      "--judge-model",
      "judge",
      "--judge-base-url",
      judge.baseURL,
      "--judge-api-key",
      "k",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
      "--fail-under",
      "80",
    ];
    const gated = await runCliInProcess([...base, "--run-name", "default"]);
    expect(gated.stdout).toContain("100.0 % passed (1/1 scored");
    expect(gated.stdout).toContain(
      "--fail-under 80 %: no verdict, 9 of 10 scored row result(s) undecided by their scorer, more than --max-unscored 10 %",
    );
    expect(gated.exitCode).toBe(1);
    const allowed = await runCliInProcess([...base, "--run-name", "allowed", "--max-unscored", "90%"]);
    expect(allowed.stdout).not.toContain("no verdict");
    expect(allowed.exitCode).toBe(0);
  }, 120_000);
});

describe("run --baseline of one shard", () => {
  it("is refused before anything runs: a shard is compared after the merge (exit 2, one line)", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(dataset, '{"id": "a", "prompt": "say hi"}\n{"id": "b", "prompt": "say hi"}\n');
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      "--shard",
      "0/2",
      "--baseline",
      join(dir, "runs", "base"),
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("--baseline compares a whole run, not shard 0/2: merge the shards (hermes-batch merge)");
  });
});
