#!/usr/bin/env node
/**
 * Where a run's ratio of ideal goes, from the model server's side: every request's arrival time, task and turn
 * (scripts/bench/model-server.mjs --log), for one `hermes-batch run --toolsets todo` of --tasks rows at
 * --concurrency loops (each task: --turns `todo` calls, then an answer, every call answered after --latency-ms).
 * Printed per run (one JSON line), in ms:
 *  - ratio: tasks ÷ (last answer − first request) against concurrency ÷ (calls per task × latency), as peers.mjs;
 *  - turnaround: from an answer to the same task's next request (the loop's own work between two calls);
 *  - taskGap: from a task's last answer to its loop's next task's first request, estimated over the middle of the
 *    run (its first and last second left out): the loops not inside a task there, per task ended there;
 *  - firstStarts: when the first --concurrency tasks sent their first request, after the run's first request;
 *  - tail: how long the last --concurrency tasks' ends spread.
 * --cli X runs another build; --rounds N alternates the builds given with --cli (comma-separated) N times.
 *   node scripts/bench/task-gaps.mjs [--cli dist/src/cli.js[,OTHER]] [--tasks 2048] [--concurrency 256]
 *        [--latency-ms 200] [--turns 2] [--rounds 1] [-- extra run flags]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = resolve(import.meta.dirname, "..", "..");
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    cli: { type: "string", default: join(ROOT, "dist", "src", "cli.js") },
    tasks: { type: "string", default: "2048" },
    concurrency: { type: "string", default: "256" },
    "latency-ms": { type: "string", default: "200" },
    turns: { type: "string", default: "2" },
    rounds: { type: "string", default: "1" },
  },
});
for (const name of ["tasks", "concurrency", "latency-ms", "turns", "rounds"]) {
  if (!/^[1-9]\d*$/.test(values[name])) {
    process.stderr.write(`task-gaps: --${name} must be a positive integer, got ${values[name]}\n`);
    process.exit(2);
  }
}
const tasks = Number(values.tasks);
const concurrency = Number(values.concurrency);
const latency = Number(values["latency-ms"]);
const turns = Number(values.turns);
const work = mkdtempSync(join(tmpdir(), "hb-task-gaps-"));
const dataset = join(work, "d.jsonl");
writeFileSync(
  dataset,
  Array.from({ length: tasks }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `Benchmark task ${i}: plan, finish.` }))
    .join("\n")
    .concat("\n"),
);

function startServer(log) {
  const server = spawn(
    process.execPath,
    [
      join(ROOT, "scripts", "bench", "model-server.mjs"),
      "--latency-ms",
      String(latency),
      "--turns",
      String(turns),
      "--log",
      log,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.stdout.once("data", (d) => ok({ server, port: JSON.parse(String(d)).port }));
  });
}

function exited(child) {
  return new Promise((ok) => child.once("exit", (code) => ok(code)));
}

const quantile = (sorted, p) => sorted[Math.floor(p * (sorted.length - 1))];
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
const round1 = (x) => Math.round(x * 10) / 10;

function analyse(log) {
  const rows = readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const byTask = new Map();
  for (const [t, task, turn] of rows) {
    if (!byTask.has(task)) byTask.set(task, []);
    byTask.get(task)[turn] = t;
  }
  const first = Math.min(...rows.map((r) => r[0]));
  const end = Math.max(...rows.map((r) => r[0])) + latency;
  const window = end - first;
  const turnaround = [];
  const spans = [];
  for (const ts of byTask.values()) {
    for (let k = 1; k <= turns; k++) turnaround.push(ts[k] - ts[k - 1] - latency);
    spans.push([ts[0] - first, ts[turns] + latency - first]);
  }
  // Loops inside a task at each millisecond of the middle of the run; the rest are between two tasks.
  const from = 1000;
  const to = window - 1000;
  let inside = 0;
  let ended = 0;
  for (const [a, b] of spans) {
    inside += Math.max(0, Math.min(b, to) - Math.max(a, from));
    if (b >= from && b < to) ended++;
  }
  const betweenLoopMs = concurrency * (to - from) - inside;
  const starts = spans.map((s) => s[0]).sort((x, y) => x - y);
  const ends = spans.map((s) => s[1]).sort((x, y) => x - y);
  turnaround.sort((x, y) => x - y);
  return {
    ratio: Math.round(((tasks * (turns + 1) * latency) / concurrency / window) * 1000) / 1000,
    turnaround: {
      mean: round1(mean(turnaround)),
      p50: round1(quantile(turnaround, 0.5)),
      p90: round1(quantile(turnaround, 0.9)),
    },
    taskGap: ended > 0 && to > from ? round1(betweenLoopMs / ended) : null,
    firstStarts: {
      p50: round1(quantile(starts.slice(0, concurrency), 0.5)),
      max: round1(starts[Math.min(concurrency, starts.length) - 1]),
    },
    tail: round1(ends[ends.length - 1] - ends[Math.max(0, ends.length - concurrency)]),
  };
}

const clis = values.cli.split(",").map((c) => resolve(c));
try {
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const cli of clis) {
      const log = join(work, "requests.log");
      const { server, port } = await startServer(log);
      const out = join(work, "out");
      const run = spawn(
        process.execPath,
        [
          cli,
          "run",
          dataset,
          "--model",
          "bench",
          "--base-url",
          `http://127.0.0.1:${port}/v1`,
          "--api-key",
          "k",
          "--toolsets",
          "todo",
          "--concurrency",
          String(concurrency),
          "--output-dir",
          out,
          "--run-name",
          "r",
          "--progress",
          "none",
          ...positionals,
        ],
        { stdio: ["ignore", "ignore", "inherit"] },
      );
      const code = await exited(run);
      server.kill("SIGTERM");
      await exited(server);
      rmSync(out, { recursive: true, force: true });
      process.stdout.write(`${JSON.stringify({ cli, round: r + 1, exit: code, ...analyse(log) })}\n`);
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
