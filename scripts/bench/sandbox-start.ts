/**
 * The local sandbox's start and per-command cost (issue 23: the allow-listed root, the unreadable shell, the
 * cgroup of each sandbox must not make a task's start more than 20 ms slower at the median). For the sources of
 * a tree (this checkout by default, or another, e.g. a `git worktree` of an older commit with this checkout's
 * node_modules linked in), N sandboxes one after another: wall time from create() to the answer of its first
 * `echo x` (a task's first terminal call), then M more commands each; median and p90. Needs bwrap.
 *   npx tsx scripts/bench/sandbox-start.ts [--tree DIR] [--disk SIZE] [N] [M]
 * `--disk SIZE` gives each task folder its file system of that size (the run's default is 10g; the bench's none).
 * Before/after, interleaved:
 *   git worktree add /tmp/hb-before <commit> && ln -s "$PWD/node_modules" /tmp/hb-before/node_modules
 *   for i in 1 2 3; do npx tsx scripts/bench/sandbox-start.ts --tree /tmp/hb-before 40; npx tsx scripts/bench/sandbox-start.ts 40; done
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const treeAt = args.indexOf("--tree");
const tree = resolve(treeAt >= 0 ? args.splice(treeAt, 2)[1]! : join(import.meta.dirname, "..", ".."));
const diskAt = args.indexOf("--disk");
const disk = diskAt >= 0 ? args.splice(diskAt, 2)[1] : undefined;
const options = { removeTaskDirOnCleanup: true, ...(disk !== undefined ? { disk } : {}) };
const n = Number(args[0] ?? 40);
const m = Number(args[1] ?? 20);

const { SandboxEnvironment } = await import(
  pathToFileURL(join(tree, "tools", "environments", "local_sandbox.ts")).href
);

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

const root = mkdtempSync(join(tmpdir(), "hb-bench-start-"));
const starts: number[] = [];
const commands: number[] = [];
try {
  // One unmeasured sandbox first: the thread's spawn helper, the shell copy and the probe are made once per thread.
  const warm = await SandboxEnvironment.create(
    { runName: "bench", taskId: "warm", hostTaskDir: join(root, "warm") },
    options,
  );
  await warm.exec("echo x");
  await warm.cleanup();
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const env = await SandboxEnvironment.create(
      { runName: "bench", taskId: `t${i}`, hostTaskDir: join(root, `t${i}`) },
      options,
    );
    const first = await env.exec("echo x");
    starts.push(performance.now() - t0);
    if (first.stdout !== "x\n") throw new Error(`unexpected output: ${JSON.stringify(first)}`);
    for (let j = 0; j < m; j++) {
      const c0 = performance.now();
      await env.exec("echo x");
      commands.push(performance.now() - c0);
    }
    await env.cleanup();
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
const f = (x: number) => x.toFixed(1);
console.log(
  `${tree}${disk !== undefined ? ` --disk ${disk}` : ""}: start to first answer p50 ${f(quantile(starts, 0.5))} ms, p90 ${f(quantile(starts, 0.9))} ms (n=${n}); ` +
    `per command p50 ${f(quantile(commands, 0.5))} ms, p90 ${f(quantile(commands, 0.9))} ms (n=${commands.length}); load ${(await import("node:os")).loadavg()[0]!.toFixed(2)}`,
);
