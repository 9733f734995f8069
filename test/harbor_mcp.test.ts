/**
 * A Harbor task's `[[environment.mcp_servers]]`, end to end through the CLI with a model over HTTP: the task's
 * stdio server runs inside the task's own container (not the run's image), its tools are offered whatever toolsets
 * were drawn, and what it wrote is graded by the task's verifier; a server that cannot start is the task's
 * environment error. The real `@modelcontextprotocol/server-filesystem` is installed into a task image built from
 * the task's Dockerfile (FROM the local test image, with this machine's node and the server bundled by esbuild).
 */
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCli, tempDir } from "./helpers/cli.js";
import { ensureDockerTestImages, uniqueRunName } from "./helpers/docker.js";
import { startFakeOpenAI, text, toolCalls, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { PY_MCP_SERVER } from "./helpers/py_mcp_server.js";

const FILESYSTEM = join(ROOT, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");

/** A task whose image is the test image, or (`built`) built from its environment/Dockerfile, written by the caller. */
function writeTask(root: string, name: string, servers: string, built = false): string {
  const dir = join(root, name);
  mkdirSync(join(dir, "tests"), { recursive: true });
  mkdirSync(join(dir, "environment"), { recursive: true });
  writeFileSync(
    join(dir, "task.toml"),
    `schema_version = "1.4"\n[agent]\ntimeout_sec = 120.0\n[verifier]\ntimeout_sec = 30.0\n[environment]\n` +
      `${built ? "" : 'docker_image = "hermes-batch-test:bookworm"\n'}network_mode = "no-network"\n${servers}`,
  );
  writeFileSync(join(dir, "instruction.md"), `Task ${name}: use the MCP server.\n`);
  writeFileSync(
    join(dir, "tests", "test.sh"),
    "#!/bin/bash\nif [ -f made_by_mcp.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n",
    { mode: 0o755 },
  );
  return dir;
}

/** The filesystem server installed into a task's image: this machine's node and the server in one file. */
async function installFilesystemServer(taskDir: string): Promise<void> {
  const env = join(taskDir, "environment");
  copyFileSync(process.execPath, join(env, "node"));
  await build({
    entryPoints: [FILESYSTEM],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: join(env, "fs.mjs"),
    banner: { js: "import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);" },
    logLevel: "error",
  });
  writeFileSync(
    join(env, "Dockerfile"),
    "FROM hermes-batch-test:bookworm\nCOPY node /usr/local/bin/node\nCOPY fs.mjs /opt/mcp-fs/fs.mjs\nWORKDIR /app\n",
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
      const prompt = messages.find((m) => m.role === "user")!.content;
      if (prompt.includes("python")) return toolCalls([{ name: "mcp_py_where", arguments: {} }]);
      return toolCalls([
        { name: "mcp_fs_write_file", arguments: { path: "/app/made_by_mcp.txt", content: "written through MCP" } },
        { name: "mcp_fs_list_directory", arguments: { path: "/app" } },
        { name: "mcp_fs_read_text_file", arguments: { path: "/etc/hostname" } },
      ]);
    });
  }, 600_000);
  afterAll(async () => {
    await model?.close();
  });

  it("runs each task's stdio server in its own container, offers its tools, and the verifier grades what it wrote", async () => {
    const root = tempDir("hb-mcp-");
    const tasks = join(root, "tasks");
    writeTask(
      tasks,
      "python-mcp",
      `[[environment.mcp_servers]]\nname = "py"\ntransport = "stdio"\ncommand = "python3"\nargs = ["-u", "-c", '''${PY_MCP_SERVER}''']\n`,
    );
    const fsTask = writeTask(
      tasks,
      "filesystem-mcp",
      `[[environment.mcp_servers]]\nname = "fs"\ntransport = "stdio"\ncommand = "node"\nargs = ["/opt/mcp-fs/fs.mjs", "/app"]\n`,
      true,
    );
    await installFilesystemServer(fsTask);
    writeFileSync(
      join(fsTask, "tests", "test.sh"),
      '#!/bin/bash\n[ "$(cat /app/made_by_mcp.txt)" = "written through MCP" ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
      { mode: 0o755 },
    );
    writeTask(
      tasks,
      "broken-mcp",
      `[[environment.mcp_servers]]\nname = "gone"\ntransport = "stdio"\ncommand = "/no/such/server"\n`,
    );
    const runName = uniqueRunName("hb-mcp");
    const r = await runCli(
      [
        "run",
        "--harbor",
        tasks,
        "--env",
        "docker",
        "--allow-build",
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
      { cwd: root, timeoutMs: 400_000 },
    );
    const read = (file: string) => readJsonl(join(root, "runs", runName, file), { mustExist: true });
    const entries = Object.fromEntries(read("trajectories.jsonl").map((e) => [e.task_id, e]));
    expect(Object.keys(entries).sort(), r.stderr).toEqual(["filesystem-mcp", "python-mcp"]);
    const results = (id: string) =>
      entries[id].messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);

    const py = entries["python-mcp"];
    expect(results("python-mcp").map((c: string) => JSON.parse(c))).toEqual([
      { result: expect.stringMatching(/ container=True /) },
    ]);
    expect(py.metadata.mcp_servers).toEqual([expect.objectContaining({ name: "py", where: "sandbox" })]);

    // The real filesystem server in the task's built image: it wrote the file the verifier grades, lists the
    // task's folder, and refuses a path outside the folder it was given.
    const fs = entries["filesystem-mcp"];
    const [written, listed, outside] = results("filesystem-mcp");
    expect(written).toMatch(/Successfully wrote/);
    expect(listed).toMatch(/made_by_mcp\.txt/);
    expect(outside).toMatch(/denied|outside/i);
    expect(fs.metadata.mcp_servers).toEqual([
      expect.objectContaining({
        name: "fs",
        where: "sandbox",
        server_info: expect.objectContaining({ name: expect.any(String) }),
      }),
    ]);
    for (const e of [py, fs]) expect(e.score.passed, `${e.task_id}: ${JSON.stringify(e.score)}`).toBe(true);
    // Offered beside the drawn toolset (file), as Harbor's agents register a task's servers.
    expect(offered.some((names) => names.includes("mcp_fs_read_text_file") && names.includes("read_file"))).toBe(true);

    // A server that cannot start is the task's environment error (retryable), in failed.jsonl with the server named.
    const broken = read("failed.jsonl").filter((e) => e.task_id === "broken-mcp");
    expect(broken.length).toBeGreaterThan(0);
    expect(broken[0].outcome).toBe("environment_error");
    expect(broken[0].error).toMatch(/MCP server 'gone' did not start/);
  }, 420_000);
});
