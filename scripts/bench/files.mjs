/**
 * The run files at scale (issue "Speed", item 4): over a synthetic run of N tasks (default 100,000),
 * - resume: `run --resume --dry-run` reading the whole trajectories.jsonl back (target ≤ 2 s), beside the same
 *   command on a run with no results (the CLI's own start-up and dataset read, for reference);
 * - writer: the run's JSONL appender writing N real lines with batched fsync (target ≥ 10,000 lines/s);
 * - compare: `compare A B` over two runs of N tasks (target ≤ 10 s);
 * - report: `report RUN -o FILE` over N tasks (target ≤ 10 s).
 * Needs `npm run build`. Usage: node scripts/bench/files.mjs [N] [MAX_TURNS (default 6)]
 * Exit 0 when every target is met, 1 when one is missed.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { trajectoryLines, writeSyntheticDataset, writeSyntheticRun } from "./synthetic_run.mjs";

const N = Number(process.argv[2] ?? 100_000);
const MAX_TURNS = Math.max(2, Number(process.argv[3] ?? 6));
const root = resolve(import.meta.dirname, "..", "..");
const cli = join(root, "dist", "src", "cli.js");
const work = mkdtempSync(join(tmpdir(), "hb-bench-files-"));
const runs = join(work, "runs");
const mb = (n) => (n / 1048576).toFixed(0);

function timed(args) {
  const t0 = performance.now();
  execFileSync("node", [cli, ...args], { stdio: ["ignore", "ignore", "inherit"], cwd: work });
  return (performance.now() - t0) / 1000;
}

try {
  process.stdout.write(`writing a synthetic run of ${N} tasks (2–${MAX_TURNS} turns)…\n`);
  const trajA = writeSyntheticRun(join(runs, "bench"), { n: N, minTurns: 2, maxTurns: MAX_TURNS, runName: "bench" });
  writeSyntheticRun(join(runs, "bench-b"), { n: N, minTurns: 2, maxTurns: MAX_TURNS, variant: 1, runName: "bench-b" });
  const dataset = join(work, "bench.jsonl");
  writeSyntheticDataset(dataset, N);
  const size = statSync(trajA).size;

  const common = ["--model", "scripted", "--output-dir", runs, "--dry-run", "--progress", "none"];
  const resumeS = timed(["run", dataset, "--run-name", "bench", "--resume", "--allow-config-change", ...common]);
  const freshS = timed(["run", dataset, "--run-name", "fresh", ...common]);

  const { JsonlAppender } = await import(join(root, "dist", "src", "store", "jsonl_file.js"));
  const { traj } = trajectoryLines({ n: N, minTurns: 2, maxTurns: MAX_TURNS, variant: 2 });
  const appender = new JsonlAppender(join(work, "writer.jsonl"));
  const w0 = performance.now();
  for (const line of traj) appender.appendLine(line);
  appender.close?.();
  const writerS = (performance.now() - w0) / 1000;
  const linesPerS = traj.length / writerS;

  const compareS = timed(["compare", join(runs, "bench"), join(runs, "bench-b"), "--max-drop", "100"]);
  const reportS = timed(["report", join(runs, "bench"), "-o", join(work, "report.html")]);

  const rows = [
    ["resume (run --resume --dry-run)", `${resumeS.toFixed(2)} s`, "≤ 2 s", resumeS / 2, resumeS <= 2],
    ["  same command, no results (start-up + dataset)", `${freshS.toFixed(2)} s`, "", null, true],
    [
      "writer (append + batched fsync)",
      `${Math.round(linesPerS)} lines/s`,
      "≥ 10,000 lines/s",
      10_000 / linesPerS,
      linesPerS >= 10_000,
    ],
    ["compare A B", `${compareS.toFixed(2)} s`, "≤ 10 s", compareS / 10, compareS <= 10],
    ["report -o FILE", `${reportS.toFixed(2)} s`, "≤ 10 s", reportS / 10, reportS <= 10],
  ];
  process.stdout.write(
    `\n${N} tasks, trajectories.jsonl ${mb(size)} MB, ${cpus().length} cores, node ${process.version}\n`,
  );
  process.stdout.write(`${"measure".padEnd(48)} ${"value".padStart(16)}  ${"target".padEnd(18)} cost/target\n`);
  for (const [name, value, target, ratio, ok] of rows) {
    process.stdout.write(
      `${name.padEnd(48)} ${value.padStart(16)}  ${target.padEnd(18)} ${ratio === null ? "" : `${ratio.toFixed(2)} ${ok ? "met" : "MISSED"}`}\n`,
    );
  }
  process.exitCode = rows.every((r) => r[4]) ? 0 : 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
