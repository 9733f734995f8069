import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SpawnHelper, type LaunchedProcess } from "../tools/environments/shell/spawn_helper.js";

const dir = mkdtempSync(join(tmpdir(), "spawn-helper-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Output until the process is gone; `started()` once it answered (its first output), as HostShell does after boot. */
function collect(p: LaunchedProcess): Promise<{ out: string; err: string }> {
  let out = "";
  let err = "";
  p.stdout.setEncoding("utf8").on("data", (t: string) => {
    out += t;
    p.started();
  });
  p.stderr.setEncoding("utf8").on("data", (t: string) => (err += t));
  return new Promise((resolve) => p.onClosed(() => resolve({ out, err })));
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

describe("spawn helper", () => {
  it("starts a process that is not this process's child, with stdin, stdout and stderr on this side", async () => {
    const p = await SpawnHelper.forThread().launch("/bin/sh", [
      "-c",
      'read line; echo "got $line"; echo oops >&2; sleep 0.2',
    ]);
    const done = collect(p);
    // The helper shell is the parent: this (large) process did not fork.
    expect(parentOf(p.pid)).not.toBe(process.pid);
    expect(readFileSync(`/proc/${parentOf(p.pid)}/cmdline`, "utf8")).toMatch(/bash/);
    p.stdin.write("hello\n");
    const { out, err } = await done;
    expect(out).toBe("got hello\n");
    expect(err).toBe("oops\n");
    p.destroy();
  });

  it("passes arguments with newlines, quotes and spaces unchanged", async () => {
    const arg = "a\nb 'c' \"d\" $HOME `x` \\ e";
    const p = await SpawnHelper.forThread().launch("/usr/bin/printf", ["%s", arg]);
    expect((await collect(p)).out).toBe(arg);
    p.destroy();
  });

  it("hands over a directory descriptor and collects an output descriptor", async () => {
    const sub = mkdtempSync(join(dir, "d-"));
    writeFileSync(join(sub, "marker.txt"), "x");
    const dirFd = openSync(sub, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      const p = await SpawnHelper.forThread().launch(
        "/bin/sh",
        ["-c", "ls /proc/self/fd/4/; echo info >&3"],
        [
          { fd: 3, outputFile: true },
          { fd: 4, dirFd },
        ],
      );
      expect((await collect(p)).out).toBe("marker.txt\n");
      expect(p.takeOutput(3)).toBe("info\n");
      expect(p.takeOutput(3)).toBeUndefined();
      p.destroy();
    } finally {
      closeSync(dirFd);
    }
  });

  it("an early end of output before started() is not mistaken for the process being gone", async () => {
    // The process opens its stdout late; the holder kept here means no EOF is seen before it does.
    const p = await SpawnHelper.forThread().launch("/bin/sh", ["-c", "sleep 0.3; echo late"]);
    let closedEarly = false;
    p.onClosed(() => (closedEarly = true));
    const done = collect(p);
    await new Promise((r) => setTimeout(r, 100));
    expect(closedEarly).toBe(false);
    expect((await done).out).toBe("late\n");
    p.destroy();
  });

  it("many launches at once each get their own streams", async () => {
    const launched = await Promise.all(
      Array.from({ length: 40 }, (_, i) => SpawnHelper.forThread().launch("/bin/sh", ["-c", `echo ${i}`])),
    );
    const outs = await Promise.all(launched.map(collect));
    expect(outs.map((o) => o.out)).toEqual(Array.from({ length: 40 }, (_, i) => `${i}\n`));
    for (const p of launched) p.destroy();
  });

  it("a process that exits without answering is seen gone, its error output kept", async () => {
    const p = await SpawnHelper.forThread().launch("/bin/sh", ["-c", "echo refused >&2; exit 3"]);
    let err = "";
    p.stderr.setEncoding("utf8").on("data", (t: string) => (err += t));
    p.stdout.resume();
    await new Promise<void>((resolve) => p.onClosed(resolve));
    expect(err).toBe("refused\n");
    p.destroy();
  });
});
