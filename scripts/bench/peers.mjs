#!/usr/bin/env node
/**
 * hermes-batch against the physical limit and the frameworks people would otherwise script this with, in one
 * interleaved run on the same local model server (scripts/bench/model-server.mjs, its own process: a fixed
 * latency, --turns tool calls of an in-process `todo` tool, then an answer):
 *  - raw: a keep-alive node:http loop writing one line per task (scripts/bench/peers/raw.mjs), the floor;
 *  - hermes-batch: the built CLI (`run --toolsets todo`);
 *  - ai-sdk, agents-sdk: the Vercel AI SDK and the OpenAI Agents SDK for JS, when installed in a scratch folder
 *    given by --peers-dir (never dependencies of this project), e.g.
 *      mkdir /tmp/peers && cd /tmp/peers && npm init -y && npm install ai @ai-sdk/openai @openai/agents openai
 * Per contender and round: a run of --baseline-tasks at one loop, then --tasks at --concurrency loops, each with a
 * fresh model server. Printed, medians over --rounds (the mean of the middle two for an even count):
 *  - ratio of ideal: tasks ÷ (last answer − first request, as the server saw them) against concurrency ÷ (calls
 *    per task × latency);
 *  - CPU per model call: user + sys of the contender's process tree (bash `times`) ÷ requests;
 *  - memory per loop: (peak RSS at --concurrency − peak RSS at one loop) ÷ (concurrency − 1), from VmHWM;
 *  - first request: from the process's start to the server's first request;
 *  - with the raw loop in the run: each round's CPU per call over the raw loop's of the same round;
 *  - with --steady: each contender also runs 2 × --tasks at --concurrency loops, and the CPU per call of the
 *    extra calls is printed: (CPU at 2N − CPU at N) ÷ (requests at 2N − requests at N). That leaves out what a
 *    run pays once (start-up, the first round's JIT compilation, the end-of-run reports), which the whole-run
 *    figure spreads over N tasks; with the raw loop in the run, each round's multiple of the raw loop's.
 *   node scripts/bench/peers.mjs [--tasks 2048] [--concurrency 256] [--latency-ms 200] [--turns 2] [--rounds 3]
 *        [--baseline-tasks 8] [--peers-dir /tmp/peers] [--only raw,hermes-batch] [--cli dist/src/cli.js]
 *        [--cli-before /tmp/before/dist/src/cli.js] [--hermes-args "--workers 1"] [--steady]
 * --cli: the hermes-batch CLI to run (another checkout's build); --cli-before: a second build run as the contender
 * `hermes-batch-before`, interleaved with the first (a before/after in one run); --hermes-args: extra `run` flags
 * for both (e.g. "--workers 1").
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const HERE = import.meta.dirname;
const ROOT = resolve(HERE, "..", "..");
const USAGE = readFileSync(new URL(import.meta.url), "utf8")
  .split("*/")[0]
  .split("\n")
  .slice(2)
  .map((l) => l.replace(/^ \* ?/, ""))
  .join("\n");
const { values } = parseOptions({
  options: {
    help: { type: "boolean", short: "h", default: false },
    tasks: { type: "string", default: "2048" },
    concurrency: { type: "string", default: "256" },
    "latency-ms": { type: "string", default: "200" },
    turns: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    "baseline-tasks": { type: "string", default: "8" },
    "peers-dir": { type: "string" },
    only: { type: "string" },
    cli: { type: "string" },
    "cli-before": { type: "string" },
    "hermes-args": { type: "string", default: "" },
    steady: { type: "boolean", default: false },
  },
});
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

