// Runs that stop at a check right after the worker pool started (a row whose toolsets offer no tool): the pool
// must end only after each thread has loaded its module, or Node 20 aborts the process (SIGABRT in
// ModuleWrap::CreateRequiredModuleFacade). Runs N CLIs, P at a time, beside B busy loops that slow the threads'
// loading, and counts the runs that did not exit with 2.
//   npm run build && node scripts/bench/early-exit.mjs [N=60] [P=8] [B=3]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const [n, parallel, busy] = [Number(process.argv[2] ?? 60), Number(process.argv[3] ?? 8), Number(process.argv[4] ?? 3)];
const dir = mkdtempSync(join(tmpdir(), "hb-early-exit-"));
const dataset = join(dir, "d.jsonl");
writeFileSync(dataset, JSON.stringify({ id: "w", prompt: "search the web", toolsets: ["web"] }) + "\n");
const spinners = Array.from({ length: busy }, () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));

const one = () =>
  new Promise((resolve) => {
    const cli = spawn(
      process.execPath,
      [
        join(ROOT, "dist/src/cli.js"),
        "run",
        dataset,
        "--model",
        "scripted",
        "--output-dir",
        join(dir, "runs"),
        "--progress",
        "none",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let err = "";
    cli.stderr.on("data", (d) => (err += d));
    cli.on("exit", (code, signal) => resolve({ code, signal, err }));
  });
let started = 0;
const bad = [];
await Promise.all(
  Array.from({ length: parallel }, async () => {
    while (started < n) {
      started++;
      const r = await one();
      if (r.code !== 2) bad.push(r);
    }
  }),
);
for (const s of spinners) s.kill();
rmSync(dir, { recursive: true, force: true });
console.log(`${n} runs, ${parallel} at a time beside ${busy} busy loop(s): ${bad.length} did not exit with 2`);
for (const r of bad.slice(0, 3))
  console.log(
    `  exit ${r.code} signal ${r.signal}: ${r.err.split("\n").find((l) => /Assertion|Error/.test(l)) ?? r.err.slice(-200)}`,
  );
process.exitCode = bad.length ? 1 : 0;
