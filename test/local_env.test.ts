import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BackgroundProcessManager } from "../tools/environments/background.js";
import { shellQuote } from "../tools/environments/base.js";
import {
  createLocalEnvironment,
  LocalEnvironment,
  processesWithMarker,
  scrubbedProcessEnv,
} from "../tools/environments/local/local.js";
import { isAlive, waitUntil } from "./helpers/local_ctx.js";

let root: string;
let taskDir: string;
let env: LocalEnvironment;

beforeEach(async () => {
  root = mkdtempSync(join(tmpdir(), "hermes-local-env-"));
  taskDir = join(root, "runs", "r1", "tasks", "t1");
  env = (await createLocalEnvironment({ runName: "r1", taskId: "t1", hostTaskDir: taskDir }, {})) as LocalEnvironment;
});

afterEach(async () => {
  await env.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe("local environment: exec", () => {
  it("creates the task folder and runs there, with output and exit code", async () => {
    expect(env.workdir).toBe(taskDir);
    expect(existsSync(taskDir)).toBe(true);
    const res = await env.exec("echo out; echo err >&2; pwd; exit 3");
    expect(res.exitCode).toBe(3);
    expect(res.stdout).toBe(`out\n${taskDir}\n`);
    expect(res.stderr).toBe("err\n");
    expect(res.timedOut).toBe(false);
    expect(res.truncated).toBe(false);
  });

  it("runs bash when present (bash-only syntax works)", async () => {
    const res = await env.exec("a=(x y z); echo ${#a[@]}");
    expect(res.stdout.trim()).toBe("3");
  });

  it("honours a cwd override, relative or absolute, and reports a missing one", async () => {
    mkdirSync(join(taskDir, "sub"));
    expect((await env.exec("pwd", { cwd: "sub" })).stdout.trim()).toBe(join(taskDir, "sub"));
    expect((await env.exec("pwd", { cwd: root })).stdout.trim()).toBe(root);
    const missing = await env.exec("pwd", { cwd: "nope" });
    expect(missing.exitCode).not.toBe(0);
    expect(missing.stderr).toContain("nope");
  });

  it("builds the environment from the allow-list, --pass-env names and the call's env", async () => {
    process.env.HERMES_TEST_API_KEY = "sk-should-not-leak";
    process.env.HERMES_TEST_PLAIN = "not-listed";
    process.env.LC_HERMES_TEST = "locale";
    process.env.HERMES_TEST_PASSED = "passed";
    try {
      const res = await env.exec(
        'echo "k=$HERMES_TEST_API_KEY p=$HERMES_TEST_PLAIN lc=$LC_HERMES_TEST x=$EXTRA h=$HOME"',
        { env: { EXTRA: "given" } },
      );
      expect(res.stdout.trim()).toBe(`k= p= lc=locale x=given h=${process.env.HOME ?? ""}`);
      const passing = await createLocalEnvironment(
        { runName: "r1", taskId: "t9", hostTaskDir: join(root, "t9") },
        { passEnv: ["HERMES_TEST_PASSED"] },
      );
      try {
        expect((await passing.exec('echo "$HERMES_TEST_PASSED $HERMES_TEST_PLAIN."')).stdout).toBe("passed .\n");
      } finally {
        await passing.cleanup();
      }
    } finally {
      delete process.env.HERMES_TEST_API_KEY;
      delete process.env.HERMES_TEST_PLAIN;
      delete process.env.LC_HERMES_TEST;
      delete process.env.HERMES_TEST_PASSED;
    }
    const scrubbed = scrubbedProcessEnv({
      GITHUB_TOKEN: "a",
      DB_PASSWORD: "b",
      MY_SECRET_X: "c",
      OPENAI_API_KEY: "d",
      PATH: "/bin",
    });
    expect(scrubbed).toEqual({ PATH: "/bin" });
  });

  it("feeds stdin, and gives commands without stdin an immediate EOF", async () => {
    expect((await env.exec("tr a-z A-Z", { stdin: "hello" })).stdout).toBe("HELLO");
    // A `cat` waiting for input would run into the timeout instead.
    const res = await env.exec("cat; echo eof", { timeoutMs: 10_000 });
    expect(res).toMatchObject({ stdout: "eof\n", timedOut: false, exitCode: 0 });
  });

  it("timeout kills the whole process group and returns 124", async () => {
    const res = await env.exec("sleep 100 & echo $! > child.pid; echo before; sleep 100", { timeoutMs: 700 });
    expect(res.timedOut).toBe(true);
    expect(res.exitCode).toBe(124);
    expect(res.stdout).toContain("before");
    const childPid = Number(readFileSync(join(taskDir, "child.pid"), "utf8"));
    expect(childPid).toBeGreaterThan(0);
    expect(await waitUntil(() => !isAlive(childPid), 3000)).toBe(true);
  });

  it("timeout also kills children that ignore SIGTERM (SIGKILL after the grace)", async () => {
    const res = await env.exec("sh -c 'trap \"\" TERM; sleep 100' & echo $! > stubborn.pid; sleep 100", {
      timeoutMs: 300,
    });
    expect(res.exitCode).toBe(124);
    const pid = Number(readFileSync(join(taskDir, "stubborn.pid"), "utf8"));
    expect(await waitUntil(() => !isAlive(pid), 4000)).toBe(true);
  });

  it("an AbortSignal stops the command with 130", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const res = await env.exec("sleep 100", { signal: ac.signal });
    expect(res.exitCode).toBe(130);
    expect(res.timedOut).toBe(false);
  });

  it("caps output to head and tail with a notice stating the cap, with bounded memory", async () => {
    const res = await env.exec("i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); done", {
      maxOutputChars: 1000,
    });
    expect(res.truncated).toBe(true);
    expect(res.stdout).toContain("[OUTPUT TRUNCATED");
    expect(res.stdout).toContain("cap is 1000 chars");
    expect(res.stdout.startsWith("line0\nline1\n")).toBe(true);
    expect(res.stdout.trimEnd().endsWith("line2999")).toBe(true);
    expect(res.stdout.length).toBeLessThan(1200);

    const big = await env.exec("head -c 3000000 /dev/zero | tr '\\0' a", { maxOutputChars: 500 });
    expect(big.truncated).toBe(true);
    expect(big.stdout).toContain("out of 3000000 total");
    expect(big.stdout.length).toBeLessThan(700);
  });

  it("does not wait for background children that keep the output pipe open", async () => {
    // Waiting for the pipe to close would run into the timeout (the child sleeps longer).
    const res = await env.exec("sleep 30 & echo $! > lingering.pid; echo started", { timeoutMs: 20_000 });
    expect(res).toMatchObject({ stdout: "started\n", timedOut: false, exitCode: 0 });
    const pid = Number(readFileSync(join(taskDir, "lingering.pid"), "utf8"));
    expect(isAlive(pid)).toBe(true);
    expect(processesWithMarker(env.marker)).toContain(pid);
    await env.cleanup();
    expect(await waitUntil(() => !isAlive(pid), 3000)).toBe(true);
  });
});

/** Pids of the live children of `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

describe("local environment: the user's shell start-up files", () => {
  it("no command sources ~/.bashrc or ~/.profile (bash reads them for -c when its stdin is a socket)", async () => {
    const home = join(root, "home");
    mkdirSync(home);
    writeFileSync(join(home, ".bashrc"), "export HB_RC=bashrc\n");
    writeFileSync(join(home, ".profile"), "export HB_RC=profile\n");
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      const own = (await createLocalEnvironment(
        { runName: "r1", taskId: "rc", hostTaskDir: join(root, "rc") },
        {},
      )) as LocalEnvironment;
      try {
        // The persistent shell, then the one-process path (a command given stdin).
        expect((await own.exec('echo "${HB_RC:-none} $HOME"')).stdout).toBe(`none ${home}\n`);
        expect((await own.exec('cat >/dev/null; echo "${HB_RC:-none}"', { stdin: "x" })).stdout).toBe("none\n");
        expect((await own.exec('echo "${HB_RC:-none}"', { stdin: "x", carry: true })).stdout).toBe("none\n");
      } finally {
        await own.cleanup();
      }
    } finally {
      if (saved === undefined) delete process.env.HOME;
      else process.env.HOME = saved;
    }
  });
});

describe("local environment: finding its processes", () => {
  it("finds a process whose environment read empty once (opened before its exec, read after)", () => {
    const mine = `/proc/${process.pid}/environ`;
    let reads = 0;
    const read = (path: string): Buffer => {
      if (path !== mine) return readFileSync(path);
      reads++;
      return reads === 1 ? Buffer.alloc(0) : Buffer.from(`A=1\0HERMES_BATCH_ENV_ID=m-42\0B=2\0`);
    };
    expect(processesWithMarker("m-42", read)).toEqual([process.pid]);
    expect(reads).toBe(2);
  });
});

describe("local environment: persistent shell", () => {
  it("runs many sequential commands in one shell process, each in a fresh subshell", async () => {
    const ppids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const res = await env.exec(`cd /; X${i}=1; export LEAK=${i}; echo "$PPID $LEAK_BEFORE"`, {
        env: { LEAK_BEFORE: String(i) },
      });
      expect(res.exitCode).toBe(0);
      const [ppid, given] = res.stdout.trim().split(" ");
      expect(given).toBe(String(i));
      ppids.add(ppid!);
    }
    // Every command's parent is the same long-lived shell, and nothing leaks from one command to the next.
    expect(ppids.size).toBe(1);
    const shellPid = Number([...ppids][0]);
    expect(shellPid).not.toBe(process.pid);
    expect(isAlive(shellPid)).toBe(true);
    expect(processesWithMarker(env.marker)).toContain(shellPid);
    const next = await env.exec('pwd; echo "leak=$LEAK"');
    expect(next.stdout).toBe(`${taskDir}\nleak=\n`);
    await env.cleanup();
    expect(await waitUntil(() => !isAlive(shellPid), 3000)).toBe(true);
  });

  it("a command reading stdin gets EOF at once and does not eat the next command", async () => {
    // Input that never came would run into the timeout instead.
    const res = await env.exec("read line; echo rc=$? line=$line; cat; head -c 10; echo end", { timeoutMs: 10_000 });
    expect(res).toMatchObject({ exitCode: 0, timedOut: false, stdout: "rc=1 line=\nend\n" });
    expect((await env.exec("echo still fine")).stdout).toBe("still fine\n");
  });

  it("a timeout kills a grandchild in the command's group and the shell keeps working", async () => {
    const res = await env.exec("sh -c 'sleep 100 & echo $! > grandchild.pid; wait'", { timeoutMs: 500 });
    expect(res).toMatchObject({ exitCode: 124, timedOut: true });
    const pid = Number(readFileSync(join(taskDir, "grandchild.pid"), "utf8"));
    expect(pid).toBeGreaterThan(0);
    expect(await waitUntil(() => !isAlive(pid), 3000)).toBe(true);
    const after = await env.exec("echo $PPID; exit 7");
    expect(after.exitCode).toBe(7);
    expect(childrenOf(Number(after.stdout.trim()))).not.toContain(pid);
  });

  it("concurrent execs on one environment both succeed with their own output", async () => {
    await env.exec("true"); // the shell is up
    const [a, b, c] = await Promise.all([
      env.exec("sleep 0.3; echo a; echo ea >&2; exit 1"),
      env.exec("echo b; exit 2"),
      env.exec("tr a-z A-Z", { stdin: "c" }),
    ]);
    expect(a).toMatchObject({ exitCode: 1, stdout: "a\n", stderr: "ea\n" });
    expect(b).toMatchObject({ exitCode: 2, stdout: "b\n", stderr: "" });
    expect(c).toMatchObject({ exitCode: 0, stdout: "C" });
  });

  it("sees process env changes made after the shell started, still only allow-listed names", async () => {
    await env.exec("true");
    process.env.LC_HERMES_LATE = "late";
    process.env.HERMES_LATE_SECRET_TOKEN = "nope";
    try {
      expect((await env.exec('echo "$LC_HERMES_LATE/$HERMES_LATE_SECRET_TOKEN"')).stdout).toBe("late/\n");
    } finally {
      delete process.env.LC_HERMES_LATE;
      delete process.env.HERMES_LATE_SECRET_TOKEN;
    }
    expect((await env.exec('echo "${LC_HERMES_LATE-unset}"')).stdout).toBe("unset\n");
  });

  it("keeps output byte for byte (no trailing newline, binary-safe text, marker-like text)", async () => {
    expect((await env.exec("printf abc")).stdout).toBe("abc");
    expect((await env.exec("printf '\\n\\n'")).stdout).toBe("\n\n");
    expect((await env.exec("printf '__HB_0000000000000000__ 1 E0\\n'; echo after")).stdout).toBe(
      "__HB_0000000000000000__ 1 E0\nafter\n",
    );
  });

  it("reports a signal death as 128+n", async () => {
    expect((await env.exec("kill -9 $$")).exitCode).toBe(137);
  });
});

describe("local environment: files", () => {
  it("reads and writes relative to the workdir, creating parents", async () => {
    await env.writeFile("a/b/c.txt", "hello");
    expect(readFileSync(join(taskDir, "a/b/c.txt"), "utf8")).toBe("hello");
    expect((await env.readFile("a/b/c.txt")).toString()).toBe("hello");
    await expect(env.readFile("missing.txt")).rejects.toThrow(/ENOENT/);
  });

  it("uses a relative spec.cwd inside the task folder and refuses a missing absolute one", async () => {
    const e2 = await createLocalEnvironment(
      { runName: "r", taskId: "t2", hostTaskDir: join(root, "t2"), cwd: "repo" },
      {},
    );
    try {
      expect(e2.workdir).toBe(join(root, "t2", "repo"));
      expect((await e2.exec("pwd")).stdout.trim()).toBe(join(root, "t2", "repo"));
    } finally {
      await e2.cleanup();
    }
    await expect(
      createLocalEnvironment(
        { runName: "r", taskId: "t3", hostTaskDir: join(root, "t3"), cwd: "/definitely/not/here" },
        {},
      ),
    ).rejects.toThrow(/not an existing directory/);
  });

  it("keeps the task folder on cleanup unless removeTaskDirOnCleanup is set", async () => {
    await env.writeFile("result.txt", "x");
    await env.cleanup();
    await env.cleanup(); // twice is fine
    expect(existsSync(join(taskDir, "result.txt"))).toBe(true);

    const dir = join(root, "t4");
    const e4 = await createLocalEnvironment(
      { runName: "r", taskId: "t4", hostTaskDir: dir },
      { removeTaskDirOnCleanup: true },
    );
    await e4.writeFile("x.txt", "x");
    await e4.cleanup();
    expect(existsSync(dir)).toBe(false);
  });
});

describe("local environment: background processes", () => {
  it("starts, polls and reports the exit code and output", async () => {
    const { id } = await env.startBackground("echo hello; sleep 0.4; echo bye; exit 5");
    const first = await env.pollBackground(id);
    expect(first.running).toBe(true);
    expect(first.exitCode).toBeNull();
    let status = first;
    expect(await waitUntil(async () => !(status = await env.pollBackground(id)).running, 5000)).toBe(true);
    expect(status.exitCode).toBe(5);
    expect(status.output).toBe("hello\nbye\n");
  });

  it("runs in the given cwd with the given env", async () => {
    mkdirSync(join(taskDir, "w"));
    const { id } = await env.startBackground('pwd; echo "v=$BGVAR"', { cwd: "w", env: { BGVAR: "42" } });
    let s = await env.pollBackground(id);
    await waitUntil(async () => !(s = await env.pollBackground(id)).running);
    expect(s.output).toBe(`${join(taskDir, "w")}\nv=42\n`);
    expect(s.exitCode).toBe(0);
  });

  it("kill ends the process and everything it started; list shows all", async () => {
    const { id } = await env.startBackground("sleep 100 & echo $! > bgchild.pid; sleep 100");
    expect(await waitUntil(() => existsSync(join(taskDir, "bgchild.pid")))).toBe(true);
    const childPid = Number(readFileSync(join(taskDir, "bgchild.pid"), "utf8"));
    const other = await env.startBackground("exit 0");
    await env.killBackground(id);
    const s = await env.pollBackground(id);
    expect(s.running).toBe(false);
    expect(s.exitCode).toBeNull();
    expect(await waitUntil(() => !isAlive(childPid), 3000)).toBe(true);
    const all = await env.listBackground();
    expect(all.map((x) => x.id).sort()).toEqual([id, other.id].sort());
    await expect(env.pollBackground("proc_nope")).rejects.toThrow(/unknown background process/);
  });

  it("cleanup kills running background processes", async () => {
    const { id } = await env.startBackground("echo $$ > bg.pid; sleep 100");
    expect(
      await waitUntil(
        () => existsSync(join(taskDir, "bg.pid")) && readFileSync(join(taskDir, "bg.pid"), "utf8").trim() !== "",
      ),
    ).toBe(true);
    const pid = Number(readFileSync(join(taskDir, "bg.pid"), "utf8"));
    expect((await env.pollBackground(id)).running).toBe(true);
    await env.cleanup();
    expect(await waitUntil(() => !isAlive(pid), 3000)).toBe(true);
  });
});

const BUSYBOX = ["/usr/bin/busybox", "/bin/busybox"].find((p) => existsSync(p));

describe.skipIf(!BUSYBOX)("BackgroundProcessManager with busybox tools only", () => {
  it("works when sh, setsid, kill, tail and wc are busybox applets", async () => {
    const bin = join(root, "bbbin");
    mkdirSync(bin);
    for (const applet of ["sh", "setsid", "kill", "tail", "wc", "cat", "mkdir", "mv", "rm", "sleep", "echo"]) {
      symlinkSync(BUSYBOX!, join(bin, applet));
    }
    // Every command of the manager runs under busybox sh with only the applets on PATH.
    const exec = (cmd: string, opts: Parameters<LocalEnvironment["exec"]>[1] = {}) =>
      env.exec(`exec ${join(bin, "sh")} -c ${shellQuote(cmd)}`, { ...opts, env: { ...(opts?.env ?? {}), PATH: bin } });
    const manager = new BackgroundProcessManager(exec, { stateDir: join(root, "bbstate"), shell: "sh" });
    const done = await manager.start("echo one; exit 4");
    let s = await manager.poll(done.id);
    await waitUntil(async () => !(s = await manager.poll(done.id)).running);
    expect(s).toMatchObject({ running: false, exitCode: 4, output: "one\n" });

    const long = await manager.start("sleep 100");
    expect((await manager.poll(long.id)).running).toBe(true);
    await manager.kill(long.id);
    expect((await manager.poll(long.id)).running).toBe(false);
    await manager.cleanup();
    expect(existsSync(join(root, "bbstate"))).toBe(false);
  });
});
