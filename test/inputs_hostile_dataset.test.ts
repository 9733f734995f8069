/**
 * Hostile datasets: rows that JSON.parse takes but that say two things, nest past what the run can carry, or
 * name a task with control characters; inputs that never end (/dev/zero, an endless pipe). Each is refused up
 * front as `file:line: reason` (or one line naming the dataset), exit 2, with no run folder made.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { UserError } from "../src/core/errors.js";
import { openDatasetSource, readDataset } from "../src/run/dataset.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

async function reasons(text: string): Promise<string[]> {
  const f = join(tempDir(), "d.jsonl");
  writeFileSync(f, text);
  const out: string[] = [];
  for await (const item of readDataset(f))
    out.push(item.ok ? `ok ${item.value.id}` : `${item.bad.line}: ${item.bad.reason}`);
  return out;
}

const nested = (depth: number) => `{"id":"a","prompt":"x","metadata":{"d":${"[".repeat(depth)}${"]".repeat(depth)}}}\n`;

describe("rows that parse but are not one clear row", () => {
  it("a key given twice is a bad row, not whichever came last", async () => {
    expect(await reasons(`{"id":"a","prompt":"say hi","prompt":"rm -rf ~"}\n`)).toEqual([
      "1: duplicate key 'prompt' (a JSON object must name each key once)",
    ]);
    expect(await reasons(`{"id":"a","prompt":"x","metadata":{"k":1,"\\u006b":2}}\n`)).toEqual([
      "1: duplicate key 'k' (a JSON object must name each key once)",
    ]);
    // The same key in two objects, or inside a string, is no repetition.
    expect(await reasons(`{"id":"a","prompt":"\\"prompt\\": 1","metadata":{"prompt":1,"x":{"prompt":2}}}\n`)).toEqual([
      "ok a",
    ]);
  });

  it("nesting deeper than a run can carry is a bad row, not a crashed worker per task", async () => {
    expect(await reasons(nested(30))).toEqual(["ok a"]);
    expect(await reasons(nested(5000))).toEqual(["1: nested more than 64 levels deep"]);
    expect(await reasons(`{"id":"a","prompt":"x","extra":${"[".repeat(100_000)}${"]".repeat(100_000)}}\n`)).toEqual([
      "1: nested more than 64 levels deep",
    ]);
  });

  it("a task id must be printable: no control characters, not blank", async () => {
    expect(
      await reasons(`{"id":"a\\u001b[2Jb","prompt":"x"}\n{"id":"a\\nb","prompt":"y"}\n{"id":"  ","prompt":"z"}\n`),
    ).toEqual([
      "1: 'id': must not contain control characters (line breaks, tabs, escape codes)",
      "2: 'id': must not contain control characters (line breaks, tabs, escape codes)",
      "3: 'id': must not be blank",
    ]);
    expect(await reasons(`{"id":1.5,"prompt":"x"}\n`)).toEqual([
      "1: 'id': must be a string or a whole number, got 1.5",
    ]);
  });

  it("run refuses such a row in one line naming file:line, exit 2, and makes no run folder", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "deep.jsonl"), nested(5000));
    const r = await runCliInProcess(
      ["run", "deep.jsonl", "--model", "scripted", "--env", "host", "--toolsets", "terminal", "--progress", "none"],
      { cwd: dir },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("deep.jsonl:1: nested more than 64 levels deep");
    expect(existsSync(join(dir, "runs", "deep"))).toBe(false);
  });
});

describe("inputs that never end", () => {
  it("/dev/zero is refused at its first bytes, not read until memory runs out", { timeout: 20_000 }, async () => {
    await expect(openDatasetSource("/dev/zero")).rejects.toThrow(
      new UserError("dataset /dev/zero: this is binary data (it has NUL bytes), not a JSONL text file"),
    );
  });

  it("stdin of endless zeros is refused the same way", { timeout: 20_000 }, async () => {
    const zeros = Readable.from(
      (function* () {
        for (;;) yield Buffer.alloc(65536);
      })(),
    );
    await expect(openDatasetSource("-", zeros)).rejects.toThrow(
      /dataset <stdin>: this is binary data \(it has NUL bytes\)/,
    );
  });

  it("a pipe past the in-memory limit is one line saying so", { timeout: 20_000 }, async () => {
    const rows = Readable.from(
      (function* () {
        for (;;) yield Buffer.from(`{"prompt":"x"}\n`.repeat(1000));
      })(),
    );
    await expect(openDatasetSource("-", rows, 1_000_000)).rejects.toThrow(
      /^dataset <stdin>: more than 1000000 bytes from a pipe or stdin \(it is held in memory\); write it to a file and run that$/,
    );
  });
});

describe("run's refusals are one line", () => {
  const run = (dir: string, ...args: string[]) =>
    runCliInProcess(["run", "d.jsonl", "--model", "scripted", "--progress", "none", ...args], { cwd: dir });

  it("one bad row, with the default distribution's notes held back: the row's file:line and what to do", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "d.jsonl"), `{"id":"a","prompt":"x"}\n{"id":"b"}\n`);
    const r = await run(dir);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trimEnd().split("\n")).toEqual([
      "hermes-batch run: d.jsonl:2: missing 'prompt' (nothing was run; fix it or pass --on-bad-row skip)",
    ]);
    expect(existsSync(join(dir, "runs", "d"))).toBe(false);
  });

  it("several bad rows: the first line names the first and how many more, the rest follow", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "d.jsonl"), `{"id":"b"}\n{"id":"a","prompt":"x"}\n{"prompt": \n{"id":"c"}\n`);
    const r = await run(dir);
    expect(r.exitCode).toBe(2);
    const lines = r.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe(
      "hermes-batch run: d.jsonl:1: missing 'prompt' (and 2 more bad rows below; nothing was run; fix them or pass --on-bad-row skip)",
    );
    expect(lines.slice(1).map((l) => l.trim().split(":").slice(0, 2).join(":"))).toEqual(["d.jsonl:3", "d.jsonl:4"]);
  });

  it("an output folder that cannot be one is one line", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "d.jsonl"), `{"id":"a","prompt":"x"}\n`);
    const r = await run(dir, "--output-dir", "/dev/null");
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("/dev/null");
  });
});