/** parseArgs, with a bad flag reported in one line (exit 2) instead of a stack trace. */
function parseOptions(config) {
  try {
    return parseArgs(config);
  } catch (err) {
    process.stderr.write(`peers: ${err.message} (see --help)\n`);
    process.exit(2);
  }
}
const num = (k) => {
  const n = Number(values[k]);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`peers: --${k} must be a whole number, got ${values[k]}\n`);
    process.exit(2);
  }
  return n;
};
const [tasks, concurrency, latencyMs, turns, rounds, baselineTasks] = [
  "tasks",
  "concurrency",
  "latency-ms",
  "turns",
  "rounds",
  "baseline-tasks",
].map(num);
const peersDir = values["peers-dir"] ? resolve(values["peers-dir"]) : undefined;
const CLI = values.cli ? resolve(values.cli) : join(ROOT, "dist", "src", "cli.js");
const CLI_BEFORE = values["cli-before"] ? resolve(values["cli-before"]) : undefined;

const contenders = [
  { name: "raw", argv: (o) => ["node", join(HERE, "peers", "raw.mjs"), ...common(o)] },
  {
    name: "hermes-batch",
    argv: (o) => hermesArgv(CLI, o),
  },
  {
    name: "hermes-batch-before",
    argv: (o) => hermesArgv(CLI_BEFORE, o),
  },
  {
    name: "ai-sdk",
    peer: "ai",
    argv: (o) => ["node", join(HERE, "peers", "ai-sdk.mjs"), ...common(o), "--peers-dir", peersDir],
  },
  {
    name: "agents-sdk",
    peer: "@openai/agents",
    argv: (o) => ["node", join(HERE, "peers", "agents-sdk.mjs"), ...common(o), "--peers-dir", peersDir],
  },
].filter(
  (c) =>
    (!c.peer || (peersDir && existsSync(join(peersDir, "node_modules", c.peer)))) &&
    (!values.only || values.only.split(",").includes(c.name)) &&
    (c.name !== "hermes-batch-before" || CLI_BEFORE !== undefined),
);

/** The hermes-batch command line of one run, for the CLI build at `cli`. */
function hermesArgv(cli, o) {
  const dataset = join(o.dir, "d.jsonl");
  writeFileSync(
    dataset,
    Array.from({ length: o.tasks }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `benchmark task ${i}` })).join(
      "\n",
    ) + "\n",
  );
  return [
    "node",
    cli,
    "run",
    dataset,
    "--model",
    "bench",
    "--base-url",
    o.baseUrl,
    "--api-key",
    "k",
    "--toolsets",
    "todo",
    "--concurrency",
    String(o.concurrency),
    "--progress",
    "none",
    "--output-dir",
    o.dir,
    "--run-name",
    "r",
    ...values["hermes-args"].split(" ").filter(Boolean),
  ];
}

function common(o) {
  return [
    "--base-url",
    o.baseUrl,
    "--tasks",
    String(o.tasks),
    "--concurrency",
    String(o.concurrency),
    "--out",
    join(o.dir, "out.jsonl"),
  ];
}

