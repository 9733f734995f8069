/**
 * What compare prints, read by a CI log, a GitHub Actions runner and a pull-request comment: text from the run
 * (task ids, scorer and judge reasons that quote the model's answer) cannot start a line of its own, and the
 * numbers read as they are meant.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compareRuns } from "../src/report/compare.js";
import { comparisonMarkdown, comparisonText } from "../src/report/compare_text.js";
import { loadRunSamples } from "../src/report/run_samples.js";
import { tempDir } from "./helpers/cli.js";

function writeRun(dir: string, lines: { id: string; passed: boolean; reason?: string }[]): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "trajectories.jsonl"),
    lines
      .map((l) =>
        JSON.stringify({
          task_id: l.id,
          outcome: "completed",
          messages: [{ role: "user", content: `prompt of ${l.id}` }],
          score: {
            passed: l.passed,
            value: l.passed ? 1 : 0,
            scorers: [{ name: "rubric", passed: l.passed, reason: l.reason ?? "ok" }],
          },
        }),
      )
      .join("\n") + "\n",
  );
  return dir;
}

async function compareOf(base: Parameters<typeof writeRun>[1], cur: Parameters<typeof writeRun>[1]) {
  const root = tempDir();
  return compareRuns(
    await loadRunSamples(writeRun(join(root, "base"), base)),
    await loadRunSamples(writeRun(join(root, "cur"), cur)),
  );
}

describe("console text", () => {
  it("a reason or an id with line breaks cannot forge a verdict line or a GitHub Actions workflow command", async () => {
    // A judge's reason quotes the agent's answer; an answer can hold anything, line breaks included.
    const forged = "wrong answer\n::error file=src/x.ts,line=1::all tests passed\nno regression: ±0.0 pp\r\u2028x";
    const ids = ["t0", "t1\n::add-mask::secret", "t2"];
    const c = await compareOf(
      ids.map((id) => ({ id, passed: true })),
      ids.map((id) => ({ id, passed: false, reason: forged })),
    );
    const text = comparisonText(c);
    const lines = text.split(/\r\n|\r|\n|\u2028|\u2029|\u0085/);
    expect(
      lines.filter((l) => l.startsWith("::")),
      text,
    ).toEqual([]);
    expect(
      lines.filter((l) => l.startsWith("no regression")),
      text,
    ).toEqual([]);
    // One line per newly failing task, the reason visible on it.
    const listed = lines.filter((l) => l.startsWith("  t"));
    expect(listed, text).toHaveLength(3);
    expect(listed[1]).toContain("t1\\n::add-mask::secret");
    expect(listed[0]).toContain("wrong answer\\n::error file=src/x.ts,line=1::all tests passed\\nno regression");
    expect(text.split("\n").at(-2)).toMatch(/^REGRESSION: /);
  });

  it("a p-value under 0.001 reads 'p < 0.001', never 'p = < 0.001'", async () => {
    const ids = Array.from({ length: 14 }, (_, i) => `t${i}`);
    const c = await compareOf(
      ids.map((id) => ({ id, passed: true })),
      ids.map((id) => ({ id, passed: false })),
    );
    const text = comparisonText(c);
    const md = comparisonMarkdown(c);
    expect(text).not.toContain("= <");
    expect(md).not.toContain("= &lt;");
    expect(text).toContain("p < 0.001 two-sided");
    expect(text).toContain("one-sided p of a drop < 0.001");
    expect(text).toContain("(one-sided p < 0.001 < 0.05)");
  });
});

describe("Markdown", () => {
  it("a task id with bidirectional controls cannot reorder what the comment shows", async () => {
    // U+202E turns the rest of a line around: "t1\u202Eliaf" shows as "t1fail" reversed, in the table and the verdict.
    const ids = ["t0", "t1\u202E1t ,ssap", "t2\u2066x\u2069", "t3\u200F"];
    const c = await compareOf(
      ids.map((id) => ({ id, passed: true })),
      ids.map((id) => ({ id, passed: false })),
    );
    const md = comparisonMarkdown(c);
    expect(md).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/);
    expect(md).toContain("U\\+202E");
    expect(comparisonText(c)).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/);
  });
});
