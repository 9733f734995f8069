/**
 * The bubblewrap sandbox of `--env local`, driven directly: what a task can see and change, its files through
 * the sandbox's own view, its processes, and what happens when the sandbox breaks. Needs bwrap (bubblewrap).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SandboxEnvironment, sandboxNetwork, sandboxWorkdir } from "../tools/environments/local/local_sandbox.js";
import { systemLayout } from "../tools/environments/local/bwrap.js";
import { taskEnvironment } from "../tools/environments/task_env.js";
import { shellQuote } from "../tools/environments/base.js";
import { detectDangerousCommandResolved } from "../tools/approval/gate.js";
import { silentLogger, waitUntil } from "./helpers/local_ctx.js";
import { createToolPipeline } from "../tools/pipeline.js";
import "../tools/file_tools.js";
import { resolveRunConfig } from "../src/config/run_config.js";

let root: string;
const envs: SandboxEnvironment[] = [];

async function sandbox(
  opts: {
    cwd?: string;
    network?: string;
    runNetwork?: string;
    passEnv?: string[];
    pidsLimit?: number;
    lost?: string[];
  } = {},
): Promise<SandboxEnvironment> {
  const taskDir = join(root, `task-${envs.length}`);
  const env = await SandboxEnvironment.create(
    {
      runName: "r",
      taskId: `t${envs.length}`,
      hostTaskDir: taskDir,
      cwd: opts.cwd,
      network: opts.network,
      reportLost: (why) => opts.lost?.push(why),
    },
    { network: opts.runNetwork, passEnv: opts.passEnv, pidsLimit: opts.pidsLimit },
  );
  envs.push(env);
  return env;
}

/** Host pids of processes whose command line contains `needle`. */
function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (cmd.includes(needle) && !/^\S+ \(.*\) Z/.test(stat)) found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "hb-sandbox-"));
});

