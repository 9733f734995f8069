/**
 * `tools` and `toolsets` with `--mcp-config`: the servers of the file are started once and their tools listed
 * under `mcp-<server>`, as a run with that file would offer them (issue 30); a bad file is one line, exit 2.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, runCliInProcess, tempDir } from "./helpers/cli.js";
import { H2_SH_SERVER } from "./helpers/mcp_h2_light.js";

/** A config of one server (the shell one: what is listed is the command's doing, not the server's) of two tools. */
function config(): string {
  const dir = tempDir("hb-mcp-list-");
  const file = join(dir, "mcp.json");
  const args = H2_SH_SERVER.args({ pidfile: join(dir, "pids") });
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: {
        h2: { command: H2_SH_SERVER.command, args, where: "host", tools: { include: ["whoami"] } },
      },
    }),
  );
  return file;
}

describe("listing MCP tools", () => {
  it("tools --mcp-config lists the server's tools in its toolset", { timeout: 60_000 }, async () => {
    const r = await runCli(["tools", "--mcp-config", config(), "--toolsets", "mcp-h2", "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout) as { tool: string; toolset: string; available: boolean }[];
    expect(rows.map((x) => [x.tool, x.toolset, x.available])).toEqual([["mcp_h2_whoami", "mcp-h2", true]]);
  });

  it("toolsets --mcp-config shows mcp-<server> beside the built-in toolsets", { timeout: 60_000 }, async () => {
    const r = await runCli(["toolsets", "--mcp-config", config(), "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const { toolsets } = JSON.parse(r.stdout) as { toolsets: { name: string; tools: string[] }[] };
    expect(toolsets.find((t) => t.name === "mcp-h2")?.tools).toEqual(["mcp_h2_whoami"]);
    expect(toolsets.some((t) => t.name === "terminal")).toBe(true);
  });

  it("a bad config file is one line naming it, exit 2", { timeout: 60_000 }, async () => {
    const file = join(tempDir("hb-mcp-list-"), "mcp.json");
    writeFileSync(file, `{\n  "mcpServers": {\n    "x": { "command": "node", "args": "oops" }\n  }\n}\n`);
    // It stops before any server is registered: in this process.
    const r = await runCliInProcess(["tools", "--mcp-config", file]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/mcp\.json:3: mcpServers\.x\.args: must be a list/);
  });
});
