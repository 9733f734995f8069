/**
 * `spawnThroughFifos` (an MCP stdio server in the local sandbox) opens, from the harness, two FIFOs and a stderr
 * file that the sandbox made in its exchange folder, where the task can replace them. A task racing the start
 * (a loop that swaps each new `pp-*.in` for a link) made the harness, as root, open host paths through its links:
 * `.err -> /proc/self/environ` put the harness's environment, secrets included, into the start failure written to
 * failed.jsonl; `.in` -> a host file or FIFO was opened for writing. Here the race is won for sure: the `exec` the
 * function is given makes the FIFOs as the sandbox does (real files, real FIFOs), then swaps them as the task would
 * before it returns. Nothing outside the folder may be opened: no secret in the error, nothing written elsewhere.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { readdir, rename } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecOptions, ExecResult } from "../tools/environments/base.js";
import { spawnThroughFifos } from "../tools/environments/piped_process.js";

const SECRET = "hb-fifo-secret-91c3";
let base: string;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), "hb-fifo-links-"));
  writeFileSync(join(base, "secret.txt"), `TOKEN=${SECRET}\n`);
  // The first test's own target: its stand-in sandbox is the host, and its process may still open its stderr
  // through the swapped link (truncating the file) after the swap; in a real sandbox that open stays inside.
  writeFileSync(join(base, "secret-err.txt"), `TOKEN=${SECRET}\n`);
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

/** Runs the start script with sh in `dir` (the "sandbox" sees the same folder), then lets `swap` act on it. */
function racingExec(dir: string, swap: (name: string) => Promise<void>) {
  return async (command: string, _opts?: ExecOptions): Promise<ExecResult> => {
    const text = command.replaceAll(`${dir}-inner`, dir);
    const out = execFileSync("sh", ["-c", text], { cwd: dir, encoding: "utf8" });
    const fifo = (await readdir(dir)).find((n) => n.endsWith(".in"))!;
    await swap(fifo.slice(0, -".in".length));
    return { exitCode: 0, stdout: out, stderr: "", timedOut: false, truncated: false };
  };
}

async function replaceWithLink(path: string, target: string): Promise<void> {
  symlinkSync(target, `${path}.tmp`);
  await rename(`${path}.tmp`, path);
}

describe("spawnThroughFifos and links the task put in the exchange folder", () => {
  it("a start that fails reads no stderr through a link (the harness's environment stays out of the error)", async () => {
    const dir = join(base, "err");
    mkdirSync(dir);
    const exec = racingExec(dir, async (name) => {
      await replaceWithLink(join(dir, `${name}.err`), join(base, "secret-err.txt"));
      await replaceWithLink(join(dir, `${name}.in`), join(base, "nowhere"));
    });
    const err = await spawnThroughFifos(exec, dir, `${dir}-inner`, ["sleep", "5"], { startTimeoutMs: 3000 }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).not.toContain(SECRET);
  });

  it("a FIFO swapped for a link to a FIFO elsewhere is not opened", { timeout: 20_000 }, async () => {
    const dir = join(base, "fifo");
    mkdirSync(dir);
    // Another FIFO of the host with a reader (another task's shell stdin, say): the harness must not write into it.
    const elsewhere = join(base, "elsewhere.fifo");
    execFileSync("mkfifo", [elsewhere]);
    const reader = spawn("sh", ["-c", `cat "$1"`, "sh", elsewhere], { stdio: ["ignore", "pipe", "ignore"] });
    let received = "";
    reader.stdout!.on("data", (d: Buffer) => {
      received += d.toString();
    });
    const exec = racingExec(dir, async (name) => {
      await replaceWithLink(join(dir, `${name}.in`), elsewhere);
    });
    const opened = await spawnThroughFifos(exec, dir, `${dir}-inner`, ["sleep", "5"], { startTimeoutMs: 3000 }).then(
      (p) => p,
      () => undefined,
    );
    opened?.stdin.write('{"jsonrpc":"2.0","method":"initialize"}\n');
    await new Promise((r) => setTimeout(r, 300));
    opened?.stdin.destroy();
    opened?.stdout.destroy();
    reader.kill();
    expect(opened).toBeUndefined();
    expect(received).toBe("");
    expect(readFileSync(join(base, "secret.txt"), "utf8")).toBe(`TOKEN=${SECRET}\n`);
  });
});
