/**
 * The HTML report and the live view in a real Chromium (Debian's, through playwright-core): no console
 * error, no network request, every task in the table, filters, a task's turns with a tool call and an
 * approval, the baseline diff, hostile task text kept as text. Screenshots go to runs/screenshots/.
 */
import { appendFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { execa } from "execa";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, watchPage, type Browser } from "./helpers/browser.js";
import { CLI, ROOT, cleanEnv, runCli, tempDir } from "./helpers/cli.js";
import { HOSTILE_PROMPT, trajectoryLine, writeComparedRuns, writeRunFolder } from "./helpers/report_fixture.js";

const SHOTS = join(ROOT, "runs", "screenshots");
let browser: Browser;
let root: string;
let reportUrl: string;

async function open(url: string): Promise<{ page: Page; seen: ReturnType<typeof watchPage> }> {
  const page = await browser.context.newPage();
  const seen = watchPage(page);
  await page.goto(url);
  await page.waitForSelector("html[data-ready='1']", { timeout: 20_000 });
  return { page, seen };
}

const shownKeys = (page: Page) =>
  page.$$eval("#viewport .trow.body", (rows) => rows.map((r) => (r as HTMLElement).dataset.key));

beforeAll(async () => {
  root = tempDir("hb-report-");
  const { current, baseline } = writeComparedRuns(root);
  const out = join(root, "report.html");
  const res = await runCli(["report", current, "--baseline", baseline, "-o", out]);
  expect(res.stderr).toBe("");
  expect(res.exitCode).toBe(0);
  reportUrl = `file://${out}`;
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
});

