/**
 * The HTML report at scale: writes a synthetic run folder of N tasks (default 10,000; realistic lines of
 * 4–12 turns with tool calls, some approvals, failures and scores), then measures `hermes-batch report`
 * (time, file size) and, in Debian's chromium, the time from navigation until the page is usable (table
 * rendered) and until a task's conversation is shown. Needs `npm run build` first.
 *   node scripts/bench/report.mjs [N] [MAX_TURNS]     (MAX_TURNS default 12; 2 makes small lines, for 100,000 tasks)
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";

const N = Number(process.argv[2] ?? 10_000);
const MAX_TURNS = Math.max(2, Number(process.argv[3] ?? 12));
const MIN_TURNS = Math.min(4, MAX_TURNS);
const root = resolve(import.meta.dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "hb-bench-report-"));
const dir = join(work, "bench-run");
mkdirSync(dir);

let seed = 42;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
const traj = [];
const failed = [];
for (let i = 0; i < N; i++) {
  const id = `task-${String(i).padStart(6, "0")}`;
  if (rnd() < 0.02) {
    failed.push(JSON.stringify({ prompt_index: i, task_id: id, outcome: pick(["model_error", "timeout"]), completed: false, partial: false, error: "HTTP 503", toolsets_used: ["terminal"], metadata: {} }));
    continue;
  }
  const turns = MIN_TURNS + Math.floor(rnd() * (MAX_TURNS - MIN_TURNS + 1));
  const messages = [{ role: "system", content: "You are a capable assistant that completes tasks by calling the provided tools." }, { role: "user", content: `Task ${i}: find the failing test in the repository and fix it. ${"Context line. ".repeat(10)}` }];
  const stats = {};
  const approvals = [];
  for (let t = 0; t < turns - 1; t++) {
    const tool = pick(["terminal", "read_file", "write_file", "search_files"]);
    const command = tool === "terminal" ? pick(["pytest -x", "ls -la", "git diff", "rm -rf /tmp/cache"]) : null;
    const args = command ? { command } : { path: `src/module_${t}.py` };
    messages.push({ role: "assistant", content: null, reasoning: `Step ${t}: I will use ${tool} to look at the state. `.repeat(3), tool_calls: [{ id: `c${t}`, type: "function", function: { name: tool, arguments: JSON.stringify(args) } }] });
    messages.push({ role: "tool", tool_call_id: `c${t}`, name: tool, content: JSON.stringify({ output: `line of output ${t}\n`.repeat(8 + Math.floor(rnd() * 30)), exit_code: 0 }) });
    const err = rnd() < 0.05;
    stats[tool] ??= { count: 0, success: 0, failure: 0 };
    stats[tool].count++;
    stats[tool][err ? "failure" : "success"]++;
    if (command === "rm -rf /tmp/cache") approvals.push({ command, pattern: "recursive delete", decision: rnd() < 0.5 ? "approve" : "deny", by: "smart", reason: "cache only", latency_ms: 40 });
  }
  messages.push({ role: "assistant", content: "Fixed: the off-by-one in module_3.", reasoning: "All tests pass now." });
  const passed = rnd() < 0.1 ? null : rnd() < 0.7;
  traj.push(
    JSON.stringify({
      prompt_index: i, task_id: id, conversations: [], messages, tools: [], metadata: { group: pick(["easy", "medium", "hard"]) }, completed: true, partial: false,
      outcome: rnd() < 0.1 ? "max_turns" : "completed", api_calls: turns, toolsets_used: pick([["terminal", "file"], ["terminal"], ["file", "web"]]), tool_stats: stats, tool_error_counts: {},
      usage: { prompt_tokens: turns * 900, completion_tokens: turns * 120, total_tokens: turns * 1020 }, approvals,
      score: { passed, value: passed === null ? null : passed ? 1 : 0, scorers: [{ name: "verify", passed, value: passed === null ? null : passed ? 1 : 0, reason: passed === null ? "verify could not run" : "exit code" }] },
      final_response: "Fixed: the off-by-one in module_3.", duration_ms: 5000 + Math.floor(rnd() * 60000),
    }),
  );
}
writeFileSync(join(dir, "trajectories.jsonl"), traj.join("\n") + "\n");
writeFileSync(join(dir, "failed.jsonl"), failed.join("\n") + (failed.length ? "\n" : ""));
writeFileSync(join(dir, "run.yaml"), "dataset: bench.jsonl\nmodel: bench-model\nrun_name: bench-run\n");
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
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const runs = [];
for (let r = 0; r < 3; r++) {
  const page = await ctx.newPage();
  const start = performance.now();
  await page.goto(`file://${out}#tasks`);
  await page.waitForSelector("html[data-ready='1'] #viewport .trow.body", { timeout: 120_000 });
  const usable = performance.now() - start;
  const t1 = performance.now();
  await page.fill("#search", `task-${String(N - 50).padStart(6, "0").slice(0, 5)}`);
  await page.waitForFunction(() => /^\d+ of /.test(document.querySelector("#count")?.textContent ?? "") && Number(document.querySelector("#count").textContent.split(" ")[0]) <= 10, undefined, { timeout: 60_000 });
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
const med = (k) => runs.map((x) => x[k]).sort((a, b) => a - b)[1].toFixed(0);
const mb = (n) => (n / 1048576).toFixed(1);
process.stdout.write(
  `${N} tasks (trajectories.jsonl ${mb(input)} MB): report written in ${(buildMs / 1000).toFixed(1)} s, ${mb(size)} MB; ` +
    `page usable (table drawn) after ${med("usable")} ms, search filtered in ${med("filter")} ms, first task opened in ${med("firstTask")} ms (median of 3 loads)\n`,
);
