/**
 * The command path of the local sandbox (issue 13, item 1): CPU per `echo` command run through a task's
 * sandbox (this process plus every process of the sandbox), against the floor measured in the same run: a small
 * process (bash) spawning /bin/true, per spawn. Target: ratio ≤ 1.5. Needs bwrap.
 *   npx tsx scripts/bench/local-command.ts [N]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SandboxEnvironment } from "../../tools/environments/local/local_sandbox.js";
import { procCpu } from "./proc_cpu.mjs";

const n = Number(process.argv[2] ?? 400);
/** CPU seconds of a process and its waited-for children, from /proc (0 when gone). */
function procCpuSeconds(pid: number): number {
  const cpu = procCpu(pid);
  return cpu ? (cpu.selfMs + cpu.childrenMs) / 1000 : 0;
}

function selfCpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** CPU per spawn of /bin/true from a bash loop (bash's `times`: its own and its children's). */
function floor(count: number): number {
  const r = spawnSync("bash", ["-c", `for ((i = 0; i < ${count}; i++)); do /bin/true; done; times`], {
    encoding: "utf8",
  });
  const seconds = [...r.stdout.matchAll(/(\d+)m([\d.]+)s/g)].reduce((a, m) => a + Number(m[1]) * 60 + Number(m[2]), 0);
  return seconds / count;
}

async function sandboxPerCommand(count: number): Promise<{ cpu: number; wallMs: number }> {
  const root = mkdtempSync(join(tmpdir(), "hb-bench-local-"));
  const env = await SandboxEnvironment.create(
    { runName: "bench", taskId: "t", hostTaskDir: join(root, "t") },
    { removeTaskDirOnCleanup: true },
  );
  try {
    for (let i = 0; i < 10; i++) await env.exec("echo warm");
    const sandboxCpu = () => env.processes().reduce((a, p) => a + procCpuSeconds(p), 0);
    const c0 = selfCpu();
    const s0 = sandboxCpu();
    const t0 = performance.now();
    for (let i = 0; i < count; i++) {
      const r = await env.exec("echo x");
      if (r.stdout !== "x\n") throw new Error(`unexpected output ${JSON.stringify(r)}`);
    }
    const wallMs = (performance.now() - t0) / count;
    const cpu = (selfCpu() - c0 + (sandboxCpu() - s0)) / count;
    return { cpu, wallMs };
  } finally {
    await env.cleanup();
    rmSync(root, { recursive: true, force: true });
  }
}

const floorCpu = floor(n);
const sandbox = await sandboxPerCommand(n);
const ratio = sandbox.cpu / floorCpu;
console.log(`local sandbox, ${n} sequential 'echo x' commands`);
console.log(`  floor (bash spawning /bin/true): ${(floorCpu * 1000).toFixed(3)} ms CPU per spawn`);
console.log(
  `  sandbox command:                 ${(sandbox.cpu * 1000).toFixed(3)} ms CPU per command (harness + sandbox), ${sandbox.wallMs.toFixed(3)} ms wall`,
);
console.log(`  ratio: ${ratio.toFixed(2)}x the floor (target <= 1.5) ${ratio <= 1.5 ? "MET" : "MISSED"}`);
