/**
 * The terminal's `pty: true` (a background process under util-linux `script` inside the sandbox) and the
 * pseudo-terminals it takes, through the tool dispatch, in real bubblewrap sandboxes and a real container:
 * - `process kill` ended the wrapper's process group, but `script` starts the command in a session of its own:
 *   whatever there ignored the hangup (a `trap '' HUP TERM`, a server that handles SIGHUP) ran on after "killed",
 *   holding its terminal. Every pty in any sandbox comes from the kernel's one pool (kernel.pty.max, 4096, of
 *   which 1024 are kept for the host), so a long task that starts and kills such processes used it up for every
 *   task of the run. Now the kill ends the pty's session, and whatever still holds its terminal.
 * - a task could hold any number of the pool's ptys through the tool: now at most MAX_PTY_PROCESSES run on one at
 *   a time; past them a background process runs without one, as the original's does when it cannot get one.
 * - what a task leaves running on its ptys ends with the task (no pty outlives its sandbox), and the harness holds
 *   no terminal of its own.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { describe, expect, it } from "vitest";
import "../tools/terminal_tool.js";
import type { Environment } from "../tools/environments/base.js";
import { MAX_PTY_PROCESSES } from "../tools/terminal_tool.js";
import { waitUntil } from "./helpers/local_ctx.js";
import { toolEnvironments } from "./helpers/tool_environments.js";

const { environment, tools } = toolEnvironments("ptys");
/** Between two counts of processes (each a scan of /proc: the environment's, by a command run there, or the host's). */
const POLL_MS = 200;

/** Processes of the environment whose command line is `needle` (zombies left out), as the environment sees them. */
async function running(env: Environment, needle: string): Promise<number> {
  // In two halves: the command doing the count never holds the needle itself.
  const half = needle.length >> 1;
  const r = await env.exec(
    `a='${needle.slice(0, half)}'; b='${needle.slice(half)}'; ` +
      `n=0; for p in /proc/[0-9]*; do case "$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)" in "$a$b ") ` +
      `read -r s < $p/stat 2>/dev/null || continue; case "\${s##*) }" in Z*|X*) ;; *) n=$((n+1));; esac;; esac; done; echo $n`,
  );
  return Number(r.stdout.trim());
}

/** Descriptors of the environment's processes open on a pty's terminal side (/dev/pts/N). */
async function terminalsHeld(env: Environment): Promise<number> {
  const r = await env.exec(
    `n=0; for fd in /proc/[0-9]*/fd/*; do case "$(readlink "$fd" 2>/dev/null)" in /dev/pts/[0-9]*) n=$((n+1));; esac; done; echo $n`,
  );
  return Number(r.stdout.trim());
}

/** Host processes whose command line holds `needle` (zombies left out). */
function hostProcesses(needle: string): number {
  let n = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (cmd.includes(needle) && !/\) [ZX] /.test(stat)) n++;
    } catch {
      // gone
    }
  }
  return n;
}

/** This process's descriptors open on a pty (either side). */
function harnessTerminals(): string[] {
  return readdirSync("/proc/self/fd")
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    })
    .filter((l) => /^\/dev\/(pts\/|ptmx)/.test(l));
}

describe.each(["sandbox", "docker"])("pty processes (%s)", (kind) => {
  it("kill ends a pty process with everything it started, as it does without a pty", async () => {
    const env = await environment(kind);
    try {
      const call = tools(env, kind);
      // A shell that ignores the hangup and SIGTERM, with a child that does too; on a pty, also one that left the
      // pty's session (setsid) with the terminal still open.
      const command = (tag: string, detach: boolean) =>
        `trap '' HUP TERM; ${detach ? "setsid " : ""}sleep ${tag} & sleep ${tag}`;
      for (const [pty, tag, detach] of [
        [false, "31301", false],
        [true, "31302", false],
        [true, "31305", true],
      ] as const) {
        const started = await call("terminal", { command: command(tag, detach), background: true, pty });
        expect(await waitUntil(async () => (await running(env, `sleep ${tag}`)) === 2, 20_000, POLL_MS)).toBe(true);
        if (pty) expect(await terminalsHeld(env)).toBeGreaterThan(0);
        expect(await call("process", { action: "kill", session_id: started.session_id })).toEqual({
          status: "killed",
          session_id: started.session_id,
        });
        expect(
          await waitUntil(async () => (await running(env, `sleep ${tag}`)) === 0, 5_000, POLL_MS),
          `pty ${pty}`,
        ).toBe(true);
        expect(await terminalsHeld(env)).toBe(0);
        const after = await call("process", { action: "poll", session_id: started.session_id });
        expect(after).toMatchObject({ status: "exited", exit_code: -15 });
      }
    } finally {
      await env.cleanup();
    }
  }, 120_000);

  it(`at most ${MAX_PTY_PROCESSES} of a task's processes run on a pty at a time; past them, without one`, async () => {
    const env = await environment(kind);
    try {
      const call = tools(env, kind);
      const probe = "if test -t 1; then echo on-a-tty; else echo no-tty; fi; sleep 31303";
      const ids: string[] = [];
      const says = async (id: string) => {
        let out = "";
        await waitUntil(async () => {
          out = (await call("process", { action: "poll", session_id: id })).output_preview;
          return /tty/.test(out);
        }, 20_000);
        return out.trim();
      };
      for (let i = 0; i < MAX_PTY_PROCESSES; i++)
        ids.push((await call("terminal", { command: probe, background: true, pty: true })).session_id);
      for (const id of ids) expect(await says(id)).toBe("on-a-tty");
      const over = await call("terminal", { command: probe, background: true, pty: true });
      expect(Object.keys(over)).toEqual(["output", "session_id", "pid", "exit_code", "error"]);
      expect(await says(over.session_id)).toBe("no-tty");
      // One ended: its pty is free for the next.
      await call("process", { action: "kill", session_id: ids[0] });
      const next = await call("terminal", { command: probe, background: true, pty: true });
      expect(await says(next.session_id)).toBe("on-a-tty");
    } finally {
      await env.cleanup();
    }
  }, 180_000);

  it("what a task leaves running on its ptys ends with the task; the harness holds no terminal", async () => {
    // Two tasks: the second shows the first's end left the harness nothing (no terminal, no process) to carry on.
    for (let task = 0; task < 2; task++) {
      const env = await environment(kind);
      const call = tools(env, kind);
      for (let i = 0; i < 3; i++)
        await call("terminal", { command: "trap '' HUP TERM; sleep 31304 & sleep 31304", background: true, pty: true });
      expect(await waitUntil(async () => (await running(env, "sleep 31304")) === 6, 20_000, POLL_MS)).toBe(true);
      expect(harnessTerminals()).toEqual([]);
      await env.cleanup();
      expect(await waitUntil(async () => hostProcesses("sleep 31304") === 0, 10_000, POLL_MS)).toBe(true);
    }
  }, 180_000);
});
