/**
 * MCP servers end to end through the built CLI (issue 30): a scripted model calls MCP tools of a stdio server on
 * the host (server-everything), an HTTP server started here (the SDK's server API on 127.0.0.1) and a filesystem
 * server inside the local sandbox; results land in the trajectory. Bad configs and name collisions stop the run
 * with exit 2 before anything runs.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeBwrap } from "../tools/environments/local/bwrap.js";
import { ROOT, runCli, tempDir } from "./helpers/cli.js";
import {
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type ToolCallSpec,
} from "./helpers/fake_openai.js";
import { startMcpHttpServer, type McpTestServer } from "./helpers/mcp_http.js";
import { readJsonl } from "./helpers/jsonl.js";

const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
const FILESYSTEM = join(ROOT, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");

/** The model's first turn per prompt: these calls; then an answer quoting every tool result. */
const SCRIPTS: Record<string, ToolCallSpec[]> = {
  echo: [{ name: "mcp_every_echo", arguments: { message: "hello from the model" } }],
  "echo deny": [{ name: "mcp_every_echo", arguments: { message: "deny-me" } }],
  image: [{ name: "mcp_every_get_tiny_image", arguments: {} }],
  http: [
    { name: "mcp_api_add", arguments: { a: 2, b: 40 } },
    { name: "mcp_api_fail", arguments: {} },
  ],
  files: [
    { name: "mcp_fs_write_file", arguments: { path: "/workspace/made_by_mcp.txt", content: "written through MCP" } },
    { name: "mcp_fs_read_text_file", arguments: { path: "/workspace/made_by_mcp.txt" } },
    { name: "mcp_fs_read_text_file", arguments: { path: "/etc/hostname" } },
  ],
};

/** The run's smart approver (same endpoint, asked with a response_format): approves, unless the call says deny-me. */
function approve(req: RecordedRequest) {
  const decision = JSON.stringify(req.body.messages).includes("deny-me") ? "deny" : "approve";
  return text(JSON.stringify({ decision, reason: `test approver says ${decision}` }));
}

function reply(req: RecordedRequest) {
  if (req.body.response_format) return approve(req);
  const messages = req.body.messages as { role: string; content: string }[];
  const prompt = messages.find((m) => m.role === "user")!.content;
  if (messages.some((m) => m.role === "assistant")) {
    return text(
      `done: ${messages
        .filter((m) => m.role === "tool")
        .map((m) => m.content)
        .join(" | ")}`,
    );
  }
  const script = SCRIPTS[prompt];
  return script ? toolCalls(script) : text("nothing to do");
}

interface Run {
  exitCode: number | undefined;
  stderr: string;
  dir: string;
  entry?: any;
  runYaml?: string;
}

