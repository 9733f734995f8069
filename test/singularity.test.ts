/**
 * Singularity/Apptainer backend against test/fixtures/fake-apptainer (no real Apptainer on this machine):
 * the exact command lines, the instance lifecycle, the SIF cache and its cross-process lock.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { capOutput } from "../tools/environments/base.js";
import { SandboxGates, environmentBackend } from "../tools/environments/index.js";
import {
  SingularityEnvironment,
  cleanupAllSingularityEnvironments,
  instanceNameFor,
  createSingularityEnvironment,
  preflightSingularity,
  resolveSingularityImage,
  sifPathFor,
  singularityAvailability,
} from "../tools/environments/singularity/singularity.js";
import { waitUntil } from "./helpers/wait.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const FAKE = join(ROOT, "test/fixtures/fake-apptainer");
const ORIGINAL_PATH = process.env.PATH ?? "/usr/bin:/bin";
const ORIGINAL_ENV = { ...process.env };

let base: string;
let binDir: string;
let logFile: string;
let stateDir: string;
let sif: string;

interface Call {
  args: string[];
  envNames: string[];
}

async function calls(): Promise<Call[]> {
  const text = existsSync(logFile) ? await readFile(logFile, "utf8") : "";
  return text
    .split("\x1e\n")
    .filter(Boolean)
    .map((rec) => {
      const [args = "", env = ""] = rec.split("\x1d");
      return { args: args.split("\x1f").slice(0, -1), envNames: env.split(",").filter(Boolean) };
    });
}

/** The command lines of every process on this machine (a killed command must be gone from them). */
const processArgs = () => execFileSync("ps", ["-eo", "args"]).toString();

function spec(taskId: string, extra: Record<string, unknown> = {}) {
  return {
    runName: "sing",
    taskId,
    hostTaskDir: join(base, "tasks", taskId),
    image: sif,
    taskTimeoutSec: 600,
    ...extra,
  };
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hb-sing-"));
  binDir = join(base, "bin");
  await mkdir(binDir);
  await symlink(FAKE, join(binDir, "apptainer"));
  sif = join(base, "image.sif");
  await writeFile(sif, "fake sif");
});

