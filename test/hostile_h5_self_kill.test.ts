/**
 * A hostile task that takes its own failure out of the pass rate, end to end through the built CLI with a scripted
 * agent (`--approval allow`). A task whose sandbox is lost ends as environment_error: unscored, so out of the pass
 * rate (and rerun by --resume, where it does the same again). An agent about to fail ended its own sandbox from the
 * inside, and the run reported a pass rate of 1.0 over the tasks it did not drop:
 * - `kill -9 -1` (every process of its uid, the sandbox's shell with them) or `kill -9 $PPID` (the shell);
 * - `kill -STOP $PPID`: the shell stops answering, and is closed at the command's timeout;
 * - `prlimit --pid $PPID --cpu=0:0`: the kernel kills the shell at its next tick (or, when the shell has used no
 *   CPU since, every command it starts: the task goes on with commands that fail, its own doing).
 * In Docker the same commands leave the task graded (its shell is started again); so must the local sandbox: the
 * command that broke the shell reports it, the next one gets a new sandbox over the same folder, the verify runs
 * and the task is graded. (A task that exceeds a limit the run set — memory, disk, processes — still ends with that
 * reason: a policy of its own.)
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "./helpers/cli.js";
import { scriptedPerTask, startFakeOpenAI, type FakeOpenAI, type ToolCallSpec } from "./helpers/fake_openai.js";
import { runScripted } from "./helpers/scripted_runs.js";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import { writeFileSync } from "node:fs";

const term = (command: string, timeout?: number): ToolCallSpec => ({
  name: "terminal",
  arguments: { command, ...(timeout ? { timeout } : {}) },
});
/** After the attack: the task goes on in its folder (the file it wrote before is there), and writes one more. */
const AFTER = [term("cat before.txt; echo after > after.txt; echo went-on")];

const SCRIPTS: Record<string, ToolCallSpec[]> = {
  killall: [term("echo before > before.txt"), term("kill -9 -1"), ...AFTER],
  killshell: [term("echo before > before.txt"), term("kill -9 $PPID; sleep 5"), ...AFTER],
  stopshell: [term("echo before > before.txt"), term("kill -STOP $PPID; echo stopped", 3), ...AFTER],
  cpulimit: [term("echo before > before.txt"), term("prlimit --pid $PPID --cpu=0:0; sleep 3"), ...AFTER],
  // The kill is its last command: no command starts a new sandbox; the verify runs over the folder all the same.
  killlast: [term("echo before > before.txt; echo after > after.txt"), term("kill -9 -1")],
  honest: [term("echo 42 > answer.txt")],
};

let server: FakeOpenAI;

beforeAll(async () => {
  server = await startFakeOpenAI(scriptedPerTask((id) => SCRIPTS[id]!));
});

afterAll(async () => {
  await server?.close();
});

function toolOutputs(line: any): string[] {
  return line.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content).output ?? m.content);
}

describe("an agent that ends its own sandbox's shell", () => {
  it("is graded all the same: the next command gets a new sandbox over its folder, and the verify runs", {
    timeout: 300_000,
  }, async () => {
    const dir = tempDir("hb-h5-selfkill-");
    const ids = Object.keys(SCRIPTS);
    const rows = ids.map((id) => ({
      id,
      prompt: `task:${id}`,
      // Fails for every attacker (answer.txt is the honest task's), and sees the files of both phases.
      verify:
        id === "honest" ? "grep -qx 42 answer.txt" : "test -f before.txt && test -f after.txt && test -f answer.txt",
      toolsets: ["terminal", "file"],
    }));
    writeFileSync(join(dir, "d.jsonl"), `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
    const r = await runScripted(server, {
      dir,
      name: "h5",
      inputs: [join(dir, "d.jsonl")],
      args: ["--env", "local", "--concurrency", "3"],
      timeoutMs: 280_000,
    });
    expect(r.stderr).not.toMatch(/internal error/);
    const lines = r.lines;
    for (const id of ids.filter((x) => x !== "honest")) {
      const line = lines.get(id);
      expect(line, `${id}: ${r.stderr}`).toBeDefined();
      expect(line.outcome, `${id}: ${line.error}`).toBe("completed");
      // It went on in the same folder after its shell was gone.
      if (id !== "cpulimit" && id !== "killlast") expect(toolOutputs(line).at(-1), id).toBe("before\nwent-on");
      expect(line.verify, `${id}: ${JSON.stringify(line.verify)}`).toMatchObject({ passed: false, exit_code: 1 });
      expect(line.score.passed, id).toBe(false);
    }
    expect(lines.get("honest").score.passed).toBe(true);
    expect(r.scores).toMatchObject({ scored: ids.length, unscored: 0, passed: 1 });
  });
});

describe("the local sandbox, driven directly", () => {
  it("replaces a shell killed from inside with a new sandbox over the same folder; the old one is gone whole", {
    timeout: 60_000,
  }, async () => {
    const lost: string[] = [];
    const env = await SandboxEnvironment.create(
      { runName: "r", taskId: "t", hostTaskDir: join(tempDir("hb-h5-restart-"), "t"), reportLost: (w) => lost.push(w) },
      {},
    );
    try {
      await env.exec("echo kept > kept.txt; (setsid sleep 4711 >/dev/null 2>&1 &)");
      const before = env.processes();
      const dead = await env.exec("kill -9 $PPID; sleep 5");
      expect(dead.stderr).toMatch(/shell ended unexpectedly/);
      const after = await env.exec("cat kept.txt; pgrep -x sleep || echo no-sleep");
      expect(after.stdout).toBe("kept\nno-sleep\n");
      expect(lost).toEqual([]);
      // Nothing of the old sandbox is left (its detached sleep included).
      expect(before.filter((p) => env.processes().includes(p))).toEqual([]);
      expect((await env.runVerify("test -f kept.txt")).exitCode).toBe(0);
    } finally {
      await env.cleanup();
    }
  });
});
