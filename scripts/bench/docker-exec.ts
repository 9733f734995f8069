/**
 * Per-command latency of the Docker backend: persistent shell vs one exec per command, sandbox start-up,
 * and environment creation from a filled warm pool (`--prewarm`) against a cold start. Needs the engine
 * and the test image (scripts/start-dockerd.sh, scripts/build-test-image.sh).
 *   npx tsx scripts/bench/docker-exec.ts [IMAGE] [N]
 */
import { createDockerEnvironment, drainWarmPool, preflightDocker, warmPoolStats, type DockerEnvironment } from "../../tools/environments/docker.js";

const image = process.argv[2] ?? "hermes-batch-test:bookworm";
const n = Number(process.argv[3] ?? 30);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function measure(persistentShell: boolean): Promise<{ start: number; exec: number; p90: number }> {
  const t0 = performance.now();
  const env = (await createDockerEnvironment(
    { runName: "bench", taskId: `bench-${persistentShell}`, hostTaskDir: "/tmp/hermes-bench", taskTimeoutSec: 600 },
    { image, persistentShell },
  )) as DockerEnvironment;
  const start = performance.now() - t0;
  try {
    for (let i = 0; i < 3; i++) await env.exec("true"); // warm-up (starts the persistent shell)
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      const r = await env.exec("echo $((1+1))");
      times.push(performance.now() - t);
      if (r.stdout !== "2\n") throw new Error(`unexpected output ${JSON.stringify(r)}`);
    }
    const sorted = [...times].sort((a, b) => a - b);
    return { start, exec: median(times), p90: sorted[Math.floor(sorted.length * 0.9)]! };
  } finally {
    await env.cleanup();
  }
}

/** Median creation time of an environment, cold and from a warm pool that was filled before the ask. */
async function measureWarm(rounds: number): Promise<{ cold: number; warm: number }> {
  const spec = (t: string) => ({ runName: "bench-warm", taskId: t, hostTaskDir: "/tmp/hermes-bench", taskTimeoutSec: 600 });
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < rounds; i++) {
    let t = performance.now();
    const c = await createDockerEnvironment(spec(`cold-${i}`), { image });
    cold.push(performance.now() - t);
    await c.cleanup();

    await preflightDocker(spec(`warm-${i}`), { image, prewarm: 1 });
    while ((warmPoolStats()?.ready ?? 0) < 1) await new Promise((r) => setTimeout(r, 20));
    t = performance.now();
    const w = await createDockerEnvironment(spec(`warm-${i}`), { image, prewarm: 1 });
    warm.push(performance.now() - t);
    await w.cleanup();
  }
  await drainWarmPool();
  return { cold: median(cold), warm: median(warm) };
}

const plain = await measure(false);
const shell = await measure(true);
const f = (x: number) => `${x.toFixed(1)} ms`;
console.log(`image ${image}, ${n} commands each (median / p90)`);
console.log(`sandbox start (image check, create, start): ${f(plain.start)} / ${f(shell.start)}`);
console.log(`one exec per command: ${f(plain.exec)} / ${f(plain.p90)}`);
console.log(`persistent shell:     ${f(shell.exec)} / ${f(shell.p90)}`);
console.log(`ratio (exec / persistent shell): ${(plain.exec / shell.exec).toFixed(1)}x`);
const pool = await measureWarm(5);
console.log(`environment creation, median of 5: cold ${f(pool.cold)}, from a filled warm pool ${f(pool.warm)}`);
