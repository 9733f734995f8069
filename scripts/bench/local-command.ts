/**
 * The command path of the local sandbox (issue 13, item 1): CPU per `echo` command run through a task's
 * sandbox (this process plus every process of the sandbox), against the floor measured in the same run: a small
 * process (bash) spawning /bin/true, per spawn. Target: ratio ≤ 1.5. Needs bwrap.
 *   npx tsx scripts/bench/local-command.ts [N] [--rounds R] [--compare DIR]
 * The sandbox's CPU comes from a cpuacct cgroup this process joins (its sandboxes' processes inherit it; root
 * only) less this process's own, else from /proc (the sandbox's init and shell with their waited-for children,
 * in 10 ms ticks). Each round measures the floor again, then N commands in a fresh sandbox.
 * --compare DIR: a checkout of another revision (its sources; node_modules from here), measured in alternation
 * with this one, rounds interleaved, so before and after share the machine's load.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { SandboxEnvironment } from "../../tools/environments/local/local_sandbox.js";
import { procCpu } from "./proc_cpu.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: "string", default: "1" }, compare: { type: "string" } },
});
const n = Number(positionals[0] ?? 400);
const rounds = Number(values.rounds);
if (!Number.isInteger(n) || n < 1 || !Number.isInteger(rounds) || rounds < 1) {
  console.error("usage: local-command.ts [N] [--rounds R] [--compare DIR] (N and R whole numbers)");
  process.exit(2);
}
type Sandboxes = typeof SandboxEnvironment;
const sides: { label: string; Sandbox: Sandboxes }[] = [{ label: "this", Sandbox: SandboxEnvironment }];
if (values.compare !== undefined) {
  const module = join(resolve(values.compare), "tools", "environments", "local", "local_sandbox.ts");
  if (!existsSync(module)) {
    console.error(`--compare: ${values.compare} holds no tools/environments/local/local_sandbox.ts`);
    process.exit(2);
  }
  sides.push({
    label: "compare",
    Sandbox: ((await import(module)) as { SandboxEnvironment: Sandboxes }).SandboxEnvironment,
  });
}

function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** A cpuacct cgroup holding this process (and so every sandbox it starts), when one can be made. */
function joinCpuacct(): (() => number) | undefined {
  const root = "/sys/fs/cgroup/cpuacct";
  const dir = join(root, `hermes-bench-command-${process.pid}`);
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, "cgroup.procs"), String(process.pid));
  } catch {
    return undefined;
  }
  // Everything still in it (this process, its spawn helper) goes back to the root first, or rmdir fails.
  process.once("exit", () => {
    try {
      for (const pid of readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean))
        writeFileSync(join(root, "cgroup.procs"), pid);
      rmdirSync(dir);
    } catch {
      // left for the system
    }
  });
  return () => Number(readFileSync(join(dir, "cpuacct.usage"), "utf8")) / 1e6;
}
const groupMs = joinCpuacct();

/** CPU ms per spawn of /bin/true from a bash loop (bash's `times`: its own and its children's). */
function floor(count: number): number {
  const r = spawnSync("bash", ["-c", `for ((i = 0; i < ${count}; i++)); do /bin/true; done; times`], {
    encoding: "utf8",
  });
  const seconds = [...r.stdout.matchAll(/(\d+)m([\d.]+)s/g)].reduce((a, m) => a + Number(m[1]) * 60 + Number(m[2]), 0);
  return (seconds * 1000) / count;
}

async function perCommand(
  Sandbox: Sandboxes,
  count: number,
): Promise<{ harness: number; sandbox: number; wall: number }> {
  const root = mkdtempSync(join(tmpdir(), "hb-bench-local-"));
  const env = await Sandbox.create(
    { runName: "bench", taskId: "t", hostTaskDir: join(root, "t") },
    { removeTaskDirOnCleanup: true },
  );
  try {
    for (let i = 0; i < 10; i++) await env.exec("echo warm");
    const fromProc = () =>
      env.processes().reduce((a, p) => {
        const cpu = procCpu(p);
        return a + (cpu ? cpu.selfMs + cpu.childrenMs : 0);
      }, 0);
    const sandboxMs = groupMs ? () => groupMs() - selfCpuMs() : fromProc;
    const c0 = selfCpuMs();
    const s0 = sandboxMs();
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      const r = await env.exec("echo x");
      if (r.stdout !== "x\n") throw new Error(`unexpected output ${JSON.stringify(r)}`);
    }
    const wall = (performance.now() - t0) / count;
    return { harness: (selfCpuMs() - c0) / count, sandbox: (sandboxMs() - s0) / count, wall };
  } finally {
    await env.cleanup();
    rmSync(root, { recursive: true, force: true });
  }
}

console.log(
  `local sandbox, ${n} sequential 'echo x' commands per round; sandbox CPU from ${groupMs ? "a cpuacct cgroup" : "/proc (10 ms ticks)"}`,
);
const ratios = new Map(sides.map((s) => [s.label, [] as number[]]));
for (let r = 0; r < rounds; r++) {
  for (const side of r % 2 ? [...sides].reverse() : sides) {
    const floorMs = floor(n);
    const m = await perCommand(side.Sandbox, n);
    const ratio = (m.harness + m.sandbox) / floorMs;
    ratios.get(side.label)!.push(ratio);
    console.log(
      `  ${sides.length > 1 ? `${side.label.padEnd(8)}` : ""}floor ${floorMs.toFixed(3)} ms per /bin/true spawn; command ${(m.harness + m.sandbox).toFixed(3)} ms ` +
        `(harness ${m.harness.toFixed(3)}, sandbox ${m.sandbox.toFixed(3)}), ${m.wall.toFixed(3)} ms wall: ${ratio.toFixed(2)}x`,
    );
  }
}
for (const [label, rs] of ratios) {
  const sorted = [...rs].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(
    `${sides.length > 1 ? `${label}: ` : ""}ratio: median ${median.toFixed(2)}x the floor (range ${sorted[0]!.toFixed(2)}-${sorted.at(-1)!.toFixed(2)}; target <= 1.5) ${median <= 1.5 ? "MET" : "MISSED"}`,
  );
}
