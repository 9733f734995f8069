/**
 * Descriptors the harness inherited stay out of the local sandbox, end to end through the built CLI with a
 * scripted agent. A harness started by a parent that left descriptors open (a shell's `exec 100<DIR`, a job
 * runner, a wrapper script) must not hand them to a task: through an open folder `/proc/self/fd/N/…` reaches
 * host files the sandbox does not bind (the dataset and its `expected`, the verify files), and through an open
 * file the task writes outside its sandbox. Neither the agent's commands nor the verify command may see them.
 */
import { spawn } from "node:child_process";
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, assertBuilt, cleanEnv } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const TOKEN = `HBFDCANARY${randomBytes(4).toString("hex")}`;
/** The descriptor numbers the parent leaves open: a folder and a file opened for appending. */
const DIR_FD = 100;
const FILE_FD = 101;

/** Lists its descriptors, reads the dataset and the verify files through the folder, writes through the file. */
const probe = (who: string) =>
  `ls -l /proc/self/fd 2>&1 | sed 's/^/FD /'; ` +
  `for d in /proc/self/fd/*; do cat "$d/d.jsonl" "$d/hidden/test_secret.sh" 2>/dev/null; done; ` +
  `for n in $(ls /proc/self/fd); do echo ${who}-wrote-here 2>/dev/null >&$n; done 2>/dev/null; echo probed`;

let base: string;
let server: FakeOpenAI;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "hb-fds-"));
  chmodSync(base, 0o755);
  server = await startFakeOpenAI(scriptedPerTask(() => [{ name: "terminal", arguments: { command: probe("agent") } }]));
});

afterAll(async () => {
  await server?.close();
  rmSync(base, { recursive: true, force: true });
});

describe("descriptors inherited by the harness", () => {
  it("are closed in the agent's sandbox and in the verify's", { timeout: 240_000 }, async () => {
    assertBuilt();
    mkdirSync(join(base, "hidden"));
    writeFileSync(join(base, "hidden", "test_secret.sh"), `echo ${TOKEN}-verifyfiles\n`);
    const row = {
      id: "fds",
      prompt: "task:fds",
      expected: `${TOKEN}-expected`,
      verify: `${probe("verify")}; true`,
      verify_files: "hidden",
      toolsets: ["terminal"],
    };
    writeFileSync(join(base, "d.jsonl"), `${JSON.stringify(row)}\n`);
    const victim = join(base, "victim.log");
    writeFileSync(victim, "", { mode: 0o666 });
    chmodSync(victim, 0o666);

    const dirFd = openSync(base, "r");
    const fileFd = openSync(victim, "a");
    const stdio: ("ignore" | "pipe" | number)[] = ["ignore", "pipe", "pipe"];
    for (let fd = 3; fd < DIR_FD; fd++) stdio.push("ignore");
    stdio.push(dirFd, fileFd);
    const out = join(base, "runs");
    const child = spawn(
      process.execPath,
      [
        CLI,
        "run",
        join(base, "d.jsonl"),
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
        out,
        "--run-name",
        "fds",
        "--progress",
        "none",
      ],
      { cwd: ROOT, env: cleanEnv(), stdio },
    );
    closeSync(dirFd);
    closeSync(fileFd);
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout!.resume();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect([0, 1], stderr).toContain(code);
    const [line] = readJsonl(join(out, "fds", "trajectories.jsonl"));
    const tool = line.messages.find((m: any) => m.role === "tool").content as string;
    expect(tool).toContain("probed");
    expect(line.verify.output).toContain("probed");
    for (const seen of [tool, line.verify.output as string]) {
      expect(seen).not.toContain(TOKEN);
      expect(seen).not.toMatch(new RegExp(`FD .* (${DIR_FD}|${FILE_FD}) -> `));
    }
    expect(readFileSync(victim, "utf8")).toBe("");
  });
});
