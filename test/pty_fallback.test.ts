/**
 * `pty: true` when no pseudo-terminal can be had, through the tool dispatch in a real bubblewrap sandbox and a real
 * container: the environment's /dev/pts is replaced by a private devpts instance with room for two ptys (max=2, as
 * a kernel pool drained by other tasks: `script` then fails with "failed to create pseudo-terminal: No space left
 * on device" before it starts anything). The original runs such a process without a pty (pipe mode); ours ran
 * nothing at all and reported exit 1. Now it runs the command once, without a terminal, with the same result keys;
 * and a command that fails on a pty is not run a second time.
 * Also: the environment's own kill of a pty process (killBackground, without the process tool's search for the
 * session) left the session `script` starts running when it ignored the hangup and SIGTERM.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Environment } from "../tools/environments/base.js";
import "../tools/terminal_tool.js";
import { waitUntil } from "./helpers/local_ctx.js";
import { toolEnvironments } from "./helpers/tool_environments.js";

const { environment, tools } = toolEnvironments("ptyfb");

/** The host pid of the (one) process whose command line is exactly `argv`. */
function hostPid(argv: string[]): number | undefined {
  const want = `${argv.join("\0")}\0`;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8") === want) return Number(name);
    } catch {
      // gone
    }
  }
  return undefined;
}

describe.each(["sandbox", "docker"])("pty: true without a pty to get (%s)", (kind) => {
  // One environment for both: the kill on its own ptys first, then its /dev/pts is replaced by the two-pty instance.
  let env: Environment;
  beforeAll(async () => {
    env = await environment(kind);
  });
  afterAll(async () => env?.cleanup());

  it("the environment's own kill ends the session of a pty process", async () => {
    const count = async () =>
      Number(
        (
          await env.exec(
            `n=0; for p in /proc/[0-9]*; do [ "$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)" = "sleep 31323 " ] && ` +
              `{ read -r s < $p/stat; case "\${s##*) }" in Z*|X*) ;; *) n=$((n+1));; esac; }; done; echo $n`,
          )
        ).stdout.trim(),
      );
    const started = await env.startBackground("trap '' HUP TERM; sleep 31323 & sleep 31323", { pty: true });
    expect(await waitUntil(async () => (await count()) === 2, 10_000)).toBe(true);
    await env.killBackground(started.id);
    expect(await waitUntil(async () => (await count()) === 0, 5_000)).toBe(true);
  }, 30_000);

  it("runs the command once without one, as the original's pipe mode; never twice", async () => {
    const call = tools(env, kind);
    // A process of the environment, to reach its mount namespace from the host.
    const anchor = await call("terminal", { command: "exec sleep 31320", background: true });
    let pid: number | undefined;
    expect(await waitUntil(async () => (pid = hostPid(["sleep", "31320"])) !== undefined, 10_000)).toBe(true);
    execFileSync("nsenter", [
      "-t",
      String(pid),
      "-m",
      "mount",
      "-t",
      "devpts",
      "-o",
      "newinstance,ptmxmode=0666,mode=0620,max=2",
      "devpts",
      "/dev/pts",
    ]);
    await call("process", { action: "kill", session_id: anchor.session_id });

    const probe = (tag: string, tail: string) =>
      `echo ran >> runs-${tag}; if test -t 1; then echo on-a-tty; else echo no-tty; fi; ${tail}`;
    const finished = async (id: string) => {
      let r: Record<string, unknown> = {};
      await waitUntil(async () => {
        r = await call("process", { action: "poll", session_id: id });
        return r.status === "exited";
      }, 10_000);
      return r;
    };
    const runs = async (tag: string) => (await call("terminal", { command: `cat runs-${tag}` })).output;

    // Both of the instance's ptys taken.
    for (const tag of ["a", "b"]) {
      const held = await call("terminal", { command: probe(tag, "exec sleep 31321"), background: true, pty: true });
      expect(
        await waitUntil(
          async () =>
            /tty/.test((await call("process", { action: "poll", session_id: held.session_id })).output_preview),
          10_000,
        ),
      ).toBe(true);
      expect((await call("process", { action: "poll", session_id: held.session_id })).output_preview.trim()).toBe(
        "on-a-tty",
      );
    }

    // None left: the command runs, once, in pipe mode, with the usual result.
    const over = await call("terminal", { command: probe("c", "exit 3"), background: true, pty: true });
    expect(Object.keys(over)).toEqual(["output", "session_id", "pid", "exit_code", "error"]);
    expect(over).toMatchObject({ output: "Background process started", exit_code: 0, error: null });
    const done = await finished(over.session_id);
    expect(done).toMatchObject({ status: "exited", exit_code: 3 });
    expect(String(done.output_preview).trim()).toBe("no-tty");
    expect(await runs("c")).toBe("ran");

    // A pty free again: a command that fails on it is not run a second time without one.
    const pids = await call("process", { action: "list" });
    const holder = pids.processes.find((p: { status: string }) => p.status === "running");
    await call("process", { action: "kill", session_id: holder.session_id });
    const failing = await call("terminal", { command: probe("d", "exit 1"), background: true, pty: true });
    const failed = await finished(failing.session_id);
    expect(failed).toMatchObject({ status: "exited", exit_code: 1 });
    expect(String(failed.output_preview).trim()).toBe("on-a-tty");
    expect(await runs("d")).toBe("ran");
  }, 60_000);
});
