/**
 * The Docker backend's speed (issue 13, items 1 and 5), in one run. Needs the engine and the test image
 * (scripts/start-dockerd.sh, scripts/build-test-image.sh); the image must have bash (for the floor's clock).
 *
 * 1. Command round trip of `echo x`, three ways, interleaved over ROUNDS rounds so that load drifting on a
 *    shared machine hits all three alike:
 *    - harness: `DockerEnvironment.exec("echo x")` through the persistent shell, median of every sample;
 *    - floor: an in-container fork+exec: one bash inside the same container runs `/bin/true` N times in a loop
 *      and reads its clock ($EPOCHREALTIME) before and after; wall time per iteration, median of the rounds.
 *      That is what a shell pays to fork, exec and reap the smallest program, with no engine in the way;
 *    - CLI: `docker exec CONTAINER echo x` spawned from this process, median of every sample.
 *    Targets: harness ≤ 1.5× the floor, harness ≤ 10 % of the CLI.
 * 2. One exec per command against the persistent shell (`echo $((1+1))`), median / p90.
 * 3. Environment start (image check, create, start; what a task waits for) p50 / p90, cold and from a filled
 *    warm pool (`--prewarm`).
 *
 *   npx tsx scripts/bench/docker-exec.ts [--image IMAGE] [--n N] [--rounds R] [--start-rounds S]
 * Exit 0: both round-trip targets met; 1: a target missed; 2: the benchmark itself failed.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { parseArgs } from "node:util";
import {
  createDockerEnvironment,
  drainWarmPool,
  preflightDocker,
  warmPoolStats,
  type DockerEnvironment,
} from "../../tools/environments/docker/docker.js";

const { values: args } = parseArgs({
  options: {
    image: { type: "string", default: "hermes-batch-test:bookworm" },
    n: { type: "string", default: "200" },
    rounds: { type: "string", default: "5" },
    "start-rounds": { type: "string", default: "20" },
  },
});
const image = args.image!;
const n = Number(args.n);
const rounds = Number(args.rounds);
const startRounds = Number(args["start-rounds"]);
const cliPerRound = Math.max(5, Math.round(n / 20));
const TARGET_FLOOR_RATIO = 1.5;
const TARGET_CLI_SHARE = 0.1;
const run = promisify(execFile);

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
}
const median = (xs: number[]) => quantile(xs, 0.5);
const ms = (x: number) => `${x.toFixed(2)} ms`;

function spec(taskId: string, runName = "bench") {
  return { runName, taskId, hostTaskDir: "/tmp/hermes-bench", taskTimeoutSec: 600 };
}

async function harnessSamples(env: DockerEnvironment, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const r = await env.exec("echo x");
    times.push(performance.now() - t);
    if (r.stdout !== "x\n" || r.exitCode !== 0) throw new Error(`unexpected result of 'echo x': ${JSON.stringify(r)}`);
  }
  return times;
}

/** Wall time per `/bin/true` in a bash loop inside the container, by the container's own clock. */
async function floorSample(env: DockerEnvironment, count: number): Promise<number> {
  const r = await env.exec(
    `[ -n "$EPOCHREALTIME" ] || exit 9; s=$EPOCHREALTIME; for ((i = 0; i < ${count}; i++)); do /bin/true; done; echo "$s $EPOCHREALTIME"`,
  );
  if (r.exitCode === 9)
    throw new Error(`the floor needs bash in the image (${image} has none): pass --image with bash`);
  const m = /^(\d+)[.,](\d+) (\d+)[.,](\d+)\n$/.exec(r.stdout);
  if (!m) throw new Error(`unexpected floor output ${JSON.stringify(r)}`);
  const seconds = (whole: string, frac: string) => Number(whole) + Number(`0.${frac}`);
  return ((seconds(m[3]!, m[4]!) - seconds(m[1]!, m[2]!)) * 1000) / count;
}

async function cliSamples(containerId: string, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const { stdout } = await run("docker", ["exec", containerId, "echo", "x"]);
    times.push(performance.now() - t);
    if (stdout !== "x\n") throw new Error(`unexpected docker exec output ${JSON.stringify(stdout)}`);
  }
  return times;
}