afterEach(async () => {
  for (const env of envs.splice(0)) await env.cleanup();
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("local sandbox: a task folder an earlier attempt left", () => {
  // A kept folder (--keep-workspaces) holds what the last verify put there: the row's hidden tests.
  const leftBehind = (name: string) => {
    const dir = join(root, name);
    mkdirSync(join(dir, "checks"), { recursive: true });
    writeFileSync(join(dir, "checks", "hidden.sh"), "echo the hidden test\n");
    writeFileSync(join(dir, "solution.txt"), "the last attempt's work\n");
    return dir;
  };
  const start = async (dir: string, fresh: boolean, disk?: string) => {
    const env = await SandboxEnvironment.create(
      { runName: "r", taskId: `again-${envs.length}`, hostTaskDir: dir, ...(fresh ? { freshTaskDir: true } : {}) },
      disk ? { disk } : {},
    );
    envs.push(env);
    return env;
  };
  const disks = process.getuid?.() === 0 ? [undefined, "64m"] : [undefined];

  for (const disk of disks) {
    it(`is empty for a new attempt (freshTaskDir)${disk ? ", with a disk quota" : ""}`, async () => {
      const env = await start(leftBehind(`fresh-${disk ?? "plain"}`), true, disk);
      const r = await env.exec("ls -A; echo listed");
      expect(r.stdout).toBe("listed\n");
    });

    it(`is the task's folder when looked at again (score)${disk ? ", with a disk quota" : ""}`, async () => {
      const env = await start(leftBehind(`again-${disk ?? "plain"}`), false, disk);
      const r = await env.exec("ls -A; cat checks/hidden.sh");
      expect(r.stdout).toBe("checks\nsolution.txt\necho the hidden test\n");
    });
  }
});

describe("local sandbox: what a task sees", () => {
  it("works in /workspace, the task folder; writes there land in the host folder; no host path shows", async () => {
    const env = await sandbox();
    expect(env.workdir).toBe("/workspace");
    const r = await env.exec("pwd; echo hello > made.txt; echo $HOME; ls -d /workspace");
    expect(r).toMatchObject({ exitCode: 0, stdout: "/workspace\n/home/sandbox\n/workspace\n" });
    expect(readFileSync(join(env.taskDir, "made.txt"), "utf8")).toBe("hello\n");
    expect(r.stdout).not.toContain(root);
  });

  it("a fork that fails inside a command fails that part only, as under bash -c: the rest of the command runs", async () => {
    const env = await sandbox();
    const r = await env.exec(`(ulimit -u 1; exec sh -c 'true & wait' 2>&1) ; echo after`);
    expect(r.exitCode).toBe(0);
    expect(r.stdout + r.stderr).toContain("fork");
    expect(r.stdout).toMatch(/after\n$/);
  });

  it("the host file system is read-only; /tmp and $HOME are private; the user's config is not there", async () => {
    const hostFile = join(root, "host-file.txt");
    writeFileSync(hostFile, "original");
    const env = await sandbox();
    const marker = `hb-sandbox-${process.pid}-${Date.now()}`;
    const r = await env.exec(
      `echo forged > ${hostFile}; echo rc=$?; touch /etc/hb-x 2>/dev/null; echo etc=$?; ` +
        `echo t > /tmp/${marker} && echo tmp=ok; mkdir -p ~/.hermes-batch && echo 'command_allowlist: [recursive_delete]' > ~/.hermes-batch/config.yaml && echo home=ok; ` +
        `ls ${process.env.HOME ?? "/root"}/.hermes-batch 2>&1 | head -1`,
    );
    expect(r.stdout).toContain("rc=1");
    expect(r.stdout).toContain("etc=1");
    expect(r.stdout).toContain("tmp=ok");
    expect(r.stdout).toContain("home=ok");
    expect(readFileSync(hostFile, "utf8")).toBe("original");
    expect(existsSync("/etc/hb-x")).toBe(false);
    expect(existsSync(join("/tmp", marker))).toBe(false);
    const userConfig = join(process.env.HOME ?? "/root", ".hermes-batch", "config.yaml");
    expect(existsSync(userConfig) && readFileSync(userConfig, "utf8").includes("recursive_delete")).toBe(false);
  });

  it("has its own /proc: the harness's environment (and its keys) cannot be read", async () => {
    process.env.HB_SANDBOX_TEST_API_KEY = "sk-sandbox-test-secret-1234";
    try {
      const env = await sandbox();
      const r = await env.exec(
        `cat /proc/${process.pid}/environ; cat /proc/*/environ | tr '\\0' '\\n'; ls /proc | grep -c '^[0-9]'; echo "k=$HB_SANDBOX_TEST_API_KEY"`,
      );
      expect(r.stdout + r.stderr).not.toContain("sk-sandbox-test-secret-1234");
      expect(r.stdout).toContain("k=\n");
      const pids = Number(/^(\d+)$/m.exec(r.stdout)?.[1]);
      expect(pids).toBeLessThan(10);
    } finally {
      delete process.env.HB_SANDBOX_TEST_API_KEY;
    }
  });

  it("gets only allow-listed variables, plus --pass-env names", async () => {
    process.env.HB_SANDBOX_PLAIN = "plain";
    process.env.HB_SANDBOX_PASSED = "passed";
    try {
      const env = await sandbox({ passEnv: ["HB_SANDBOX_PASSED"] });
      const r = await env.exec('echo "$HB_SANDBOX_PLAIN|$HB_SANDBOX_PASSED|${PATH:+path}"');
      expect(r.stdout).toBe("|passed|path\n");
      expect(
        taskEnvironment({
          PATH: "/p",
          LC_ALL: "C",
          DATABASE_URL: "postgres://u:pw@h/db",
          SLACK_WEBHOOK_URL: "https://x",
        }),
      ).toEqual({ PATH: "/p", LC_ALL: "C" });
    } finally {
      delete process.env.HB_SANDBOX_PLAIN;
      delete process.env.HB_SANDBOX_PASSED;
    }
  });

  it("--pass-env of a variable that holds one of the run's keys is refused", () => {
    process.env.HB_SANDBOX_HOLDS_KEY = "sk-the-endpoint-key-123456";
    try {
      const flags = { dataset: "d.jsonl", api_key: "sk-the-endpoint-key-123456", pass_env: ["HB_SANDBOX_HOLDS_KEY"] };
      expect(() => resolveRunConfig(flags, undefined, { combinations: true })).toThrow(
        /--pass-env HB_SANDBOX_HOLDS_KEY: it holds the run's --api-key/,
      );
      expect(resolveRunConfig({ ...flags, api_key: "other" }, undefined, { combinations: true }).pass_env).toEqual([
        "HB_SANDBOX_HOLDS_KEY",
      ]);
    } finally {
      delete process.env.HB_SANDBOX_HOLDS_KEY;
    }
  });

  it("has no network unless the run shares the host's; a row cannot ask for more than the run", async () => {
    const server: Server = createServer((s) => s.end("pong\n"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;
      const closed = await sandbox();
      expect((await closed.exec(probe, { timeoutMs: 20_000 })).stdout).not.toContain("pong");
      const open = await sandbox({ runNetwork: "host" });
      expect((await open.exec(probe, { timeoutMs: 20_000 })).stdout).toContain("pong");
    } finally {
      server.close();
    }
    expect(() => sandboxNetwork(undefined, "host")).toThrow(/network 'host' is not allowed/);
    expect(() => sandboxNetwork("bridge", undefined)).toThrow(/--network bridge/);
    expect(sandboxNetwork("host", "none")).toEqual({ hostNetwork: false });
  });

  it("a task folder kept from an earlier attempt is writable by the new sandbox", async () => {
    const first = await sandbox();
    await first.exec("mkdir -p deep/er && echo 1 > deep/er/f");
    await first.cleanup();
    const again = await SandboxEnvironment.create({ runName: "r", taskId: "again", hostTaskDir: first.taskDir }, {});
    envs.push(again);
    expect(await again.exec("echo 2 >> deep/er/f && cat deep/er/f")).toMatchObject({ exitCode: 0, stdout: "1\n2\n" });
  });

  it("a task folder left as a link by a killed run (its disk slot gone) is started afresh", async () => {
    const taskDir = join(root, "killed-task");
    symlinkSync(join(root, "slot-swept-away"), taskDir);
    const env = await SandboxEnvironment.create({ runName: "r", taskId: "killed", hostTaskDir: taskDir }, {});
    envs.push(env);
    expect(await env.exec("echo fresh > f && cat f")).toMatchObject({ exitCode: 0, stdout: "fresh\n" });
    expect(readFileSync(join(env.taskDir, "f"), "utf8")).toBe("fresh\n");
  });

  it("a row's cwd lives inside /workspace; one outside it is refused", async () => {
    const env = await sandbox({ cwd: "repo/src" });
    expect((await env.exec("pwd")).stdout).toBe("/workspace/repo/src\n");
    expect(existsSync(join(env.taskDir, "repo", "src"))).toBe(true);
    expect(sandboxWorkdir("/workspace/a")).toBe("/workspace/a");
    expect(() => sandboxWorkdir("/etc")).toThrow(/cwd '\/etc' is outside the task folder/);
    expect(() => sandboxWorkdir("../..")).toThrow(/outside the task folder/);
  });
});

describe("local sandbox: files and symlinks", () => {
  it("reads and writes through the sandbox's view: a link to a host file never reaches the host", async () => {
    const env = await sandbox();
    await env.writeFile("dir/a.bin", Buffer.from([0, 1, 2, 255]));
    expect([...(await env.readFile("/workspace/dir/a.bin"))]).toEqual([0, 1, 2, 255]);
    const target = join(root, "host-target.txt");
    writeFileSync(target, "host content");
    await env.exec(`ln -s ${target} link.txt`);
    await expect(env.writeFile("link.txt", "overwritten")).rejects.toThrow();
    expect(readFileSync(target, "utf8")).toBe("host content");
    await expect(env.readFile("missing.txt")).rejects.toMatchObject({ code: "ENOENT" });
    await env.exec("ln -s /root/.hermes-batch/config.yaml cfg");
    await expect(env.readFile("cfg")).rejects.toThrow();
  });

  it("write_file under a path that is a file fails in the shell's words, without the sandbox's path", async () => {
    const env = await sandbox();
    await env.exec("printf 'x\\n' > r.txt");
    await expect(env.writeFile("r.txt/sub.txt", "z")).rejects.toMatchObject({ code: "ENOTDIR" });
    const ctx = { taskId: "t", envKind: "local", getEnv: async () => env, logger: silentLogger };
    const text = await createToolPipeline().call("write_file", { path: "r.txt/sub.txt", content: "z" }, ctx);
    expect(JSON.parse(text)).toEqual({
      bytes_written: 0,
      dirs_created: false,
      error: "Failed to write file: r.txt/sub.txt: Not a directory",
    });
  });

  it("resolves paths inside the sandbox for the approval gate: a delete through a link to a host folder is flagged", async () => {
    // A host folder the sandbox sees (read-only): anything outside /tmp, /run and the homes.
    const hostDir = "/usr/share";
    const env = await sandbox();
    await env.exec(`ln -s ${hostDir} build && mkdir -p own`);
    expect(await env.realpath("build")).toBe(hostDir);
    expect(await env.realpath("own")).toBe("/workspace/own");
    expect(await env.realpath("nothing-here")).toBeNull();
    const realpath = (p: string) => env.realpath(p);
    const linked = await detectDangerousCommandResolved("rm -rf build/*", { workdir: "/workspace", realpath });
    expect(linked.matches?.map((m) => m.key)).toContain("symlink_outside_workdir");
    expect((await detectDangerousCommandResolved("rm -rf own/*", { workdir: "/workspace", realpath })).dangerous).toBe(
      false,
    );
  });
});

describe("local sandbox: processes", () => {
  it("commands run one after another in one shell; a timeout kills the command's group", async () => {
    const env = await sandbox();
    const [a, b] = await Promise.all([env.exec("sleep 0.3; echo a"), env.exec("echo b")]);
    expect([a.stdout, b.stdout]).toEqual(["a\n", "b\n"]);
    const t = await env.exec("sleep 4242 & sleep 4243", { timeoutMs: 500 });
    expect(t).toMatchObject({ timedOut: true, exitCode: 124 });
    expect(
      await waitUntil(
        () => processesWith("sleep\u00004242").length === 0 && processesWith("sleep\u00004243").length === 0,
        10_000,
      ),
    ).toBe(true);
    expect((await env.exec("echo still")).stdout).toBe("still\n");
  });

  it("a timeout reaches what ignores SIGTERM in the command's group, after its leader ended (SIGKILL after the grace)", async () => {
    const env = await sandbox();
    // The group's leader ends at SIGTERM; the background sleep ignores it and must die by the later SIGKILL.
    const t = await env.exec("(trap '' TERM; exec sleep 4247) & sleep 4248", { timeoutMs: 500 });
    expect(t).toMatchObject({ timedOut: true, exitCode: 124 });
    expect(
      await waitUntil(
        () => processesWith("sleep\u00004247").length === 0 && processesWith("sleep\u00004248").length === 0,
        10_000,
      ),
    ).toBe(true);
    expect((await env.exec("echo still")).stdout).toBe("still\n");
  });

  it("a command, its cwd and its env reach the shell byte for byte, in the C and a UTF-8 locale", async () => {
    const saved = process.env.LC_ALL;
    try {
      for (const [locale, chars] of [
        ["C", "5"],
        ["C.UTF-8", "2"],
      ]) {
        process.env.LC_ALL = locale;
        const env = await sandbox();
        // The command runs in the task's locale: a UTF-8 character counts once there, as its bytes in C.
        expect((await env.exec("v='é✓'; echo ${#v}")).stdout, locale).toBe(`${chars}\n`);
        const text = "héllo ✓ 'q' \\ \\x41 $HOME `x` \u{1F600}\t\u0001\u007f";
        expect((await env.exec(`printf '%s' ${shellQuote(text)}`)).stdout, locale).toBe(text);
        const heredoc = "cat <<'EOF'\nline 1\n  é 2\nEOF\necho done";
        expect((await env.exec(heredoc)).stdout, locale).toBe("line 1\n  é 2\ndone\n");
        // A NUL is dropped, as bash drops it from a line it reads.
        expect((await env.exec("echo a\u0000b")).stdout, locale).toBe("ab\n");
        const long = "é".repeat(150_000);
        expect((await env.exec(`printf %s ${long} | wc -c`)).stdout.trim(), locale).toBe("300000");
        await env.exec("mkdir dïr");
        const r = await env.exec('printf %s "$V"; pwd', { env: { V: "ü\n'x" }, cwd: "dïr" });
        expect(r.stdout, locale).toBe("ü\n'x/workspace/dïr\n");
        expect((await env.exec("echo ok")).stdout, locale).toBe("ok\n");
        // The protocol's own variables (the frame read, the end marker with its nonce) are not the command's.
        const own = "${hb_req-u}${hb_n-u}${hb_end-u}${hb_boot-u}${hb_mark-u}${hb_nl-u}";
        expect((await env.exec(`echo "${own}"`)).stdout, locale).toBe("uuuuuu\n");
      }
    } finally {
      if (saved === undefined) delete process.env.LC_ALL;
      else process.env.LC_ALL = saved;
    }
  });

  it("a command that stops itself is waited for until its timeout kills it; the shell goes on", async () => {
    const env = await sandbox();
    const t = await env.exec("sleep 0.2; kill -STOP $BASHPID; echo resumed", { timeoutMs: 1_500 });
    expect(t).toMatchObject({ timedOut: true, exitCode: 124 });
    expect(t.stdout).not.toContain("resumed");
    expect((await env.exec("echo still")).stdout).toBe("still\n");
  });

  it("`kill $$` ends the command, not the sandbox's shell", async () => {
    const env = await sandbox();
    expect((await env.exec("kill -9 $$")).exitCode).toBe(137);
    expect((await env.exec("echo alive")).stdout).toBe("alive\n");
  });

  it("cleanup kills every process of the sandbox, detached ones included", async () => {
    const env = await sandbox();
    await env.exec("setsid sleep 4244 & nohup sleep 4245 >/dev/null 2>&1 &");
    await env.startBackground("sleep 4246");
    expect(processesWith("sleep\u00004244").length).toBe(1);
    await env.cleanup();
    expect(
      await waitUntil(
        () => ["4244", "4245", "4246"].every((n) => processesWith(`sleep\u0000${n}`).length === 0),
        10_000,
      ),
    ).toBe(true);
  });

  it("a shell killed from inside is replaced at the next call over the same folder: nothing is reported lost", async () => {
    const lost: string[] = [];
    const env = await sandbox({ lost });
    await env.exec("echo kept > note.txt");
    await env.exec("kill -9 $PPID");
    const next = await env.exec("echo x; cat note.txt");
    expect(next).toMatchObject({ exitCode: 0, stdout: "x\nkept\n" });
    expect(lost).toEqual([]);
  });

  it("a fork bomb stays within the process limit, and a sandbox that cannot start a process any more is reported lost", {
    timeout: 120_000,
  }, async () => {
    const lost: string[] = [];
    const env = await sandbox({ lost, pidsLimit: 64 });
    expect((await env.exec("ulimit -u")).stdout).toBe("64\n");
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, env.processes().length)), 20);
    try {
      // The bomb outlives its command (it runs in the background).
      await env.exec("bomb() { bomb | bomb & }; bomb; sleep 3", { timeoutMs: 10_000 });
      const after = await env
        .exec("echo after", { timeoutMs: 60_000 })
        .catch((err: Error) => ({ exitCode: -1, stdout: "", stderr: err.message }));
      // Either the bomb burnt out against the limit and the sandbox goes on, or the sandbox is reported lost.
      if (after.stdout !== "after\n") expect(await waitUntil(() => lost.length > 0, 60_000)).toBe(true);
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBeGreaterThan(10);
    // The limit counts the sandbox's processes (init and the bwrap monitor run as another user).
    expect(most).toBeLessThanOrEqual(64 + 2);
    const pids = env.processes();
    await env.cleanup();
    expect(
      await waitUntil(
        () => pids.every((p) => !existsSync(`/proc/${p}/stat`) || /\) Z/.test(readFileSync(`/proc/${p}/stat`, "utf8"))),
        20_000,
      ),
    ).toBe(true);
  });
});

