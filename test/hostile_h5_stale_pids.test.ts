/**
 * The local sandbox signals its processes by host pid. Once a sandbox's bwrap and init are gone their pids are free,
 * and on a host with a small pid space (`kernel.pid_max` 32768 here: a task's verify running a test suite, or another
 * task's fork loop, wraps it in seconds) another process soon holds them: cleanup must not SIGKILL it. A root
 * harness can kill any process of the host. Both ways a sandbox ends before its cleanup: the verify step (which
 * ends the agent's sandbox first) and an agent that kills its own shell. The reuse is made certain here by writing
 * `kernel.ns_last_pid` (root only).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import { probeBwrap } from "../tools/environments/local/bwrap.js";
import { waitUntil } from "./helpers/local_ctx.js";

let root: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "hb-h5-pids-"));
});

afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
});

function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX] /s.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/**
 * A `sleep` started so that it gets `pid` (the next pid after ns_last_pid; other processes may take it first:
 * retried, for up to 20 s, as one of the suite's other processes may hold it a while on a loaded machine).
 */
async function takePid(pid: number): Promise<ChildProcess> {
  for (const end = Date.now() + 20_000; Date.now() < end; ) {
    if (!existsSync(`/proc/${pid}`)) {
      writeFileSync("/proc/sys/kernel/ns_last_pid", String(pid - 1));
      const child = spawn("sleep", ["1000"], { stdio: "ignore" });
      children.push(child);
      await new Promise((r) => child.once("spawn", r));
      if (child.pid === pid) return child;
      child.kill("SIGKILL");
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`could not start a process with pid ${pid}`);
}

async function sandbox(name: string, lost: string[] = []): Promise<SandboxEnvironment> {
  return SandboxEnvironment.create(
    { runName: "r", taskId: name, hostTaskDir: join(root, name), reportLost: (why) => lost.push(why) },
    {},
  );
}

/** The host pids of the sandbox's bwrap (its outer process) and its init. */
function sandboxPids(env: SandboxEnvironment): number[] {
  const e = env as unknown as { shell: { pid: number }; initPid: number };
  return [e.shell.pid, e.initPid];
}

describe.runIf(process.getuid?.() === 0 && probeBwrap().ok)("a sandbox's pids, reused after it ended", () => {
  it("are not signalled by the cleanup after a verify", { timeout: 120_000 }, async () => {
    const env = await sandbox("verify");
    await env.exec("true");
    const pids = sandboxPids(env);
    expect(pids.every(alive)).toBe(true);
    const r = await env.runVerify("true");
    expect(r.exitCode).toBe(0);
    expect(await waitUntil(() => !pids.some((p) => existsSync(`/proc/${p}`)), 10_000)).toBe(true);
    const others = [];
    for (const p of pids) others.push(await takePid(p));
    await env.cleanup();
    await new Promise((r) => setTimeout(r, 300));
    for (const o of others) expect(alive(o.pid!), `the process now holding pid ${o.pid}`).toBe(true);
  });

  it("are not signalled by the cleanup after the agent killed its own shell", { timeout: 120_000 }, async () => {
    const lost: string[] = [];
    const env = await sandbox("killed", lost);
    const pids = sandboxPids(env);
    await env.exec("kill -9 $PPID").catch(() => undefined);
    expect(await waitUntil(() => !pids.some((p) => existsSync(`/proc/${p}`)), 10_000)).toBe(true);
    const others = [];
    for (const p of pids) others.push(await takePid(p));
    await env.cleanup();
    await new Promise((r) => setTimeout(r, 300));
    for (const o of others) expect(alive(o.pid!), `the process now holding pid ${o.pid}`).toBe(true);
  });
});
