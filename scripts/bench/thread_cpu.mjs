/**
 * CPU of one `hermes-batch run` split by thread, from /proc/PID/task/TID/stat (on-CPU time, exact, no sampling):
 * the main thread, each worker thread and V8's background threads (TurboFan, concurrent marking, parallel
 * scavenge). Runs the built CLI against scripts/bench/model-server.mjs (its own process: `--turns` `todo` calls
 * then an answer) on a dataset of --tasks rows, and prints one JSON line per round.
 *
 *   node scripts/bench/thread_cpu.mjs [--cli dist/src/cli.js] [--tasks 2048] [--concurrency 256]
 *        [--latency-ms 200] [--turns 2] [--rounds 1] [--node-args "--cpu-prof"] [--keep] [-- extra run flags]
 *
 * Threads are told apart by start order: the first is the main thread; the busiest of the rest that started
 * after the main thread's own helpers are the workers. `threads` lists every thread's CPU in ms by tid order.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      cli: { type: "string", default: join(ROOT, "dist", "src", "cli.js") },
      tasks: { type: "string", default: "2048" },
      concurrency: { type: "string", default: "256" },
      "latency-ms": { type: "string", default: "200" },
      turns: { type: "string", default: "2" },
      rounds: { type: "string", default: "1" },
      "node-args": { type: "string", default: "" },
      keep: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
} catch (err) {
  process.stderr.write(`thread_cpu: ${err.message}\n`);
  process.exit(2);
}
const { values, positionals } = parsed;
if (values.help) {
  process.stdout.write(
    readFileSync(fileURLToPath(import.meta.url), "utf8")
      .split("*/")[0]
      .replace(/^\/\*\*|^ \* ?/gm, ""),
  );
  process.exit(0);
}
for (const name of ["tasks", "concurrency", "latency-ms", "turns", "rounds"]) {
  if (!/^[1-9]\d*$/.test(values[name])) {
    process.stderr.write(`thread_cpu: --${name} must be a positive integer, got ${values[name]}\n`);
    process.exit(2);
  }
}

function startServer() {
  const server = spawn(
    process.execPath,
    [join(HERE, "model-server.mjs"), "--latency-ms", values["latency-ms"], "--turns", values.turns],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((res) => server.stdout.once("data", (l) => res({ server, port: JSON.parse(l).port })));
}

/** Every thread's CPU (ms) of a live process, keyed by tid. */
function threadCpu(pid, into) {
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      into.set(Number(tid), (Number(f[11]) + Number(f[12])) * 10); // utime + stime, USER_HZ 100
    }
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return undefined;
  }
}

async function round() {
  const { server, port } = await startServer();
  const dir = mkdtempSync(join(tmpdir(), "hb-threads-"));
  const dataset = join(dir, "d.jsonl");
  const rows = Array.from({ length: Number(values.tasks) }, (_, i) =>
    JSON.stringify({ id: `t${i}`, prompt: `task ${i}` }),
  );
  writeFileSync(dataset, `${rows.join("\n")}\n`);
  const argv = [
    ...values["node-args"].split(" ").filter(Boolean),
    resolve(values.cli),
    "run",
    dataset,
    ...["--model", "bench", "--base-url", `http://127.0.0.1:${port}/v1`, "--api-key", "k", "--toolsets", "todo"],
    ...["--concurrency", values.concurrency, "--progress", "none", "--output-dir", dir, "--run-name", "r"],
    ...positionals,
  ];
  const started = Date.now();
  const child = spawn(process.execPath, argv, { stdio: ["ignore", "ignore", "inherit"] });
  const threads = new Map();
  let hwmKb = 0;
  const poll = setInterval(() => {
    hwmKb = Math.max(hwmKb, threadCpu(child.pid, threads) ?? 0);
  }, 10);
  const code = await new Promise((res) => child.once("exit", res));
  clearInterval(poll);
  const wallMs = Date.now() - started;
  const stats = await (await fetch(`http://127.0.0.1:${port}/stats`)).json();
  server.kill();
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
  const byTid = [...threads.entries()].sort((a, b) => a[0] - b[0]);
  const [main, ...rest] = byTid;
  const workers = Number((positionals.join(" ").match(/--workers[ =](\d+)/) ?? [])[1] ?? 1);
  // Threads started after V8's platform threads are node's worker threads: the busiest `workers` of them.
  const late = rest.filter(([tid]) => tid > rest[0][0] + 3).sort((a, b) => b[1] - a[1]);
  const workerTids = new Set(late.slice(0, workers).map(([tid]) => tid));
  const sum = (xs) => xs.reduce((a, [, ms]) => a + ms, 0);
  const total = sum(byTid);
  return {
    exit: code,
    wallMs,
    requests: stats.requests,
    cpuMs: total,
    cpuPerCallMs: Number((total / stats.requests).toFixed(3)),
    mainMs: main[1],
    workerMs: sum(rest.filter(([tid]) => workerTids.has(tid))),
    otherMs: sum(rest.filter(([tid]) => !workerTids.has(tid))),
    peakRssMb: Math.round(hwmKb / 1024),
    ...(values.keep ? { dir } : {}),
    threads: byTid.filter(([, ms]) => ms > 0).map(([, ms]) => ms),
  };
}

for (let i = 0; i < Number(values.rounds); i++) console.log(JSON.stringify(await round()));
