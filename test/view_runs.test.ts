/**
 * `hermes-batch view DIR` on a folder of runs (issue 22, part 6): `view runs` served a page saying "HTTP 500"
 * and printed nothing. Now it serves an index of the runs (name, date, model, pass rate, link) with each run's
 * live page one click away; a folder that is neither a run nor holds one is one line and exit 2.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { hostname } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, watchPage } from "./helpers/browser.js";
import { CLI, ROOT, cleanEnv, runCli, tempDir } from "./helpers/cli.js";
import { writeRunFolder } from "./helpers/report_fixture.js";

const HOSTILE_NAME = `x<img src=y onerror=alert(1)>&"q"`;
const HOSTILE_MODEL = `<script>alert(2)</script>`;

let runs: string;
let child: ResultPromise | undefined;
let url: string;

/** Starts `view DIR --port 0` and resolves with the URL it prints. */
function startView(dir: string): Promise<string> {
  // forceKillAfterDelay: false: the test checks the exit after SIGTERM, which execa would turn into a SIGKILL after 5 s.
  child = execa("node", [CLI, "view", dir, "--port", "0"], {
    env: cleanEnv(),
    extendEnv: false,
    reject: false,
    forceKillAfterDelay: false,
  });
  return new Promise<string>((resolve, reject) => {
    let out = "";
    child!.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /view: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child!.once("exit", () => reject(new Error(`view exited: ${out}`)));
  });
}

/** The status of a GET of `path` exactly as written (fetch would normalise `%2E%2E` away). */
function rawStatus(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request({ host: "127.0.0.1", port: new URL(url).port, path }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on("error", reject)
      .end();
  });
}

beforeAll(async () => {
  runs = join(tempDir("hb-view-runs-"), "runs");
  // Two real runs of the scripted model (5 or 6 of 8 pass: see the index test), one older from fixture files, one
  // hostile, one in progress.
  for (const name of ["nightly", "nightly-2"]) {
    const r = await runCli([
      "run",
      join(ROOT, "datasets", "eval.jsonl"),
      "--model",
      "scripted",
      "--output-dir",
      runs,
      "--run-name",
      name,
      "--progress",
      "none",
      "--workers",
      "1",
    ]);
    expect(r.exitCode).toBe(0);
  }
  writeRunFolder(runs, { name: "old", tasks: [{ id: "o-1", passed: true }] });
  const hostile = writeRunFolder(runs, { name: HOSTILE_NAME, tasks: [{ id: "h-1", passed: false }] });
  writeFileSync(
    join(hostile, "statistics.json"),
    JSON.stringify({
      model: HOSTILE_MODEL,
      started_at: "2026-11-30T08:00:00.000Z",
      scores: { scored: 2, passed: 1, unscored: 0, pass_rate: 0.5 },
    }),
  );
  const live = writeRunFolder(runs, { name: "live", tasks: [{ id: "l-1", passed: true }] });
  writeFileSync(join(live, "checkpoint.json"), JSON.stringify({ done: 1, failed: 0, dropped: 0, finished: false }));
  writeFileSync(
    join(live, ".lock"),
    JSON.stringify({ pid: process.pid, host: hostname(), started: new Date().toISOString() }),
  );
  url = await startView(runs);
});

afterAll(async () => {
  if (child) {
    child.kill("SIGTERM");
    expect((await child).exitCode).toBe(0);
  }
});

