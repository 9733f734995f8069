/** A mistyped key in the --config file names the key it resembles, as a mistyped flag does. */
import { describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

describe("a mistyped key in the --config file", () => {
  it("names the key it resembles", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "d.jsonl"), `{"prompt": "a"}\n`);
    writeFileSync(join(dir, "c.yaml"), "modle: scripted\nmax_turns: 3\n");
    const r = await runCliInProcess(["run", join(dir, "d.jsonl"), "--config", join(dir, "c.yaml"), "--dry-run"], {
      cwd: dir,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${join(dir, "c.yaml")}:1: unknown key(s) 'modle': did you mean 'model'?`);
  });
});
