/** The report's data and page text without a browser: metrics, escaping, the CSP, and the command's errors. */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { buildReportModel } from "../src/report/html/report_data.js";
import { escapeHtml, reportHtml } from "../src/report/html/page.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { HOSTILE_PROMPT, writeComparedRuns, writeRunFolder } from "./helpers/report_fixture.js";

let runs: { current: string; baseline: string };
let root: string;

beforeAll(() => {
  root = tempDir("hb-report-unit-");
  runs = writeComparedRuns(root);
});

function blocks(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<script type="application\/gzip\+base64" id="hb-(\w+)">([^<]*)<\/script>/g)) {
    // main is one compressed text; details and base are compressed chunks, one a line.
    out[m[1]!] = m[2]!
      .split("\n")
      .filter(Boolean)
      .map((chunk) => gunzipSync(Buffer.from(chunk, "base64")).toString("utf8"))
      .join("\n");
  }
  return out;
}

describe("report model", () => {
  it("has one row per task and epoch with its outcome, score, turns and tokens, and the run's score metrics", async () => {
    const model = await buildReportModel(runs.current);
    expect(model.rows.map((r) => r.k).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `t-${String(i + 1).padStart(2, "0")}#0`),
    );
    const t02 = model.rows.find((r) => r.id === "t-02")!;
    expect(t02).toMatchObject({
      o: "completed",
      p: false,
      s: 0,
      t: 4,
      tok: 480,
      tc: 3,
      te: 1,
      g: "hard",
      ts: "terminal+file",
    });
    expect(model.rows.find((r) => r.id === "t-11")).toMatchObject({ o: "model_error", p: null });
    // A dropped task keeps its decided score: the filters keep it out of the training data, not the pass rate.
    expect(model.rows.find((r) => r.id === "t-12")).toMatchObject({ o: "dropped", p: true });
    expect(model.scores).toMatchObject({
      scored: 10,
      passed: 7,
      unscored: 2,
      unscored_by: { "scorer undecided": 1, "infrastructure failure": 1 },
    });
    expect(model.scores.pass_rate).toBeCloseTo(7 / 10);
    expect(model.scores.groups?.["metadata.group"]?.easy).toMatchObject({ scored: 4, passed: 2 });
    expect(model.group_label).toBe("metadata.group");
    expect(model.run).toMatchObject({
      name: "current-run",
      model: "model-b",
      dataset: "datasets/eval.jsonl",
      duration_s: 250,
    });
    expect(model.charts.tools).toEqual([
      ["terminal", 11, 1],
      ["read_file", 6, 0],
    ]);
    expect(model.charts.approvals).toEqual([["recursive delete", 1, 1]]);
    expect(model.charts.failures.sort()).toEqual([
      ["dropped: unknown_tools", 1],
      ["model_error", 1],
    ]);
    expect(model.details.map((d) => d.key)).toEqual(model.rows.map((r) => r.k));
  });

  it("counts a run without scores as unscored for want of a scorer, never as failed", async () => {
    const dir = writeRunFolder(root, {
      name: "no-score",
      tasks: [
        { id: "a", unscored: true },
        { id: "b", unscored: true },
      ],
    });
    const model = await buildReportModel(dir);
    expect(model.scores).toMatchObject({
      scored: 0,
      passed: 0,
      unscored: 2,
      pass_rate: null,
      unscored_by: { "no scorer": 2 },
    });
    expect(model.rows.every((r) => r.p === null && r.r === "no scorer for this task")).toBe(true);
  });

  it("a result line present twice is one row, the first line's, as the statistics and --resume take it", async () => {
    const dir = writeRunFolder(root, {
      name: "repeated-line",
      tasks: [
        { id: "r-1", passed: true },
        { id: "r-2", passed: false },
        { id: "r-1", passed: false, turns: 5 },
      ],
      dropped: [{ id: "r-2", passed: true }],
    });
    const model = await buildReportModel(dir);
    expect(model.rows.map((r) => [r.k, r.o, r.p, r.t])).toEqual([
      ["r-1#0", "completed", true, 2],
      ["r-2#0", "completed", false, 2],
    ]);
    expect(model.scores).toMatchObject({ scored: 2, passed: 1 });
  });

  it("keeps every epoch of a task as its own row, with pass@k over the epochs", async () => {
    const dir = writeRunFolder(root, {
      name: "epochs",
      tasks: [
        { id: "e-1", epoch: 0, passed: true },
        { id: "e-1", epoch: 1, passed: false },
        { id: "e-2", epoch: 0, passed: false },
        { id: "e-2", epoch: 1, passed: false },
      ],
    });
    const model = await buildReportModel(dir);
    expect(model.rows.map((r) => r.k)).toEqual(["e-1#0", "e-1#1", "e-2#0", "e-2#1"]);
    expect(model.scores).toMatchObject({
      epochs: 2,
      scored: 4,
      passed: 1,
      pass_at_k: { 1: 0.25, 2: 0.5 },
      pass_hat_k: { 1: 0.25, 2: 0 },
    });
  });

  it("compares with the baseline: the newly failing and newly passing tasks", async () => {
    const model = await buildReportModel(runs.current, runs.baseline);
    expect(model.baseline!.comparison.newly_failing.map((t) => t.task_id)).toEqual(["t-03"]);
    expect(model.baseline!.comparison.newly_passing.map((t) => t.task_id)).toEqual(["t-04"]);
    expect(model.baseline!.details).toHaveLength(11);
  });
});

