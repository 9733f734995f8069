/**
 * Hostile MCP servers that fail at start, through a real run: the exit-2 line carries the reason the server
 * gave (its stderr) on one line, whether it ran on the host or in the task's sandbox. The runs stop before any task:
 * they run in this process (hostileRunInProcess).
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeBwrap } from "../tools/environments/local/bwrap.js";
import { startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { hostileDir, scriptedByPrompt } from "./helpers/mcp_hostile.js";
import { hostileRunInProcess } from "./helpers/mcp_hostile_exit2.js";

const call = (name: string, args: Record<string, unknown> = {}) => JSON.stringify([{ name, arguments: args }]);

describe("hostile MCP servers: start failures", () => {
  let model: FakeOpenAI;
  beforeAll(async () => {
    model = await startFakeOpenAI(scriptedByPrompt);
  });
  afterAll(async () => {
    await model.close();
  });

  it.skipIf(!probeBwrap().ok)(
    "a server in the task's sandbox that fails at start: its stderr is in the exit-2 line, as for a host server",
    async () => {
      const { dir } = hostileDir();
      const r = await hostileRunInProcess(
        dir,
        model.baseURL,
        { mcpServers: { s: { command: "sh", args: ["-c", "echo 'fatal: no licence for hostile-db' >&2; exit 3"] } } },
        [{ id: "a", prompt: call("mcp_s_t") }],
        ["--toolsets", "mcp-s", "--env", "local"],
      );
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(/MCP server 's' did not start: .*fatal: no licence for hostile-db/);
    },
    30_000,
  );

  it("a Python server that dies at start with a traceback: the exit-2 line ends with the exception, not 'Traceback'", async () => {
    const { dir } = hostileDir();
    const crash = "import sys\ndef main():\n    raise RuntimeError('no licence for hostile-db')\nmain()\n";
    const r = await hostileRunInProcess(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: "python3", args: ["-c", crash], where: "host" } } },
      [{ id: "a", prompt: call("mcp_s_t") }],
      ["--toolsets", "mcp-s", "--env", "host"],
    );
    expect(r.exitCode).toBe(2);
    const last = r.stderr.trim().split("\n").at(-1)!;
    expect(last).toMatch(/MCP server 's' did not start: .*Traceback .*RuntimeError: no licence for hostile-db/);
  }, 30_000);

  it("a host server whose cwd does not exist: the line names the cwd, not the command", async () => {
    const { dir, server } = hostileDir();
    const r = await hostileRunInProcess(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: "python3", args: server({}), where: "host", cwd: join(dir, "no-such-dir") } } },
      [{ id: "a", prompt: "x" }],
      ["--toolsets", "mcp-s", "--env", "host"],
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(
      /MCP server 's' did not start: its cwd .*no-such-dir is not a folder/,
    );
  }, 30_000);
});
