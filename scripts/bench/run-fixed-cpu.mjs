#!/usr/bin/env node
/**
 * The fixed cost of one `hermes-batch run`: CPU (user + sys of the CLI and every child it waited for) and wall
 * time of the scripted demo over datasets/smoke.jsonl (8 tasks in local sandboxes, no model server), which is
 * mostly start-up and shut-down. With --cli-before, two builds alternate in each round, so the machine's load
 * hits both alike: compare the ratios, not the absolute figures.
 *   node scripts/bench/run-fixed-cpu.mjs [--cli dist/src/cli.js] [--cli-before /tmp/before/dist/src/cli.js]
 *        [--rounds 5] [--dataset datasets/smoke.jsonl]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { procCpu } from "./proc_cpu.mjs";

const ROOT = resolve(import.meta.dirname, "..", "..");
const USAGE =
  "usage: node scripts/bench/run-fixed-cpu.mjs [--cli FILE] [--cli-before FILE] [--rounds N] [--dataset FILE]\n";
let values;
try {
  ({ values } = parseArgs({
    options: {
      cli: { type: "string", default: join(ROOT, "dist", "src", "cli.js") },
      "cli-before": { type: "string" },
      rounds: { type: "string", default: "5" },
      dataset: { type: "string", default: join(ROOT, "datasets", "smoke.jsonl") },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (err) {
  process.stderr.write(`run-fixed-cpu: ${err.message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write(`run-fixed-cpu: --rounds ${values.rounds}: give a whole number ≥ 1\n`);
  process.exit(2);
}
const contenders = [["after", resolve(values.cli)]];
if (values["cli-before"]) contenders.push(["before", resolve(values["cli-before"])]);

const out = mkdtempSync(join(tmpdir(), "run-fixed-cpu-"));
/** One run: CPU of the process tree (from this process's waited-for children counters) and wall time, s. */
function once(cli, name) {
  const before = procCpu(process.pid);
  const started = performance.now();
  const r = spawnSync(
    process.execPath,
    [cli, "run", values.dataset, "--model", "scripted", "--output-dir", out, "--run-name", name],
    { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" },
  );
  const wall = (performance.now() - started) / 1000;
  const after = procCpu(process.pid);
  if (r.status !== 0) throw new Error(`${cli} exited ${r.status}: ${r.stderr.trim().split("\n").pop()}`);
  return { cpu: (after.childrenMs - before.childrenMs) / 1000, wall };
}

const results = new Map(contenders.map(([name]) => [name, []]));
try {
  for (let round = 1; round <= rounds; round++) {
    for (const [name, cli] of contenders) {
      const r = once(cli, `${name}-${round}`);
      results.get(name).push(r);
      console.log(`round ${round} ${name}: CPU ${r.cpu.toFixed(2)} s, wall ${r.wall.toFixed(2)} s`);
    }
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, rs] of results) {
  console.log(
    `${name}: median CPU ${median(rs.map((r) => r.cpu)).toFixed(2)} s, wall ${median(rs.map((r) => r.wall)).toFixed(2)} s`,
  );
}
if (results.size === 2) {
  const ratio = (k) => median(results.get("after").map((r) => r[k])) / median(results.get("before").map((r) => r[k]));
  console.log(`after / before: CPU ${ratio("cpu").toFixed(2)}, wall ${ratio("wall").toFixed(2)}`);
}
