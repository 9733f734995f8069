/**
 * The run's parallelism defaults: --workers from the cores and --concurrency, and which runs need their
 * environment backend's start-up check (only those whose tasks can create a sandbox).
 */
import { describe, expect, it } from "vitest";
import { defaultWorkers } from "../src/config/run_options.js";
import { resolveRunConfig } from "../src/config/run_config.js";
import { SandboxNeed } from "../src/run/sandbox_need.js";
import { ensureToolsLoaded } from "../tools/model_tools.js";

describe("the default --workers", () => {
  it("is one thread per 256 loops, at most one fewer than the cores, at least 1", () => {
    expect(defaultWorkers(32, 2)).toBe(1);
    expect(defaultWorkers(1024, 2)).toBe(1);
    expect(defaultWorkers(32, 8)).toBe(1);
    expect(defaultWorkers(257, 8)).toBe(2);
    expect(defaultWorkers(1024, 8)).toBe(4);
    expect(defaultWorkers(4096, 8)).toBe(7);
    expect(defaultWorkers(64, 1)).toBe(1);
  });

  it("follows --concurrency when not given, and never overrides a given value", () => {
    expect(resolveRunConfig({ dataset: "d", concurrency: 4096 }).workers).toBe(defaultWorkers(4096));
    expect(resolveRunConfig({ dataset: "d" }).workers).toBe(defaultWorkers(32));
    expect(resolveRunConfig({ dataset: "d", concurrency: 4096, workers: 1 }).workers).toBe(1);
  });
});

describe("whether a run's tasks can need a sandbox", () => {
  const task = (toolsets: string[], extra: object = {}) => ({ toolsets, ...extra });

  it("in-process tools alone never do; a terminal, a verify command, a row image or MCP servers do", async () => {
    await ensureToolsLoaded({ plugins: false });
    const none = new SandboxNeed({});
    none.add(task(["todo"]));
    none.add(task(["todo", "memory"]));
    expect(await none.any()).toBe(false);

    for (const needs of [
      task(["terminal"]),
      task(["todo"], { verify: "true" }),
      task(["todo"], { image: "debian" }),
      task(["todo"], { extra: { mcp_servers: {} } }),
    ]) {
      const n = new SandboxNeed({});
      n.add(task(["todo"]));
      n.add(needs);
      expect(await n.any()).toBe(true);
    }
  });

  it("Harbor runs and runs with --mcp-config always may", async () => {
    expect(await new SandboxNeed({ harbor: "tasks" }).any()).toBe(true);
    expect(await new SandboxNeed({ mcp_config: "mcp.json" }).any()).toBe(true);
  });
});
