/**
 * A hostile tester's second round, local sandbox, end to end through the built CLI with a scripted agent
 * (`--approval allow`: only the sandbox stands between the agent and the grade):
 * - a harness started with a relative entry in its PATH (an empty one: `:/usr/bin`, `/usr/bin::/bin`, a trailing
 *   `:`; `.`; `bin`), which a shell searches from its current folder: the task's PATH must not carry it into the
 *   sandbox, where the verify runs from the task folder and would run the agent's own `python3`;
 * - read_file of a link the agent made to /dev/zero, /dev/urandom or a FIFO: the harness's copy of the file (into
 *   the exchange folder: the task's --disk file system, else the host's $TMPDIR) must not fill the disk nor block,
 *   so the read fails at once and the task is graded, not ended with disk_limit (out of the pass rate);
 * - what the verify's put removes (a folder at a verify file's path, a `__pycache__`, a package folder of its name)
 *   left with a read-only folder inside: `rm -rf` failed, the verify did not run and the task was unscored.
 */
import { execa } from "execa";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, cleanEnv, runCli, tempDir } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI, type ToolCallSpec } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { RO_ROWS, RO_TREES } from "./helpers/hostile2_trees.js";
import { absolutePath } from "../tools/environments/task_env.js";

const term = (command: string): ToolCallSpec => ({ name: "terminal", arguments: { command } });

/** An executable `NAME` in the task folder and in its `bin/` that exits 0: what a relative PATH entry would find. */
const plant = (name: string) =>
  `mkdir -p bin && for f in ${name} bin/${name}; do printf '#!/bin/sh\\necho FORGED\\nexit 0\\n' > $f; chmod +x $f; done; echo "PATH=$PATH"`;

const SCRIPTS: Record<string, ToolCallSpec[]> = {
  pathplant: [term(plant("python3"))],
  honest: [term("echo 42 > answer.txt")],
  // read_file of links to endless or blocking files: the harness's own copy of the file must stay bounded.
  devlink: [
    term("ln -s /dev/zero zero; ln -s /dev/urandom rnd; mkfifo fifo; echo made"),
    { name: "read_file", arguments: { path: "zero" } },
    { name: "read_file", arguments: { path: "rnd" } },
    { name: "read_file", arguments: { path: "fifo" } },
    term("echo still-here"),
  ],
  ...RO_TREES,
  // The task folder itself left unreadable by its owner (the harness's own uid when it is not root).
  lockws: [term("chmod 000 /workspace; echo locked")],
  lockwsfiles: [term("chmod 000 /workspace; echo locked")],
  // A tree with a read-only folder inside left in the task folder (under a harness that is not root, its owner).
  rotree: [term("mkdir -p d/s && touch d/s/x && chmod 555 d/s && chmod 000 d && echo left")],
};

interface Row {
  id: string;
  verify: string;
  files?: Record<string, string>;
}

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI(scriptedPerTask((id) => SCRIPTS[id]!));
});

afterAll(async () => {
  await server?.close();
});

async function run(
  rows: Row[],
  opts: { env?: Record<string, string>; args?: string[]; uid?: number } = {},
): Promise<{ lines: Map<string, any>; stdout: string; stderr: string; dir: string }> {
  const dir = tempDir("hb-hostile2-");
  if (opts.uid !== undefined) chmodSync(dir, 0o755);
  const dataset = rows.map((r) => {
    const row: Record<string, unknown> = {
      id: r.id,
      prompt: `task:${r.id}`,
      verify: r.verify,
      toolsets: ["terminal", "file"],
    };
    if (r.files) {
      for (const [rel, content] of Object.entries(r.files)) {
        mkdirSync(join(dir, `files-${r.id}`, rel, ".."), { recursive: true });
        writeFileSync(join(dir, `files-${r.id}`, rel), content);
      }
      row.verify_files = `files-${r.id}`;
    }
    return JSON.stringify(row);
  });
  writeFileSync(join(dir, "d.jsonl"), dataset.join("\n") + "\n");
  const args = [
    "run",
    join(dir, "d.jsonl"),
    "--model",
    "agent",
    "--base-url",
    server.baseURL,
    "--api-key",
    "k",
    "--approval",
    "allow",
    "--env",
    "local",
    "--output-dir",
    join(dir, "runs"),
    "--run-name",
    "h",
    "--progress",
    "none",
    "--concurrency",
    "2",
    ...(opts.args ?? []),
  ];
  let r: { stdout: string; stderr: string };
  if (opts.uid === undefined) r = await runCli(args, { timeoutMs: 280_000, env: opts.env });
  else {
    // As a harness of another uid: it owns the dataset and the output dir.
    const chownAll = (p: string) => {
      chownSync(p, opts.uid!, opts.uid!);
      if (statSync(p).isDirectory()) for (const e of readdirSync(p)) chownAll(join(p, e));
    };
    chownAll(dir);
    r = await execa(
      "setpriv",
      [`--reuid=${opts.uid}`, `--regid=${opts.uid}`, "--clear-groups", process.execPath, CLI, ...args],
      {
        cwd: ROOT,
        env: cleanEnv({ HOME: dir, ...opts.env }),
        extendEnv: false,
        reject: false,
        timeout: 280_000,
      },
    );
  }
  expect(r.stderr).not.toMatch(/internal error/);
  const lines = new Map<string, any>();
  for (const f of ["trajectories.jsonl", "failed.jsonl"])
    for (const l of readJsonl(join(dir, "runs", "h", f))) lines.set(l.task_id, l);
  return { lines, stdout: r.stdout, stderr: r.stderr, dir };
}

