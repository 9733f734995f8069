/**
 * A hostile tester's third round, Docker, end to end through the built CLI with a scripted agent running as the
 * image's uid 1000: a process the agent leaves running that kills every process of its uid
 * (`while :; do kill -9 -1; done`) killed the harness's first kill pass before the verify, which ran as that same
 * uid (root in the container had no CAP_KILL over it): the verify did not run and the failing task was unscored,
 * out of the pass rate (3 of 3). The first kill pass now runs as root, which holds CAP_KILL in such a sandbox
 * (uid 1000 has no effective capabilities, and no-new-privileges keeps it so): the verify runs and fails as it
 * should.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages } from "./helpers/docker.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI, type ToolCallSpec } from "./helpers/fake_openai.js";
import { runScripted } from "./helpers/scripted_runs.js";

const term = (command: string): ToolCallSpec => ({ name: "terminal", arguments: { command } });

const SCRIPTS: Record<string, ToolCallSpec[]> = {
  // Detached: it outlives the command, kills the persistent shell and every later exec of the agent's uid.
  killer: [term(`(s=sets; \${s}id sh -c 'while :; do kill -9 -1; done' >/dev/null 2>&1 </dev/null &); echo started`)],
  honest: [term("echo 42 > answer.txt")],
};

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI(scriptedPerTask((id) => SCRIPTS[id]!));
});

afterAll(async () => {
  await server?.close();
});

describe("a process of the agent's uid that kills every process of that uid (Docker, uid 1000)", () => {
  it("does not keep the verify from running: the failing task is graded, not unscored", {
    timeout: 300_000,
  }, async () => {
    const { image } = await ensureDockerTestImages();
    const dir = tempDir("hb-hostile3-kill-");
    const ids = ["killer", "honest"];
    const rows = ids.map((id) =>
      JSON.stringify({
        id,
        prompt: `task:${id}`,
        verify: `test "$(cat answer.txt 2>/dev/null)" = 42`,
        toolsets: ["terminal"],
      }),
    );
    writeFileSync(join(dir, "d.jsonl"), rows.join("\n") + "\n");
    const r = await runScripted(server, {
      dir,
      name: "hostile3-kill",
      inputs: [join(dir, "d.jsonl")],
      args: ["--env", "docker", "--image", image, "--concurrency", "2", "--task-timeout", "120"],
      timeoutMs: 280_000,
    });
    expect(r.stderr).not.toMatch(/internal error/);
    const lines = r.lines;
    expect([...lines.keys()].sort(), r.stderr).toEqual([...ids].sort());
    for (const id of ["killer"]) {
      const line = lines.get(id);
      expect(line.outcome, `${id}: ${line.error}`).toBe("completed");
      expect(line.verify, `${id}: ${JSON.stringify(line.verify)}`).toMatchObject({ passed: false, exit_code: 1 });
      expect(line.score.passed, id).toBe(false);
    }
    expect(lines.get("honest").verify).toMatchObject({ passed: true, exit_code: 0 });
  });
});