beforeEach(async () => {
  logFile = join(base, `log-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  stateDir = join(base, "state");
  process.env.PATH = `${binDir}:${ORIGINAL_PATH}`;
  process.env.APPTAINER_FAKE_LOG = logFile;
  process.env.APPTAINER_FAKE_STATE = stateDir;
  process.env.APPTAINER_CACHEDIR = join(base, "cache");
  for (const k of [
    "APPTAINER_FAKE_BUILD_SLEEP",
    "APPTAINER_FAKE_BUILD_FAIL",
    "APPTAINER_FAKE_START_FAIL",
    "APPTAINER_FAKE_NO_NETWORK",
  ])
    delete process.env[k];
});

afterEach(async () => {
  await cleanupAllSingularityEnvironments();
});

afterAll(async () => {
  // The whole environment as it was: the cli project's files share their process.
  for (const k of Object.keys(process.env)) if (!(k in ORIGINAL_ENV)) delete process.env[k];
  Object.assign(process.env, ORIGINAL_ENV);
  await rm(base, { recursive: true, force: true });
});

describe("finding the runtime", () => {
  it("reports apptainer from PATH, and the reason when there is none", async () => {
    const found = await singularityAvailability();
    expect(found).toMatchObject({ available: true, binary: join(binDir, "apptainer") });
    expect(found.version).toContain("apptainer version");

    process.env.PATH = join(base, "empty");
    const none = await singularityAvailability();
    expect(none).toEqual({ available: false, reason: "neither apptainer nor singularity is on PATH" });
    await expect(createSingularityEnvironment(spec("x"), {})).rejects.toThrow(
      /singularity environment unavailable: neither apptainer nor singularity/,
    );
  });

  it("falls back to `singularity`, and rejects a binary that is not the runtime", async () => {
    const alt = join(base, "alt");
    await mkdir(alt, { recursive: true });
    await symlink(FAKE, join(alt, "singularity")).catch(() => undefined);
    process.env.PATH = `${alt}:${ORIGINAL_PATH}`;
    expect(await singularityAvailability()).toMatchObject({ available: true, binary: join(alt, "singularity") });

    const game = join(base, "game");
    await mkdir(game, { recursive: true });
    await writeFile(join(game, "singularity"), "#!/bin/sh\necho 'Singularity: a game of space exploration'\n", {
      mode: 0o755,
    });
    process.env.PATH = `${game}:${ORIGINAL_PATH}`;
    const r = await singularityAvailability();
    expect(r.available).toBe(false);
    expect(r.reason).toMatch(/no working Apptainer\/Singularity/);
  });
});

describe("instance lifecycle and command lines", () => {
  it("starts an instance with the exact hardening flags, runs commands with exec, stops it once", async () => {
    process.env.OPENAI_API_KEY = "sk-must-not-leak";
    const env = (await createSingularityEnvironment(spec("life"), {
      image: "ignored-when-row-has-image",
    })) as SingularityEnvironment;
    const hostDir = join(base, "tasks", "life");
    const name = env.instanceName;
    // Run and task are in the name (Apptainer has no labels): hashes for exact matching, then readable parts.
    expect(name).toMatch(/^hb_[0-9a-f]{16}_sing_life_[0-9a-f]{8}$/);

    const r = await env.exec("echo out; echo err >&2; exit 3");
    expect(r).toEqual({ exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false, truncated: false });

    const log = await calls();
    const start = log.find((c) => c.args[0] === "instance" && c.args[1] === "start" && !c.args.includes("--help"))!;
    expect(start.args).toEqual([
      "instance",
      "start",
      "--contain",
      "--cleanenv",
      "--writable-tmpfs",
      "--bind",
      `${hostDir}:/work`,
      "--net",
      "--network",
      "none",
      // A root harness's instances get the default limits (the runtime's cgroups).
      ...(process.getuid?.() === 0
        ? ["--memory", "2048M", "--memory-swap", "2048M", "--cpus", "1", "--pids-limit", "512"]
        : []),
      sif,
      name,
    ]);
    const exec = log.find((c) => c.args[0] === "exec")!;
    expect(exec.args.slice(0, 5)).toEqual(["exec", "--cleanenv", "--pwd", "/work", `instance://${name}`]);
    expect(exec.args.slice(5, 7)).toEqual(["sh", "-c"]);
    expect(exec.args.slice(-2)).toEqual(["hb", "echo out; echo err >&2; exit 3"]);
    // The runtime itself never sees host secrets.
    for (const c of log) expect(c.envNames).not.toContain("OPENAI_API_KEY");
    delete process.env.OPENAI_API_KEY;

    await env.cleanup();
    await env.cleanup();
    const stops = (await calls()).filter((c) => c.args[0] === "instance" && c.args[1] === "stop");
    expect(stops.map((c) => c.args)).toEqual([["instance", "stop", name]]);
    expect(existsSync(join(stateDir, name))).toBe(false);
    await expect(env.exec("true")).rejects.toThrow(/already cleaned up/);
  });

  it("passes cwd, env and stdin; caps output like capOutput", async () => {
    const env = (await createSingularityEnvironment(spec("io"), {})) as SingularityEnvironment;
    await env.exec("mkdir -p sub");
    const r = await env.exec('pwd; echo "V=$V"; cat', { cwd: "sub", env: { V: "x y" }, stdin: "piped" });
    expect(r.stdout).toBe(`${join(base, "tasks", "io", "sub")}\nV=x y\npiped`);
    const exec = (await calls()).filter((c) => c.args[0] === "exec").pop()!;
    expect(exec.args.slice(0, 6)).toEqual(["exec", "--cleanenv", "--pwd", "/work/sub", "--env", "V=x y"]);

    const big = await env.exec("i=0; while [ $i -lt 2000 ]; do echo n$i; i=$((i+1)); done", { maxOutputChars: 500 });
    let full = "";
    for (let i = 0; i < 2000; i++) full += `n${i}\n`;
    expect(big.stdout).toBe(capOutput(full, 500).text);
    expect(big.truncated).toBe(true);
    await expect(env.exec("true", { env: { "BAD-NAME": "1" } })).rejects.toThrow(/invalid environment variable name/);
  });

  it("a timeout kills the command and everything it started", async () => {
    const env = await createSingularityEnvironment(spec("timeout"), {});
    const r = await env.exec("sh -c 'sleep 101.5' & sleep 101.5; echo survived", { timeoutMs: 500 });
    expect(r).toMatchObject({ timedOut: true, exitCode: 124 });
    expect(r.stdout).not.toContain("survived");
    expect(
      await waitUntil(() => !processArgs().includes("sleep 101.5")),
      "the timed-out command's children are gone",
    ).toBe(true);
  });

  it("file tools: the workdir is the host task folder; other paths go through the instance", async () => {
    const env = await createSingularityEnvironment(spec("files"), {});
    await env.writeFile("a/b.txt", "hello");
    expect(await readFile(join(base, "tasks", "files", "a", "b.txt"), "utf8")).toBe("hello");
    expect((await env.readFile("/work/a/b.txt")).toString()).toBe("hello");
    expect((await env.exec("cat a/b.txt")).stdout).toBe("hello");

    const outside = join(base, "outside", "x.txt");
    await env.writeFile(outside, "via exec");
    expect(await readFile(outside, "utf8")).toBe("via exec");
    expect((await env.readFile(outside)).toString()).toBe("via exec");
    const viaExec = (await calls()).filter((c) => c.args[0] === "exec" && c.args.includes(outside));
    expect(viaExec.length).toBe(2);
    await expect(env.readFile("/nonexistent/file")).rejects.toThrow(/nonexistent/);
  });

  it("network on: no --net flags; runtime without --network: none either", async () => {
    const on = (await createSingularityEnvironment(
      spec("net-on", { network: "bridge" }),
      {},
    )) as SingularityEnvironment;
    let start = (await calls()).find((c) => c.args[1] === "start" && c.args.includes(on.instanceName))!;
    expect(start.args).not.toContain("--net");
    await on.cleanup();

    // Help is read once per binary path: use another link name for the runtime without --network.
    const noNet = join(base, "nonet");
    await mkdir(noNet, { recursive: true });
    await symlink(FAKE, join(noNet, "apptainer")).catch(() => undefined);
    process.env.PATH = `${noNet}:${ORIGINAL_PATH}`;
    process.env.APPTAINER_FAKE_NO_NETWORK = "1";
    const off = (await createSingularityEnvironment(spec("net-unsupported"), {})) as SingularityEnvironment;
    start = (await calls()).find((c) => c.args[1] === "start" && c.args.includes(off.instanceName))!;
    expect(start.args).not.toContain("--network");
  });

  it("cgroup limits (memory with swap, CPU, processes) are passed for a root harness or when asked for", async () => {
    const env = (await createSingularityEnvironment(spec("cg"), {
      memoryMb: 512,
      cpus: 2,
      pidsLimit: 64,
      singularityCgroupLimits: true,
    })) as SingularityEnvironment;
    const start = (await calls()).find((c) => c.args[1] === "start" && c.args.includes(env.instanceName))!;
    expect(start.args.join(" ")).toContain("--memory 512M --memory-swap 512M --cpus 2 --pids-limit 64");
    const byDefault = (await createSingularityEnvironment(spec("cg-default"), {})) as SingularityEnvironment;
    const started = (await calls()).find((c) => c.args[1] === "start" && c.args.includes(byDefault.instanceName))!;
    if (process.getuid?.() === 0)
      expect(started.args.join(" ")).toContain("--memory 2048M --memory-swap 2048M --cpus 1 --pids-limit 512");
    else expect(started.args).not.toContain("--memory");
  });

  it.runIf(process.getuid?.() === 0)(
    "with a disk size the task folder is a file system of its own, bound into the instance; files stay after cleanup",
    async () => {
      const s = spec("disk");
      const env = (await createSingularityEnvironment(s, { disk: "64m" })) as SingularityEnvironment;
      const start = (await calls()).find((c) => c.args[1] === "start" && c.args.includes(env.instanceName))!;
      const bind = start.args[start.args.indexOf("--bind") + 1]!;
      const source = bind.slice(0, bind.lastIndexOf(":"));
      expect(source).toMatch(/hermes-disk-/);
      expect(readFileSync("/proc/self/mounts", "utf8")).toContain(` ${source} `);
      writeFileSync(join(s.hostTaskDir, "kept.txt"), "kept");
      await env.cleanup();
      expect(readFileSync("/proc/self/mounts", "utf8")).not.toContain(` ${source} `);
      expect(readFileSync(join(s.hostTaskDir, "kept.txt"), "utf8")).toBe("kept");
    },
  );

  it("a failed start stops the half-made instance and explains", async () => {
    process.env.APPTAINER_FAKE_START_FAIL = "1";
    await expect(createSingularityEnvironment(spec("fail"), {})).rejects.toThrow(
      /could not start singularity instance from .*image.sif: FATAL: +container creation failed/,
    );
    const log = await calls();
    const name = log.find((c) => c.args[1] === "start" && !c.args.includes("--help"))!.args.pop();
    expect(log.some((c) => c.args[1] === "stop" && c.args[2] === name)).toBe(true);
  });

  it("a missing .sif or no image fails with a clear error", async () => {
    await expect(createSingularityEnvironment(spec("nosif", { image: join(base, "missing.sif") }), {})).rejects.toThrow(
      /singularity image .*missing.sif does not exist/,
    );
    await expect(preflightSingularity(spec("noimg", { image: undefined }), {})).rejects.toThrow(/needs an image/);
  });

  it("cleanup kills background processes (instance stop ends everything in it)", async () => {
    const env = await createSingularityEnvironment(spec("bg"), {});
    const { id } = await env.startBackground("echo started; sleep 102.5");
    expect(await waitUntil(async () => (await env.pollBackground(id)).output.includes("started")), "output").toBe(true);
    expect((await env.pollBackground(id)).running).toBe(true);
    await env.cleanup();
    expect(await waitUntil(() => !processArgs().includes("sleep 102.5")), "cleanup ended the background command").toBe(
      true,
    );
  });

  it("the watchdog stops an abandoned instance after the task timeout plus margin", async () => {
    const env = (await createSingularityEnvironment(spec("deadman", { taskTimeoutSec: 1 }), {
      deadmanMarginSec: 0,
    })) as SingularityEnvironment;
    expect(existsSync(join(stateDir, env.instanceName))).toBe(true);
    const gone = await waitUntil(() => !existsSync(join(stateDir, env.instanceName)), 20_000, 200);
    expect(gone, "the watchdog stopped the instance").toBe(true);
    await env.cleanup(); // already stopped: still fine
  });
});

