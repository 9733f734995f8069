/**
 * The site-wide package-index configurations a task could read for a token, beyond /etc/pip.conf (masked before):
 * pip's first site-wide file on Linux, /etc/xdg/pip/pip.conf (`index-url = https://user:token@…`), npm's global
 * npmrc (`//registry/:_authToken=…`: /etc/npmrc for distributions' npm, $PREFIX/etc/npmrc for /usr and /usr/local),
 * boto's /etc/boto.cfg (cloud keys) and the container registries' /etc/containers/auth.json. All world-readable by
 * default, and shown with /etc and /usr. End to end through the built CLI with a scripted agent, as root (the test
 * writes a canary where a file is missing, and removes what it wrote; the machine's own files are only measured,
 * never printed): none gives the task a byte of its own.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const CANARY = `HBETC${randomBytes(4).toString("hex")}`;
const FILES = [
  "/etc/xdg/pip/pip.conf",
  "/etc/npmrc",
  "/usr/etc/npmrc",
  "/usr/local/etc/npmrc",
  "/etc/boto.cfg",
  "/etc/containers/auth.json",
];
const written: string[] = [];
const madeDirs: string[] = [];
let server: FakeOpenAI;

beforeAll(async () => {
  if (process.getuid?.() !== 0) return;
  for (const file of FILES) {
    const dir = file.slice(0, file.lastIndexOf("/"));
    const missing: string[] = [];
    for (let d = dir; d !== "" && !existsSync(d); d = d.slice(0, d.lastIndexOf("/"))) missing.unshift(d);
    for (const d of missing) {
      mkdirSync(d);
      madeDirs.push(d);
    }
    if (existsSync(file)) continue; // the machine's own: not replaced
    writeFileSync(file, `token = ${CANARY}\n`, { mode: 0o644 });
    written.push(file);
  }
  server = await startFakeOpenAI(
    scriptedPerTask(() => [
      {
        name: "terminal",
        // Sizes only: a machine's own file is never copied into the run's records.
        arguments: {
          command: `for f in ${FILES.join(" ")}; do echo "$f $({ wc -c < "$f"; } 2>/dev/null || echo unreadable)"; done; echo read-done`,
        },
      },
    ]),
  );
});

afterAll(async () => {
  await server?.close();
  for (const f of written) rmSync(f, { force: true });
  for (const d of madeDirs.reverse()) rmSync(d, { recursive: true, force: true });
});

describe("a local sandbox's site-wide package-index configurations", () => {
  it.runIf(process.getuid?.() === 0)("are masked: pip's /etc/xdg one, npm's, boto's, the registries'", async () => {
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
      "--env",
      "local",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const [line] = readJsonl(join(dir, "runs", "r", "trajectories.jsonl"));
    const output: string = JSON.parse(line.messages.find((m: { role: string }) => m.role === "tool").content).output;
    expect(output).toContain("read-done");
    expect(output).not.toContain(CANARY);
    // Each is masked: empty, or unreadable (/dev/null bound on a nodev mount), never the file's bytes.
    const sizes = output.split("\n").slice(0, FILES.length);
    expect(sizes.map((l) => l.replace(/ (0|unreadable)$/, ""))).toEqual(FILES);
  });
});
