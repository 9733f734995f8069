/**
 * A row's own MCP server is listed by the worker when its task starts (src/run/mcp_setup.ts taskRowMcp): a
 * server that hangs there must not hold the task past its time limit. discoverMcpServer takes the task's signal
 * and ends that caller's wait; the listing itself goes on to its connect_timeout and ends its process.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { discoverMcpServer } from "../tools/mcp/mcp_tools.js";
import type { McpServerConfig } from "../tools/mcp/types.js";
import { alivePids, hostileDir, killPids } from "./helpers/mcp_hostile.js";

describe("hostile MCP servers: a listing that hangs", () => {
  const pidfiles: string[] = [];
  afterAll(() => {
    for (const f of pidfiles) killPids(f);
  });

  it("a task's signal ends its wait for a hanging listing at once; the server is ended at connect_timeout", async () => {
    const { dir, server } = hostileDir();
    const pidfile = join(dir, "pids");
    pidfiles.push(pidfile);
    const marker = join(dir, "listed");
    // "hang-after-listing" with the marker already there: this start hangs on initialize.
    writeFileSync(marker, "");
    const config: McpServerConfig = {
      name: "rowsrv",
      transport: "stdio",
      command: "python3",
      args: server({ init: "hang-after-listing", marker, pidfile }),
      where: "host",
      env: {},
      envValues: {},
      headers: {},
      headerValues: {},
      tools: {},
      timeoutSec: 60,
      connectTimeoutSec: 2,
      shared: false,
    };
    const task = new AbortController();
    const listing = discoverMcpServer(config, { signal: task.signal });
    listing.catch(() => undefined);
    // The server is up (its pid written) and hanging in initialize: the task's time runs out now.
    while (!existsSync(pidfile)) await new Promise((r) => setTimeout(r, 20));
    expect(alivePids(pidfile)).toHaveLength(1);
    const started = Date.now();
    task.abort(new Error("task timed out"));
    await expect(listing).rejects.toThrow(/task timed out/);
    expect(Date.now() - started).toBeLessThan(500);
    // The listing gives up at its connect_timeout (2 s) and ends the process (TERM within its grace).
    const deadline = Date.now() + 8000;
    while (alivePids(pidfile).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(alivePids(pidfile)).toEqual([]);
  }, 20_000);
});
