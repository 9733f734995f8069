/**
 * Limits of the sandboxes through the built CLI (issue 23, item 3), where the harness can make cgroups and mount
 * file systems (root here): a 3 GiB allocation under the default 2 GiB ends its task as environment_error with
 * `reason: memory_limit` while a concurrent well-behaved task completes; two busy loops are held to `--cpus`; the
 * task folder is a file system of its own (10 GiB by default, a row's `limits.disk` or `--disk` otherwise), in
 * local and Docker, and writing past it (in the harness's exchange folder too) ends the task with `disk_limit`; with `--disk none` the start-up line
 * names the limit not enforced and `--require-limits` makes that exit 2.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, runCliInProcess, tempDir } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { ensureDockerTestImages } from "./helpers/docker.js";
import { readJsonl } from "./helpers/jsonl.js";

const COMMANDS: Record<string, string> = {
  hog: `python3 -c "b = bytearray(3 * 1024 ** 3); print('allocated', len(b))"; echo rc=$?`,
  calm: "sleep 2; echo calm",
  fill: "dd if=/dev/zero of=big bs=1M count=200 status=none; echo rc=$?; ls -la",
  // The harness's exchange folder is writable by the task too: it counts in the same quota.
  iofill: "dd if=/dev/zero of=/tmp/.hermes-io/big bs=1M count=200 status=none; echo rc=$?; ls -la /tmp/.hermes-io",
  size: "echo size_kb=$(df -k --output=size . | tail -1 | tr -d ' '); ls -A; echo listed",
  // Spelled past the terminal's foreground guard (the original's refuses ` & `: `held& echo`, `st_mode % 0o10000`).
  // Leaves what a task could leave behind in its folder for the next task of the same file system.
  dirty: [
    "echo secret > s.txt; mkdir -p d/e; echo x > d/e/f; ln s.txt hard; ln -s /etc/passwd link; mkfifo p",
    "chmod 000 d/e s.txt; chmod 000 d; dd if=/dev/zero of=big bs=1M count=8 status=none",
    `python3 -c "import os; os.setxattr('.', 'user.secret', b'x')"; chmod 700 .`,
    "sleep 300 > held& echo dev=$(awk '$5 == \"/workspace\" {print $3}' /proc/self/mountinfo); echo dirtied",
  ].join("; "),
  clean: [
    "echo dev=$(awk '$5 == \"/workspace\" {print $3}' /proc/self/mountinfo)",
    "echo used_kb=$(df -k --output=used . | tail -1 | tr -d ' ') inodes=$(df --output=iused . | tail -1 | tr -d ' ')",
    `python3 -c "import os; print('xattrs', os.listxattr('.'), oct(os.stat('.').st_mode % 0o10000))"; ls -A; echo listed`,
  ].join("; "),
  // Two busy loops for 4 s; their CPU seconds over the wall time, from /proc (clock ticks).
  cpu: `for i in 1 2; do timeout 4 sh -c 'while :; do :; done'& done; sleep 3.5; t=0; for p in $(pgrep -f 'while :'); do set -- $(cut -d' ' -f14,15 /proc/$p/stat); t=$((t + $1 + $2)); done; wait; echo "cpu_ticks=$t hz=$(getconf CLK_TCK)"`,
};

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI(
    scriptedPerTask((id) => [{ name: "terminal", arguments: { command: COMMANDS[id]!, timeout: 120 } }]),
  );
});

afterAll(async () => {
  await server?.close();
});

type Task = string | { id: string; limits: Record<string, unknown>; cwd?: string };

/** `inProcess` only for runs that stop before any sandbox (what a run leaves at its exit is checked in a child). */
async function run(tasks: Task[], extra: string[] = [], inProcess = false) {
  const dir = tempDir("hb-limits-");
  const dataset = join(dir, "d.jsonl");
  const rows = tasks
    .map((t) => (typeof t === "string" ? { id: t } : t))
    .map((t) => ({ ...t, prompt: `task:${t.id.replace(/-.*/, "")}`, toolsets: ["terminal"] }));
  writeFileSync(dataset, rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
  // The run's temporary folders (and the ready-made file systems in them) in a folder of this test's own.
  const tmp = join(dir, "tmp");
  mkdirSync(tmp);
  const env = extra.includes("docker") ? [] : ["--env", "local"];
  const r = await (inProcess ? runCliInProcess : runCli)(
    [
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--approval",
      "allow",
      ...env,
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
      "--concurrency",
      "2",
      ...extra,
    ],
    { timeoutMs: 240_000, env: { TMPDIR: tmp } },
  );
  const lines = new Map<string, any>();
  for (const l of [
    ...readJsonl(join(dir, "runs", "r", "trajectories.jsonl")),
    ...readJsonl(join(dir, "runs", "r", "failed.jsonl")),
  ])
    lines.set(l.task_id, l);
  return { r, lines, dir };
}

const root = process.getuid?.() === 0;

describe("local sandbox limits", () => {
  function toolText(line: any): string {
    return JSON.stringify(line.messages.filter((m: any) => m.role === "tool"));
  }

  /** No file system is left mounted under the run's folders or its temporary folder, and nothing is left there. */
  function expectNothingLeft(dir: string): void {
    expect(readFileSync("/proc/self/mounts", "utf8")).not.toContain(dir);
    expect(existsSync(join(dir, "runs", ".workspaces"))).toBe(false);
    expect(readdirSync(join(dir, "tmp")).filter((n) => /^hermes-(spawn|shell|io|verify|bg|disk)-/.test(n))).toEqual([]);
  }

  function failedIds(lines: Map<string, any>): string[] {
    return [...lines.values()].filter((l) => l.outcome !== "completed").map((l) => l.task_id);
  }

  // One run for the memory, CPU and default disk cases: --cpus holds every sandbox of it, none of which needs more.
  describe("a run at the default limits with --cpus 0.5", () => {
    let res: Awaited<ReturnType<typeof run>>;
    beforeAll(async () => {
      if (root)
        res = await run(
          ["hog", "calm", "size", { id: "size-small", limits: { disk: "64m" } }, "cpu"],
          ["--cpus", "0.5"],
        );
    }, 300_000);

    it.runIf(root)("a 3 GiB allocation ends its task with memory_limit; a concurrent task completes", () => {
      const { r, lines } = res;
      expect(r.exitCode, r.stderr).toBe(1);
      expect(failedIds(lines)).toEqual(["hog"]);
      expect(lines.get("hog")).toMatchObject({ outcome: "environment_error", reason: "memory_limit" });
      expect(lines.get("hog").error).toMatch(/memory_limit: .*2048 MiB/);
      expect(lines.get("calm")).toMatchObject({ outcome: "completed" });
      // Every limit is enforced here (the disk quota is on by default): no start-up line.
      expect(r.stderr).not.toMatch(/limits not enforced/);
    });

    it.runIf(root)("busy loops are held to --cpus", () => {
      const { lines } = res;
      const out = JSON.stringify(lines.get("cpu").messages.filter((m: any) => m.role === "tool"));
      const m = /cpu_ticks=(\d+) hz=(\d+)/.exec(out)!;
      expect(m, out).not.toBeNull();
      // Two loops for ~3.5 s would take up to 7 CPU seconds unbounded (2 cores); at 0.5 CPU, about 1.75.
      const seconds = Number(m[1]) / Number(m[2]);
      expect(seconds).toBeLessThan(3.5 * 0.5 * 1.3);
    });

    it.runIf(root)(
      "a task folder is a 10 GiB file system of its own by default, and a row's limits.disk replaces it",
      () => {
        const { lines, dir } = res;
        for (const id of ["size", "size-small"]) expect(lines.get(id), id).toMatchObject({ outcome: "completed" });
        const kb = (id: string) => Number(/size_kb=(\d+)/.exec(toolText(lines.get(id)))?.[1]);
        expect(kb("size")).toBeGreaterThan(9.5 * 2 ** 20);
        expect(kb("size")).toBeLessThanOrEqual(10 * 2 ** 20);
        expect(kb("size-small")).toBeGreaterThan(50 * 2 ** 10);
        expect(kb("size-small")).toBeLessThanOrEqual(64 * 2 ** 10);
        // It starts empty, as a task folder does (no lost+found).
        expect(toolText(lines.get("size"))).toMatch(/size_kb=\d+\\+nlisted/);
        expectNothingLeft(dir);
      },
    );
  });

  // One run at --disk 64m, one task at a time (the pool test needs that order): the pool's tasks first, then the
  // tasks that write past the limit.
  describe("a run at --disk 64m, one task at a time", () => {
    let res: Awaited<ReturnType<typeof run>>;
    beforeAll(async () => {
      if (root)
        res = await run(
          ["dirty", "clean-1", "clean-2", "clean-3", "fill", "iofill", "calm"],
          ["--disk", "64m", "--concurrency", "1"],
        );
    }, 300_000);

    it.runIf(root)(
      "a file system given back to the pool starts the next task empty, whole and without the last task's marks",
      () => {
        const { lines, dir } = res;
        for (const id of ["dirty", "clean-1", "clean-2", "clean-3"])
          expect(lines.get(id), id).toMatchObject({ outcome: "completed" });
        const dirty = toolText(lines.get("dirty"));
        expect(dirty).toMatch(/dirtied/);
        const device = (text: string) => /dev=(\d+:\d+)/.exec(text)?.[1];
        const cleans = ["clean-1", "clean-2", "clean-3"].map((id) => toolText(lines.get(id)));
        // One task after it ran on the same file system (the pool's last given back is taken first).
        expect(cleans.map(device)).toContain(device(dirty));
        for (const text of cleans) {
          expect(text).toMatch(/xattrs \[\] 0o755\\+nlisted/);
          // Only the file system's own blocks and inodes are used: nothing of the last task is left.
          expect(Number(/used_kb=(\d+)/.exec(text)?.[1])).toBeLessThan(1024);
          expect(Number(/inodes=(\d+)/.exec(text)?.[1])).toBeLessThan(16);
        }
        expectNothingLeft(dir);
      },
    );

    it.runIf(root)(
      "writing past --disk (in the task folder or the exchange folder) ends its task with disk_limit; the image and its mount are gone afterwards",
      () => {
        const { r, lines, dir } = res;
        expect(r.exitCode, r.stderr).toBe(1);
        expect(failedIds(lines).sort()).toEqual(["fill", "iofill"]);
        for (const id of ["fill", "iofill"]) {
          expect(lines.get(id), id).toMatchObject({ outcome: "environment_error", reason: "disk_limit" });
          expect(lines.get(id).error).toMatch(/disk_limit: .*64 MiB/);
        }
        expect(lines.get("calm")).toMatchObject({ outcome: "completed" });
        expect(r.stderr).not.toMatch(/limits not enforced/);
        expectNothingLeft(dir);
      },
    );
  });

  it.runIf(root)(
    "Docker: the workdir is a file system of its own that keeps the image's files; writing past it is disk_limit",
    { timeout: 600_000 },
    async () => {
      const { image } = await ensureDockerTestImages();
      const { r, lines, dir } = await run(
        ["fill", "calm", { id: "size-docker", cwd: "/etc/apt", limits: { disk: "96m" } }],
        ["--env", "docker", "--image", image, "--disk", "64m"],
      );
      expect(r.exitCode, r.stderr).toBe(1);
      expect(r.stderr).not.toMatch(/limits not enforced/);
      expect(lines.get("fill")).toMatchObject({ outcome: "environment_error", reason: "disk_limit" });
      expect(lines.get("fill").error).toMatch(/disk_limit: .*64 MiB/);
      expect(lines.get("calm")).toMatchObject({ outcome: "completed" });
      const kb = Number(/size_kb=(\d+)/.exec(toolText(lines.get("size-docker")))?.[1]);
      expect(kb).toBeGreaterThan(80 * 2 ** 10);
      expect(kb).toBeLessThanOrEqual(96 * 2 ** 10);
      // The image's files in that folder were copied into the task's file system.
      expect(toolText(lines.get("size-docker"))).toMatch(/sources\.list/);
      expectNothingLeft(dir);
    },
  );

  it("--require-limits stops a run whose limits are not all enforced (exit 2, one line)", {
    timeout: 120_000,
  }, async () => {
    const { r, lines } = await run(["calm"], ["--disk", "none", "--require-limits"], true);
    expect(r.exitCode).toBe(2);
    // One line besides the note about the default distribution's unprovided toolsets.
    expect(
      r.stderr
        .trim()
        .split("\n")
        .filter((l) => !l.startsWith("note:")),
    ).toHaveLength(1);
    expect(r.stderr).toMatch(/--env local: limits not enforced here: .*disk.*--require-limits/);
    expect(lines.size).toBe(0);
  });

  it("a row's limits are checked like the rest of the row (file:line, exit 2)", { timeout: 120_000 }, async () => {
    const { r, lines } = await run([{ id: "calm", limits: { disk: "lots" } }], [], true);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/d\.jsonl:1: .*limits\.disk/);
    expect(lines.size).toBe(0);
  });
});
