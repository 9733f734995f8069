/**
 * The HTML report at scale: writes a synthetic run folder of N tasks (default 10,000; realistic lines of
 * 4–12 turns with tool calls, some approvals, failures and scores), then measures `hermes-batch report`
 * (time, file size) and, in Debian's chromium, the time from navigation until the page is usable (table
 * rendered) and until a task's conversation is shown. Needs `npm run build` first.
 *   node scripts/bench/report.mjs [N] [MAX_TURNS]     (MAX_TURNS default 12; 2 makes small lines, for 100,000 tasks)
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";
import { writeSyntheticRun } from "./synthetic_run.mjs";

const N = Number(process.argv[2] ?? 10_000);
const MAX_TURNS = Math.max(2, Number(process.argv[3] ?? 12));
const MIN_TURNS = Math.min(4, MAX_TURNS);
const root = resolve(import.meta.dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "hb-bench-report-"));
const dir = join(work, "bench-run");
mkdirSync(dir);

writeSyntheticRun(dir, { n: N, minTurns: MIN_TURNS, maxTurns: MAX_TURNS });
const input = statSync(join(dir, "trajectories.jsonl")).size;

const out = join(work, "report.html");
const t0 = performance.now();
execFileSync("node", [join(root, "dist", "src", "cli.js"), "report", dir, "-o", out], { stdio: "inherit" });
const buildMs = performance.now() - t0;
const size = statSync(out).size;

const profile = mkdtempSync(join(tmpdir(), "hb-bench-chromium-"));
const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.HERMES_BATCH_CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1400, height: 900 },
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const runs = [];
for (let r = 0; r < 3; r++) {
  const page = await ctx.newPage();
  const start = performance.now();
  await page.goto(`file://${out}#tasks`);
  await page.waitForSelector("html[data-ready='1'] #viewport .trow.body", { timeout: 120_000 });
  const usable = performance.now() - start;
  const t1 = performance.now();
  await page.fill(
    "#search",
    `task-${String(N - 50)
      .padStart(6, "0")
      .slice(0, 5)}`,
  );
  await page.waitForFunction(
    () =>
      /^\d+ of /.test(document.querySelector("#count")?.textContent ?? "") &&
      Number(document.querySelector("#count").textContent.split(" ")[0]) <= 10,
    undefined,
    { timeout: 60_000 },
  );
  const filter = performance.now() - t1 - 120; // minus the search box's debounce
  const t2 = performance.now();
  await page.evaluate((id) => (location.hash = `#task=${id}`), `task-${String(N - 49).padStart(6, "0")}`);
  await page.waitForSelector("[data-turn]", { timeout: 60_000 });
  const firstTask = performance.now() - t2;
  runs.push({ usable, filter, firstTask });
  await page.close();
}
await ctx.close();
rmSync(profile, { recursive: true, force: true });
rmSync(work, { recursive: true, force: true });
const med = (k) =>
  runs
    .map((x) => x[k])
    .sort((a, b) => a - b)[1]
    .toFixed(0);
const mb = (n) => (n / 1048576).toFixed(1);
process.stdout.write(
  `${N} tasks (trajectories.jsonl ${mb(input)} MB): report written in ${(buildMs / 1000).toFixed(1)} s, ${mb(size)} MB; ` +
    `page usable (table drawn) after ${med("usable")} ms, search filtered in ${med("filter")} ms, first task opened in ${med("firstTask")} ms (median of 3 loads)\n`,
);
