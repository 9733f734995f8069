/**
 * The persistent-shell protocol's host side (tools/environments/shell/shell_session.ts) against scripted shell
 * output: the markers may arrive split anywhere, the pid line may land inside the command's stderr, and
 * output before the start marker (left by an earlier command's background process) is dropped.
 */
import { describe, expect, it } from "vitest";
import { ShellSession, type ShellTransport } from "../tools/environments/shell/shell_session.js";
import { waitUntil } from "./helpers/wait.js";

interface Fake {
  session: ShellSession;
  written: string[];
  kills: { pids: number[]; signal: string }[];
}

function fakeSession(reportPid = true): Fake {
  const written: string[] = [];
  const kills: Fake["kills"] = [];
  const transport: ShellTransport = {
    write: (text) => void written.push(text),
    kill: (pids, signal) => void kills.push({ pids, signal }),
    killCommand: (shellPid, signal) => void kills.push({ pids: [-shellPid], signal }),
    destroy: () => undefined,
  };
  return { session: new ShellSession(transport, { afterKillGraceMs: 60_000, reportPid }), written, kills };
}

async function booted(reportPid = true): Promise<Fake> {
  const f = fakeSession(reportPid);
  const ready = f.session.boot(5000);
  f.session.onOutput("out", `${f.session.mark} READY 7\n`);
  expect(await ready).toBe(true);
  return f;
}

/** Feeds `text` in pieces cut at `cuts`. */
function feed(session: ShellSession, stream: "out" | "err", text: string, cuts: number[]): void {
  let at = 0;
  for (const c of [...cuts, text.length]) {
    if (c > at) session.onOutput(stream, text.slice(at, c));
    at = Math.max(at, c);
  }
}

describe("ShellSession output", () => {
  it("restores stdout and stderr byte for byte however the stream is cut, the pid line cut out of mid-line stderr", async () => {
    const stdoutBody = "out line\nno newline";
    const stderrHead = "warn: ha";
    const stderrTail = "lf a line\n";
    for (let cut = 0; cut < 120; cut += 3) {
      const f = await booted();
      const m = f.session.mark;
      const result = f.session.run({ command: "x", cwd: "/", cap: 10_000 });
      expect(f.written.at(-1)).toMatch(/^hb_run 1 /);
      const out = `stray from before\n${m} 1 S\n${stdoutBody}\n${m} 1 E3\n`;
      const err = `stray\n${m} 1 S\n${stderrHead}${m} 1 P4242\n${stderrTail}\n${m} 1 E3\n`;
      feed(f.session, "err", err, [cut, cut + 7]);
      feed(f.session, "out", out, [Math.floor(cut / 2), cut + 1]);
      const r = await result;
      expect(r, `cut at ${cut}`).toEqual({
        exitCode: 3,
        stdout: stdoutBody,
        stderr: stderrHead + stderrTail,
        timedOut: false,
        truncated: false,
      });
    }
  });

  it("a timeout kills the process group the pid line named (the shell itself before that line came)", async () => {
    const f = await booted();
    const m = f.session.mark;
    const early = f.session.run({ command: "sleep 100", cwd: "/", cap: 100, timeoutMs: 50 });
    await waitUntil(() => f.kills.length > 0, 5000, 10);
    expect(f.kills).toEqual([{ pids: [7], signal: "SIGKILL" }]);
    f.session.onOutput("out", `${m} 1 S\n\n${m} 1 E137\n`);
    f.session.onOutput("err", `${m} 1 S\n\n${m} 1 E137\n`);
    expect((await early).exitCode).toBe(124);

    const late = f.session.run({ command: "sleep 100", cwd: "/", cap: 100, timeoutMs: 50 });
    f.session.onOutput("out", `${m} 2 S\n`);
    f.session.onOutput("err", `${m} 2 S\n${m} 2 P31`);
    f.session.onOutput("err", `337\n`);
    await waitUntil(() => f.kills.length > 1, 5000, 10);
    expect(f.kills.at(-1)).toEqual({ pids: [31337], signal: "SIGKILL" });
    f.session.onOutput("out", `\n${m} 2 E137\n`);
    f.session.onOutput("err", `\n${m} 2 E137\n`);
    const r = await late;
    expect(r).toMatchObject({ exitCode: 124, timedOut: true, stdout: "", stderr: "" });
  });

  it("without pid lines the shell prints none, and a timeout asks the transport to kill the shell's current command", async () => {
    const f = await booted(false);
    expect(f.written[0]).not.toMatch(/ P%s/);
    expect((await booted(true)).written[0]).toMatch(/ P%s/);
    const m = f.session.mark;
    const pending = f.session.run({ command: "sleep 100", cwd: "/", cap: 100, timeoutMs: 50 });
    f.session.onOutput("out", `${m} 1 S\n`);
    f.session.onOutput("err", `${m} 1 S\n`);
    await waitUntil(() => f.kills.length > 0, 5000, 10);
    expect(f.kills).toEqual([{ pids: [-7], signal: "SIGKILL" }]);
    f.session.onOutput("out", `\n${m} 1 E137\n`);
    f.session.onOutput("err", `\n${m} 1 E137\n`);
    expect(await pending).toMatchObject({ exitCode: 124, timedOut: true });
  });

  it("output naming a marker without the nonce is kept as output", async () => {
    const f = await booted();
    const m = f.session.mark;
    const result = f.session.run({ command: "x", cwd: "/", cap: 10_000 });
    f.session.onOutput("out", `${m} 1 S\n__HB_0000000000000000__ 1 E0\n\n${m} 1 E0\n`);
    f.session.onOutput("err", `${m} 1 S\n${m} 1 P9\n__HB_0000000000000000__ 1 P5\n\n${m} 1 E0\n`);
    const r = await result;
    expect(r.stdout).toBe("__HB_0000000000000000__ 1 E0\n");
    expect(r.stderr).toBe("__HB_0000000000000000__ 1 P5\n");
  });
});

describe("ShellSession boot failures", () => {
  it("names why the shell did not boot, with the end of what it wrote on stderr", async () => {
    const ended = fakeSession();
    const boot = ended.session.boot(5000);
    ended.session.onOutput("err", "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n");
    ended.session.onGone();
    expect(await boot).toBe(false);
    expect(ended.session.bootProblem).toBe(
      "it ended before answering: bwrap: Can't mount proc on /newroot/proc: Operation not permitted",
    );

    const slow = fakeSession();
    expect(await slow.session.boot(20)).toBe(false);
    expect(slow.session.bootProblem).toBe("it did not answer in time");

    const unsupported = fakeSession();
    const refused = unsupported.session.boot(5000);
    unsupported.session.onOutput("out", `${unsupported.session.mark} UNSUPPORTED\n`);
    expect(await refused).toBe(false);
    expect(unsupported.session.bootProblem).toMatch(/^it cannot host commands/);
  });
});
