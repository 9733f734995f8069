/**
 * Docker backend against the real engine (started by scripts/start-dockerd.sh, images from
 * scripts/build-test-image.sh). Never skipped: without an engine these tests fail with the reason.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capOutput, type Environment } from "../tools/environments/base.js";
import { bashArgs } from "../tools/environments/shell/shell_session.js";
import {
  DockerEnvironment,
  DockerImageNotFoundError,
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  liveDockerContainers,
  listLabelledContainers,
  preflightDocker,
  removeContainersByLabel,
} from "../tools/environments/docker/docker.js";
import { dockerClient } from "../tools/environments/docker/docker_client.js";
import { OutputCollector } from "../tools/environments/shell/output_capture.js";
import { SandboxGates } from "../tools/environments/sandbox_gates.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { waitUntil } from "./helpers/wait.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RUN = uniqueRunName("dockertest");
let image = "";
let busybox = "";

function spec(taskId: string, extra: Partial<Parameters<typeof createDockerEnvironment>[0]> = {}) {
  return { runName: RUN, taskId, hostTaskDir: `/tmp/${RUN}/${taskId}`, taskTimeoutSec: 600, ...extra };
}

async function inspect(env: Environment) {
  return dockerClient()
    .getContainer((env as DockerEnvironment).containerId)
    .inspect();
}

async function processList(env: Environment): Promise<string> {
  const r = await env.exec("ps -eo pid,args 2>/dev/null || ps");
  return r.stdout;
}

beforeAll(async () => {
  ({ image, busyboxImage: busybox } = await ensureDockerTestImages());
}, 600_000);

afterAll(async () => {
  await cleanupAllDockerEnvironments();
  await removeContainersByLabel({ run: RUN });
});

describe.each([
  ["persistent shell", true],
  ["one exec per command", false],
])("exec (%s)", (_label, persistentShell) => {
  let env: Environment;
  beforeAll(async () => {
    env = await createDockerEnvironment(spec(`exec-${persistentShell}`), { image, persistentShell });
  });
  afterAll(async () => env?.cleanup());

  it("returns stdout, stderr and the exit code separately", async () => {
    const r = await env.exec("echo out; echo err >&2; exit 3");
    expect(r).toEqual({ exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false, truncated: false });
    const n = await env.exec("printf 'no newline'");
    expect(n.stdout).toBe("no newline");
    expect(n.exitCode).toBe(0);
  });

  it("runs in the workdir by default, in cwd when given, and reports a missing cwd", async () => {
    expect((await env.exec("pwd")).stdout).toBe("/work\n");
    expect((await env.exec("pwd", { cwd: "/tmp" })).stdout).toBe("/tmp\n");
    await env.exec("mkdir -p sub/dir");
    expect((await env.exec("pwd", { cwd: "sub/dir" })).stdout).toBe("/work/sub/dir\n");
    const missing = await env.exec("pwd", { cwd: "/nope" });
    expect(missing.exitCode).not.toBe(0);
    expect(missing.stdout).toBe("");
  });

  it("passes env and stdin; one command's cd/export does not leak into the next", async () => {
    const r = await env.exec('echo "A=$A B=$B"', { env: { A: "1", B: "two words 'quoted'" } });
    expect(r.stdout).toBe("A=1 B=two words 'quoted'\n");
    const s = await env.exec("wc -c; cat /dev/null", { stdin: "12345" });
    expect(s.stdout.trim()).toBe("5");
    await env.exec("cd /; export LEAK=1");
    expect((await env.exec('pwd; echo "[$LEAK]"')).stdout).toBe("/work\n[]\n");
  });

  it("keeps multi-line commands, quotes and heredocs intact, and uses bash where the image has it", async () => {
    const r = await env.exec("cat <<'EOF'\nline 'one'\n  \"two\" $HOME\nEOF\necho ${BASH_VERSION:+bash}");
    expect(r.stdout).toBe("line 'one'\n  \"two\" $HOME\nbash\n");
  });

  it.runIf(persistentShell)(
    "under bash a command is one job-control subshell of the persistent bash: no setsid, no second shell",
    async () => {
      // The command's own process: its parent is the persistent shell, and it leads its own process group.
      const r = await env.exec(
        'read -r pid comm state ppid pgrp rest < /proc/$BASHPID/stat; echo "$pgrp=$pid"; cat /proc/$ppid/cmdline | tr "\\0" " "',
      );
      expect(r.stderr).toBe("");
      const [group, parent] = r.stdout.split("\n");
      const [pgrp, pid] = group!.split("=");
      expect(pgrp).toBe(pid);
      expect(parent).toBe(`bash ${bashArgs("bash").join(" ")} `);
      // A command's pipeline and jobs run in its group, not the shell's.
      const jobs = await env.exec(
        'sleep 0.1 & read -r a b c d g rest < /proc/$!/stat; [ "$g" = "$BASHPID" ] && echo same-group',
      );
      expect(jobs.stdout).toBe("same-group\n");
    },
  );

  it("runs as the image's unprivileged user", async () => {
    expect((await env.exec("id -u; id -un")).stdout).toBe("1000\nagent\n");
  });

  it("a timeout kills the whole process tree (sleep 100 is gone from ps)", async () => {
    const started = Date.now();
    const r = await env.exec("sh -c 'sleep 100; echo child-survived' & sleep 100; echo parent-survived", {
      timeoutMs: 800,
    });
    expect(Date.now() - started).toBeLessThan(6000);
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(124);
    expect(r.stdout).not.toContain("survived");
    const ps = await processList(env);
    expect(ps).not.toMatch(/sleep 100/);
    // The environment is still usable afterwards.
    expect((await env.exec("echo alive")).stdout).toBe("alive\n");
  });

  it("an abort signal stops the command with exit code 130", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const r = await env.exec("sleep 100", { signal: ac.signal });
    expect(r.exitCode).toBe(130);
    expect(r.timedOut).toBe(false);
    expect(await processList(env)).not.toMatch(/sleep 100/);
  });

  it("caps output exactly like capOutput, keeping head and tail", async () => {
    const r = await env.exec("i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); done", { maxOutputChars: 1000 });
    let full = "";
    for (let i = 0; i < 3000; i++) full += `line${i}\n`;
    expect(r.truncated).toBe(true);
    expect(r.stdout).toBe(capOutput(full, 1000).text);
    expect(r.stdout).toContain("line0\n");
    expect(r.stdout).toContain("line2999\n");
  });

  it("does not hang on a command that leaves a process holding its output open", async () => {
    const started = Date.now();
    const r = await env.exec("sleep 30 & echo started");
    expect(r.stdout).toBe("started\n");
    expect(Date.now() - started).toBeLessThan(5000);
    await env.exec("pkill -f 'sleep 30' || true");
  });

  it("serves concurrent calls", async () => {
    const results = await Promise.all([
      env.exec("sleep 0.3; echo a"),
      env.exec("echo b"),
      env.exec("echo c >&2; exit 4"),
    ]);
    expect(results.map((r) => [r.stdout, r.stderr, r.exitCode])).toEqual([
      ["a\n", "", 0],
      ["b\n", "", 0],
      ["", "c\n", 4],
    ]);
  });
});

describe("files, network, limits", () => {
  let env: Environment;
  let bb: Environment;
  beforeAll(async () => {
    [env, bb] = await Promise.all([
      createDockerEnvironment(spec("main"), { image, memoryMb: 256, cpus: 0.5, pidsLimit: 64 }),
      createDockerEnvironment(spec("busybox", { image: busybox }), { image }),
    ]);
  });
  afterAll(async () => Promise.all([env?.cleanup(), bb?.cleanup()]));

  it("uses the row's image over the run's image (busybox has no python, no bash)", async () => {
    expect((await inspect(bb)).Config.Image).toBe(busybox);
    const r = await bb.exec("command -v python3 bash || echo none");
    expect(r.stdout).toBe("none\n");
    expect((await bb.exec("id -u")).stdout).toBe("0\n");
  });

  it("without bash (setsid sh -c per command) a timeout still kills the command's whole tree", async () => {
    const r = await bb.exec("sh -c 'sleep 101; echo child-survived' & sleep 101; echo parent-survived", {
      timeoutMs: 800,
    });
    expect(r).toMatchObject({ timedOut: true, exitCode: 124 });
    expect(r.stdout).not.toContain("survived");
    // A SIGKILLed process is listed until it has exited and been reaped (a moment, longer under load).
    expect(await waitUntil(async () => !/sleep 101/.test(await processList(bb)), 5_000, 100)).toBe(true);
    expect((await bb.exec("echo alive")).stdout).toBe("alive\n");
  });

  it("reads and writes files in a python-less image, creating parent directories", async () => {
    await bb.writeFile("deep/er/file.txt", "hello\nworld\n");
    expect((await bb.exec("cat /work/deep/er/file.txt")).stdout).toBe("hello\nworld\n");
    expect((await bb.readFile("/work/deep/er/file.txt")).toString()).toBe("hello\nworld\n");
    const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await bb.writeFile("/work/bin.dat", binary);
    expect(Buffer.compare(await bb.readFile("bin.dat"), binary)).toBe(0);
    await bb.exec("printf 'made by exec' > /work/exec.txt");
    expect((await bb.readFile("exec.txt")).toString()).toBe("made by exec");
    await expect(bb.readFile("/work/missing.txt")).rejects.toThrow(/No such file/);
    await expect(bb.readFile("/work")).rejects.toThrow(/directory/);
  });

  it("reads and writes files on the tmpfs /tmp too", async () => {
    await bb.writeFile("/tmp/a/b.txt", "on tmpfs");
    expect((await bb.exec("cat /tmp/a/b.txt")).stdout).toBe("on tmpfs");
    await bb.exec("echo from-exec > /tmp/c.txt");
    expect((await bb.readFile("/tmp/c.txt")).toString()).toBe("from-exec\n");
    await expect(bb.readFile("/tmp/none")).rejects.toThrow();
  });

  it("files written by writeFile belong to the unprivileged user and keep an existing file's mode", async () => {
    await env.writeFile("owned/x.sh", "#!/bin/sh\necho hi\n");
    expect((await env.exec("stat -c '%u %a' owned owned/x.sh")).stdout).toBe("1000 755\n1000 644\n");
    await env.exec("chmod 755 owned/x.sh");
    await env.writeFile("owned/x.sh", "#!/bin/sh\necho changed\n");
    expect((await env.exec("./owned/x.sh")).stdout).toBe("changed\n");
  });

  it("file tools act with the task user's rights: no reading /etc/shadow, a symlink write is judged by its target", async () => {
    await expect(env.readFile("/etc/shadow")).rejects.toThrow(/Permission denied/);
    await env.exec("ln -sf /etc/passwd link-to-passwd");
    const before = (await env.exec("cat /etc/passwd")).stdout;
    await expect(env.writeFile("link-to-passwd", "evil:x:0:0::/:/bin/sh\n")).rejects.toThrow(/Permission denied/);
    expect((await env.exec("cat /etc/passwd")).stdout).toBe(before);
    expect((await env.exec("readlink link-to-passwd")).stdout).toBe("/etc/passwd\n");
    // A link to a file the user owns is written through, not replaced.
    await env.writeFile("target.txt", "old");
    await env.exec("ln -sf target.txt link-to-own");
    await env.writeFile("link-to-own", "new");
    expect((await env.exec("cat target.txt; echo; readlink link-to-own")).stdout).toBe("new\ntarget.txt\n");
  });

  it("resolves paths inside the container for the approval gate: a delete through a link out of the workdir is flagged", async () => {
    const { detectDangerousCommandResolved } = await import("../tools/approval/gate.js");
    await env.exec("rm -rf build own; ln -s /usr/share build && mkdir -p own");
    expect(await (env as { realpath(p: string): Promise<string | null> }).realpath("build")).toBe("/usr/share");
    expect(await (env as { realpath(p: string): Promise<string | null> }).realpath("nothing-here")).toBeNull();
    const realpath = (p: string) => (env as { realpath(p: string): Promise<string | null> }).realpath(p);
    const linked = await detectDangerousCommandResolved("rm -rf build/*", { workdir: env.workdir, realpath });
    expect(linked.matches?.map((m) => m.key)).toContain("symlink_outside_workdir");
    expect((await detectDangerousCommandResolved("rm -rf own/*", { workdir: env.workdir, realpath })).dangerous).toBe(
      false,
    );
    // Many paths in one exec, in their order; a name with a newline comes back whole.
    await env.exec("mkdir -p 'two\nlines' && ln -sfn /usr/share 'two\nlines/out'");
    const realpaths = (ps: readonly string[]) =>
      (env as { realpaths(p: readonly string[]): Promise<(string | null)[]> }).realpaths(ps);
    expect(await realpaths(["build", "nothing-here", "own", "two\nlines", "two\nlines/out"])).toEqual([
      "/usr/share",
      null,
      `${env.workdir}/own`,
      `${env.workdir}/two\nlines`,
      "/usr/share",
    ]);
    // The gate asks for a command's paths at once: one exec answers them all.
    const spied = env as unknown as { realpaths(p: readonly string[]): Promise<(string | null)[]> };
    const batches: string[][] = [];
    const unspied = spied.realpaths.bind(env);
    spied.realpaths = async (ps) => {
      batches.push([...ps]);
      return unspied(ps);
    };
    try {
      const deep = await detectDangerousCommandResolved("echo x > build/new/deep.txt", {
        workdir: env.workdir,
        realpath,
      });
      expect(deep.matches?.map((m) => m.key)).toContain("symlink_outside_workdir");
      expect(batches).toHaveLength(1);
      expect(batches[0]!.length).toBeGreaterThanOrEqual(3);
    } finally {
      delete (spied as { realpaths?: unknown }).realpaths;
    }
  });

  it("has no network but loopback", async () => {
    expect((await env.exec("ls /sys/class/net")).stdout).toBe("lo\n");
    const r = await env.exec(
      "python3 -c \"import socket; s=socket.socket(); s.settimeout(2); s.connect(('10.255.255.1', 80))\" 2>&1; echo rc=$?",
    );
    expect(r.stdout).toMatch(/unreachable|rc=1/i);
  });

  it("applies the hardening and limits to the container", async () => {
    const info = await inspect(env);
    const hc = info.HostConfig;
    expect(hc.NetworkMode).toBe("none");
    expect(hc.CapDrop).toEqual(["ALL"]);
    // KILL only, held by root alone (the harness's kill passes before the verify, which a process of uid 1000 left
    // killing its own uid would otherwise kill); uid 1000 has no effective capability, and no-new-privileges keeps it so.
    expect(hc.CapAdd ?? []).toEqual(["KILL"]);
    expect((await env.exec("grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status")).stdout).toMatch(
      /^CapInh:\s+0+\nCapPrm:\s+0+\nCapEff:\s+0+\nCapAmb:\s+0+\n$/,
    );
    expect(hc.SecurityOpt).toEqual(["no-new-privileges"]);
    expect(hc.Memory).toBe(256 * 1024 * 1024);
    expect(hc.PidsLimit).toBe(64);
    expect(hc.Ulimits).toEqual([{ Name: "nofile", Soft: 8192, Hard: 8192 }]);
    expect((await env.exec("ulimit -n")).stdout).toBe("8192\n");
    expect(hc.NanoCpus).toBe(0.5e9);
    expect(hc.Init).toBe(true);
    expect(hc.AutoRemove).toBe(true);
    expect(Object.keys(hc.Tmpfs ?? {})).toContain("/tmp");
    expect(info.Config.User).toBe("0:0"); // the keep-alive; commands run as 1000 (checked above)
    expect(info.Config.Labels).toMatchObject({ "hermes-batch.run": RUN, "hermes-batch.task": "main" });
    // The keep-alive is the dead-man's switch: task timeout (600) + margin.
    expect(info.Path).toBe("sleep");
    expect(Number(info.Args[0])).toBe(720);
    expect((await env.exec("cat /proc/self/status | grep NoNewPrivs")).stdout).toMatch(/NoNewPrivs:\s+1/);
    // A root sandbox gets only the small capability set.
    const bbHc = (await inspect(bb)).HostConfig;
    expect([...(bbHc.CapAdd ?? [])].sort()).toEqual(["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"]);
  });

  it("the engine enforces the pids and memory limits (cgroup files inside the container)", async () => {
    const pids = await env.exec("cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max");
    expect(pids.stdout.trim()).toBe("64");
    const mem = await env.exec(
      "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
    );
    expect(Number(mem.stdout.trim())).toBe(256 * 1024 * 1024);
  });

  it("a command killing everything it may kill does not end the sandbox", async () => {
    // kill -1 spares only the caller: the persistent shell goes too, and is replaced on the next call.
    const r = await env.exec("pkill -9 sleep; kill -9 -1; echo survivor");
    expect(r.stdout).toBe("survivor\n");
    expect((await inspect(env)).State.Running).toBe(true);
    expect((await env.exec("echo still here")).stdout).toBe("still here\n");
  });

  it("background processes start, report output and are killed", async () => {
    const { id } = await env.startBackground("echo begin; sleep 60; echo never");
    expect(await waitUntil(async () => (await env.pollBackground(id)).output.includes("begin"), 10_000)).toBe(true);
    const st = await env.pollBackground(id);
    expect(st.running).toBe(true);
    expect(st.output).toContain("begin");
    await env.killBackground(id);
    expect((await env.pollBackground(id)).running).toBe(false);
    expect(await processList(env)).not.toMatch(/sleep 60/);
  });
});

describe("lifecycle", () => {
  it("a missing image fails fast with a clear error and creates nothing", async () => {
    const started = Date.now();
    await expect(
      createDockerEnvironment(spec("noimg", { image: "hermes-batch-test:does-not-exist" }), {}),
    ).rejects.toThrow(/image hermes-batch-test:does-not-exist not found locally; build it .* or pass --pull/);
    await expect(
      preflightDocker(spec("noimg", { image: "hermes-batch-test:does-not-exist" }), {}),
    ).rejects.toBeInstanceOf(DockerImageNotFoundError);
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await listLabelledContainers({ run: RUN })).filter((c) => c.task === "noimg")).toEqual([]);
  });

  it("cleanup removes the container (after success and after a failed command) and is idempotent", async () => {
    const env = (await createDockerEnvironment(spec("cleanup"), { image: busybox })) as DockerEnvironment;
    await env.exec("exit 7");
    expect((await listLabelledContainers({ run: RUN })).some((c) => c.id === env.containerId)).toBe(true);
    await env.cleanup();
    await env.cleanup();
    expect((await listLabelledContainers({ run: RUN })).some((c) => c.id === env.containerId)).toBe(false);
    expect(liveDockerContainers()).not.toContain(env.containerId);
    await expect(env.exec("true")).rejects.toThrow(/cleaned up/);
  });

  it("cleanupAllDockerEnvironments removes every live sandbox of the process", async () => {
    const a = (await createDockerEnvironment(spec("all-a"), { image: busybox })) as DockerEnvironment;
    const b = (await createDockerEnvironment(spec("all-b"), { image: busybox })) as DockerEnvironment;
    await cleanupAllDockerEnvironments({ refuseNew: false });
    const left = await listLabelledContainers({ run: RUN });
    expect(left.map((c) => c.id)).not.toContain(a.containerId);
    expect(left.map((c) => c.id)).not.toContain(b.containerId);
  });

  it("read-only root: workdir writable (image content kept), rest of the root not", async () => {
    const env = await createDockerEnvironment(spec("ro"), { image, readOnlyRoot: true });
    try {
      expect((await inspect(env)).HostConfig.ReadonlyRootfs).toBe(true);
      expect((await env.exec("echo ok > /work/f && cat /work/f && stat -c %u /work")).stdout).toBe("ok\n1000\n");
      // The user's own home is on the root filesystem: writable by permissions, refused by the mount.
      const home = await env.exec("touch /home/agent/x; echo rc=$?");
      expect(home.stderr).toMatch(/Read-only file system/);
      expect(home.stdout).toBe("rc=1\n");
      await env.writeFile("viaarchive.txt", "archive ok");
      expect((await env.readFile("/work/viaarchive.txt")).toString()).toBe("archive ok");
      expect((await env.exec("echo t > /tmp/t && cat /tmp/t")).stdout).toBe("t\n");
      await expect(env.writeFile("/etc/nope", "x")).rejects.toThrow(/read-only/i);
    } finally {
      await env.cleanup();
    }
  });
});

describe("leaks after a crash", () => {
  // One process for both: it starts an abandoned container (a 2 s task, no margin) and the two gc finds, and is
  // killed with SIGKILL: no clean-up of any kind runs.
  const gcRun = `${RUN}-gc`;
  let deadmanId = "";
  beforeAll(async () => {
    const script = `
      import { createDockerEnvironment } from "./tools/environments/docker/docker.ts";
      const d = await createDockerEnvironment({ runName: ${JSON.stringify(RUN)}, taskId: "deadman", hostTaskDir: "/tmp/x", taskTimeoutSec: 2 }, { image: ${JSON.stringify(busybox)}, deadmanMarginSec: 0 });
      const a = await createDockerEnvironment({ runName: ${JSON.stringify(gcRun)}, taskId: "a", hostTaskDir: "/tmp/x" }, { image: ${JSON.stringify(busybox)} });
      const b = await createDockerEnvironment({ runName: ${JSON.stringify(gcRun)}, taskId: "b", hostTaskDir: "/tmp/x" }, { image: ${JSON.stringify(busybox)} });
      console.log("READY " + d.containerId);
      setInterval(() => {}, 1000);
    `;
    const child = spawn("node", ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    deadmanId = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const ready = /READY (\w+)/.exec(out);
        if (ready) resolve(ready[1]!);
      });
      child.once("exit", (code) => reject(new Error(`child exited early (${code})`)));
    });
    child.kill("SIGKILL");
  }, 60_000);

  it("the dead-man's switch ends an abandoned container by itself (AutoRemove deletes it)", async () => {
    const gone = await waitUntil(
      async () => !(await listLabelledContainers({ run: RUN })).some((c) => c.id === deadmanId),
      10_000,
      250,
    );
    expect(gone).toBe(true);
  });

  it("gc removes what a kill -9 of the run left behind, and says how many", async () => {
    expect((await listLabelledContainers({ run: gcRun })).length).toBe(2);

    const dry = await execa("node", ["dist/src/cli.js", "gc", "--run", gcRun, "--dry-run"], {
      cwd: ROOT,
    });
    expect(dry.stdout).toContain(`would remove 2 containers of run ${gcRun}`);
    expect((await listLabelledContainers({ run: gcRun })).length).toBe(2);

    const gc = await execa("node", ["dist/src/cli.js", "gc", "--run", gcRun], { cwd: ROOT });
    expect(gc.stdout).toContain(`removed 2 containers of run ${gcRun}`);
    expect(await listLabelledContainers({ run: gcRun })).toEqual([]);
  });
});

describe("the CLI", () => {
  it("SIGTERM of a docker run leaves no labelled container", async () => {
    const cli = `${ROOT}dist/src/cli.js`;
    if (!existsSync(cli))
      throw new Error(`${cli} is missing: the CLI runs its workers from dist/ (npm run build; npm test does it)`);
    const run = `${RUN}-cli`;
    const out = await mkdtemp(join(tmpdir(), "hb-cli-"));
    const child = spawn(
      "node",
      [
        cli,
        "run",
        `${ROOT}datasets/smoke.jsonl`,
        "--model",
        "scripted:2000",
        "--env",
        "docker",
        "--image",
        image,
        "--output-dir",
        out,
        "--run-name",
        run,
      ],
      { cwd: ROOT, stdio: "ignore" },
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      expect(
        await waitUntil(async () => (await listLabelledContainers({ run })).length > 0, 30_000, 250),
        "a container of the run",
      ).toBe(true);
      child.kill("SIGTERM");
      await exited;
      expect(await listLabelledContainers({ run })).toEqual([]);
    } finally {
      child.kill("SIGKILL");
      await removeContainersByLabel({ run });
      await rm(out, { recursive: true, force: true });
    }
  });
});

describe("limits", () => {
  // One holder of the only permit for both: a creation waiting behind it gives up when aborted, then one gets the
  // permit when the holder is cleaned up.
  const gates = SandboxGates.create({ maxSandboxes: 1, startsPerSecond: 0 });
  let holder: DockerEnvironment;
  beforeAll(async () => {
    holder = (await createDockerEnvironment(spec("lim-a"), { image: busybox, gates })) as DockerEnvironment;
  });

  it("a creation waiting at the gate gives up when its task's signal aborts: nothing created, nothing held", async () => {
    const ctl = new AbortController();
    const pb = createDockerEnvironment(spec("abort-b", { signal: ctl.signal }), { image: busybox, gates });
    await waitUntil(() => gates.waiting > 0, 4000, 20);
    expect(gates.waiting).toBe(1);
    ctl.abort(new Error("task timed out"));
    await expect(pb).rejects.toThrow("task timed out");
    expect(gates.waiting).toBe(0);
    expect(gates.live).toBe(1);
    expect((await listLabelledContainers({ run: RUN })).filter((c) => c.task === "abort-b")).toEqual([]);
  });

  it("run-wide gates bound live sandboxes: the next start waits for a cleanup, counted as waiting", async () => {
    let bCreated = false;
    const pb = createDockerEnvironment(spec("lim-b"), { image: busybox, gates }).then(
      (b) => ((bCreated = true), b as DockerEnvironment),
    );
    await waitUntil(() => gates.waiting > 0, 4000, 20);
    expect(gates.waiting).toBe(1);
    expect(bCreated).toBe(false);
    expect((await listLabelledContainers({ run: RUN })).filter((c) => c.task === "lim-b")).toEqual([]);
    await holder.cleanup();
    const b = await pb;
    expect(gates.live).toBe(1);
    expect(gates.peak).toBe(1);
    await b.cleanup();
    expect(gates.live).toBe(0);
  });

  it("a failed start gives its permit back", async () => {
    const gates = SandboxGates.create({ maxSandboxes: 1, startsPerSecond: 0 });
    await expect(
      createDockerEnvironment(spec("bad-net", { network: "no-such-network-hb" }), { image: busybox, gates }),
    ).rejects.toThrow(/could not start docker sandbox/);
    expect(gates.live).toBe(0);
  });
});

describe("OutputCollector", () => {
  it("renders like capOutput for any split of the input", () => {
    let full = "";
    for (let i = 0; i < 500; i++) full += `row ${i} ${"x".repeat(i % 13)}\n`;
    for (const cap of [10, 100, 1000, full.length, full.length + 5]) {
      for (const chunk of [1, 7, 100, 5000]) {
        const c = new OutputCollector(cap);
        for (let i = 0; i < full.length; i += chunk) c.push(full.slice(i, i + chunk));
        expect(c.render()).toEqual(capOutput(full, cap));
      }
    }
  });
});