describe("docker:// images and the SIF cache", () => {
  it("builds a docker:// image once into the cache and reuses it", async () => {
    const cache = join(base, "cache-once");
    const binary = join(binDir, "apptainer");
    const first = await resolveSingularityImage(binary, "docker://python:3.11-slim", cache);
    expect(first.image).toBe(join(cache, "python-3.11-slim.sif"));
    expect(sifPathFor("docker://ghcr.io/org/img:tag", "/c")).toBe("/c/ghcr.io-org-img-tag.sif");
    const again = await resolveSingularityImage(binary, "docker://python:3.11-slim", cache);
    expect(again.image).toBe(first.image);
    const builds = (await calls()).filter((c) => c.args[0] === "build");
    expect(builds.length).toBe(1);
    expect(builds[0]!.args[2]).toBe("docker://python:3.11-slim");
    expect(builds[0]!.args[1]).toMatch(/python-3\.11-slim\.sif\.\d+\.[0-9a-f]+\.tmp$/);

    const env = (await createSingularityEnvironment(spec("dock", { image: "docker://python:3.11-slim" }), {
      singularityCacheDir: cache,
    })) as SingularityEnvironment;
    const start = (await calls()).find((c) => c.args[1] === "start" && c.args.includes(env.instanceName))!;
    expect(start.args.at(-2)).toBe(first.image);
  });

  it("processes racing for the same image build it once (file lock)", async () => {
    const cache = join(base, "cache-race");
    process.env.APPTAINER_FAKE_BUILD_SLEEP = "1";
    const script = `
      import { resolveSingularityImage } from "./tools/environments/singularity/singularity.ts";
      const r = await resolveSingularityImage(${JSON.stringify(join(binDir, "apptainer"))}, "docker://busybox:1.36", ${JSON.stringify(cache)});
      console.log(r.image);
    `;
    const run = () =>
      execa("node", ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, env: process.env });
    const results = await Promise.all([run(), run(), run()]);
    for (const r of results) expect(r.stdout.trim()).toBe(join(cache, "busybox-1.36.sif"));
    expect((await calls()).filter((c) => c.args[0] === "build").length).toBe(1);
    expect(existsSync(`${join(cache, "busybox-1.36.sif")}.lock`)).toBe(false);
  });

  it("a failed build falls back to the docker:// URI and says why", async () => {
    process.env.APPTAINER_FAKE_BUILD_FAIL = "1";
    const cache = join(base, "cache-fail");
    const r = await resolveSingularityImage(join(binDir, "apptainer"), "docker://nope:1", cache);
    expect(r.image).toBe("docker://nope:1");
    expect(r.note).toMatch(/building .*nope-1.sif failed \(FATAL: +Unable to handle docker:\/\/nope:1 uri/);
    expect(existsSync(join(cache, "nope-1.sif"))).toBe(false);
  });
});