function startServer() {
  return new Promise((resolveServer, reject) => {
    const child = spawn(
      process.execPath,
      [join(HERE, "model-server.mjs"), "--latency-ms", String(latencyMs), "--turns", String(turns)],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    child.stdout.setEncoding("utf8");
    child.stdout.once("data", (line) => {
      const port = JSON.parse(line).port;
      const base = `http://127.0.0.1:${port}`;
      const call = async (method, path) => (await fetch(`${base}${path}`, { method })).json();
      resolveServer({
        baseUrl: `${base}/v1`,
        stats: () => call("GET", "/stats"),
        stop: () => call("POST", "/shutdown").catch(() => child.kill()),
      });
    });
    child.once("error", reject);
  });
}

function vmHwmKb(pid) {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** One run of a contender: wall, CPU of its process tree, peak RSS, and what the server saw. */
async function runOnce(contender, taskCount, loops) {
  const server = await startServer();
  const dir = mkdtempSync(join(tmpdir(), "hb-peers-"));
  const argv = contender.argv({ baseUrl: server.baseUrl, tasks: taskCount, concurrency: loops, dir });
  const spawnedAt = Date.now();
  const child = spawn(
    "bash",
    ["-c", '"$@" & p=$!; echo "pid $p" >&2; wait $p; s=$?; times; exit $s', "bash", ...argv],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  let peakKb = 0;
  let timer;
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => {
    err += d;
    const pid = Number(/^pid (\d+)$/m.exec(err)?.[1]);
    if (pid && !timer) timer = setInterval(() => (peakKb = Math.max(peakKb, vmHwmKb(pid))), 50);
  });
  const code = await new Promise((r) => child.on("exit", r));
  clearInterval(timer);
  const stats = await server.stats();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
  if (code !== 0) throw new Error(`${contender.name} exited ${code}: ${err.slice(-500)}`);
  const [user, sys] = out
    .trim()
    .split("\n")
    .pop()
    .split(" ")
    .map((t) => {
      const m = /(\d+)m([\d.]+)s/.exec(t);
      return Number(m[1]) * 60_000 + Number(m[2]) * 1000;
    });
  return {
    cpuMs: user + sys,
    peakKb,
    requests: stats.requests,
    windowMs: stats.lastFinalAt - stats.firstRequestAt,
    firstRequestMs: stats.epochStarted + stats.firstRequestAt - spawnedAt,
    finished: stats.tasksFinished,
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const results = new Map(contenders.map((c) => [c.name, []]));
for (let round = 0; round < rounds; round++) {
  for (const c of contenders) {
    const base = await runOnce(c, baselineTasks, 1);
    const full = await runOnce(c, tasks, concurrency);
    const ideal = concurrency / ((turns + 1) * (latencyMs / 1000));
    const double = values.steady ? await runOnce(c, 2 * tasks, concurrency) : undefined;
    const row = {
      ratio: full.finished / (full.windowMs / 1000) / ideal,
      cpuPerCallMs: full.cpuMs / full.requests,
      mbPerLoop: (full.peakKb - base.peakKb) / 1024 / Math.max(1, concurrency - 1),
      firstRequestS: full.firstRequestMs / 1000,
      ...(double ? { steadyCpuPerCallMs: (double.cpuMs - full.cpuMs) / (double.requests - full.requests) } : {}),
    };
    results.get(c.name).push(row);
    process.stderr.write(`round ${round + 1} ${c.name}: ${JSON.stringify(row)}\n`);
  }
}
const f = (x, d) => x.toFixed(d);
// The machine's speed drifts between rounds (a VM's host): a contender's CPU is compared with the raw loop's of the
// same round, and the table gives each round's multiple.
const raw = results.get("raw");
const timesRaw = (rows, key) => (raw ? ` | ${rows.map((r, i) => `${f(r[key] / raw[i][key], 1)}×`).join(", ")}` : "");
const steadyHead = values.steady ? ` steady CPU per call (2N − N) |${raw ? " ÷ raw's |" : ""}` : "";
console.log(
  `| contender | ratio of ideal | CPU per model call | memory per loop | first request |${raw ? " CPU ÷ raw's, per round |" : ""}${steadyHead}`,
);
console.log(`|---|---|---|---|---|${raw ? "---|" : ""}${values.steady ? `---|${raw ? "---|" : ""}` : ""}`);
for (const [name, rows] of results) {
  const m = (k) => median(rows.map((r) => r[k]));
  const steady = values.steady ? ` | ${f(m("steadyCpuPerCallMs"), 2)} ms${timesRaw(rows, "steadyCpuPerCallMs")}` : "";
  console.log(
    `| ${name} | ${f(m("ratio"), 3)} | ${f(m("cpuPerCallMs"), 2)} ms | ${f(m("mbPerLoop"), 3)} MB | ${f(m("firstRequestS"), 2)} s${timesRaw(rows, "cpuPerCallMs")}${steady} |`,
  );
}
console.log(
  `\n${tasks} tasks, ${concurrency} loops, ${latencyMs} ms latency, ${turns + 1} calls per task, ${rounds} rounds (medians); load ${(await import("node:os")).loadavg()[0].toFixed(2)}`,
);
