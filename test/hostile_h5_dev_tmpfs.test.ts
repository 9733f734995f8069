/**
 * The sandbox's /dev, end to end through the built CLI with a scripted agent. bwrap's `--dev` is a tmpfs of its
 * own with no size: half the host's memory. Under a harness that is not root the task owns it (its uid is the
 * harness's), so a task could write there without the 512 MiB bound of its other scratch folders, pages that no
 * process owns: the OOM killer, looking for the largest process, takes the harness instead. Under a root harness
 * it is root's, and /dev/shm with it: POSIX shared memory (`multiprocessing.Lock()`, `shm_open`) failed with
 * EACCES. /dev/shm is now a bounded tmpfs open to the task (1777), and the rest of /dev read-only.
 */
import { execa } from "execa";
import { chmodSync, chownSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, cleanEnv, tempDir } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const PROBE = [
  `python3 -c 'import multiprocessing as m; m.Lock(); print("shm-ok")' 2>&1 | tail -1`,
  // 600 MiB into /dev/shm: past the 512 MiB bound (written in the cgroup's memory under a root harness).
  `head -c 600M /dev/zero > /dev/shm/big 2>/dev/null && echo shm-unbounded || echo shm-bounded; rm -f /dev/shm/big`,
  `touch /dev/x 2>/dev/null && echo dev-writable || echo dev-read-only`,
  `echo hi > /dev/null && echo null-ok`,
].join("; ");

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI(scriptedPerTask(() => [{ name: "terminal", arguments: { command: PROBE } }]));
});

afterAll(async () => {
  await server?.close();
});

async function run(uid?: number): Promise<string> {
  const dir = tempDir("hb-h5-dev-");
  chmodSync(dir, 0o755);
  const row = { id: "dev", prompt: "task:dev", verify: "false", toolsets: ["terminal"] };
  writeFileSync(join(dir, "d.jsonl"), `${JSON.stringify(row)}\n`);
  const args = [
    CLI,
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
  ];
  let argv = [process.execPath, ...args];
  if (uid !== undefined) {
    const chownAll = (p: string) => {
      chownSync(p, uid, uid);
      if (statSync(p).isDirectory()) for (const e of readdirSync(p)) chownAll(join(p, e));
    };
    chownAll(dir);
    argv = ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", ...argv];
  }
  const r = await execa(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env: cleanEnv(uid !== undefined ? { HOME: dir } : {}),
    extendEnv: false,
    reject: false,
    timeout: 240_000,
  });
  const line = readJsonl(join(dir, "runs", "h", "trajectories.jsonl")).find((l) => l.task_id === "dev");
  expect(line, r.stderr).toBeDefined();
  return JSON.parse(line.messages.find((m: any) => m.role === "tool").content).output;
}

const EXPECTED = "shm-ok\nshm-bounded\ndev-read-only\nnull-ok";

describe("the sandbox's /dev", () => {
  it("has a bounded /dev/shm the task can use, and is read-only besides", { timeout: 300_000 }, async () => {
    expect(await run()).toBe(EXPECTED);
  });

  it.runIf(process.getuid?.() === 0)("the same under a uid-1000 harness", { timeout: 300_000 }, async () => {
    expect(await run(1000)).toBe(EXPECTED);
  });
});
