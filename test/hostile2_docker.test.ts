/**
 * A hostile tester's second round, Docker, end to end through the built CLI with a scripted agent:
 * - read_file of a FIFO, or of a link the agent made to /dev/zero or /dev/urandom (the tool blocks only those literal
 *   paths): the harness reads a file with an exec whose whole output it keeps in memory, without a time limit, so
 *   a FIFO held the task until its --task-timeout (then a `timeout` in failed.jsonl, out of the pass rate) and
 *   /dev/zero grew the harness's memory without bound. The read fails at once and the task is graded. write_file
 *   to a FIFO held the task the same way.
 * - a folder on the way to a verify file (or the workdir) that the agent, its owner, left read-only: the verify
 *   files could not be put in place, the verify did not run and the task was unscored (out of the pass rate). The
 *   local sandbox's put makes each folder writable first; Docker's now does too. Likewise what the put removes (a
 *   folder at the verify file's path, a `__pycache__`, a package folder) with a read-only folder inside: there in
 *   both backends.
 * - an agent that quietly fills its workdir's file system (--disk): the verify files could not be written, the
 *   verify did not run and the task was unscored; a put that fails inside the container (the engine answered) is a
 *   failed verify, exit 125, as in the local sandbox.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages } from "./helpers/docker.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI, type ToolCallSpec } from "./helpers/fake_openai.js";
import { RO_ROWS, RO_TREES } from "./helpers/hostile2_trees.js";
import { runScripted, type ScriptedRun } from "./helpers/scripted_runs.js";

const term = (command: string): ToolCallSpec => ({ name: "terminal", arguments: { command } });

const read = (path: string): ToolCallSpec => ({ name: "read_file", arguments: { path } });

const SCRIPTS: Record<string, ToolCallSpec[]> = {
  // The FIFO first: before the fix the task hangs there, and never reaches the endless reads.
  devlink: [
    term("mkfifo fifo && ln -s /dev/zero zero && ln -s /dev/urandom rnd && echo made"),
    read("fifo"),
    read("zero"),
    read("rnd"),
    { name: "write_file", arguments: { path: "fifo", content: "x" } },
    term("echo still-here"),
  ],
  honest: [term("echo 42 > answer.txt"), read("answer.txt")],
  // Folders on the way to a verify file, and the workdir itself, left without write permission by their owner.
  rodir: [term("mkdir -p checks && chmod 555 checks && ls -ld checks")],
  rowork: [term("chmod 555 . && ls -ld .")],
  ...RO_TREES,
  // The workdir's file system (--disk) filled quietly, so no command's output says so.
  diskfull: [term("dd if=/dev/zero of=fill bs=1M >/dev/null 2>&1; echo filled")],
};

const root = process.getuid?.() === 0;

let server: FakeOpenAI;
/** One run of every row (the full workdir's only as root: its --disk is a loop file system), asserted below. */
let run: ScriptedRun;

beforeAll(async () => {
  server = await startFakeOpenAI(scriptedPerTask((id) => SCRIPTS[id]!));
  const { image } = await ensureDockerTestImages();
  const dir = tempDir("hb-hostile2-docker-");
  mkdirSync(join(dir, "files", "checks"), { recursive: true });
  writeFileSync(join(dir, "files", "checks", "check.sh"), "exit 1\n");
  writeFileSync(join(dir, "files", "checks", "check.py"), "import sys\nsys.exit(1)\n");
  mkdirSync(join(dir, "files-disk", "checks"), { recursive: true });
  writeFileSync(join(dir, "files-disk", "checks", "check.sh"), `exit 0\n${"#".repeat(1 << 20)}\n`);
  const rows = [
    { id: "devlink", verify: "false", toolsets: ["terminal", "file"] },
    { id: "honest", verify: "grep -qx 42 answer.txt", toolsets: ["terminal", "file"] },
    ...[{ id: "rodir", verify: "sh checks/check.sh" }, { id: "rowork", verify: "sh checks/check.sh" }, ...RO_ROWS].map(
      (r) => ({ ...r, verify_files: "files", toolsets: ["terminal", "file"] }),
    ),
    ...(root
      ? [
          {
            id: "diskfull",
            verify: "sh checks/check.sh",
            verify_files: "files-disk",
            toolsets: ["terminal"],
            limits: { disk: "64m" },
          },
        ]
      : []),
  ];
  writeFileSync(
    join(dir, "d.jsonl"),
    `${rows.map((r) => JSON.stringify({ ...r, prompt: `task:${r.id}` })).join("\n")}\n`,
  );
  run = await runScripted(server, {
    dir,
    name: "hostile2",
    inputs: [join(dir, "d.jsonl")],
    args: ["--env", "docker", "--image", image, "--concurrency", String(rows.length), "--task-timeout", "60"],
    timeoutMs: 280_000,
  });
  expect(run.stderr).not.toMatch(/internal error/);
}, 300_000);

afterAll(async () => {
  await server?.close();
});

describe("read_file and write_file in Docker of a FIFO or a link to an endless device", () => {
  it("fails at once and the task is graded, not held until its timeout", () => {
    const line = run.lines.get("devlink");
    expect(line, run.stderr).toBeDefined();
    expect(line.outcome, line.error).toBe("completed");
    expect(line.verify).toMatchObject({ passed: false, exit_code: 1 });
    expect(line.score.passed).toBe(false);
    const results = line.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
    expect(results).toHaveLength(6);
    for (const res of results.slice(1, 5)) expect(res.error, JSON.stringify(res).slice(0, 300)).toBeTruthy();
    expect(results[5].output).toBe("still-here");
    // Not held until its --task-timeout (60 s).
    expect(line.duration_ms).toBeLessThan(50_000);
    // A regular file still reads.
    const honest = run.lines.get("honest");
    expect(JSON.parse(honest.messages.filter((m: any) => m.role === "tool")[1].content).content).toMatch(/42/);
    expect(honest.verify).toMatchObject({ passed: true });
  });
});

describe("read-only folders where the verify files go (Docker)", () => {
  it("are made writable: the verify runs and fails as it should", () => {
    for (const id of ["rodir", "rowork", ...RO_ROWS.map((r) => r.id)]) {
      const line = run.lines.get(id);
      expect(line, run.stderr).toBeDefined();
      expect(line.outcome, `${id}: ${line.error}`).toBe("completed");
      expect(line.verify, `${id}: ${JSON.stringify(line.verify)}`).toMatchObject({ passed: false, exit_code: 1 });
      expect(line.score.passed, id).toBe(false);
    }
  });
});

describe("a full workdir when the verify files are put (Docker, --disk)", () => {
  it.runIf(root)("is a failed verify (exit 125), not an undecided one", () => {
    const line = run.lines.get("diskfull");
    expect(line, run.stderr).toBeDefined();
    expect(line.outcome, line.error).toBe("completed");
    expect(line.verify, JSON.stringify(line.verify)).toMatchObject({ passed: false, exit_code: 125 });
    expect(line.verify.output).toMatch(/No space left/);
    expect(line.score.passed).toBe(false);
  });
});
