#!/usr/bin/env node
/**
 * CPU of the local sandbox's lifecycle, from a CPU cgroup of this process (so the sandbox's processes count, even
 * those this process never waits for; root only, else this process's own CPU and the figure says so):
 * N sandboxes created, given C `echo x` commands each, and cleaned up, K at once.
 *   node scripts/bench/sandbox-lifecycle.mjs [--sandboxes 64] [--commands 0] [--at-once 1]
 * Prints CPU per sandbox (create + cleanup, with --commands 0) or per sandbox with its commands. Needs bwrap
 * and a build (npm run build).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const HERE = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    sandboxes: { type: "string", default: "64" },
    commands: { type: "string", default: "0" },
    "at-once": { type: "string", default: "1" },
  },
});
const n = Number(values.sandboxes);
const commands = Number(values.commands);
const atOnce = Number(values["at-once"]);
const { SandboxEnvironment } = await import(
  pathToFileURL(join(HERE, "..", "..", "dist", "tools", "environments", "local_sandbox.js")).href
);

// This process into a cgroup of its own (v2 cpu.stat, or v1 cpuacct), when it may make one.
const v2 = existsSync("/sys/fs/cgroup/cgroup.controllers");
const cg = join(v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpuacct", `hermes-bench-lifecycle-${process.pid}`);
let usageMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
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

const base = mkdtempSync(join(tmpdir(), "hermes-lifecycle-"));
let next = 0;
const cpu0 = usageMs();
const t0 = performance.now();
await Promise.all(
  Array.from({ length: atOnce }, async () => {
    while (next < n) {
      const k = next++;
      const env = await SandboxEnvironment.create(
        {
          runName: "bench",
          taskId: `t${k}`,
          hostTaskDir: join(base, `t${k}`),
          taskTimeoutSec: 60,
          signal: new AbortController().signal,
        },
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
await new Promise((r) => setTimeout(r, 300)); // killed sandboxes finish exiting
const cpuMs = usageMs() - cpu0;
process.stdout.write(
  `${n} sandboxes, ${commands} 'echo x' each, ${atOnce} at once: ${(cpuMs / n).toFixed(1)} ms CPU per sandbox${commands ? " with its commands" : " (create + cleanup)"}, ` +
    `${((performance.now() - t0) / n).toFixed(1)} ms wall per sandbox (${source})\n`,
);
rmSync(base, { recursive: true, force: true });
try {
  writeFileSync(join(v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpuacct", "cgroup.procs"), String(process.pid));
  execFileSync("rmdir", [cg], { stdio: "ignore" });
} catch {
  // not made
}
process.exit(0);