function toolOutputs(line: any): string {
  return line.messages
    .filter((m: any) => m.role === "tool")
    .map((m: any) => JSON.parse(m.content).output)
    .join("\n");
}

describe("a relative entry in the harness's PATH", () => {
  const harnessPath = process.env.PATH ?? "/usr/bin:/bin";
  it.each([
    ["an empty first entry", `:${harnessPath}`, harnessPath],
    ["an empty entry inside", `/usr/bin::${harnessPath}`, `/usr/bin:${harnessPath}`],
    ["a trailing empty entry", `${harnessPath}:`, harnessPath],
    ["'.' first", `.:${harnessPath}`, harnessPath],
    ["'bin' first", `bin:${harnessPath}`, harnessPath],
  ])("(%s) is left out of the task's PATH", (_what, path, kept) => {
    expect(absolutePath(path)).toBe(kept);
  });

  // Every form at once, end to end (one run: each is a CLI process and a sandbox per row).
  it("does not let the agent's own python3 in the task folder decide the verify", { timeout: 300_000 }, async () => {
    const { lines, stderr } = await run(
      [
        { id: "pathplant", verify: "python3 -c 'import sys; sys.exit(1)'" },
        { id: "honest", verify: "grep -qx 42 answer.txt" },
      ],
      { env: { PATH: `:bin:.:${harnessPath.split(":")[0]}::${harnessPath}:` } },
    );
    const forged = lines.get("pathplant");
    expect(forged, stderr).toBeDefined();
    expect(forged.verify, JSON.stringify(forged.verify)).toMatchObject({ passed: false, exit_code: 1 });
    expect(forged.verify.output).not.toContain("FORGED");
    expect(forged.score.passed).toBe(false);
    // The task's PATH has only absolute folders.
    const taskPath = /PATH=(.*)/.exec(toolOutputs(forged))![1]!;
    expect(
      taskPath.split(":").every((d) => d.startsWith("/")),
      taskPath,
    ).toBe(true);
    expect(lines.get("honest").verify).toMatchObject({ passed: true, exit_code: 0 });
  });
});

describe("read_file of a link to an endless or blocking file", () => {
  it.runIf(process.getuid?.() === 0)(
    "fails at once, fills no disk, and the task is graded (--disk 64m)",
    { timeout: 300_000 },
    async () => {
      const started = Date.now();
      const { lines, stdout, stderr } = await run([{ id: "devlink", verify: "false" }], { args: ["--disk", "64m"] });
      const line = lines.get("devlink");
      expect(line, `${stdout}\n${stderr}`).toBeDefined();
      expect(line.outcome, line.error).toBe("completed");
      expect(line.verify).toMatchObject({ passed: false, exit_code: 1 });
      expect(line.score.passed).toBe(false);
      const results = line.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
      expect(results).toHaveLength(5);
      for (const r of results.slice(1, 4)) expect(r.error, JSON.stringify(r).slice(0, 300)).toBeDefined();
      expect(results[4].output).toBe("still-here");
      // The FIFO was not waited on for the file operations' 2 minutes.
      expect(Date.now() - started).toBeLessThan(100_000);
    },
  );
});

describe("read-only folders inside what the verify's put removes", () => {
  it("are removed all the same: the verify runs and fails as it should", { timeout: 300_000 }, async () => {
    const files = (id: string) =>
      id === "rofile" ? { "checks/check.sh": "exit 1\n" } : { "checks/check.py": "import sys\nsys.exit(1)\n" };
    const { lines, stdout, stderr } = await run(RO_ROWS.map((r) => ({ ...r, files: files(r.id) })));
    for (const { id } of RO_ROWS) {
      const line = lines.get(id);
      expect(line, `${stdout}\n${stderr}`).toBeDefined();
      expect(line.verify, `${id}: ${JSON.stringify(line.verify)}`).toMatchObject({ passed: false, exit_code: 1 });
      expect(line.score.passed, id).toBe(false);
    }
  });
});

describe("a task folder its owner left unreadable (chmod 000)", () => {
  for (const uid of process.getuid?.() === 0 ? [0, 1000] : [process.getuid!()])
    it(`does not keep the verify from running (harness uid ${uid})`, { timeout: 300_000 }, async () => {
      const { lines, stdout, stderr } = await run(
        [
          { id: "lockws", verify: "false" },
          { id: "lockwsfiles", verify: "sh checks/check.sh", files: { "checks/check.sh": "exit 1\n" } },
        ],
        uid === process.getuid?.() ? {} : { uid },
      );
      for (const id of ["lockws", "lockwsfiles"]) {
        const line = lines.get(id);
        expect(line, `${stdout}\n${stderr}`).toBeDefined();
        expect(line.verify, `${id}: ${JSON.stringify(line.verify)}`).toMatchObject({ passed: false, exit_code: 1 });
        expect(line.score.passed, id).toBe(false);
      }
    });
});

describe("a read-only tree left in the task folder", () => {
  it.runIf(process.getuid?.() === 0)(
    "is removed with the task folder under a harness that is not root (uid 1000)",
    { timeout: 300_000 },
    async () => {
      const { lines, stdout, stderr, dir } = await run([{ id: "rotree", verify: "false" }], { uid: 1000 });
      expect(lines.get("rotree")?.verify, `${stdout}\n${stderr}`).toMatchObject({ passed: false, exit_code: 1 });
      expect(stderr).not.toMatch(/cleanup failed/);
      const workspaces = join(dir, "runs", ".workspaces", "h");
      expect(existsSync(workspaces) ? readdirSync(workspaces) : []).toEqual([]);
    },
  );
});