describe("view on a folder of runs", () => {
  it("serves an index of its runs (it served 'HTTP 500'): name, date, model, pass rate and a link each", async () => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toMatch(
      /^default-src 'none'; style-src 'sha256-[^']+'; img-src data:; base-uri 'none'; form-action 'none'$/,
    );
    const html = await res.text();
    expect(html).not.toContain("HTTP 500");
    expect(html).not.toContain("<script");
    const rows = [...html.matchAll(/<tr data-run="([^"]*)">(.*?)<\/tr>/g)].map((m) => ({ name: m[1], cells: m[2]! }));
    // Newest first: the two real runs (today), then the fixtures by their start dates.
    expect(
      rows
        .map((r) => r.name)
        .slice(0, 2)
        .sort(),
    ).toEqual(["nightly", "nightly-2"]);
    expect(rows).toHaveLength(5);
    const nightly = rows.find((r) => r.name === "nightly")!.cells;
    expect(nightly).toContain('<a href="run/nightly/">nightly</a>');
    expect(nightly).toContain("scripted");
    // The scripted model's answer to eval-count ends with an `ls -la` line, whose last number (the minute) passes
    // the "6" it expects in one minute of the hour: the index must show what the run's statistics say.
    const { passed, scored } = JSON.parse(readFileSync(join(runs, "nightly", "statistics.json"), "utf8")).scores;
    expect([scored, [5, 6].includes(passed)]).toEqual([8, true]);
    expect(nightly).toContain(
      `${((100 * passed) / scored).toFixed(1)} %<br><span class="sub">${passed}/8 passed</span>`,
    );
    expect(nightly).toMatch(/<td>\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/td>/);
    expect(nightly).toContain('<span class="state finished">finished</span>');
    expect(rows.find((r) => r.name === "live")!.cells).toContain('<span class="state running">running</span>');
    expect(rows.find((r) => r.name === "old")!.cells).toContain("2026-12-01 10:00 UTC");
    // Folder names and models are anyone's text: escaped, in the cell and in the link.
    const hostile = rows.find((r) => r.name === "x&lt;img src=y onerror=alert(1)&gt;&amp;&quot;q&quot;")!.cells;
    expect(hostile).toContain("&lt;script&gt;alert(2)&lt;/script&gt;");
    expect(hostile).toContain(`href="run/${encodeURIComponent(HOSTILE_NAME).replace(/&/g, "&amp;")}/"`);
    expect(hostile).toContain("50.0 %");
    expect(html).not.toContain("<img");
  });

  it("each run's page is one link away, with its data; unknown names and paths are 404", async () => {
    const redirect = await fetch(`${url}run/nightly`, { redirect: "manual" });
    expect([redirect.status, redirect.headers.get("location")]).toEqual([301, "/run/nightly/"]);
    const page = await fetch(`${url}run/nightly/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");
    expect(await page.text()).toContain("hermes-batch view · ");
    const main = await fetch(`${url}run/nightly/data/main`);
    expect(main.status).toBe(200);
    expect((await main.text()).length).toBeGreaterThan(100);
    const hostile = await fetch(`${url}run/${encodeURIComponent(HOSTILE_NAME)}/data/version`);
    expect(hostile.status).toBe(200);
    for (const path of [
      "run/nope/",
      "run/..%2F..%2Fetc/",
      "run/nightly%2F..%2Fold/",
      "run/%E0%A4%A/",
      "data/main",
      "run/.lock/",
    ]) {
      expect([path, await rawStatus(`/${path}`)]).toEqual([path, 404]);
    }
  });

  it("in a real browser: the index loads without error or outside request, and a click opens the run's tasks", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const seen = watchPage(page);
      await page.goto(url);
      await page.click("a:text-is('nightly-2')");
      await page.waitForSelector("html[data-ready='1']", { timeout: 20_000 });
      expect(page.url()).toBe(`${url}run/nightly-2/`);
      await page.click("#tab-tasks");
      await page.waitForSelector("#viewport .trow.body");
      expect(await page.textContent("#count")).toBe("8 of 8 tasks");
      expect(seen.errors).toEqual([]);
      expect(seen.requests.every((u) => u.startsWith(url))).toBe(true);
    } finally {
      await browser.close();
    }
  });
});

describe("view on a folder that is neither a run nor a folder of runs", () => {
  it("says so in one line and exits 2", async () => {
    const dir = tempDir();
    const r = await runCli(["view", dir]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.split("\n")).toEqual([
      `hermes-batch view: ${dir}: neither a run folder nor a folder of runs (no run.yaml, trajectories.jsonl or checkpoint.json in it or in a folder inside it)`,
    ]);
    const baseline = await runCli(["view", runs, "--baseline", join(runs, "nightly")]);
    expect([baseline.exitCode, baseline.stderr]).toEqual([
      2,
      `hermes-batch view: --baseline compares one run: ${runs} is a folder of runs`,
    ]);
  });
});
