/**
 * A root agent that replaces the shell the verify runs through (`/bin/sh`: a script that prints the kill pass's
 * `done` and exits 0, so every `sh -c` verify would pass) cannot take its failing task out of the pass rate: the
 * verify no longer "could not run" (unscored); it runs in a new container of the task's image, which the agent
 * never wrote, over the task folder (rebound with `--disk`, else copied over), as SWE-bench grades an agent's work
 * in a fresh container. A failing solution fails, a passing one passes, a process left beside the fake shell changes
 * neither; the same with `--verify-isolated` (its snapshot would carry the fake shell). The verify's output says so.
 * Also: a --verify-isolated copy with a read-only root and no --disk gets the task folder (it was refused: unscored).
 * Through the CLI with a scripted model (the fake OpenAI server: its tool calls are the attack), in real containers.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages } from "./helpers/docker.js";
import type { FakeOpenAI } from "./helpers/fake_openai.js";
import { runScripted, startTerminalScripts } from "./helpers/scripted_runs.js";

/** The root agent's own /bin/sh (busybox image: /bin/sh is busybox's): prints `done` and `ok`, exits 0. */
const FAKE_SH = `rm -f /bin/sh && printf '#!/bin/busybox sh\\necho done\\necho ok\\nexit 0\\n' > /bin/sh && chmod 755 /bin/sh && echo planted`;
/** A process left running beside it (the kill passes, through the fake shell, would kill nothing). */
const DAEMON = `(set''sid sleep 1000 >/dev/null 2>&1 </dev/null &) ; echo left`;

const SCRIPTS: Record<string, string[]> = {
  fail: ["echo 41 > answer.txt", FAKE_SH],
  pass: ["echo 42 > answer.txt", FAKE_SH],
  daemon: ["echo 42 > answer.txt", DAEMON, FAKE_SH],
  ro: ["echo 42 > answer.txt && echo written"],
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
const VERIFY = "grep -qx 42 answer.txt && echo graded";
const KINDS = ["fail", "pass", "daemon"];

interface Row {
  /** The script it runs (SCRIPTS), and so the start of its id. */
  kind: string;
  /** What it checks, the rest of its id: rows of several modes share a run. */
  mode: string;
  limits?: { disk: string };
}

/** Runs `rows` through the CLI (busybox image, `args`): their lines by id (`KIND-MODE`), and the run's scores. */
async function run(
  name: string,
  args: string[],
  rows: Row[],
): Promise<{ lines: Map<string, any>; stderr: string; scores: any }> {
  const { busyboxImage } = await ensureDockerTestImages();
  const dir = tempDir(`hb-s13-sh-${name}-`);
  const dataset = join(dir, "d.jsonl");
  const lines = rows.map(({ kind, mode, limits }) =>
    JSON.stringify({ id: `${kind}-${mode}`, prompt: `task:${kind}`, verify: VERIFY, toolsets: ["terminal"], limits }),
  );
  writeFileSync(dataset, `${lines.join("\n")}\n`);
  return runScripted(server, {
    dir,
    name: `s13-sh-${name}`,
    inputs: [dataset],
    args: ["--env", "docker", "--image", busyboxImage, ...args, "--concurrency", String(rows.length)],
    timeoutMs: 110_000,
  });
}

function expectGraded(lines: Map<string, any>, mode: string, stderr: string): void {
  for (const [kind, passed] of [
    ["fail", false],
    ["pass", true],
    ["daemon", true],
  ] as const) {
    const id = `${kind}-${mode}`;
    const line = lines.get(id);
    expect(line, `${id}: ${JSON.stringify(line?.error)}\n${stderr}`).toMatchObject({ outcome: "completed" });
    const tools = line.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);
    expect(tools.at(-1), id).toMatch(/planted/);
    expect(line.verify, `${id}: ${JSON.stringify(line.verify)}`).toMatchObject({
      passed,
      exit_code: passed ? 0 : 1,
      timed_out: false,
    });
    expect(line.score, id).toMatchObject({ passed });
    // The image's shell ran the verify (the fake one prints `ok`), and the line says where it ran and why.
    expect(line.verify.output, id).not.toMatch(/\bok\b/);
    expect(line.verify.output, id).toMatch(
      /^verify ran in a new container of the task's image over the task folder: the agent changed \/bin\/sh/,
    );
    if (passed) expect(line.verify.output, id).toMatch(/\ngraded\n?$/);
  }
}

/**
 * One run for the task folder copied over (no file system of its own: `disk` none) and rebound (its own, 64 MiB),
 * as a row's limits may choose (--disk is 10g by default as root).
 */
let copiedAndRebound: ReturnType<typeof run> | undefined;
const copiedAndReboundRun = () =>
  (copiedAndRebound ??= run(
    "plain",
    [],
    [
      ...KINDS.map((kind) => ({ kind, mode: "copied", limits: { disk: "none" } })),
      ...KINDS.map((kind) => ({ kind, mode: "disk", limits: { disk: "64m" } })),
    ],
  ));

describe("a root agent that replaces /bin/sh with one that passes everything", () => {
  it.runIf(root)(
    "is graded in a new container of the task's image, its task folder copied over",
    { timeout: 120_000 },
    async () => {
      const { lines, stderr, scores } = await copiedAndReboundRun();
      expectGraded(lines, "copied", stderr);
      expect(scores).toMatchObject({ scored: 6, unscored: 0, passed: 4 });
    },
  );

  it.runIf(root)("the same over the task folder's own file system (--disk)", { timeout: 120_000 }, async () => {
    const { lines, stderr, scores } = await copiedAndReboundRun();
    expectGraded(lines, "disk", stderr);
    expect(scores).toMatchObject({ scored: 6, unscored: 0, passed: 4 });
  });

  it.runIf(root)(
    "the same with --verify-isolated (the snapshot would carry the fake shell)",
    { timeout: 120_000 },
    async () => {
      const { lines, stderr, scores } = await run(
        "iso",
        ["--verify-isolated"],
        KINDS.map((kind) => ({ kind, mode: "iso" })),
      );
      expectGraded(lines, "iso", stderr);
      expect(scores).toMatchObject({ scored: 3, unscored: 0, passed: 2 });
    },
  );
});

describe("--verify-isolated with --read-only-root and no --disk", () => {
  it.runIf(root)(
    "copies the task folder into the snapshot copy (its root is read-only)",
    { timeout: 120_000 },
    async () => {
      const { lines, stderr, scores } = await run(
        "rocopy",
        ["--verify-isolated", "--read-only-root"],
        [{ kind: "ro", mode: "rocopy", limits: { disk: "none" } }],
      );
      const line = lines.get("ro-rocopy");
      expect(line, `${JSON.stringify(line?.error)}\n${stderr}`).toMatchObject({ outcome: "completed" });
      expect(line.verify, JSON.stringify(line.verify)).toMatchObject({ passed: true, exit_code: 0 });
      expect(scores).toMatchObject({ scored: 1, unscored: 0, passed: 1 });
    },
  );
});