describe("local sandbox: a sandbox that cannot start", () => {
  it("says why: what bubblewrap wrote before it gave up", async () => {
    const missing = join(root, "no-such-folder", "tools");
    await expect(
      SandboxEnvironment.create(
        { runName: "r", taskId: "broken", hostTaskDir: join(root, "task-broken") },
        { sandboxRo: [missing] },
      ),
    ).rejects.toThrow(
      /could not start the bubblewrap sandbox \(its shell did not start: it ended before answering: .*no-such-folder/,
    );
  });
});

describe("local sandbox: credential files under /etc", () => {
  it("are looked for at each sandbox's start: one written since is masked, one removed since is not bound", () => {
    const fakeRoot = mkdtempSync(join(tmpdir(), "hb-root-"));
    mkdirSync(join(fakeRoot, "etc", "apt"), { recursive: true });
    mkdirSync(join(fakeRoot, "usr"));
    const masked = (args: string[]) => args.some((a, i) => a === "/etc/apt/auth.conf" && args[i - 1] === "/dev/null");
    expect(masked(systemLayout(fakeRoot))).toBe(false);
    writeFileSync(join(fakeRoot, "etc", "apt", "auth.conf"), "machine x login y password z\n");
    const withFile = systemLayout(fakeRoot);
    expect(masked(withFile)).toBe(true);
    expect(withFile.slice(0, 3)).toEqual(["--ro-bind", join(fakeRoot, "usr"), "/usr"]);
    rmSync(join(fakeRoot, "etc", "apt", "auth.conf"));
    expect(masked(systemLayout(fakeRoot))).toBe(false);
    rmSync(fakeRoot, { recursive: true, force: true });
  });
});
