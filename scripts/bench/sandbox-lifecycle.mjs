#!/usr/bin/env node
/**
 * CPU of the local sandbox's lifecycle, from a CPU cgroup of this process (so the sandbox's processes count, even
 * those this process never waits for; root only, else this process's own CPU and the figure says so):
 * N sandboxes created, given C `echo x` commands each, and cleaned up, K at once. Beside it, in the same run, the
 * floor: one bwrap with the harness's arguments running /bin/true, and one spawn of /bin/true from bash per command.
 *   node scripts/bench/sandbox-lifecycle.mjs [--sandboxes 64] [--commands 0] [--at-once 1] [--rounds 1]
 *        [--compare DIR]
 * Prints, per round, the CPU per sandbox (create + cleanup, with --commands 0, or with its commands), this process's
 * part of it, and its ratio to the floor. --compare DIR: a checkout of another revision (its sources; node_modules
 * are taken from here), measured in alternation with this one, rounds interleaved (before/after in one run).
 * Loads the TypeScript sources through tsx. Needs bwrap.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { tsImport } from "tsx/esm/api";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    sandboxes: { type: "string", default: "64" },
    commands: { type: "string", default: "0" },
    "at-once": { type: "string", default: "1" },
    rounds: { type: "string", default: "1" },
    compare: { type: "string" },
  },
});
const n = Number(values.sandboxes);
const commands = Number(values.commands);
const atOnce = Number(values["at-once"]);
const rounds = Number(values.rounds);
for (const [flag, v] of [
  ["--sandboxes", n],
  ["--commands", commands],
  ["--at-once", atOnce],
  ["--rounds", rounds],
]) {
  if (!Number.isInteger(v) || v < (flag === "--commands" ? 0 : 1)) {
    console.error(`${flag}: expected a whole number`);
    process.exit(2);
  }
}
const sources = [{ label: "this", root: ROOT }];
if (values.compare !== undefined) {
  const other = resolve(values.compare);
  if (!existsSync(join(other, "tools", "environments", "local", "local_sandbox.ts"))) {
    console.error(`--compare: ${other} holds no tools/environments/local/local_sandbox.ts`);
    process.exit(2);
  }
  sources.push({ label: "compare", root: other });
}
for (const s of sources) {
  s.SandboxEnvironment = (
    await tsImport(join(s.root, "tools", "environments", "local", "local_sandbox.ts"), import.meta.url)
  ).SandboxEnvironment;
}
const { bwrapArgs, bwrapLauncher, findBwrap } = await tsImport(
  join(ROOT, "tools", "environments", "local", "bwrap.ts"),
  import.meta.url,
);

// This process into a cgroup of its own (v2 cpu.stat, or v1 cpuacct), when it may make one.
const v2 = existsSync("/sys/fs/cgroup/cgroup.controllers");
const cg = join(v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpuacct", `hermes-bench-lifecycle-${process.pid}`);
const selfMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let usageMs = selfMs;
let source = "this process only (no cgroup could be made)";
try {
  mkdirSync(cg);
  writeFileSync(join(cg, "cgroup.procs"), String(process.pid));
  usageMs = () =>
    v2
      ? Number(/^usage_usec (\d+)/m.exec(readFileSync(join(cg, "cpu.stat"), "utf8"))[1]) / 1000
      : Number(readFileSync(join(cg, "cpuacct.usage"), "utf8")) / 1e6;
  source = "cgroup: this process and every sandbox process";
} catch {
  // not root, or no cgroup file system
}

/** CPU (ms) per bwrap running /bin/true and per spawn of /bin/true, from bash loops in this cgroup. */
function floor() {
  const bwrap = findBwrap();
  const args = [
    ...bwrapArgs({ hostNetwork: false, env: { PATH: "/usr/bin:/bin" } }, bwrapLauncher(bwrap)),
    "/bin/true",
  ];
  const loop = (count, body) => {
    const c0 = usageMs();
    spawnSync("bash", ["-c", `for ((i = 0; i < ${count}; i++)); do ${body}; done`, "bash", bwrap, ...args], {
      stdio: "ignore",
    });
    return (usageMs() - c0) / count;
  };
  return { sandbox: loop(Math.min(n, 60), `"$@" > /dev/null`), spawn: loop(400, "/bin/true") };
}

async function lifecycle(SandboxEnvironment) {
  const base = mkdtempSync(join(tmpdir(), "hermes-lifecycle-"));
  let next = 0;
  const cpu0 = usageMs();
  const self0 = selfMs();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (next < n) {
        const k = next++;
        const env = await SandboxEnvironment.create(
          { runName: "bench", taskId: `t${k}`, hostTaskDir: join(base, `t${k}`), taskTimeoutSec: 60 },
          { removeTaskDirOnCleanup: true },
        );
        for (let c = 0; c < commands; c++) {
          const r = await env.exec("echo x");
          if (r.stdout !== "x\n") throw new Error(`unexpected output ${JSON.stringify(r)}`);
        }
        await env.cleanup();
      }
    }),
  );
  const wallMs = (performance.now() - t0) / n;
  await new Promise((r) => setTimeout(r, 300)); // killed sandboxes finish exiting
  rmSync(base, { recursive: true, force: true });
  return { cpuMs: (usageMs() - cpu0) / n, harnessMs: (selfMs() - self0) / n, wallMs };
}

console.log(
  `${n} sandboxes, ${commands} 'echo x' each, ${atOnce} at once; CPU per sandbox${commands ? " with its commands" : " (create + cleanup)"} (${source})`,
);
const ratios = new Map(sources.map((s) => [s.label, []]));
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...sources].reverse() : sources;
  for (const s of order) {
    const f = floor();
    const floorMs = f.sandbox + commands * f.spawn;
    const m = await lifecycle(s.SandboxEnvironment);
    ratios.get(s.label).push(m.cpuMs / floorMs);
    console.log(
      `  round ${r + 1} ${s.label.padEnd(7)} ${m.cpuMs.toFixed(2)} ms (this process ${m.harnessMs.toFixed(2)}), ` +
        `${m.wallMs.toFixed(1)} ms wall; floor ${floorMs.toFixed(2)} ms (bwrap ${f.sandbox.toFixed(2)} + ${commands} × spawn ${f.spawn.toFixed(2)}): ` +
        `${(m.cpuMs / floorMs).toFixed(2)}x`,
    );
  }
}
for (const [label, rs] of ratios) {
  const sorted = [...rs].sort((a, b) => a - b);
  console.log(
    `${label}: median ${sorted[Math.floor(sorted.length / 2)].toFixed(2)}x the floor (range ${sorted[0].toFixed(2)}-${sorted.at(-1).toFixed(2)})`,
  );
}
// Everything still in the cgroup (this process, its spawn helper) goes back to the root first, or rmdir fails.
try {
  for (const pid of readFileSync(join(cg, "cgroup.procs"), "utf8").split("\n").filter(Boolean))
    writeFileSync(join(v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpuacct", "cgroup.procs"), pid);
  rmdirSync(cg);
} catch {
  // not made
}
process.exit(0);
