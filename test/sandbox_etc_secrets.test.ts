/**
 * Credential files under /etc that are world-readable by default (pip's and apt's package-index passwords, a proxy
 * password in /etc/environment) read as empty in a local sandbox: /etc is shown to the task, these are masked.
 * End to end through the built CLI (a child process: the sandbox works out its system entries once per process) with a
 * scripted agent. As root only: the test writes the files (and removes what it wrote).
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const CANARY = `HBETC${randomBytes(4).toString("hex")}`;
const FILES = ["/etc/pip.conf", "/etc/apt/auth.conf", "/etc/apt/auth.conf.d/hb-canary.conf"];
const written: string[] = [];
const madeDirs: string[] = [];
let server: FakeOpenAI;

beforeAll(async () => {
  if (process.getuid?.() !== 0) return;
  for (const file of FILES) {
    const dir = file.slice(0, file.lastIndexOf("/"));
    if (!existsSync(dir)) {
      mkdirSync(dir);
      madeDirs.push(dir);
    }
    if (existsSync(file)) continue; // the machine's own: not replaced
    writeFileSync(file, `password = ${CANARY}\n`, { mode: 0o644 });
    written.push(file);
  }
  server = await startFakeOpenAI(
    scriptedPerTask(() => [
      { name: "terminal", arguments: { command: `cat ${FILES.join(" ")} 2>&1; echo read-done` } },
    ]),
  );
});

afterAll(async () => {
  await server?.close();
  for (const f of written) rmSync(f, { force: true });
  for (const d of madeDirs.reverse()) rmSync(d, { recursive: true, force: true });
});

describe("a local sandbox's /etc", () => {
  it.runIf(process.getuid?.() === 0)("shows pip's and apt's credential files empty", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(dataset, `${JSON.stringify({ id: "etc", prompt: "task:etc" })}\n`);
    const r = await runCli([
      "run",
      dataset,
      "--model",
      "m",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--toolsets",
      "terminal",
      "--approval",
      "allow",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const [line] = readJsonl(join(dir, "runs", "r", "trajectories.jsonl"));
    const seen = JSON.stringify(line.messages.filter((m: { role: string }) => m.role === "tool"));
    expect(seen).toContain("read-done");
    expect(written.length).toBeGreaterThan(0);
    expect(seen).not.toContain(CANARY);
  });
});
