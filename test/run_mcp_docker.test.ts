/**
 * An MCP stdio server inside the task's Docker container (the default `where: sandbox`), end to end through the
 * CLI: a small MCP server in Python (the test image has python3, not node), started by a Docker exec with stdin
 * attached, its tool called by a scripted model; the result shows it ran in the container, in the task's workdir.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { startFakeOpenAI, text, toolCalls, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { PY_MCP_SERVER } from "./helpers/py_mcp_server.js";

describe("an MCP server inside a Docker task container", () => {
  let model: FakeOpenAI;
  let image: string;
  beforeAll(async () => {
    image = (await ensureDockerTestImages()).image;
    model = await startFakeOpenAI((req: RecordedRequest) => {
      const messages = req.body.messages as { role: string; content: string }[];
      if (messages.some((m) => m.role === "assistant"))
        return text(
          `done: ${messages
            .filter((m) => m.role === "tool")
            .map((m) => m.content)
            .join(" | ")}`,
        );
      return toolCalls([{ name: "mcp_py_where", arguments: {} }]);
    });
  }, 600_000);
  afterAll(async () => {
    await model?.close();
  });

  it("starts it in the container, calls its tool, and verify sees what it wrote in the task's workdir", async () => {
    const dir = tempDir();
    const runName = uniqueRunName("mcp");
    writeFileSync(
      join(dir, "mcp.json"),
      JSON.stringify({ mcpServers: { py: { command: "python3", args: ["-u", "-c", PY_MCP_SERVER] } } }),
    );
    writeFileSync(
      join(dir, "d.jsonl"),
      JSON.stringify({ id: "t1", prompt: "where?", verify: "grep -q hello made_by_mcp.txt" }) + "\n",
    );
    const r = await runCli(
      [
        "run",
        join(dir, "d.jsonl"),
        "--model",
        "m",
        "--base-url",
        model.baseURL,
        "--api-key",
        "k",
        "--mcp-config",
        join(dir, "mcp.json"),
        "--toolsets",
        "mcp-py",
        "--env",
        "docker",
        "--image",
        image,
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        runName,
        "--progress",
        "none",
        "--workers",
        "1",
      ],
      { cwd: dir, env: { HERMES_BATCH_CONFIG_DIR: join(dir, "config") }, timeoutMs: 300_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const entry = JSON.parse(readFileSync(join(dir, "runs", runName, "trajectories.jsonl"), "utf8").split("\n")[0]!);
    const results = entry.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
    expect(results).toEqual([{ result: expect.stringMatching(/^cwd=\/\S* container=True uid=\d+$/) }]);
    expect(entry.verify).toMatchObject({ passed: true });
    expect(entry.metadata.mcp_servers).toEqual([
      {
        name: "py",
        transport: "stdio",
        where: "sandbox",
        server_info: { name: "py-mcp", version: "0.1" },
        protocol_version: expect.any(String),
        tools: ["mcp_py_where"],
      },
    ]);
  }, 300_000);
});