async function roundTrip(): Promise<{ harness: number; floor: number; cli: number; floors: number[] }> {
  const env = (await createDockerEnvironment(spec("round-trip"), { image })) as DockerEnvironment;
  try {
    await harnessSamples(env, 20); // warm-up: starts the persistent shell
    await cliSamples(env.containerId, 2);
    const harness: number[] = [];
    const floors: number[] = [];
    const cli: number[] = [];
    for (let r = 0; r < rounds; r++) {
      floors.push(await floorSample(env, n));
      harness.push(...(await harnessSamples(env, n)));
      cli.push(...(await cliSamples(env.containerId, cliPerRound)));
    }
    return { harness: median(harness), floor: median(floors), cli: median(cli), floors };
  } finally {
    await env.cleanup();
  }
}

async function perCommand(persistentShell: boolean): Promise<{ median: number; p90: number }> {
  const env = (await createDockerEnvironment(spec(`per-command-${persistentShell}`), {
    image,
    persistentShell,
  })) as DockerEnvironment;
  try {
    for (let i = 0; i < 3; i++) await env.exec("true");
    const times: number[] = [];
    for (let i = 0; i < 40; i++) {
      const t = performance.now();
      const r = await env.exec("echo $((1+1))");
      times.push(performance.now() - t);
      if (r.stdout !== "2\n") throw new Error(`unexpected output ${JSON.stringify(r)}`);
    }
    return { median: median(times), p90: quantile(times, 0.9) };
  } finally {
    await env.cleanup();
  }
}

/** Environment creation times, cold and from a warm pool filled before each ask. */
async function starts(count: number): Promise<{ cold: number[]; warm: number[] }> {
  const cold: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const env = await createDockerEnvironment(spec(`cold-${i}`, "bench-start"), { image });
    cold.push(performance.now() - t);
    await env.cleanup();
  }
  const warm: number[] = [];
  for (let i = 0; i < count; i++) {
    await preflightDocker(spec(`warm-${i}`, "bench-start"), { image, prewarm: 1 });
    while ((warmPoolStats()?.ready ?? 0) < 1) await new Promise((r) => setTimeout(r, 20));
    const t = performance.now();
    const env = await createDockerEnvironment(spec(`warm-${i}`, "bench-start"), { image, prewarm: 1 });
    warm.push(performance.now() - t);
    await env.cleanup();
  }
  await drainWarmPool();
  return { cold, warm };
}

try {
  const { loadavg, cpus } = await import("node:os");
  console.log(
    `docker backend, image ${image}; ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );

  const rt = await roundTrip();
  const floorRatio = rt.harness / rt.floor;
  const cliShare = rt.harness / rt.cli;
  const verdict = (ok: boolean) => (ok ? "MET" : "MISSED");
  console.log(
    `\n1. round trip of 'echo x' (${rounds} interleaved rounds: ${n} harness commands, a ${n}-iteration floor loop, ${cliPerRound} CLI calls each)`,
  );
  console.log(`   harness (persistent shell), median:        ${ms(rt.harness)}`);
  console.log(
    `   floor (in-container fork+exec of /bin/true): ${ms(rt.floor)}  (rounds: ${rt.floors.map((f) => f.toFixed(2)).join(", ")})`,
  );
  console.log(`   docker exec CLI, median:                    ${ms(rt.cli)}`);
  console.log(
    `   harness / floor: ${floorRatio.toFixed(2)}x (target <= ${TARGET_FLOOR_RATIO}) ${verdict(floorRatio <= TARGET_FLOOR_RATIO)}`,
  );
  console.log(
    `   harness / CLI:   ${(cliShare * 100).toFixed(1)} % (target <= ${TARGET_CLI_SHARE * 100} %) ${verdict(cliShare <= TARGET_CLI_SHARE)}`,
  );

  const plain = await perCommand(false);
  const shell = await perCommand(true);
  console.log(`\n2. 'echo $((1+1))', 40 commands each (median / p90)`);
  console.log(`   one exec per command: ${ms(plain.median)} / ${ms(plain.p90)}`);
  console.log(
    `   persistent shell:     ${ms(shell.median)} / ${ms(shell.p90)}  (${(plain.median / shell.median).toFixed(1)}x faster)`,
  );

  const s = await starts(startRounds);
  console.log(`\n3. environment start, ${startRounds} each (p50 / p90)`);
  console.log(`   cold (image check, create, start): ${ms(median(s.cold))} / ${ms(quantile(s.cold, 0.9))}`);
  console.log(`   from a filled warm pool (--prewarm): ${ms(median(s.warm))} / ${ms(quantile(s.warm, 0.9))}`);
  console.log(
    `\nload average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  process.exitCode = floorRatio <= TARGET_FLOOR_RATIO && cliShare <= TARGET_CLI_SHARE ? 0 : 1;
} catch (err) {
  console.error(`benchmark failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 2;
}