describe("report page", () => {
  it("keeps hostile task text inside the compressed data, and allows only its own inline script and style", async () => {
    const html = reportHtml(await buildReportModel(runs.current, runs.baseline));
    // Only the page's own tags: 3 data blocks and the script.
    expect(html.match(/<\/script>/g)).toHaveLength(4);
    expect(html).not.toContain("__pwned");
    const data = blocks(html);
    expect(Object.keys(data).sort()).toEqual(["base", "details", "main"]);
    expect(data.details).toContain(JSON.stringify(HOSTILE_PROMPT));
    expect(data.details!.split("\n")).toHaveLength(12);

    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)![1]!.replace(/&#39;/g, "'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'none'");
    const script = /<script>([\s\S]*)<\/script>\n<\/body>/.exec(html)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const hash = (t: string) => `'sha256-${createHash("sha256").update(t).digest("base64")}'`;
    expect(csp).toContain(`script-src ${hash(script)};`);
    expect(csp).toContain(`style-src ${hash(style)};`);
    // Nothing that would load from elsewhere.
    expect(html).not.toMatch(/\b(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(/i);
  });

  it("packs conversations in chunks of 500 tasks", async () => {
    const dir = writeRunFolder(root, {
      name: "chunked",
      tasks: Array.from({ length: 1001 }, (_, i) => ({ id: `c-${i}`, passed: true })),
    });
    const html = reportHtml(await buildReportModel(dir));
    const details = /id="hb-details">([^<]*)</.exec(html)![1]!.split("\n");
    expect(details.map((c) => gunzipSync(Buffer.from(c, "base64")).toString("utf8").split("\n").length)).toEqual([
      500, 500, 1,
    ]);
    const main = JSON.parse(blocks(html).main!) as { detail_chunk: number; rows: { id: string }[] };
    expect(main.detail_chunk).toBe(500);
    expect(main.rows[1000]!.id).toBe("c-1000");
  });

  it("escapes the page title", () => {
    expect(escapeHtml(`a</title><script>"'&`)).toBe("a&lt;/title&gt;&lt;script&gt;&quot;&#39;&amp;");
  });
});

describe("report command", () => {
  it("writes RUN_DIR/report.html by default", async () => {
    const dir = writeRunFolder(root, { name: "default-out", tasks: [{ id: "x", passed: true }] });
    const res = await runCliInProcess(["report", dir]);
    expect(res.exitCode).toBe(0);
    expect(res.stdout).toMatch(/^report: 1 task\(s\), \d+ kB → .*default-out\/report\.html$/);
    expect(readFileSync(join(dir, "report.html"), "utf8")).toMatch(/^<!doctype html>/);
  });

  it("bad input is one line and exit 2", async () => {
    const missing = await runCliInProcess(["report", join(root, "nope")]);
    expect([missing.exitCode, missing.stderr]).toEqual([
      2,
      `hermes-batch report: ${join(root, "nope")}: no such run folder`,
    ]);
    const noBaseline = await runCliInProcess(["report", runs.current, "--baseline", join(root, "nope")]);
    expect(noBaseline.exitCode).toBe(2);
    const badOut = await runCliInProcess(["report", runs.current, "-o", join(root, "no-dir", "r.html")]);
    expect(badOut.exitCode).toBe(2);
    expect(badOut.stderr).toMatch(/^hermes-batch report: -o .*: folder .*no-dir does not exist$/);
    const notRun = tempDir("hb-empty-");
    writeFileSync(join(notRun, "notes.txt"), "x");
    const empty = await runCliInProcess(["report", notRun]);
    expect(empty.exitCode).toBe(2);
    expect(empty.stderr).toContain("not a run folder");
    expect(existsSync(join(notRun, "report.html"))).toBe(false);
    const view = await runCliInProcess(["view", runs.current, "--port", "70000"]);
    expect([view.exitCode, view.stderr]).toEqual([2, "hermes-batch view: --port must be at most 65535, got 70000"]);
  });
});
