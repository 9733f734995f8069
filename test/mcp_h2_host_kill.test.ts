/**
 * `spawnOnHost` (the `--env host` environment's `spawnPiped`, what runs an MCP stdio server "in the sandbox" when
 * there is none): its kill() must end a process that ignores TERM and its closed stdin, and resolve only once the
 * process is gone, so a task's end, and the run's, leaves nothing behind.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnOnHost } from "../tools/environments/piped_process.js";
import { tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { H2_SH_SERVER } from "./helpers/mcp_h2_light.js";
import { alivePids, hostileRun, killPids, scriptedByPrompt, toolResults } from "./helpers/mcp_hostile.js";
import { waitUntil } from "./helpers/wait.js";

const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

describe("spawnOnHost: kill() of a process that ignores TERM", () => {
  const pidfiles: string[] = [];
  let model: FakeOpenAI;
  beforeAll(async () => {
    model = await startFakeOpenAI(scriptedByPrompt);
  });
  afterAll(async () => {
    for (const f of pidfiles) killPids(f);
    await model.close();
  });

  it("escalates to KILL after a grace and resolves only once the process (and its group) is gone", async () => {
    const dir = tempDir("hb-h2-kill-");
    const pidfile = join(dir, "pids");
    pidfiles.push(pidfile);
    // The shell traps TERM, and so does its child (in the same process group).
    const proc = await spawnOnHost(dir, { PATH: process.env.PATH ?? "/usr/bin:/bin" }, [
      "/bin/sh",
      "-c",
      `trap '' TERM; echo $$ >> ${pidfile}; sh -c 'trap "" TERM; echo $$ >> ${pidfile}; while :; do sleep 0.05; done' & echo up; wait`,
    ]);
    let out = "";
    proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
    expect(await waitUntil(() => out.includes("up") && alivePids(pidfile).length === 2, 5000)).toBe(true);
    const pids = alivePids(pidfile);
    const started = Date.now();
    await proc.kill();
    const took = Date.now() - started;
    // Gone when kill() resolved: the shell and the child it started.
    expect(pids.filter(alive)).toEqual([]);
    expect(took).toBeLessThan(8000);
    // A second kill() is harmless and waits for nothing.
    await proc.kill();
  }, 20_000);

  it("a process that exits by itself: kill() resolves at once", async () => {
    const dir = tempDir("hb-h2-kill-");
    const proc = await spawnOnHost(dir, { PATH: process.env.PATH ?? "/usr/bin:/bin" }, ["/bin/sh", "-c", "cat"]);
    const started = Date.now();
    await proc.kill();
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("--env host: a sandbox-side MCP server that ignores TERM does not outlive the run", async () => {
    const dir = tempDir("hb-h2-kill-");
    const pidfile = join(dir, "pids");
    pidfiles.push(pidfile);
    // An MCP stdio server that ignores TERM and stays up when its stdin closes.
    const args = H2_SH_SERVER.args({ pidfile, stubborn: true });
    const r = await hostileRun(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: H2_SH_SERVER.command, args } } },
      [{ id: "a", prompt: JSON.stringify([{ name: "mcp_s_whoami", arguments: {} }]) }],
      ["--toolsets", "mcp-s", "--env", "host", "--workers", "1"],
      { timeoutMs: 60_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(toolResults(r.entries[0])).toEqual([{ result: expect.stringMatching(/^pid=\d+ start=2$/) }]);
    // The listing's server and the task's.
    expect(readFileSync(pidfile, "utf8").split("\n").filter(Boolean).length).toBe(2);
    // The CLI has exited: nothing it started may still run.
    expect(alivePids(pidfile)).toEqual([]);
  }, 60_000);
});