describe("MCP servers in a run", () => {
  let model: FakeOpenAI;
  let http: McpTestServer;
  beforeAll(async () => {
    model = await startFakeOpenAI(reply);
    http = await startMcpHttpServer();
  });
  afterAll(async () => {
    await model.close();
    await http.close();
  });

  async function run(
    config: unknown,
    prompt: string,
    args: string[],
    env: Record<string, string> = {},
    file = "mcp.json",
  ): Promise<Run> {
    const dir = tempDir();
    writeFileSync(join(dir, file), typeof config === "string" ? config : JSON.stringify(config, null, 2));
    writeFileSync(
      join(dir, "d.jsonl"),
      JSON.stringify({
        id: "t1",
        prompt,
        ...(prompt === "files" ? { verify: "grep -q 'written through MCP' made_by_mcp.txt" } : {}),
      }) + "\n",
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
        join(dir, file),
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        "r",
        "--progress",
        "none",
        "--workers",
        "1",
        ...args,
      ],
      { cwd: dir, env: { HERMES_BATCH_CONFIG_DIR: join(dir, "config"), ...env }, timeoutMs: 180_000 },
    );
    const out: Run = { exitCode: r.exitCode, stderr: r.stderr, dir };
    const traj = join(dir, "runs", "r", "trajectories.jsonl");
    const first = existsSync(traj) ? readFileSync(traj, "utf8").split("\n")[0] : "";
    if (first) out.entry = JSON.parse(first);
    const yaml = join(dir, "runs", "r", "run.yaml");
    if (existsSync(yaml)) out.runYaml = readFileSync(yaml, "utf8");
    return out;
  }

  const toolResults = (entry: any) =>
    entry.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));

  it("a stdio server on the host (where: host): server-everything's echo called by the model", async () => {
    const r = await run(
      {
        mcpServers: {
          every: {
            command: process.execPath,
            args: [EVERYTHING, "stdio"],
            where: "host",
            tools: { include: ["echo", "get-sum"] },
          },
        },
      },
      "echo",
      ["--toolsets", "mcp-every", "--env", "host"],
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.entry.tools.map((t: any) => t.function.name)).toEqual(["mcp_every_echo", "mcp_every_get_sum"]);
    expect(toolResults(r.entry)).toEqual([{ result: "Echo: hello from the model" }]);
    expect(r.entry.final_response).toContain("Echo: hello from the model");
    expect(r.entry.metadata.mcp_servers).toEqual([
      {
        name: "every",
        transport: "stdio",
        where: "host",
        server_info: { name: "mcp-servers/everything", version: expect.any(String) },
        protocol_version: expect.any(String),
        tools: ["mcp_every_echo", "mcp_every_get_sum"],
      },
    ]);
    expect(r.runYaml).toMatch(/mcp_config: .*mcp\.json/);
    expect(r.runYaml).toMatch(/mcp_servers:\n\s+- name: every\n\s+transport: stdio\n\s+where: host/);
  });

  it("a call of a server outside the sandbox goes to the approver as data (--mcp-approval host, the default)", async () => {
    const config = {
      mcpServers: {
        every: { command: process.execPath, args: [EVERYTHING, "stdio"], where: "host", tools: { include: ["echo"] } },
      },
    };
    const approved = await run(config, "echo", ["--toolsets", "mcp-every", "--env", "host"]);
    expect(approved.exitCode, approved.stderr).toBe(0);
    expect(approved.entry.approvals).toEqual([
      expect.objectContaining({
        pattern: "mcp_call",
        decision: "approve",
        by: "smart",
        command: expect.stringMatching(
          /^MCP call: server 'every' \(outside the sandbox\), tool 'echo', arguments \{"message":"hello from the model"\}$/,
        ),
      }),
    ]);
    const denied = await run(config, "echo deny", ["--toolsets", "mcp-every", "--env", "host"]);
    expect(denied.entry.approvals).toEqual([
      expect.objectContaining({ pattern: "mcp_call", decision: "deny", by: "smart" }),
    ]);
    expect(toolResults(denied.entry)).toEqual([{ error: expect.stringMatching(/^BLOCKED/), status: "blocked" }]);
    // A policy that denies what is judged denies the call; --mcp-approval none lets it through unjudged.
    const policy = await run(config, "echo", ["--toolsets", "mcp-every", "--env", "host", "--approval", "deny"]);
    expect(toolResults(policy.entry)[0].error).toMatch(/^BLOCKED/);
    const none = await run(config, "echo", [
      "--toolsets",
      "mcp-every",
      "--env",
      "host",
      "--approval",
      "deny",
      "--mcp-approval",
      "none",
    ]);
    expect(toolResults(none.entry)).toEqual([{ result: "Echo: hello from the model" }]);
    expect(none.entry.approvals ?? []).toEqual([]);
  });

  it("an image result: a placeholder for the model and in the conversations, the raw part in messages and atif.jsonl", async () => {
    const r = await run(
      {
        mcpServers: {
          every: {
            command: process.execPath,
            args: [EVERYTHING, "stdio"],
            where: "host",
            tools: { include: ["get-tiny-image"] },
          },
        },
      },
      "image",
      ["--toolsets", "mcp-every", "--env", "host"],
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const tool = r.entry.messages.find((m: any) => m.role === "tool");
    expect(JSON.parse(tool.content).result).toMatch(/\[image image\/png, \d+ KB\]/);
    expect(tool.raw_content).toEqual([
      expect.objectContaining({
        type: "image",
        mimeType: "image/png",
        data: expect.stringMatching(/^[A-Za-z0-9+/=]{100,}$/),
      }),
    ]);
    // The model was sent the placeholder only.
    const sent = model.requests.flatMap((q) => q.body.messages as any[]).filter((m) => m.role === "tool");
    expect(sent.some((m) => m.content === tool.content && m.raw_content === undefined)).toBe(true);
    const conversations = JSON.stringify(r.entry.conversations);
    expect(conversations).toContain("[image image/png");
    expect(conversations).not.toContain(tool.raw_content[0].data.slice(0, 40));
    const atif = JSON.parse(readFileSync(join(r.dir, "runs", "r", "atif.jsonl"), "utf8").split("\n")[0]!);
    const observed = atif.steps.flatMap((s: any) => s.observation?.results ?? []);
    expect(observed[0].extra.raw_content).toEqual(tool.raw_content);
  });

  it("an HTTP server on 127.0.0.1: results and an isError result in the trajectory, its ${VAR} header sent and never written", async () => {
    const r = await run(
      {
        mcpServers: {
          api: {
            type: "http",
            url: http.url,
            headers: { Authorization: "Bearer ${MCP_TEST_TOKEN}", "X-Literal": "literal-header-secret" },
          },
        },
      },
      "http",
      ["--toolsets", "mcp-api", "--env", "host"],
      {
        MCP_TEST_TOKEN: "mcp-token-0123456789",
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(toolResults(r.entry)).toEqual([{ result: "sum=42" }, { error: "the database is down" }]);
    expect(r.entry.tool_stats.mcp_api_fail).toMatchObject({ count: 1, failure: 1 });
    expect(
      http.requests.some(
        (q) =>
          q.headers.authorization === "Bearer mcp-token-0123456789" &&
          q.headers["x-literal"] === "literal-header-secret",
      ),
    ).toBe(true);
    expect(r.runYaml).toContain("Authorization: Bearer ${MCP_TEST_TOKEN}");
    const written =
      readFileSync(join(r.dir, "runs", "r", "run.yaml"), "utf8") +
      readFileSync(join(r.dir, "runs", "r", "trajectories.jsonl"), "utf8");
    expect(written).not.toContain("mcp-token-0123456789");
    expect(written).not.toContain("literal-header-secret");
  });

  it.skipIf(!probeBwrap().ok)(
    "a stdio server inside the task's local sandbox (the default): writes the task's folder, cannot read outside it",
    async () => {
      const r = await run(
        {
          mcp_servers: {
            fs: {
              command: "node",
              args: [FILESYSTEM, "/workspace"],
              tools: { include: ["write_file", "read_text_file"] },
            },
          },
        },
        "files",
        ["--toolsets", "mcp-fs", "--env", "local", "--sandbox-ro", join(ROOT, "node_modules")],
        {},
        "mcp.yaml",
      );
      expect(r.exitCode, r.stderr).toBe(0);
      const results = toolResults(r.entry);
      expect(results[0].result).toMatch(/Successfully wrote to \/workspace\/made_by_mcp.txt/);
      expect(results[1]).toEqual({ result: "written through MCP" });
      expect(results[2].error).toMatch(/outside allowed directories/);
      expect(r.entry.verify).toMatchObject({ passed: true });
      expect(r.entry.metadata.mcp_servers[0]).toMatchObject({ name: "fs", transport: "stdio", where: "sandbox" });
      // A server in the sandbox is as contained as a command there: not judged under the default --mcp-approval host.
      expect(r.entry.approvals ?? []).toEqual([]);
    },
  );

  it("a server that lists its tools at start but cannot start for the task: environment_error with its stderr", async () => {
    const dir = tempDir();
    const marker = join(dir, "listed-once");
    const server = join(dir, "flaky_server.mjs");
    // Serves once (the listing at start), then dies at every later start.
    writeFileSync(
      server,
      [
        `import { existsSync, writeFileSync } from "node:fs";`,
        `if (existsSync(${JSON.stringify(marker)})) { console.error("flaky: the licence server is unreachable"); process.exit(4); }`,
        `writeFileSync(${JSON.stringify(marker)}, "");`,
        `const { McpServer } = await import(${JSON.stringify(join(ROOT, "node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.js"))});`,
        `const { StdioServerTransport } = await import(${JSON.stringify(join(ROOT, "node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js"))});`,
        `const s = new McpServer({ name: "flaky", version: "1.0.0" });`,
        `s.registerTool("ping", { description: "Answers pong." }, async () => ({ content: [{ type: "text", text: "pong" }] }));`,
        `await s.connect(new StdioServerTransport());`,
      ].join("\n"),
    );
    SCRIPTS.ping = [{ name: "mcp_flaky_ping", arguments: {} }];
    const r = await run(
      { mcpServers: { flaky: { command: process.execPath, args: [server], where: "host" } } },
      "ping",
      ["--toolsets", "mcp-flaky", "--env", "host"],
    );
    expect(r.exitCode, r.stderr).toBe(1);
    const failed = JSON.parse(readFileSync(join(r.dir, "runs", "r", "failed.jsonl"), "utf8").split("\n")[0]!);
    expect(failed.outcome).toBe("environment_error");
    expect(failed.error).toMatch(/MCP server 'flaky' did not start: .*the licence server is unreachable/);
  });

  it("a row's own mcp_servers (Harbor's list form): its tools for that row only; a bad one is a bad row", async () => {
    const dir = tempDir();
    SCRIPTS.rowhttp = [{ name: "mcp_rowapi_add", arguments: { a: 5, b: 6 } }];
    const rows = [
      {
        id: "own",
        prompt: "rowhttp",
        toolsets: ["mcp-rowapi", "todo"],
        mcp_servers: [
          { name: "rowapi", transport: "streamable-http", url: http.url, headers: { "X-Row": "${ROW_TOKEN}" } },
        ],
      },
      { id: "plain", prompt: "nothing", toolsets: ["todo"] },
    ];
    writeFileSync(join(dir, "d.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const args = [
      "--model",
      "m",
      "--base-url",
      model.baseURL,
      "--api-key",
      "k",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
      "--workers",
      "1",
      "--env",
      "host",
      // A row's ${VAR} reads only what --pass-env gives its tasks.
      "--pass-env",
      "ROW_TOKEN",
    ];
    const r = await runCli(["run", join(dir, "d.jsonl"), ...args, "--run-name", "r"], {
      cwd: dir,
      env: { HERMES_BATCH_CONFIG_DIR: join(dir, "config"), ROW_TOKEN: "row-token-987654321" },
      timeoutMs: 180_000,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const entries = readJsonl(join(dir, "runs", "r", "trajectories.jsonl"), { mustExist: true });
    const own = entries.find((e) => e.task_id === "own");
    const plain = entries.find((e) => e.task_id === "plain");
    expect(own.tools.map((t: any) => t.function.name)).toEqual([
      "mcp_rowapi_add",
      "mcp_rowapi_fail",
      "mcp_rowapi_picture",
      "mcp_rowapi_slow",
      "mcp_rowapi_weather",
      "todo",
    ]);
    expect(toolResults(own)).toEqual([{ result: "sum=11" }]);
    expect(own.metadata.mcp_servers).toEqual([
      expect.objectContaining({ name: "rowapi", transport: "http", where: "host" }),
    ]);
    expect(plain.tools.map((t: any) => t.function.name)).toEqual(["todo"]);
    expect(http.requests.some((q) => q.headers["x-row"] === "row-token-987654321")).toBe(true);
    expect(readFileSync(join(dir, "runs", "r", "trajectories.jsonl"), "utf8")).not.toContain("row-token-987654321");

    writeFileSync(
      join(dir, "bad.jsonl"),
      JSON.stringify({ prompt: "x", mcp_servers: { s: { command: "node", args: "oops" } } }) + "\n",
    );
    const bad = await runCli(["run", join(dir, "bad.jsonl"), ...args, "--run-name", "bad"], {
      cwd: dir,
      env: { HERMES_BATCH_CONFIG_DIR: join(dir, "config") },
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/bad\.jsonl:1: mcp_servers\.s\.args: must be a list, got 'oops'/);
  });

  it("--resume with another MCP config file is a changed configuration (exit 3)", async () => {
    const first = await run({ mcpServers: { api: { url: http.url } } }, "http", [
      "--toolsets",
      "mcp-api",
      "--env",
      "host",
    ]);
    expect(first.exitCode, first.stderr).toBe(0);
    const args = [
      "run",
      join(first.dir, "d.jsonl"),
      "--model",
      "m",
      "--base-url",
      model.baseURL,
      "--api-key",
      "k",
      "--mcp-config",
      join(first.dir, "mcp.json"),
      "--output-dir",
      join(first.dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
      "--workers",
      "1",
      "--toolsets",
      "mcp-api",
      "--env",
      "host",
      "--resume",
    ];
    const same = await runCli(args, { cwd: first.dir, env: { HERMES_BATCH_CONFIG_DIR: join(first.dir, "config") } });
    expect(same.exitCode, same.stderr).toBe(0);
    writeFileSync(join(first.dir, "mcp.json"), JSON.stringify({ mcpServers: { api: { url: http.url, timeout: 5 } } }));
    const changed = await runCli(args, { cwd: first.dir, env: { HERMES_BATCH_CONFIG_DIR: join(first.dir, "config") } });
    expect(changed.exitCode, changed.stderr).toBe(3);
    expect(changed.stderr).toMatch(/different configuration \(.*(mcp_config|referenced file)/);
  });

  it("a bad config stops the run with exit 2 and file:line before anything runs", async () => {
    const r = await run(
      `{\n  "mcpServers": {\n    "x": {\n      "command": "node",\n      "args": "oops"\n    }\n  }\n}\n`,
      "echo",
      ["--toolsets", "todo", "--env", "host"],
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim()).toMatch(/mcp\.json:5: mcpServers\.x\.args: must be a list, got 'oops'$/);
    expect(existsSync(join(r.dir, "runs", "r"))).toBe(false);
  });

  it("refuses two servers whose tool names collide, naming both, with exit 2", async () => {
    const r = await run({ mcpServers: { "a-b": { url: http.url }, a_b: { url: http.url } } }, "http", [
      "--toolsets",
      "todo",
      "--env",
      "host",
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /MCP tool name collision: tool 'add' of MCP server 'a_b' and tool 'add' of MCP server 'a-b' would both be mcp_a_b_add/,
    );
    expect(existsSync(join(r.dir, "runs", "r"))).toBe(false);
  });

  it("refuses to hand the run's API key to an MCP server (the --pass-env rule)", async () => {
    const r = await run(
      { mcpServers: { api: { url: http.url, headers: { Authorization: "Bearer ${MY_MODEL_KEY}" } } } },
      "http",
      ["--toolsets", "todo", "--env", "host", "--api-key", "sk-model-key-123456"],
      {
        MY_MODEL_KEY: "sk-model-key-123456",
      },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/server 'api' Authorization \(\$\{MY_MODEL_KEY\}\): it holds the run's --api-key/);
    expect(r.stderr).not.toContain("sk-model-key-123456");
  });

  it("a server that cannot start stops the run with exit 2 and its stderr", async () => {
    const r = await run(
      {
        mcpServers: {
          dead: {
            command: process.execPath,
            args: ["-e", "console.error('no licence file'); process.exit(1)"],
            where: "host",
          },
        },
      },
      "echo",
      ["--toolsets", "todo", "--env", "host"],
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/MCP server 'dead' did not start: .*no licence file/);
  });
});
