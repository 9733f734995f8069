/**
 * A hostile agent in Docker cannot take its own failing task out of the pass rate (turn it into an unscored
 * environment_error or a verify that "could not run"), nor run a program of its own beside the verify:
 * - a root agent's `kill -9 -1` kills the container's keep-alive, and the container stops (the engine removes it):
 *   as the local sandbox does for a shell the agent killed, the next command gets a new sandbox of the task's image
 *   over the same task folder (its own file system outlives the container), the agent goes on, and the verify runs;
 * - with --verify-isolated, a root agent's own `sleep` (the container's keep-alive is `sleep`, found on PATH) would
 *   be the keep-alive of the snapshot copy the verify runs in, beside the verify, past the kill passes;
 * - an unprivileged agent fills the /tmp tmpfs past the memory limit: the container keeps running, but every exec
 *   the harness starts in it is killed for memory, the kill passes before the verify included. The task ends
 *   resource_limit (memory_limit) and its verify runs in a new sandbox over the same task folder.
 * Through the CLI with a scripted model (the fake OpenAI server: its tool calls are the attack), in real containers;
 * root only (loop file systems for the task folder's own file system).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages } from "./helpers/docker.js";
import type { FakeOpenAI } from "./helpers/fake_openai.js";
import { runScripted, startTerminalScripts, writeHarborTask } from "./helpers/scripted_runs.js";

/**
 * A root agent's own `sleep` in place of the image's (/bin/sleep, first on the busybox image's PATH): a loop of
 * shell builtins (no process for a kill pass to find) that does `what` (no single quote in it) for ever.
 */
const ownSleep = (what: string) =>
  `rm -f /bin/sleep && printf '#!/bin/sh\\nwhile :; do ${what}; done\\n' > /bin/sleep && chmod 755 /bin/sleep && echo planted`;

const SCRIPTS: Record<string, string[]> = {
  // Goes on after the kill: its folder is there, and it writes one more line.
  kill: ["echo work > out.txt", "kill -9 -1", "cat out.txt; echo more >> out.txt; echo went-on"],
  // A Harbor task's: the new sandbox was set up as the last one was (its /logs made anew).
  hkill: ["echo work > out.txt", "kill -9 -1", "cat out.txt; echo more >> out.txt; ls -d /logs/agent; echo went-on"],
  // The kill is its last command: the verify runs over its folder all the same.
  killlast: ["echo work > out.txt", "kill -9 -1"],
  // Its `sleep` would make the (failing) check pass: it writes `exit 0` over it.
  forge: [ownSleep('[ -d /work/checks ] && echo "exit 0" > /work/checks/check.sh')],
  // Its `sleep` would kill the (passing) verify.
  spoil: ["echo 42 > answer.txt", ownSleep("kill -9 -1 2>/dev/null")],
  // An unprivileged agent: more than the memory limit in the /tmp tmpfs (charged to the container, held by no
  // process), which no process's end gives back.
  wedge: ["echo work > out.txt; dd if=/dev/zero of=/tmp/fill bs=1M count=300 status=none; echo rc=$?", "echo after"],
};

let server: FakeOpenAI;

beforeAll(async () => {
  await ensureDockerTestImages();
  server = await startTerminalScripts(SCRIPTS);
}, 600_000);

afterAll(async () => {
  await server?.close();
});

const root = process.getuid?.() === 0;

interface Row {
  id: string;
  verify: string;
  verify_files?: string;
  /** The row's own image and limits, over the run's. */
  image?: string;
  limits?: { memory_mb: number };
}

/**
 * Runs `rows` through the CLI (`--env docker`, a 64 MiB task folder, and `args`): their lines by task id, and the
 * run's scores (statistics.json).
 */
async function run(
  name: string,
  rows: Row[],
  args: string[],
): Promise<{ lines: Map<string, any>; stderr: string; scores: any }> {
  const dir = tempDir(`hb-s13-${name}-`);
  const dataset = join(dir, "d.jsonl");
  writeFileSync(
    dataset,
    rows
      .map((r) =>
        JSON.stringify({
          ...r,
          ...(r.verify_files ? { verify_files: join(dir, r.verify_files) } : {}),
          prompt: `task:${r.id}`,
          toolsets: ["terminal"],
        }),
      )
      .join("\n") + "\n",
  );
  for (const r of rows)
    if (r.verify_files) {
      mkdirSync(join(dir, r.verify_files, "checks"), { recursive: true });
      writeFileSync(join(dir, r.verify_files, "checks", "check.sh"), "grep -qx 42 answer.txt\n");
    }
  const { lines, stderr, scores } = await runScripted(server, {
    dir,
    name: `s13-${name}`,
    inputs: [dataset],
    args: ["--env", "docker", "--disk", "64m", ...args, "--concurrency", String(rows.length)],
    timeoutMs: 120_000,
  });
  return { lines, stderr, scores };
}

function toolOutputs(line: any): string[] {
  return line.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content).output ?? m.content);
}

/**
 * One run for the kill -9 -1 rows (busybox, as root) and the /tmp filler's (the Debian image as `agent`, 64 MiB),
 * each with its own image and limits: its lines, and how long it took.
 */
let killAndWedge: Promise<Awaited<ReturnType<typeof run>> & { ms: number }> | undefined;
const killAndWedgeRun = () =>
  (killAndWedge ??= (async () => {
    const { image, busyboxImage } = await ensureDockerTestImages();
    const started = Date.now();
    const wedge = { image, limits: { memory_mb: 64 } };
    const r = await run(
      "kill",
      [
        { id: "kill-pass", verify: "grep -q work out.txt && grep -q more out.txt" },
        { id: "kill-fail", verify: "test -f answer.txt" },
        { id: "killlast-pass", verify: "grep -q work out.txt" },
        { id: "wedge-pass", verify: "grep -q work out.txt", ...wedge },
        { id: "wedge-fail", verify: "test -f answer.txt", ...wedge },
      ],
      ["--image", busyboxImage],
    );
    return { ...r, ms: Date.now() - started };
  })());

