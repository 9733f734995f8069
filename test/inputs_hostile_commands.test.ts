/**
 * Hostile flags and run folders for the commands other than `run`: every refusal is exit 2 with one line naming the
 * flag or the file, nothing written, no hang and no crash.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli, runCliInProcess, tempDir } from "./helpers/cli.js";

let dir: string;
let run: string;

beforeAll(async () => {
  dir = tempDir();
  writeFileSync(join(dir, "d.jsonl"), '{"id":"a","prompt":"say hi","expected":"hi"}\n');
  const r = await runCliInProcess(
    ["run", "d.jsonl", "--model", "scripted", "--env", "host", "--toolsets", "terminal", "--progress", "none"],
    { cwd: dir },
  );
  expect(r.exitCode).toBeLessThan(2);
  run = join(dir, "runs", "d");
});

/** One stderr line, exit 2. */
function refused(r: { exitCode: number; stderr: string }, text: string | RegExp): void {
  const lines = r.stderr.trim().split("\n");
  expect(lines).toHaveLength(1);
  if (typeof text === "string") expect(lines[0]).toBe(text);
  else expect(lines[0]).toMatch(text);
  expect(r.exitCode).toBe(2);
}

/** A copy of the run whose file `name` is replaced by what `make` puts there. */
function brokenRun(name: string, make: (path: string) => void): string {
  const copy = join(tempDir(), "run");
  cpSync(run, copy, { recursive: true });
  rmSync(join(copy, name));
  make(join(copy, name));
  return copy;
}

describe("export flags", () => {
  it("--min-score takes decimals only: 0x1 is no score bound", async () => {
    const r = await runCliInProcess(["export", run, "--min-score", "0x1", "--out", join(dir, "x.jsonl")]);
    refused(r, "hermes-batch export: --min-score must be a number from 0 to 1 (score values are in 0..1), got '0x1'");
    expect(existsSync(join(dir, "x.jsonl"))).toBe(false);
    const seed = await runCliInProcess([
      "export",
      run,
      "--split",
      "0.5",
      "--seed",
      "1e3",
      "--out",
      join(dir, "y.jsonl"),
    ]);
    refused(seed, "hermes-batch export: --seed must be a whole number, got '1e3'");
  });

  it("an empty --split-files or --out is refused, not the current folder", async () => {
    const cwd = tempDir();
    const r = await runCliInProcess(["export", run, "--format", "atif", "--split-files", ""], { cwd });
    refused(r, "hermes-batch export: --split-files: give a folder name (got an empty one)");
    expect(readdirSync(cwd)).toEqual([]);
    refused(
      await runCliInProcess(["export", run, "--out", ""], { cwd }),
      "hermes-batch export: --out: give a file name (got an empty one)",
    );
    refused(
      await runCliInProcess(["report", run, "-o", ""], { cwd }),
      "hermes-batch report: -o: give a file name (got an empty one)",
    );
  });
});

describe("run folders whose files are not files", () => {
  it("trajectories.jsonl as a folder: export and report say so (exit 2), no internal error", async () => {
    const copy = brokenRun("trajectories.jsonl", (p) => mkdirSync(p));
    const out = join(dir, "z.jsonl");
    refused(
      await runCliInProcess(["export", copy, "--out", out]),
      `hermes-batch export: ${join(copy, "trajectories.jsonl")}: is a folder, not a file`,
    );
    refused(
      await runCliInProcess(["report", copy, "-o", join(dir, "z.html")]),
      `hermes-batch report: ${join(copy, "trajectories.jsonl")}: is a folder, not a file`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("trajectories.jsonl linked to /dev/zero: one line and exit 2, not a crash of node", async () => {
    const copy = brokenRun("trajectories.jsonl", (p) => symlinkSync("/dev/zero", p));
    for (const args of [
      ["export", copy, "--out", join(dir, "w.jsonl")],
      ["report", copy, "-o", join(dir, "w.html")],
    ]) {
      const r = await runCli(args, { timeoutMs: 30_000 });
      refused(r, `hermes-batch ${args[0]}: ${join(copy, "trajectories.jsonl")}: is a device, not a file`);
    }
  });
});

describe("listing commands", () => {
  it("tools and toolsets refuse an --env or --image they would ignore, and an empty --toolsets", async () => {
    refused(
      await runCliInProcess(["tools", "--env", "bogus"]),
      "hermes-batch tools: --env and --image choose where --mcp-config's servers start: give --mcp-config FILE too",
    );
    refused(
      await runCliInProcess(["toolsets", "--image", "x"]),
      "hermes-batch toolsets: --env and --image choose where --mcp-config's servers start: give --mcp-config FILE too",
    );
    refused(
      await runCliInProcess(["tools", "--toolsets", ",,"]),
      "hermes-batch tools: --toolsets needs at least one name, got ',,'",
    );
  });

  it("an empty or device --distribution-file is refused, not ignored or read forever", async () => {
    refused(
      await runCliInProcess(["distributions", "--distribution-file", ""]),
      "hermes-batch distributions: --distribution-file: give a file name (got an empty one)",
    );
    const r = await runCli(["sample", "--distribution-file", "/dev/zero"], { timeoutMs: 30_000 });
    refused(r, "hermes-batch sample: --distribution-file /dev/zero: is a device, not a file");
  });

  it("gc --env '' is one line, not a silent exit 1", async () => {
    refused(
      await runCliInProcess(["gc", "--all", "--dry-run", "--env", ""]),
      "hermes-batch gc: --env needs at least one name, got ''",
    );
  });

  it("sample -n past the safe integers is refused, not drawn for ever", async () => {
    const r = await runCli(["sample", "-n", "99999999999999999999"], { timeoutMs: 30_000 });
    refused(r, "hermes-batch sample: -n must be at most 9007199254740991, got '99999999999999999999'");
  });
});
