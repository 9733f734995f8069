/**
 * Temporary folders of a run (issue 23, item 4), through the built CLI with a private $TMPDIR: a finished run
 * with local sandboxes and a verify leaves no `hermes-*` folder, nor does one interrupted by SIGINT (twice) or
 * SIGTERM mid-task; what a `kill -9`'d run left is swept by the next run.
 */
import { execa } from "execa";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, ROOT, assertBuilt, cleanEnv, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text, toolCalls, type FakeOpenAI } from "./helpers/fake_openai.js";
import { waitUntil } from "./helpers/local_ctx.js";
import { readJsonl } from "./helpers/jsonl.js";

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI((req) => {
    const prompt: string = req.body.messages.find((m: any) => m.role === "user").content;
    const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
    const hang = /hang:(\d+)/.exec(prompt)?.[1];
    if (turn === 0)
      return toolCalls([
        { name: "terminal", arguments: { command: hang ? `sleep ${hang}` : "echo 42 > answer.txt", timeout: 170 } },
      ]);
    return text("done");
  });
});

afterAll(async () => {
  await server?.close();
});

/** Folders in `dir` (the run's $TMPDIR); files such as the tool discovery cache are not counted. */
function folders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
}

function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (
        readFileSync(`/proc/${name}/cmdline`, "utf8").includes(needle) &&
        !/\) Z/.test(readFileSync(`/proc/${name}/stat`, "utf8"))
      )
        found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

/** Waits until a process with `needle` in its command line is there (or gone): /proc read 5 times a second. */
function waitForProcess(needle: string, there: boolean, timeoutMs: number): Promise<boolean> {
  return waitUntil(() => processesWith(needle).length > 0 === there, timeoutMs, 200);
}

function start(tmp: string, prompts: string[], verify = false) {
  assertBuilt();
  const dir = tempDir("hb-tmpdirs-");
  const dataset = join(dir, "d.jsonl");
  writeFileSync(
    dataset,
    prompts
      .map((p, i) =>
        JSON.stringify({
          id: `t${i}`,
          prompt: p,
          toolsets: ["terminal"],
          ...(verify ? { verify: "grep -qx 42 answer.txt", verify_files: "checks" } : {}),
        }),
      )
      .join("\n") + "\n",
  );
  mkdirSync(join(dir, "checks"));
  writeFileSync(join(dir, "checks", "c.txt"), "c");
  const child = execa(
    process.execPath,
    [
      CLI,
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
      "--env",
      "local",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
      "--concurrency",
      "2",
    ],
    // forceKillAfterDelay: false: execa's SIGKILL 5 s after a SIGTERM would cut the clean-up under test.
    {
      cwd: ROOT,
      env: cleanEnv({ TMPDIR: tmp }),
      extendEnv: false,
      reject: false,
      timeout: 240_000,
      forceKillAfterDelay: false,
    },
  );
  return { dir, child };
}

describe("a run's temporary folders", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`a run interrupted by ${signal} mid-task leaves none`, { timeout: 300_000 }, async () => {
      const tmp = tempDir("hb-tmp-");
      const marker = signal === "SIGINT" ? "8721" : "8722";
      const { child } = start(tmp, [`hang:${marker}`]);
      expect(await waitForProcess(`sleep\u0000${marker}`, true, 120_000)).toBe(true);
      expect(folders(tmp).length).toBeGreaterThan(0);
      child.kill(signal);
      // Ctrl-C once drains (the task would wait for its command); twice aborts.
      if (signal === "SIGINT") setTimeout(() => child.kill("SIGINT"), 300);
      const r = await child;
      expect(r.exitCode, r.stderr).toBe(130);
      expect(folders(tmp)).toEqual([]);
      expect(await waitForProcess(`sleep\u0000${marker}`, false, 30_000)).toBe(true);
    });
  }

  // One sequence for two tests: a run killed with kill -9, then a finished run (sandboxes and a verify) after it.
  describe("a kill -9'd run, then a finished run in the same $TMPDIR", () => {
    const tmp = tempDir("hb-tmp-");
    let left: string[] = [];
    let sleepGone = false;
    let next: { dir: string; r: Awaited<ReturnType<typeof start>["child"]> };
    beforeAll(async () => {
      const { child } = start(tmp, ["hang:8723"]);
      expect(await waitForProcess("sleep\u00008723", true, 120_000)).toBe(true);
      child.kill("SIGKILL");
      await child;
      left = folders(tmp);
      sleepGone = await waitForProcess("sleep\u00008723", false, 30_000);
      const { dir, child: nextChild } = start(tmp, ["a", "b"], true);
      next = { dir, r: await nextChild };
    }, 300_000);

    it("what a kill -9'd run left is removed by the next run", () => {
      expect(left.some((n) => /^hermes-spawn-\d+-/.test(n))).toBe(true);
      expect(sleepGone).toBe(true);
      expect(next.r.exitCode, next.r.stderr).toBe(0);
      expect(folders(tmp)).toEqual([]);
      expect(existsSync(tmp)).toBe(true);
    });

    it("a finished run with sandboxes and a verify leaves none", () => {
      expect(next.r.exitCode, next.r.stderr).toBe(0);
      const lines = readJsonl(join(next.dir, "runs", "r", "trajectories.jsonl"), { mustExist: true });
      expect(lines.map((l) => l.verify?.passed)).toEqual([true, true]);
      expect(folders(tmp)).toEqual([]);
    });
  });
});