describe("through the backend interface", () => {
  it("run preflight: one UserError (exit 2) when the runtime is missing or the --image .sif is absent", async () => {
    const backend = await environmentBackend("singularity");
    await expect(backend.preflightRun({ image: sif, options: {} })).resolves.toBeUndefined();
    await expect(backend.preflightRun({ image: join(base, "missing.sif"), options: {} })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^--image: singularity image .*missing.sif does not exist/),
    });
    process.env.PATH = join(base, "empty");
    await expect(backend.preflightRun({ options: {} })).rejects.toMatchObject({
      exitCode: 2,
      message: "--env singularity: neither apptainer nor singularity is on PATH",
    });
    expect(await backend.availability()).toEqual({
      available: false,
      reason: "neither apptainer nor singularity is on PATH",
    });
  });

  it("finds leftovers by run and task through `instance list --json` and stops them with `instance stop`", async () => {
    const backend = await environmentBackend("singularity");
    const a = (await backend.create(spec("left-a", { runName: "crashed run" }), {})) as SingularityEnvironment;
    const b = (await backend.create(spec("left-b", { runName: "crashed run" }), {})) as SingularityEnvironment;
    const other = (await backend.create(spec("left-a", { runName: "other run" }), {})) as SingularityEnvironment;
    // A foreign instance of the same user is never touched.
    execFileSync(join(binDir, "apptainer"), ["instance", "start", "--bind", `${base}:/work`, sif, "someone_elses"]);

    const ofRun = await backend.listLeftovers({ run: "crashed run" });
    expect(ofRun.map((l) => l.name).sort()).toEqual([a.instanceName, b.instanceName].sort());
    expect(ofRun.every((l) => l.backend === "singularity" && l.run === "crashed run" && l.state === "running")).toBe(
      true,
    );
    expect((await backend.listLeftovers({ run: "crashed run", task: "left-a" })).map((l) => l.name)).toEqual([
      a.instanceName,
    ]);
    expect(await backend.listLeftovers({ run: "crashed run", role: "warm" })).toEqual([]);
    // Without a run: every hermes-batch instance, with the readable run and task parts of its name.
    const all = await backend.listLeftovers({});
    expect(all.map((l) => l.name).sort()).toEqual([a.instanceName, b.instanceName, other.instanceName].sort());
    expect(all.find((l) => l.name === other.instanceName)).toMatchObject({ run: "otherrun", task: "lefta" });

    const dry = await backend.removeLeftovers({ run: "crashed run", task: "left-a", dryRun: true });
    expect(dry.removed.map((l) => l.name)).toEqual([a.instanceName]);
    expect(existsSync(join(stateDir, a.instanceName))).toBe(true);

    const { removed, failed } = await backend.removeLeftovers({ run: "crashed run" });
    expect(failed).toEqual([]);
    expect(removed.map((l) => l.name).sort()).toEqual([a.instanceName, b.instanceName].sort());
    expect(existsSync(join(stateDir, a.instanceName))).toBe(false);
    expect(existsSync(join(stateDir, b.instanceName))).toBe(false);
    expect(existsSync(join(stateDir, other.instanceName))).toBe(true);
    expect(existsSync(join(stateDir, "someone_elses"))).toBe(true);
    execFileSync(join(binDir, "apptainer"), ["instance", "stop", "someone_elses"]);
  });

  it("a listing that is not the documented JSON is a clear error, not an empty list", async () => {
    const odd = join(base, "odd");
    await mkdir(odd, { recursive: true });
    await writeFile(
      join(odd, "apptainer"),
      `#!/bin/sh\ncase "$1" in --version) echo "apptainer version 1.3.0";; *) echo "INSTANCE NAME    PID";; esac\n`,
      { mode: 0o755 },
    );
    process.env.PATH = `${odd}:${ORIGINAL_PATH}`;
    const backend = await environmentBackend("singularity");
    await expect(backend.listLeftovers({ run: "x" })).rejects.toThrow(
      /instance list --json printed something else than the documented JSON/,
    );
  });

  it("instances take run-wide sandbox permits: the next start waits for a cleanup", async () => {
    const gates = SandboxGates.create({ maxSandboxes: 1, startsPerSecond: 0 });
    const first = await createSingularityEnvironment(spec("gate-1"), { gates });
    expect(gates.live).toBe(1);
    let secondStarted = false;
    const second = createSingularityEnvironment(spec("gate-2"), { gates }).then((e) => ((secondStarted = true), e));
    // The second creation is queued at the gate (counted as waiting), not started.
    await waitUntil(() => gates.waiting > 0, 2000, 20);
    expect(gates.waiting).toBe(1);
    expect(secondStarted).toBe(false);
    expect((await calls()).filter((c) => c.args[1] === "start" && !c.args.includes("--help"))).toHaveLength(1);
    await first.cleanup();
    const env2 = await second;
    expect(gates.live).toBe(1);
    expect(gates.peak).toBe(1);
    await env2.cleanup();
    expect(gates.live).toBe(0);
  });

  it("instance names stay distinct for the same task and differ across runs", () => {
    const a = instanceNameFor("r", "t");
    expect(instanceNameFor("r", "t")).not.toBe(a);
    expect(instanceNameFor("r2", "t").slice(0, 11)).not.toBe(a.slice(0, 11));
  });
});
