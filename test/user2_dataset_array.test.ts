/** A JSON array given as the dataset: one line naming the problem and the conversion, exit 2. */
import { describe, expect, it } from "vitest";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCliInProcess, tempDir } from "./helpers/cli.js";

describe("a JSON array given as the dataset", () => {
  for (const [what, text] of [
    ["pretty-printed", `[\n  {\n    "prompt": "a"\n  },\n  {\n    "prompt": "b"\n  }\n]\n`],
    ["on one line", `  [{"prompt": "a"}, {"prompt": "b"}]\n`],
  ] as const) {
    it(`${what}: one line that names the problem and the jq command, exit 2, nothing run`, async () => {
      const dir = tempDir();
      const file = join(dir, "data.json");
      writeFileSync(file, text);
      const r = await runCliInProcess(
        ["run", file, "--model", "scripted", "--output-dir", join(dir, "runs"), "--progress", "none"],
        { cwd: dir },
      );
      expect(r.exitCode).toBe(2);
      expect(r.stderr.trim()).toBe(
        `hermes-batch run: dataset ${file}: a JSON array, not JSON Lines (one object per line): convert it with jq -c '.[]' ${file} > ${join(dir, "data.jsonl")}`,
      );
      expect(existsSync(join(dir, "runs", "data"))).toBe(false);
    });
  }

  it("named .jsonl: the converted file gets another name than the input", async () => {
    const dir = tempDir();
    const file = join(dir, "rows.jsonl");
    writeFileSync(file, `[\n  {"prompt": "a"}\n]\n`);
    const r = await runCliInProcess(["run", file, "--model", "scripted", "--output-dir", join(dir, "runs")], {
      cwd: dir,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`convert it with jq -c '.[]' ${file} > ${join(dir, "rows.lines.jsonl")}`);
  });
});
