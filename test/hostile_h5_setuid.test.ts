/**
 * A hostile task that leaves a set-user-ID program of the harness's own user on the host, end to end through the
 * built CLI with a scripted agent. Under a harness that is not root the sandbox's uid is the harness's own (a user
 * namespace maps it to itself): a file the task makes in /workspace belongs to the harness's user on the host, and
 * the task may set its mode bits. The sandbox's mounts are nosuid, the task folder on the host is not: another
 * user of the machine who reaches `<output-dir>/.workspaces/<run>/<task>/` (an output dir under a 0755 home, a
 * kept folder, or any folder while its task runs) runs the program as the harness's user, who holds the run's API
 * keys. The folder holding the run's task folders is closed to other users (no bwrap needs a path: the sandbox
 * binds each folder by a descriptor the harness opened).
 */
import { execa } from "execa";
import { chmodSync, chownSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, cleanEnv, tempDir } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const HARNESS_UID = 1000;
const OTHER_UID = 1001;

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI(
    scriptedPerTask(() => [
      {
        name: "terminal",
        arguments: { command: "cp /usr/bin/id ./evil && chmod 6755 evil && ls -l evil" },
      },
    ]),
  );
});

afterAll(async () => {
  await server?.close();
});

function chownAll(p: string, uid: number): void {
  chownSync(p, uid, uid);
  if (statSync(p).isDirectory()) for (const e of readdirSync(p)) chownAll(join(p, e), uid);
}

describe.runIf(process.getuid?.() === 0)("a set-user-ID program a task leaves in its folder", () => {
  it("cannot be run by another user of the machine (uid-1000 harness, --keep-workspaces)", {
    timeout: 300_000,
  }, async () => {
    // An output dir other users may enter, as under a home of mode 0755.
    const dir = tempDir("hb-h5-setuid-");
    chmodSync(dir, 0o755);
    const row = { id: "suid", prompt: "task:suid", verify: "false", toolsets: ["terminal", "file"] };
    writeFileSync(join(dir, "d.jsonl"), `${JSON.stringify(row)}\n`);
    chownAll(dir, HARNESS_UID);
    const r = await execa(
      "setpriv",
      [
        `--reuid=${HARNESS_UID}`,
        `--regid=${HARNESS_UID}`,
        "--clear-groups",
        process.execPath,
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
        "--keep-workspaces",
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        "h",
        "--progress",
        "none",
      ],
      { cwd: ROOT, env: cleanEnv({ HOME: dir }), extendEnv: false, reject: false, timeout: 240_000 },
    );
    const line = readJsonl(join(dir, "runs", "h", "trajectories.jsonl")).find((l) => l.task_id === "suid");
    expect(line, r.stderr).toBeDefined();
    // The task did make it: a set-user-ID program of the harness's user, kept on the host.
    const evil = join(dir, "runs", ".workspaces", "h", "suid", "evil");
    const st = statSync(evil);
    expect(st.uid).toBe(HARNESS_UID);
    expect(st.mode & 0o4000).toBe(0o4000);
    // Another user cannot reach it, so cannot run it as the harness's user.
    const other = await execa(
      "setpriv",
      [`--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, "--clear-groups", "/bin/sh", "-c", `"$1"`, "sh", evil],
      { reject: false },
    );
    expect(other.stdout).not.toMatch(new RegExp(`euid=${HARNESS_UID}\\b`));
    expect(other.exitCode, other.stdout).not.toBe(0);
  });
});