describe("report page in Chromium", () => {
  it("loads from file:// with no console error and no request but the file itself, and hostile task text stays text", async () => {
    const { page, seen } = await open(reportUrl);
    for (const hash of ["#tasks", "#task=t-06", "#baseline", "#task=t-03&side=1", "#overview"]) {
      await page.evaluate((h) => (location.hash = h), hash);
      await page.waitForTimeout(150);
    }
    await page.evaluate(() => (location.hash = "#task=t-06"));
    await page.waitForSelector(".msg.user");
    expect(await page.textContent(".msg.user .text")).toBe(HOSTILE_PROMPT);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.$$("img")).toHaveLength(0);
    expect(seen.errors).toEqual([]);
    expect(seen.requests.every((u) => u.startsWith("file://"))).toBe(true);
    expect(seen.requests.length).toBeGreaterThan(0);
    await page.close();
  });

  it("overview shows outcomes, the pass rate with its interval and unscored count, and SVG charts; screenshot written", async () => {
    const { page, seen } = await open(reportUrl);
    // The dropped task keeps its grade (a pass): 7 of 10 scored.
    expect(await page.textContent("#pass-rate")).toBe("70.0 %");
    const scores = await page.textContent(".card:has(#pass-rate)");
    expect(scores).toContain("7 of 10 scored passed");
    expect(scores).toContain("2 unscored");
    expect(await page.textContent("#outcomes")).toMatch(/completed\s*10.*model_error\s*1.*dropped\s*1/s);
    expect(await page.$$("svg.chart")).toHaveLength(6);
    // Tokens as the console and statistics.json give them: the total (agent + approver + judge), then by whom.
    const tokens = /tokens ([\d,]+) \(agent ([\d,]+), approver ([\d,]+), judge ([\d,]+)\)/.exec(
      (await page.textContent("#hdr")) ?? "",
    );
    expect(tokens).not.toBeNull();
    const [total, agent, approver, judge] = tokens!.slice(1).map((n) => Number(n.replace(/,/g, "")));
    expect(total).toBe(agent! + approver! + judge!);
    expect(total).toBeGreaterThan(0);
    const shot = join(SHOTS, "report-overview.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    expect(seen.errors).toEqual([]);
    await page.close();
  });

  it("the table shows every task and the filters and search narrow it", async () => {
    const { page } = await open(`${reportUrl}#tasks`);
    await page.waitForSelector("#viewport .trow.body");
    expect(await page.textContent("#count")).toBe("12 of 12 tasks");
    expect((await shownKeys(page)).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `t-${String(i + 1).padStart(2, "0")}#0`),
    );

    await page.selectOption("#f-passed", "failed");
    expect(await page.textContent("#count")).toBe("3 of 12 tasks");
    expect((await shownKeys(page)).sort()).toEqual(["t-02#0", "t-03#0", "t-09#0"]);
    await page.selectOption("#f-toolset", "web");
    expect(await shownKeys(page)).toEqual(["t-09#0"]);
    await page.selectOption("#f-passed", "");
    await page.selectOption("#f-toolset", "");
    await page.selectOption("#f-outcome", "model_error");
    expect(await shownKeys(page)).toEqual(["t-11#0"]);
    await page.selectOption("#f-outcome", "");
    await page.fill("#search", "onerror");
    await page.waitForFunction(() => document.querySelector("#count")?.textContent === "1 of 12 tasks");
    expect(await shownKeys(page)).toEqual(["t-06#0"]);
    await page.fill("#search", "");
    await page.waitForFunction(() => document.querySelector("#count")?.textContent === "12 of 12 tasks");
    await page.click("#viewport .trow.head span[data-col='t'], .trow.head span[data-col='t']");
    expect((await shownKeys(page))[0]).toBe("t-08#0");
    await page.close();
  });

  it("opening a task shows its turns, a tool call as JSON, the approval inline, verify, judge reason and usage; screenshot written", async () => {
    const { page, seen } = await open(`${reportUrl}#tasks`);
    await page.click("#viewport a:text-is('t-03')");
    await page.waitForSelector("#task-title");
    expect(page.url()).toMatch(/#task=t-03$/);
    expect(await page.$$("[data-turn]")).toHaveLength(2);
    expect(await page.textContent(".turns .call .name")).toBe("→ terminal");
    expect(JSON.parse((await page.textContent(".turns .call pre.args"))!)).toEqual({
      command: "rm -rf /tmp/build-cache",
    });
    const approval = await page.textContent(".approval.deny");
    expect(approval).toContain("denied by smart");
    expect(approval).toContain("recursive delete");
    expect(approval).toContain("reason: deletes outside the task folder");
    expect(await page.textContent(".judge-reason")).toBe("expected '4', got 'There are 3 files'");
    expect(await page.textContent("#verify")).toContain("exit 1");
    expect(await page.textContent(".facts")).toContain("200 in · 40 out · 240 total");
    expect(await page.isVisible("details:has(> summary:text-matches('^reasoning')) .text")).toBe(false);
    const shot = join(SHOTS, "report-task.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);

    await page.evaluate(() => (location.hash = "#task=t-11"));
    await page.waitForSelector("#task-title:text-is('t-11')");
    expect(await page.textContent("pre.err")).toBe("HTTP 503 from the endpoint after 6 retries");
    expect(await page.textContent("#score")).toContain("unscored: infrastructure failure (model_error)");
    expect(await page.$$("[data-turn]")).toHaveLength(0);
    expect(seen.errors).toEqual([]);
    await page.close();
  });

  it("the baseline view lists the newly failing task first and opens both trajectories side by side", async () => {
    const { page } = await open(`${reportUrl}#baseline`);
    // Newly failing first, before newly passing and before the deltas.
    const order = await page.$$eval("#newly-failing, #newly-passing, #deltas", (els) => els.map((e) => e.id));
    expect(order).toEqual(["newly-failing", "newly-passing", "deltas"]);
    expect(await page.textContent("#deltas")).toContain("exact McNemar p = 1.00");
    expect(await page.$$eval("#newly-failing a", (as) => as.map((a) => a.textContent))).toEqual([
      expect.stringContaining("t-03"),
    ]);
    expect(await page.$$eval("#newly-passing a", (as) => as.map((a) => a.textContent))).toEqual([
      expect.stringContaining("t-04"),
    ]);
    await page.click("#newly-failing a");
    await page.waitForSelector(".side");
    const columns = await page.$$eval(".side > div", (cols) =>
      cols.map((c) => c.querySelector("h3")!.textContent + " " + c.querySelector("#score")!.textContent),
    );
    expect(columns[0]).toMatch(/^baseline · baseline-run.*passed/);
    expect(columns[1]).toMatch(/^current · current-run.*failed/);
    await page.screenshot({ path: join(SHOTS, "report-baseline-side.png"), fullPage: true });
    await page.close();
  });

  it("a run without any scorer says so instead of a pass rate", async () => {
    const dir = writeRunFolder(root, {
      name: "unscored-run",
      tasks: [
        { id: "u-1", unscored: true },
        { id: "u-2", unscored: true, approval: "approve" },
      ],
    });
    const out = join(root, "unscored.html");
    expect((await runCli(["report", dir, "-o", out])).exitCode).toBe(0);
    const { page, seen } = await open(`file://${out}`);
    expect(await page.textContent("#no-scorer")).toContain("None of the 2 tasks was scored (2 no scorer)");
    await page.evaluate(() => (location.hash = "#task=u-2"));
    await page.waitForSelector("#score");
    expect(await page.textContent("#score")).toContain("no scorer for this task");
    expect(await page.textContent(".approval.approve")).toContain("approved by smart");
    expect(seen.errors).toEqual([]);
    await page.close();
  });
});

describe("report page with many tasks", () => {
  it("draws only the visible rows of 1,201 tasks, and opens a task of the last conversation chunk", async () => {
    const tasks = Array.from({ length: 1201 }, (_, i) => ({
      id: `big-${String(i).padStart(4, "0")}`,
      passed: i % 3 === 0,
    }));
    const dir = writeRunFolder(root, { name: "big-run", tasks });
    const out = join(root, "big.html");
    expect((await runCli(["report", dir, "-o", out])).exitCode).toBe(0);
    const { page, seen } = await open(`file://${out}#tasks`);
    await page.waitForSelector("#viewport .trow.body");
    expect(await page.textContent("#count")).toBe("1,201 of 1,201 tasks");
    const drawn = (await shownKeys(page)).length;
    expect(drawn).toBeGreaterThan(10);
    expect(drawn).toBeLessThan(100);
    await page.$eval("#viewport", (v) => (v.scrollTop = v.scrollHeight));
    await page.waitForSelector("#viewport [data-key='big-1200#0']");
    await page.click("#viewport a:text-is('big-1200')");
    await page.waitForSelector("[data-turn]");
    expect(await page.textContent("#task-title")).toBe("big-1200");
    expect(await page.textContent(".msg.user .text")).toBe("Task big-1200: list the files and count them.");
    expect(seen.errors).toEqual([]);
    await page.close();
  });
});

describe("view: the live page", () => {
  it("serves on 127.0.0.1 only, refuses other hosts, and shows tasks that land while it runs", async () => {
    const dir = writeRunFolder(root, {
      name: "live-run",
      tasks: [
        { id: "l-1", passed: true },
        { id: "l-2", passed: false },
      ],
    });
    const child = execa("node", [CLI, "view", dir, "--port", "0"], {
      env: cleanEnv(),
      extendEnv: false,
      reject: false,
      forceKillAfterDelay: false, // the exit after SIGTERM is checked: no SIGKILL 5 s later
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout!.on("data", (d: Buffer) => {
          out += d.toString();
          const m = /view: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.once("exit", () => reject(new Error(`view exited: ${out}`)));
      });
      const port = new URL(url).port;
      // DNS rebinding: a foreign name pointing at 127.0.0.1 gets nothing.
      const foreign = await new Promise<number>((resolve, reject) => {
        request({ host: "127.0.0.1", port, path: "/data/main", headers: { host: `evil.example:${port}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on("error", reject)
          .end();
      });
      expect(foreign).toBe(403);
      expect((await fetch(url, { method: "POST" })).status).toBe(405);
      expect((await fetch(url)).headers.get("content-security-policy")).toContain("connect-src 'self'");

      const { page, seen } = await open(`${url}#tasks`);
      await page.waitForSelector("#viewport .trow.body");
      expect(await page.textContent("#count")).toBe("2 of 2 tasks");
      appendFileSync(
        join(dir, "trajectories.jsonl"),
        JSON.stringify(trajectoryLine({ id: "l-3", passed: true }, 2)) + "\n",
      );
      await page.waitForFunction(() => document.querySelector("#count")?.textContent === "3 of 3 tasks", undefined, {
        timeout: 15_000,
      });
      expect((await shownKeys(page)).sort()).toEqual(["l-1#0", "l-2#0", "l-3#0"]);
      await page.click("#viewport a:text-is('l-3')");
      await page.waitForSelector("[data-turn]");
      expect(seen.errors).toEqual([]);
      expect(seen.requests.every((u) => u.startsWith(url))).toBe(true);
      await page.close();
    } finally {
      child.kill("SIGTERM");
    }
    expect((await child).exitCode).toBe(0);
  });
});
