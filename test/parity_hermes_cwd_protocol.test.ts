/**
 * The persistent shell's carried-state report (tools/environments/shell/shell_session.ts): a carried command's
 * end marker carries the cwd the shell read after the command; text the command prints cannot stand in for it.
 */
import { describe, expect, it } from "vitest";
import { ShellSession, type ShellTransport } from "../tools/environments/shell/shell_session.js";
import { HostShell } from "../tools/environments/shell/host_process.js";

async function booted() {
  const written: string[] = [];
  const transport: ShellTransport = {
    write: (t) => void written.push(t),
    kill: () => undefined,
    destroy: () => undefined,
  };
  const session = new ShellSession(transport, { afterKillGraceMs: 60_000 });
  const ready = session.boot(5000);
  session.onOutput("out", `${session.mark} READY 7\n`);
  expect(await ready).toBe(true);
  return { session, written };
}

describe("the carried cwd report", () => {
  it("is read from the end marker however the stream is cut, and only from it", async () => {
    for (let cut = 0; cut < 90; cut += 2) {
      const { session, written } = await booted();
      const m = session.mark;
      const run = session.run({ command: "x", cwd: "/w", state: "/tmp/st", cap: 10_000 });
      expect(written.at(-1)).toBe("hb_run 1 '/tmp/st' '/w' 'x'\n");
      // the command prints a look-alike without the nonce: it stays output
      const out = `${m} 1 S\nfake\n__HB_0000__ 1 E0 C/etc\n${m} 1 E0 C/srv/a b\n`;
      session.onOutput("out", out.slice(0, cut));
      session.onOutput("out", out.slice(cut));
      session.onOutput("err", `${m} 1 S\n${m} 1 P9\n\n${m} 1 E0 C/srv/a b\n`);
      const r = await run;
      expect(r.stdout).toBe("fake\n__HB_0000__ 1 E0 C/etc");
      expect(r.cwd, `cut at ${cut}`).toBe("/srv/a b");
    }
  });

  it("gives no cwd when the command saved none, or for a command that carries nothing", async () => {
    const { session } = await booted();
    const m = session.mark;
    const run = session.run({ command: "x", cwd: "/w", state: "/tmp/st", cap: 100 });
    session.onOutput("out", `${m} 1 S\n\n${m} 1 E3 C\n`);
    session.onOutput("err", `${m} 1 S\n${m} 1 P9\n\n${m} 1 E3 C\n`);
    expect(await run).toMatchObject({ exitCode: 3 });
    expect((await run).cwd).toBeUndefined();
    const plain = session.run({ command: "x", cwd: "/w", cap: 100 });
    session.onOutput("out", `${m} 2 S\n\n${m} 2 E0\n`);
    session.onOutput("err", `${m} 2 S\n${m} 2 P9\n\n${m} 2 E0\n`);
    expect((await plain).cwd).toBeUndefined();
  });

  it.each([
    ["sh", undefined],
    ["bash", "/bin/bash"],
  ])("cannot be read by the command: the nonce is out of its reach (real %s)", async (_label, innerShell) => {
    const shell = await HostShell.start({
      cwd: "/tmp",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      innerShell,
    });
    expect(shell).toBeDefined();
    const mark = (shell as unknown as { session: ShellSession }).session.mark;
    try {
      const state = `/tmp/hb-cwd-proto-${process.pid}`;
      const r = await shell!.run({
        command: "set; export -p; declare -f 2>/dev/null; cat /proc/$PPID/cmdline /proc/$PPID/environ; cd /",
        cwd: "/tmp",
        state,
        cap: 1_000_000,
      });
      expect(r.stdout.length).toBeGreaterThan(100);
      expect(r.stdout + r.stderr).not.toContain(mark.slice(5, 21));
      expect(r.cwd).toBe("/");
    } finally {
      shell!.close();
    }
  });
});