describe("a root agent that kills its container's keep-alive (kill -9 -1)", () => {
  it.runIf(root)(
    "goes on in a new sandbox over the same task folder, and its task is graded",
    { timeout: 120_000 },
    async () => {
      const { lines, stderr, scores } = await killAndWedgeRun();
      for (const [id, passed] of [
        ["kill-pass", true],
        ["kill-fail", false],
        ["killlast-pass", true],
      ] as const) {
        const line = lines.get(id);
        expect(line, `${id}: ${JSON.stringify(line?.error)}\n${stderr}`).toMatchObject({ outcome: "completed" });
        expect(line.verify, `${id}: ${JSON.stringify(line.verify)}`).toMatchObject({ passed });
        expect(line.score).toMatchObject({ passed });
      }
      // It went on in its folder after the container was gone.
      expect(toolOutputs(lines.get("kill-pass")).at(-1)).toBe("work\nwent-on");
      expect(lines.get("kill-fail").verify).toMatchObject({ exit_code: 1 });
      // With the two /tmp fillers' (one passes).
      expect(scores).toMatchObject({ scored: 5, unscored: 0, passed: 3 });
      // Each task on its own clock: the run waits for the fillers' too.
      for (const id of ["kill-pass", "kill-fail", "killlast-pass"])
        expect(lines.get(id).duration_ms, id).toBeLessThan(30_000);
    },
  );
});

describe("a Harbor task whose root agent kills its container's keep-alive", () => {
  it.runIf(root)("goes on in a new sandbox, and its verifier grades what it left", { timeout: 120_000 }, async () => {
    const dir = tempDir("hb-s13-harbor-kill-");
    const tasks = join(dir, "tasks");
    writeHarborTask(tasks, "hkill-pass", "grep -q work out.txt && grep -q more out.txt");
    writeHarborTask(tasks, "hkill-fail", "test -f answer.txt");
    const started = Date.now();
    const { lines, stderr } = await runScripted(server, {
      dir,
      name: "s13-harbor-kill",
      inputs: ["--harbor", tasks],
      args: ["--env", "docker", "--toolsets", "terminal", "--concurrency", "2"],
      timeoutMs: 110_000,
    });
    for (const [id, passed] of [
      ["hkill-pass", true],
      ["hkill-fail", false],
    ] as const) {
      const line = lines.get(id);
      expect(line, `${id}: ${JSON.stringify(line?.error)}\n${stderr}`).toMatchObject({ outcome: "completed" });
      expect(line.score, JSON.stringify(line.score)).toMatchObject({ passed, value: passed ? 1 : 0 });
      expect(line.score.scorers[0].details?.output_tail).toMatch(/the test ran/);
      expect(toolOutputs(line).at(-1), id).toBe("work\n/logs/agent\nwent-on");
    }
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe("--verify-isolated: a root agent's own sleep", () => {
  it.runIf(root)(
    "never runs beside the verify: the snapshot copy's keep-alive is not found on PATH",
    { timeout: 120_000 },
    async () => {
      const { busyboxImage } = await ensureDockerTestImages();
      const { lines, stderr, scores } = await run(
        "sleep",
        [
          { id: "forge-fail", verify: "sh checks/check.sh", verify_files: "files-forge" },
          { id: "spoil-pass", verify: "sh checks/check.sh", verify_files: "files-spoil" },
        ],
        ["--image", busyboxImage, "--verify-isolated"],
      );
      for (const id of ["forge-fail", "spoil-pass"])
        expect(toolOutputs(lines.get(id)).at(-1), `${id}\n${stderr}`).toBe("planted");
      // The real check ran (`grep` found no answer), not the forged `exit 0`.
      expect(lines.get("forge-fail").verify, stderr).toMatchObject({ passed: false, exit_code: 2 });
      expect(lines.get("forge-fail").verify.output).toMatch(/answer\.txt/);
      expect(lines.get("spoil-pass").verify, stderr).toMatchObject({ passed: true, exit_code: 0 });
      expect(scores).toMatchObject({ scored: 2, unscored: 0, passed: 1 });
    },
  );
});

describe("an unprivileged agent that fills /tmp past the memory limit (the container wedged, not stopped)", () => {
  it.runIf(root)(
    "ends resource_limit (memory_limit), and its verify runs in a new sandbox over its task folder",
    { timeout: 120_000 },
    async () => {
      const { lines, stderr, scores, ms } = await killAndWedgeRun();
      for (const [id, passed] of [
        ["wedge-pass", true],
        ["wedge-fail", false],
      ] as const) {
        const line = lines.get(id);
        expect(line, `${id}: ${JSON.stringify(line?.error)}\n${stderr}`).toMatchObject({
          outcome: "resource_limit",
          reason: "memory_limit",
        });
        expect(line.error).toMatch(/^memory_limit: /);
        expect(line.verify, `${id}: ${JSON.stringify(line.verify)}`).toMatchObject({ passed });
        // Found with the command that filled the memory: the agent's next command is never asked for.
        const calls = line.conversations.filter((m: any) => m.from === "gpt" && m.value.includes("<tool_call>"));
        expect(calls, id).toHaveLength(1);
      }
      // With the three kill -9 -1 rows' (two pass).
      expect(scores).toMatchObject({ scored: 5, unscored: 0, passed: 3 });
      for (const id of ["wedge-pass", "wedge-fail"]) expect(lines.get(id).duration_ms, id).toBeLessThan(30_000);
      expect(ms).toBeLessThan(30_000);
    },
  );
});
