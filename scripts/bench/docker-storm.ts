/**
 * A start storm (issue 13, item 5): the real CLI runs N Docker tasks at --concurrency N, all asking for
 * their container at once; each task runs one command (`true`) and answers. The model is
 * scripts/bench/model-server.mjs in its own process. Reports failed tasks (target: none), the engine
 * retries and start slow-downs from events.log, the peak of live containers, and how fast sandboxes came.
 * Needs `npm run build`, the engine and the test image.
 *   npx tsx scripts/bench/docker-storm.ts [--tasks 256] [--image hermes-batch-test:busybox] [--workers 2]
 * Exit 0: no task failed; 1: some failed; 2: the benchmark itself failed.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { listLabelledContainers, removeContainersByLabel } from "../../tools/environments/docker/docker.js";

const { values: args } = parseArgs({
  options: {
    tasks: { type: "string", default: "256" },
    image: { type: "string", default: "hermes-batch-test:busybox" },
    workers: { type: "string", default: "2" },
    "latency-ms": { type: "string", default: "50" },
  },
});
const tasks = Number(args.tasks);
const ROOT = resolve(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "src", "cli.js");
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

async function startModelServer(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, "scripts", "bench", "model-server.mjs"),
      "--latency-ms",
      args["latency-ms"]!,
      "--turns",
      "1",
      "--timeout-s",
      "3600",
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const line = await new Promise<string>((res, rej) => {
    createInterface({ input: child.stdout! }).once("line", res);
    child.once("exit", (code) => rej(new Error(`model server exited (${code})`)));
  });
  const { port } = JSON.parse(line) as { port: number };
  return { url: `http://127.0.0.1:${port}/v1`, stop: () => child.kill("SIGTERM") };
}

function readJsonl(path: string): { task_id: string; outcome: string; error?: string }[] {
  return existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
}

const dir = mkdtempSync(join(tmpdir(), "hb-bench-storm-"));
const runName = `storm-${process.pid}`;
let server: { url: string; stop: () => void } | undefined;
try {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: npm run build first`);
  server = await startModelServer();
  const dataset = join(dir, "d.jsonl");
  writeFileSync(
    dataset,
    Array.from({ length: tasks }, (_, i) => JSON.stringify({ id: `s${i}`, prompt: `storm task ${i}` })).join("\n") +
      "\n",
  );
  console.log(
    `start storm: ${tasks} docker tasks at --concurrency ${tasks}, image ${args.image}, ${args.workers} workers; ${cpus().length} cores, load average ${load()}`,
  );

  const started = performance.now();
  const cli = spawn(
    process.execPath,
    [
      CLI,
      "run",
      dataset,
      "--model",
      "bench",
      "--base-url",
      server.url,
      "--api-key",
      "bench",
      "--env",
      "docker",
      "--image",
      args.image!,
      "--toolsets",
      "terminal",
      "--concurrency",
      String(tasks),
      "--max-connections",
      String(tasks),
      "--workers",
      args.workers!,
      "--run-name",
      runName,
      "--output-dir",
      join(dir, "runs"),
      "--approval",
      "allow",
      "--progress",
      "none",
      "--no-preflight",
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  cli.stdout!.on("data", (b: Buffer) => (output += b.toString()));
  cli.stderr!.on("data", (b: Buffer) => (output += b.toString()));
  const exited = new Promise<number | null>((res) => cli.once("exit", (code) => res(code)));

  let peak = 0;
  let allUpAt: number | undefined;
  let running = true;
  const sampler = (async () => {
    while (running) {
      const live = (await listLabelledContainers({ run: runName }).catch(() => [])).filter(
        (c) => c.role !== "probe" && c.state === "running",
      ).length;
      peak = Math.max(peak, live);
      if (live >= tasks && allUpAt === undefined) allUpAt = performance.now() - started;
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const code = await exited;
  const wallS = (performance.now() - started) / 1000;
  running = false;
  await sampler;

  const runDir = join(dir, "runs", runName);
  const done = readJsonl(join(runDir, "trajectories.jsonl"));
  const failed = readJsonl(join(runDir, "failed.jsonl"));
  const events = existsSync(join(runDir, "events.log")) ? readFileSync(join(runDir, "events.log"), "utf8") : "";
  const retries = events.split("\n").filter((l) => l.includes("sandbox start attempt"));
  const widest = Math.max(0, ...retries.map((l) => Number(/starts now (\d+) ms apart/.exec(l)?.[1] ?? 0)));
  const left = await listLabelledContainers({ run: runName });

  console.log(`  CLI exit ${code}, wall ${wallS.toFixed(1)} s (${(tasks / wallS).toFixed(1)} tasks/s end to end)`);
  console.log(`  completed ${done.filter((e) => e.outcome === "completed").length}, failed ${failed.length}`);
  for (const f of failed.slice(0, 5)) console.log(`    ${f.task_id}: ${f.outcome}: ${f.error ?? ""}`);
  console.log(
    `  peak running containers ${peak}${allUpAt !== undefined ? `, all ${tasks} up after ${(allUpAt / 1000).toFixed(1)} s` : ""}`,
  );
  console.log(`  engine retries ${retries.length}${retries.length ? `, widest start spacing ${widest} ms` : ""}`);
  for (const l of retries.slice(0, 3)) console.log(`    ${l}`);
  console.log(`  containers left after the run: ${left.length}`);
  console.log(`  load average after: ${load()}`);
  if (code !== 0 && code !== 1) console.log(output.split("\n").slice(-15).join("\n"));
  if (done.length + failed.length !== tasks)
    throw new Error(`expected ${tasks} results, got ${done.length + failed.length}`);
  process.exitCode = failed.length === 0 && left.length === 0 ? 0 : 1;
} catch (err) {
  console.error(`benchmark failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
} finally {
  server?.stop();
  await removeContainersByLabel({ run: runName }).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
