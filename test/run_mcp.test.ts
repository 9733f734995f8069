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
import { ROOT, runCli, runCliInProcess, tempDir } from "./helpers/cli.js";
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
  ping: [{ name: "mcp_flaky_ping", arguments: {} }],
  rowhttp: [{ name: "mcp_rowapi_add", arguments: { a: 5, b: 6 } }],
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

  /** The flags of every run here; with --mcp-config of `file` in `dir` unless it is undefined. */
  const runArgs = (dir: string, file: string | undefined) => [
    "--model",
    "m",
    "--base-url",
    model.baseURL,
    "--api-key",
    "k",
    ...(file ? ["--mcp-config", join(dir, file)] : []),
    "--output-dir",
    join(dir, "runs"),
    "--run-name",
    "r",
    "--progress",
    "none",
    "--workers",
    "1",
  ];

  /**
   * A run of one row. `inProcess`: in this process (runCliInProcess), for runs that stop with exit 2 before any
   * server is registered: the runs that register servers, or start tasks, are child processes (runCli).
   */
  async function run(
    config: unknown,
    prompt: string,
    args: string[],
    opts: { env?: Record<string, string>; inProcess?: boolean } = {},
  ): Promise<Run> {
    const dir = tempDir();
    writeFileSync(join(dir, "mcp.json"), typeof config === "string" ? config : JSON.stringify(config, null, 2));
    writeFileSync(join(dir, "d.jsonl"), JSON.stringify({ id: "t1", prompt }) + "\n");
    const r = await (opts.inProcess ? runCliInProcess : runCli)(
      ["run", join(dir, "d.jsonl"), ...runArgs(dir, "mcp.json"), ...args],
      { cwd: dir, env: { HERMES_BATCH_CONFIG_DIR: join(dir, "config"), ...opts.env }, timeoutMs: 180_000 },
    );
    const out: Run = { exitCode: r.exitCode, stderr: r.stderr, dir };
    const traj = join(dir, "runs", "r", "trajectories.jsonl");
    const first = existsSync(traj) ? readFileSync(traj, "utf8").split("\n")[0] : "";
    if (first) out.entry = JSON.parse(first);
    return out;
  }

  const toolResults = (entry: any) =>
    entry.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));

  /**
   * One run (--env host, the default --mcp-approval host) of a row per test, each with its own toolsets: the config
   * file's server-everything on the host, the HTTP server and a flaky server; two rows with their own servers.
   */
  describe("one run of several rows", () => {
    const dir = tempDir();
    let r: { exitCode: number | undefined; stderr: string };
    let entries: any[];
    let failed: any[];
    const entry = (id: string) => {
      const e = entries.find((x) => x.task_id === id);
      expect(e, `no trajectory of task ${id}: ${r.stderr}`).toBeDefined();
      expect(failed.filter((f) => f.task_id === id)).toEqual([]);
      return e;
    };
    beforeAll(async () => {
      const marker = join(dir, "listed-once");
      const flaky = join(dir, "flaky_server.mjs");
      // Serves once (the listing at start), then dies at every later start.
      writeFileSync(
        flaky,
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
      const config = {
        mcpServers: {
          every: {
            command: process.execPath,
            args: [EVERYTHING, "stdio"],
            where: "host",
            tools: { include: ["echo", "get-sum", "get-tiny-image"] },
          },
          api: {
            type: "http",
            url: http.url,
            headers: { Authorization: "Bearer ${MCP_TEST_TOKEN}", "X-Literal": "literal-header-secret" },
          },
          flaky: { command: process.execPath, args: [flaky], where: "host" },
        },
      };
      writeFileSync(join(dir, "mcp.json"), JSON.stringify(config, null, 2));
      const rows = [
        { id: "echo", prompt: "echo", toolsets: ["mcp-every"] },
        { id: "deny", prompt: "echo deny", toolsets: ["mcp-every"] },
        { id: "image", prompt: "image", toolsets: ["mcp-every"] },
        { id: "http", prompt: "http", toolsets: ["mcp-api"] },
        { id: "flaky", prompt: "ping", toolsets: ["mcp-flaky"] },
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
      writeFileSync(join(dir, "d.jsonl"), rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
      // A row's ${VAR} reads only what --pass-env gives its tasks.
      const args = [
        "run",
        join(dir, "d.jsonl"),
        ...runArgs(dir, "mcp.json"),
        "--env",
        "host",
        "--pass-env",
        "ROW_TOKEN",
      ];
      r = await runCli(args, {
        cwd: dir,
        env: {
          HERMES_BATCH_CONFIG_DIR: join(dir, "config"),
          MCP_TEST_TOKEN: "mcp-token-0123456789",
          ROW_TOKEN: "row-token-987654321",
        },
        timeoutMs: 180_000,
      });
      entries = readJsonl(join(dir, "runs", "r", "trajectories.jsonl"));
      failed = readJsonl(join(dir, "runs", "r", "failed.jsonl"));
    }, 200_000);

    it("a stdio server on the host (where: host): server-everything's echo called by the model", () => {
      const e = entry("echo");
      expect(e.tools.map((t: any) => t.function.name)).toEqual([
        "mcp_every_echo",
        "mcp_every_get_sum",
        "mcp_every_get_tiny_image",
      ]);
      expect(toolResults(e)).toEqual([{ result: "Echo: hello from the model" }]);
      expect(e.final_response).toContain("Echo: hello from the model");
      expect(e.metadata.mcp_servers).toEqual([
        {
          name: "every",
          transport: "stdio",
          where: "host",
          server_info: { name: "mcp-servers/everything", version: expect.any(String) },
          protocol_version: expect.any(String),
          tools: ["mcp_every_echo", "mcp_every_get_sum", "mcp_every_get_tiny_image"],
        },
      ]);
      const runYaml = readFileSync(join(dir, "runs", "r", "run.yaml"), "utf8");
      expect(runYaml).toMatch(/mcp_config: .*mcp\.json/);
      expect(runYaml).toMatch(/mcp_servers:\n\s+- name: every\n\s+transport: stdio\n\s+where: host/);
    });

    it("a call of a server outside the sandbox goes to the approver as data (--mcp-approval host, the default)", () => {
      expect(entry("echo").approvals).toEqual([
        expect.objectContaining({
          pattern: "mcp_call",
          decision: "approve",
          by: "smart",
          command: expect.stringMatching(
            /^MCP call: server 'every' \(outside the sandbox\), tool 'echo', arguments \{"message":"hello from the model"\}$/,
          ),
        }),
      ]);
      const denied = entry("deny");
      expect(denied.approvals).toEqual([
        expect.objectContaining({ pattern: "mcp_call", decision: "deny", by: "smart" }),
      ]);
      expect(toolResults(denied)).toEqual([{ error: expect.stringMatching(/^BLOCKED/), status: "blocked" }]);
    });

    it("an image result: a placeholder for the model and in the conversations, the raw part in messages and atif.jsonl", () => {
      const e = entry("image");
      const tool = e.messages.find((m: any) => m.role === "tool");
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
      const conversations = JSON.stringify(e.conversations);
      expect(conversations).toContain("[image image/png");
      expect(conversations).not.toContain(tool.raw_content[0].data.slice(0, 40));
      const atif = readJsonl(join(dir, "runs", "r", "atif.jsonl")).find((a) => JSON.stringify(a).includes("image/png"));
      const observed = atif.steps.flatMap((s: any) => s.observation?.results ?? []);
      expect(observed[0].extra.raw_content).toEqual(tool.raw_content);
    });

    it("an HTTP server on 127.0.0.1: results and an isError result in the trajectory, its ${VAR} header sent and never written", () => {
      const e = entry("http");
      expect(toolResults(e)).toEqual([{ result: "sum=42" }, { error: "the database is down" }]);
      expect(e.tool_stats.mcp_api_fail).toMatchObject({ count: 1, failure: 1 });
      expect(
        http.requests.some(
          (q) =>
            q.headers.authorization === "Bearer mcp-token-0123456789" &&
            q.headers["x-literal"] === "literal-header-secret",
        ),
      ).toBe(true);
      expect(readFileSync(join(dir, "runs", "r", "run.yaml"), "utf8")).toContain(
        "Authorization: Bearer ${MCP_TEST_TOKEN}",
      );
      const written =
        readFileSync(join(dir, "runs", "r", "run.yaml"), "utf8") +
        readFileSync(join(dir, "runs", "r", "trajectories.jsonl"), "utf8");
      expect(written).not.toContain("mcp-token-0123456789");
      expect(written).not.toContain("literal-header-secret");
    });

    it("a server that lists its tools at start but cannot start for the task: environment_error with its stderr (the only task failed: exit 1)", () => {
      expect(r.exitCode, r.stderr).toBe(1);
      expect(new Set(failed.map((f) => f.task_id))).toEqual(new Set(["flaky"]));
      expect(failed[0].outcome).toBe("environment_error");
      expect(failed[0].error).toMatch(/MCP server 'flaky' did not start: .*the licence server is unreachable/);
    });

    it("a row's own mcp_servers (Harbor's list form): its tools for that row only; a bad one is a bad row", async () => {
      const own = entry("own");
      const plain = entry("plain");
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

      const badDir = tempDir();
      writeFileSync(
        join(badDir, "bad.jsonl"),
        JSON.stringify({ prompt: "x", mcp_servers: { s: { command: "node", args: "oops" } } }) + "\n",
      );
      const bad = await runCliInProcess(
        ["run", join(badDir, "bad.jsonl"), ...runArgs(badDir, undefined), "--env", "host"],
        { cwd: badDir, env: { HERMES_BATCH_CONFIG_DIR: join(badDir, "config") } },
      );
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toMatch(/bad\.jsonl:1: mcp_servers\.s\.args: must be a list, got 'oops'/);
    });
  });

  /**
   * Two runs under --approval deny. The first: the HTTP server (outside the sandbox, as a host's stdio server) and,
   * where there is a local sandbox (--env local), the filesystem server inside the task's sandbox, from a YAML config
   * of the `mcp_servers` form; a task each. The second: the HTTP server, --mcp-approval none.
   */
  describe("runs under --approval deny", () => {
    const sandbox = probeBwrap().ok;
    const args = ["--toolsets", "mcp-api", "--env", "host", "--approval", "deny"];
    let policy: { exitCode: number | undefined; stderr: string; entries: any[] };
    let none: Run;
    beforeAll(async () => {
      const dir = tempDir();
      const fs = {
        command: "node",
        args: [FILESYSTEM, "/workspace"],
        tools: { include: ["write_file", "read_text_file"] },
      };
      const servers = { api: { url: http.url }, ...(sandbox ? { fs } : {}) };
      writeFileSync(join(dir, "mcp.yaml"), JSON.stringify({ mcp_servers: servers }, null, 2));
      const rows = [
        { id: "http", prompt: "http", toolsets: ["mcp-api"] },
        ...(sandbox
          ? [
              {
                id: "files",
                prompt: "files",
                toolsets: ["mcp-fs"],
                verify: "grep -q 'written through MCP' made_by_mcp.txt",
              },
            ]
          : []),
      ];
      writeFileSync(join(dir, "d.jsonl"), rows.map((row) => JSON.stringify(row)).join("\n") + "\n");
      const env = sandbox ? ["--env", "local", "--sandbox-ro", join(ROOT, "node_modules")] : ["--env", "host"];
      const r = await runCli(["run", join(dir, "d.jsonl"), ...runArgs(dir, "mcp.yaml"), "--approval", "deny", ...env], {
        cwd: dir,
        env: { HERMES_BATCH_CONFIG_DIR: join(dir, "config") },
        timeoutMs: 180_000,
      });
      policy = { ...r, entries: readJsonl(join(dir, "runs", "r", "trajectories.jsonl")) };
      none = await run({ mcpServers: { api: { url: http.url } } }, "http", [...args, "--mcp-approval", "none"]);
    }, 300_000);
    const entry = (id: string) => policy.entries.find((e) => e.task_id === id);

    it("a policy that denies what is judged denies an MCP call; --mcp-approval none lets it through unjudged", () => {
      expect(policy.exitCode, policy.stderr).toBe(0);
      expect(toolResults(entry("http"))[0].error).toMatch(/^BLOCKED/);
      expect(none.exitCode, none.stderr).toBe(0);
      expect(toolResults(none.entry)).toEqual([{ result: "sum=42" }, { error: "the database is down" }]);
      expect(none.entry.approvals ?? []).toEqual([]);
    });

    it.skipIf(!sandbox)(
      "a stdio server inside the task's local sandbox (the default): writes the task's folder, cannot read outside it",
      () => {
        expect(policy.exitCode, policy.stderr).toBe(0);
        const e = entry("files");
        const results = toolResults(e);
        expect(results[0].result).toMatch(/Successfully wrote to \/workspace\/made_by_mcp.txt/);
        expect(results[1]).toEqual({ result: "written through MCP" });
        expect(results[2].error).toMatch(/outside allowed directories/);
        expect(e.verify).toMatchObject({ passed: true });
        expect(e.metadata.mcp_servers[0]).toMatchObject({ name: "fs", transport: "stdio", where: "sandbox" });
        // A server in the sandbox is as contained as a command there: not judged under the default --mcp-approval
        // host, so the run's deny policy did not block its calls.
        expect(e.approvals ?? []).toEqual([]);
      },
    );

    it("--resume with another MCP config file is a changed configuration (exit 3)", async () => {
      const { dir } = none;
      const resume = ["run", join(dir, "d.jsonl"), ...runArgs(dir, "mcp.json"), ...args, "--mcp-approval", "none"];
      const env = { HERMES_BATCH_CONFIG_DIR: join(dir, "config") };
      const same = await runCli([...resume, "--resume"], { cwd: dir, env });
      expect(same.exitCode, same.stderr).toBe(0);
      writeFileSync(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { api: { url: http.url, timeout: 5 } } }));
      const changed = await runCli([...resume, "--resume"], { cwd: dir, env });
      expect(changed.exitCode, changed.stderr).toBe(3);
      expect(changed.stderr).toMatch(/different configuration \(.*(mcp_config|referenced file)/);
    });
  });

  it("a bad config stops the run with exit 2 and file:line before anything runs", async () => {
    const r = await run(
      `{\n  "mcpServers": {\n    "x": {\n      "command": "node",\n      "args": "oops"\n    }\n  }\n}\n`,
      "echo",
      ["--toolsets", "todo", "--env", "host"],
      { inProcess: true },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim()).toMatch(/mcp\.json:5: mcpServers\.x\.args: must be a list, got 'oops'$/);
    expect(existsSync(join(r.dir, "runs", "r"))).toBe(false);
  });

  it("refuses two servers whose tool names collide, naming both, with exit 2", async () => {
    const r = await run(
      { mcpServers: { "a-b": { url: http.url }, a_b: { url: http.url } } },
      "http",
      ["--toolsets", "todo", "--env", "host"],
      { inProcess: true },
    );
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
      { env: { MY_MODEL_KEY: "sk-model-key-123456" }, inProcess: true },
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
      { inProcess: true },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/MCP server 'dead' did not start: .*no licence file/);
  });
});
