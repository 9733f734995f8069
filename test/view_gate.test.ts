/**
 * `view RUN --baseline BASE` shows the verdict CI's `compare` gives, with the same gate flags: a user looking at
 * the live page must never see "no regression" for a pair the CI gate failed (or the reverse). Before, view took
 * none of compare's gate flags, so its page always showed the default gate's verdict.
 */
import { gunzipSync } from "node:zlib";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CLI, cleanEnv, runCli, runCliInProcess, tempDir } from "./helpers/cli.js";
import { writeRunFolder } from "./helpers/report_fixture.js";

let dir: string;
let child: ResultPromise | undefined;

/** `view ARGS --port 0`: resolves with the URL it prints, or rejects with what it wrote when it exits first. */
let startLine = "";
function startView(args: string[]): Promise<string> {
  child = execa("node", [CLI, "view", ...args, "--port", "0"], {
    env: cleanEnv(),
    extendEnv: false,
    reject: false,
  });
  return new Promise<string>((resolve, reject) => {
    let out = "";
    child!.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /view: (http:\/\/127\.0\.0\.1:\d+\/).*\n/.exec(out);
      if (m) {
        startLine = m[0];
        resolve(m[1]!);
      }
    });
    let err = "";
    child!.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    child!.once("exit", (code) => reject(new Error(`view exited ${code}: ${out}${err}`)));
  });
}

async function viewComparison(args: string[]): Promise<{ verdict: string; gate_note: string; regressions: string[] }> {
  const url = await startView(args);
  const res = await fetch(`${url}data/main`);
  expect(res.status).toBe(200);
  const main = JSON.parse(gunzipSync(Buffer.from(await res.text(), "base64")).toString("utf8"));
  return main.baseline.comparison;
}

const EXIT_OF = { ok: 0, regression: 1, not_comparable: 3 } as Record<string, number>;

beforeAll(() => {
  dir = tempDir("hb-view-gate-");
  // 20 tasks; the current run loses one (passed → failed) and cannot score another (a judge outage).
  const ids = Array.from({ length: 20 }, (_, i) => `t-${String(i).padStart(2, "0")}`);
  writeRunFolder(dir, { name: "base", tasks: ids.map((id) => ({ id, passed: true })) });
  writeRunFolder(dir, {
    name: "cur",
    tasks: ids.map((id, i) => ({ id, passed: i === 0 ? false : i === 1 ? null : true })),
  });
});

async function stopView(): Promise<void> {
  if (child && child.exitCode === null) {
    child.kill("SIGTERM");
    await child;
  }
  child = undefined;
}

afterEach(stopView);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("view --baseline gives compare's verdict under compare's gate flags", () => {
  const cases: [string, string[], number][] = [
    // The default gate fails the pair: a task that passed in the baseline fails now.
    ["the default gate", [], 1],
    // A drop limit lets the single flip through.
    ["--max-drop 50", ["--max-drop", "50"], 0],
    // The unscored task exceeds a zero budget: not comparable, exit 3.
    ["--max-drop 50 --max-unscored 0", ["--max-drop", "50", "--max-unscored", "0"], 3],
    ["--max-drop 1 --significant-only", ["--max-drop", "1", "--significant-only"], 0],
  ];
  for (const [name, flags, exit] of cases) {
    it(`${name}: compare exits ${exit}, and view's page says the same`, async () => {
      const base = join(dir, "base");
      const cur = join(dir, "cur");
      const cmp = await runCliInProcess(["compare", base, cur, ...flags, "--json", join(dir, "c.json")]);
      expect(cmp.exitCode, cmp.stdout + cmp.stderr).toBe(exit);
      const json = JSON.parse(readFileSync(join(dir, "c.json"), "utf8"));
      const c = await viewComparison([cur, "--baseline", base, ...flags]);
      expect(EXIT_OF[c.verdict]).toBe(exit);
      expect(c.verdict).toBe(json.verdict);
      expect(c.gate_note).toBe(json.gate_note);
      expect(c.regressions).toEqual(json.regressions);
    }, 60_000);
  }

  it("names the gate it applies when it starts, and refuses gate flags without --baseline, as report does", async () => {
    await startView([join(dir, "cur"), "--baseline", join(dir, "base"), "--max-drop", "5", "--max-unscored", "0"]);
    // The start line says which gate the page's verdict is under (the one a CI job must pass to agree).
    expect(startLine).toContain("gate: --max-drop 5 --max-unscored 0");
    await stopView();
    await startView([join(dir, "cur"), "--baseline", join(dir, "base")]);
    expect(startLine).toContain("gate: compare's default");
    await stopView();
    const bad = await runCli(["view", join(dir, "cur"), "--max-drop", "5", "--port", "0"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("--max-drop needs --baseline");
    const badValue = await runCli(["view", join(dir, "cur"), "--baseline", join(dir, "base"), "--max-unscored", "x"]);
    expect(badValue.exitCode).toBe(2);
    expect(badValue.stderr).toContain("--max-unscored must be");
  }, 60_000);
});
