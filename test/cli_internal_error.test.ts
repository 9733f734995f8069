/**
 * A bug of hermes-batch itself (an internal error) exits 70, never 1: for `run` 1 means failed tasks and for
 * `compare` a regression, and a CI gate must not read a crash of the harness as either.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";

describe("an internal error", () => {
  it("exits 70 with one line naming it", async () => {
    const dir = tempDir();
    // A preload that breaks stdout's write: the command's own output throws, as a bug in it would.
    const preload = join(dir, "break-stdout.mjs");
    writeFileSync(preload, 'process.stdout.write = () => { throw new TypeError("stdout is broken (test)"); };\n');
    const r = await runCli(["toolsets"], { env: { NODE_OPTIONS: `--import ${preload}` } });
    expect(r.exitCode).toBe(70);
    expect(r.stderr).toMatch(/^hermes-batch toolsets: internal error: stdout is broken \(test\)$/m);
  });
});
