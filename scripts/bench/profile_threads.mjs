#!/usr/bin/env node
/**
 * Where a run's CPU goes, thread by thread: reads the `.cpuprofile` files of `node --cpu-prof --cpu-prof-dir DIR`
 * (one per thread: the main thread and each worker) and prints, per file, its busy time, the functions with the
 * most self time, and the inclusive time of the functions named with --fn (a function's time with everything
 * it calls, counted once per sample even when it recurses). --until MS keeps only the samples of the first MS
 * milliseconds after the earliest profile started (the threads of one process share the clock): start-up alone.
 *   node scripts/bench/profile_threads.mjs DIR [--top 20] [--until 700] [--fn runTask --fn writeRunReports]…
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = resolve(import.meta.dirname, "..", "..");
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: "string", default: "20" },
    until: { type: "string" },
    fn: { type: "string", multiple: true, default: [] },
  },
});
if (positionals.length !== 1) {
  process.stderr.write("usage: node scripts/bench/profile_threads.mjs DIR [--top N] [--fn NAME]…\n");
  process.exit(2);
}
const dir = resolve(positionals[0]);
const top = Number(values.top);
const untilUs = values.until === undefined ? Infinity : Number(values.until) * 1000;
const profiles = readdirSync(dir)
  .filter((x) => x.endsWith(".cpuprofile"))
  .sort()
  .map((file) => ({ file, prof: JSON.parse(readFileSync(join(dir, file), "utf8")) }));
const firstStart = Math.min(...profiles.map(({ prof }) => prof.startTime));

const frameKey = (cf) => {
  const url = cf.url.replace(/^file:\/\//, "").replace(ROOT + "/", "");
  return `${cf.functionName || "(anonymous)"}  ${url ? `${url}:${cf.lineNumber + 1}` : ""}`.trim();
};

function summarize({ file, prof }) {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map();
  const inclusiveUs = new Map(values.fn.map((f) => [f, 0]));
  let busy = 0;
  let idle = 0;
  let clock = prof.startTime;
  prof.samples.forEach((id, i) => {
    const us = prof.timeDeltas[i] ?? 0;
    clock += us;
    if (clock - firstStart > untilUs) return;
    const cf = byId.get(id).callFrame;
    if (cf.functionName === "(idle)") {
      idle += us;
      return;
    }
    busy += us;
    const k = frameKey(cf);
    selfUs.set(k, (selfUs.get(k) ?? 0) + us);
    if (!values.fn.length) return;
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const name = byId.get(at).callFrame.functionName;
      if (inclusiveUs.has(name) && !seen.has(name)) {
        seen.add(name);
        inclusiveUs.set(name, inclusiveUs.get(name) + us);
      }
    }
  });
  const pct = (us) => ((100 * us) / busy).toFixed(1).padStart(5);
  const ms = (us) => (us / 1000).toFixed(0).padStart(6);
  process.stdout.write(
    `${file} (started ${((prof.startTime - firstStart) / 1000).toFixed(0)} ms after the first): ${(busy / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle, ` +
      `${((prof.endTime - prof.startTime) / 1000).toFixed(0)} ms profiled\n  top self time:\n`,
  );
  for (const [k, us] of [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(`  ${pct(us)} % ${ms(us)} ms  ${k}\n`);
  if (values.fn.length) process.stdout.write("  inclusive:\n");
  for (const [k, us] of inclusiveUs) process.stdout.write(`  ${pct(us)} % ${ms(us)} ms  ${k}\n`);
}

for (const p of profiles) summarize(p);
