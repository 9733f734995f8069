/**
 * A stress reproduction, not a speed benchmark: starts N local sandboxes one after another and runs `kill -9 $$`
 * as each one's first command, then `echo alive`. It exits 3 naming the iteration when a call has not returned in
 * 20 s (the persistent shell hung), else prints how many ran. Run it beside other load (two copies at once, or
 * the test suite): the hang it found (bash 5.2's `wait -f` looping on "wait_for: No record of process" after a
 * job killed by a signal) showed only under load, in about 1 of 200 sandboxes.
 *   N=400 npx tsx scripts/bench/kill-self-stress.mts [SANDBOX_MODULE]
 * SANDBOX_MODULE: another checkout's tools/environments/local/local_sandbox.ts (a before/after).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..", "..");
const modulePath = process.argv[2] ?? join(ROOT, "tools/environments/local/local_sandbox.ts");
const { SandboxEnvironment } = await import(resolve(modulePath));
const root = mkdtempSync(join(tmpdir(), "hb-kill-stress-"));
const n = Number(process.env.N ?? 200);
for (let i = 0; i < n; i++) {
  const env = await SandboxEnvironment.create(
    { runName: "r", taskId: `t${i}`, hostTaskDir: join(root, `t${i}`), reportLost: () => {} },
    {},
  );
  const timer = setTimeout(() => {
    process.stderr.write(`iteration ${i}: no answer in 20 s, the sandbox's shell hung\n`);
    process.exit(3);
  }, 20_000);
  const killed = await env.exec("kill -9 $$");
  const after = await env.exec("echo alive");
  clearTimeout(timer);
  if (killed.exitCode !== 137 || after.stdout !== "alive\n") {
    process.stderr.write(`iteration ${i}: exit ${killed.exitCode}, then ${JSON.stringify(after.stdout)}\n`);
    process.exit(1);
  }
  await env.cleanup();
}
rmSync(root, { recursive: true, force: true });
console.log(`${n} sandboxes: every kill -9 $$ answered 137 and the shell went on`);
