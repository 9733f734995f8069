/** `-` as an output file of compare and report means stdout, as it does for export. */
import { describe, expect, it } from "vitest";
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { ROOT, runCliInProcess, tempDir } from "./helpers/cli.js";
import { writeComparedRuns } from "./helpers/report_fixture.js";

describe("- as an output file", () => {
  it("compare --json - writes the JSON to stdout (no file named -), the text to stderr", async () => {
    const root = tempDir();
    const { baseline, current } = writeComparedRuns(root);
    const work = join(root, "cwd");
    mkdirSync(work);
    const r = await runCliInProcess(["compare", baseline, current, "--json", "-"], { cwd: work });
    expect([0, 1, 3]).toContain(r.exitCode);
    expect(existsSync(join(work, "-"))).toBe(false);
    const parsed = JSON.parse(r.stdout) as { verdict?: string };
    expect(parsed.verdict).toBeDefined();
  });

  it("compare --markdown - and --junit - do the same; two outputs on stdout are refused", async () => {
    const root = tempDir();
    const { baseline, current } = writeComparedRuns(root);
    const work = join(root, "cwd");
    mkdirSync(work);
    const md = await runCliInProcess(["compare", baseline, current, "--markdown", "-"], { cwd: work });
    expect(existsSync(join(work, "-"))).toBe(false);
    expect(md.stdout).toContain("|");
    const junit = await runCliInProcess(["compare", baseline, current, "--junit", "-"], { cwd: work });
    expect(junit.stdout.startsWith("<?xml")).toBe(true);
    const both = await runCliInProcess(["compare", baseline, current, "--json", "-", "--junit", "-"], { cwd: work });
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain("--json and --junit both write to stdout (-): give one of them a file");
  });

  it("report -o - writes the HTML to stdout, no file named -", async () => {
    const root = tempDir();
    const { current } = writeComparedRuns(root);
    const work = join(root, "cwd");
    mkdirSync(work);
    const r = await runCliInProcess(["report", current, "-o", "-"], { cwd: work });
    expect(r.exitCode).toBe(0);
    expect(existsSync(join(work, "-"))).toBe(false);
    expect(r.stdout.trimStart().toLowerCase().startsWith("<!doctype html>")).toBe(true);
  });

  it("harbor import -o - writes the rows to stdout, no file named -", async () => {
    const root = tempDir();
    cpSync(join(ROOT, "test", "fixtures", "harbor"), join(root, "tasks"), { recursive: true });
    const work = join(root, "cwd");
    mkdirSync(work);
    const r = await runCliInProcess(["harbor", "import", join(root, "tasks"), "-o", "-"], { cwd: work });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(work, "-"))).toBe(false);
    expect(r.stdout.split("\n").filter(Boolean).length).toBeGreaterThan(0);
  });
});
