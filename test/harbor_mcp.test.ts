/**
 * A Harbor task's `[[environment.mcp_servers]]`, end to end through the CLI with a model over HTTP: the task's
 * stdio server runs inside the task's own container (not the run's image), its tool is offered whatever toolsets
 * were drawn, and what it wrote is graded by the task's verifier; a server that cannot start is the task's
 * environment error.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { startFakeOpenAI, text, toolCalls, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { PY_MCP_SERVER } from "./helpers/py_mcp_server.js";

function writeTask(root: string, name: string, servers: string): void {
  const dir = join(root, name);
  mkdirSync(join(dir, "tests"), { recursive: true });
  writeFileSync(
    join(dir, "task.toml"),
    `schema_version = "1.4"\n[agent]\ntimeout_sec = 120.0\n[verifier]\ntimeout_sec = 30.0\n` +
      `[environment]\ndocker_image = "hermes-batch-test:bookworm"\nnetwork_mode = "no-network"\n${servers}`,
  );
  writeFileSync(join(dir, "instruction.md"), `Task ${name}: ask the MCP server where it runs.\n`);
  writeFileSync(
    join(dir, "tests", "test.sh"),
    "#!/bin/bash\nif [ -f made_by_mcp.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
    { mode: 0o755 },
  );
}

describe("a Harbor task's MCP servers", () => {
  let model: FakeOpenAI;
  const offered: string[][] = [];
  beforeAll(async () => {
    await ensureDockerTestImages();
    model = await startFakeOpenAI((req: RecordedRequest) => {
      const messages = req.body.messages as { role: string; content: string }[];
      offered.push(((req.body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name));
      if (messages.some((m) => m.role === "assistant")) return text("done");
      return toolCalls([{ name: "mcp_py_where", arguments: {} }]);
    });
  }, 600_000);
  afterAll(async () => {
    await model?.close();
  });

  it("runs the task's stdio server in its container, offers its tool, and the verifier grades what it wrote", async () => {
    const root = tempDir("hb-mcp-");
    const server = `[[environment.mcp_servers]]\nname = "py"\ntransport = "stdio"\ncommand = "python3"\nargs = ["-u", "-c", '''${PY_MCP_SERVER}''']\n`;
    writeTask(join(root, "tasks"), "with-mcp", server);
    writeTask(
      join(root, "tasks"),
      "broken-mcp",
      `[[environment.mcp_servers]]\nname = "gone"\ntransport = "stdio"\ncommand = "/no/such/server"\n`,
    );
    const runName = uniqueRunName("hb-mcp");
    const r = await runCli(
      [
        "run",
        "--harbor",
        join(root, "tasks"),
        "--env",
        "docker",
        "--model",
        "m",
        "--base-url",
        model.baseURL,
        "--api-key",
        "k",
        "--toolsets",
        "file",
        "--output-dir",
        join(root, "runs"),
        "--run-name",
        runName,
        "--progress",
        "none",
        "--workers",
        "1",
      ],
      { cwd: root, timeoutMs: 300_000 },
    );
    const read = (file: string) =>
      readFileSync(join(root, "runs", runName, file), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    const entries = Object.fromEntries(read("trajectories.jsonl").map((e) => [e.task_id, e]));
    expect(Object.keys(entries), r.stderr).toEqual(["with-mcp"]);

    const ok = entries["with-mcp"];
    const results = ok.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
    expect(results).toEqual([{ result: expect.stringMatching(/ container=True /) }]);
    expect(ok.score.passed, JSON.stringify(ok.score)).toBe(true);
    expect(ok.metadata.mcp_servers).toEqual([expect.objectContaining({ name: "py", where: "sandbox" })]);
    // Offered beside the drawn toolset (file), as Harbor's agents register a task's servers.
    expect(offered.some((names) => names.includes("mcp_py_where") && names.includes("read_file"))).toBe(true);

    // A server that cannot start is the task's environment error (retryable), in failed.jsonl with the server named.
    const broken = read("failed.jsonl").filter((e) => e.task_id === "broken-mcp");
    expect(broken.length).toBeGreaterThan(0);
    expect(broken[0].outcome).toBe("environment_error");
    expect(broken[0].error).toMatch(/MCP server 'gone' did not start/);
  }, 300_000);
});
