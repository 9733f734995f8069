/**
 * A local sandbox's cgroup (root, cgroup v1 or v2, as on this machine): its counters are read from the right
 * controller's folder whatever order the folders were made in (they are made concurrently, off the event loop).
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { SandboxCgroup } from "../tools/environments/local/cgroups.js";

const root = process.getuid?.() === 0;

/** Runs `script` in bash inside the cgroup (the shell enters every controller's folder first); its stdout. */
function runInside(cgroup: SandboxCgroup, script: string): Promise<string> {
  const enter = cgroup.procsFiles.map((f) => `echo $$ > ${f}`).join("; ");
  const child = spawn("bash", ["-c", `${enter}; ${script}`], { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", () => resolve(out));
  });
}

describe("a local sandbox's cgroup", () => {
  it.runIf(root)("counts each OOM kill and each refused fork of its own processes", { timeout: 120_000 }, async () => {
    // Made together, as many tasks' sandboxes are: the controllers' folders finish in varying order.
    const made = await Promise.all(
      Array.from({ length: 8 }, () => SandboxCgroup.create({ memoryMb: 48, cpus: 1, pids: 8 })),
    );
    const cgroups = made.filter((c): c is SandboxCgroup => c !== undefined);
    expect(cgroups).toHaveLength(8);
    try {
      // The cgroups are checked side by side (each one's counters are its own): a refused fork makes bash wait
      // a second before it tries again, 2 s a cgroup, which one after another held this file 16 s at the end of CI.
      await Promise.all(
        cgroups.map(async (cgroup) => {
          expect(cgroup.oomKills()).toBe(0);
          const out = await runInside(cgroup, `python3 -c "b = bytearray(256 * 1024 ** 2)"; echo rc=$?`);
          expect(out).toContain("rc=137");
          expect(cgroup.oomKills()).toBe(1);
          expect(cgroup.pidsLimitHits()).toBe(0);
          await runInside(cgroup, "for i in $(seq 16); do sleep 1 & done 2>/dev/null; wait");
          expect(cgroup.pidsLimitHits()).toBeGreaterThan(0);
          expect(cgroup.oomKills()).toBe(1);
        }),
      );
    } finally {
      for (const cgroup of cgroups) await cgroup.remove();
    }
  });
});
