/** --mcp-config: both shapes normalised, `${VAR}` read at start, bad files named by file:line, run.yaml's view redacted. */
import { describe, expect, it } from "vitest";
import { mcpSecretValues, parseMcpConfig, parseRowMcpServers, publicMcpServers } from "../src/config/mcp_config.js";
import { UserError } from "../src/core/errors.js";

const env = { MCP_TOKEN: "tok-1234567890", GH_PAT: "ghp_secretsecret" };

function errorOf(text: string, file = "mcp.json"): string {
  try {
    parseMcpConfig(text, file, env);
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return (err as Error).message;
  }
  throw new Error("no error");
}

describe("MCP config", () => {
  it("reads the desktop-client JSON shape: stdio and URL servers", () => {
    const servers = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          fs: {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-filesystem", "/workspace"],
            env: { GITHUB_TOKEN: "${GH_PAT}" },
          },
          api: { type: "http", url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer ${MCP_TOKEN}" } },
          old: { type: "sse", url: "http://127.0.0.1:9/sse" },
          off: { command: "x", disabled: true },
        },
        globalShortcut: "ignored",
      }),
      "mcp.json",
      env,
    );
    expect(servers.map((s) => [s.name, s.transport, s.where])).toEqual([
      ["fs", "stdio", "sandbox"],
      ["api", "http", "host"],
      ["old", "sse", "host"],
    ]);
    expect(servers[0]).toMatchObject({
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-filesystem", "/workspace"],
      env: { GITHUB_TOKEN: "${GH_PAT}" },
      envValues: { GITHUB_TOKEN: "ghp_secretsecret" },
    });
    expect(servers[1]).toMatchObject({
      headers: { Authorization: "Bearer ${MCP_TOKEN}" },
      headerValues: { Authorization: "Bearer tok-1234567890" },
      timeoutSec: 60,
      connectTimeoutSec: 30,
    });
  });

  it("reads Hermes' YAML mcp_servers shape, with its tool filters, time-outs and transport key", () => {
    const yaml = [
      "model: some/model",
      "mcp_servers:",
      "  github:",
      "    command: npx",
      "    args: [-y, '@modelcontextprotocol/server-github']",
      "    where: host",
      "    timeout: 120",
      "    connect_timeout: 10",
      "    keepalive_interval: 30",
      "    tools:",
      "      include: [create_issue]",
      "  remote:",
      "    url: http://127.0.0.1:9/sse",
      "    transport: sse",
    ].join("\n");
    const servers = parseMcpConfig(yaml, "config.yaml", env);
    expect(servers[0]).toMatchObject({
      name: "github",
      transport: "stdio",
      where: "host",
      timeoutSec: 120,
      connectTimeoutSec: 10,
      tools: { include: ["create_issue"] },
    });
    expect(servers[1]).toMatchObject({ name: "remote", transport: "sse", where: "host" });
  });

  it("names the file, line and key path of a bad entry", () => {
    const text = `{\n  "mcpServers": {\n    "fs": {\n      "command": "node",\n      "args": "not-a-list"\n    }\n  }\n}\n`;
    expect(errorOf(text)).toBe("mcp.json:5: mcpServers.fs.args: must be a list, got 'not-a-list'");
    expect(errorOf(`mcp_servers:\n  fs:\n    command: node\n    comand: x\n`, "c.yaml")).toBe(
      "c.yaml:4: mcp_servers.fs.comand: unknown key(s) 'comand'",
    );
    expect(errorOf(`mcp_servers:\n  fs:\n    args: [a]\n`, "c.yaml")).toMatch(
      /^c\.yaml:2: mcp_servers\.fs\.command: a server needs 'command' \(stdio\) or 'url' \(HTTP\)$/,
    );
    expect(errorOf(`{"mcpServers": {"a": {"url": "ftp://x/y"}}}`)).toMatch(
      /^mcp\.json:1: mcpServers\.a\.url: must be an http/,
    );
    expect(errorOf(`{"mcpServers": {"a": {"url": "http://x/y", "where": "sandbox"}}}`)).toMatch(
      /mcpServers\.a\.where: applies to stdio servers/,
    );
    expect(errorOf(`{"mcpServers": {"a": {"command": "x", "shared": true}}}`)).toMatch(
      /mcpServers\.a\.shared: a server in the task's sandbox belongs to its task/,
    );
    expect(errorOf(`{"mcpServers": {"bad name": {"command": "x"}}}`)).toMatch(
      /^mcp\.json:1: mcpServers\.bad name: a server name is letters/,
    );
    expect(errorOf(`{"servers": {}}`)).toMatch(/^mcp\.json:1: no 'mcpServers'/);
    expect(errorOf(`{"mcpServers": {`)).toMatch(/^mcp\.json:1: invalid JSON/);
  });

  it("needs every ${VAR} set at start, naming the variable and the key", () => {
    expect(errorOf(`mcp_servers:\n  a:\n    command: x\n    env:\n      TOKEN: \${NOT_SET_ANYWHERE}\n`, "c.yaml")).toBe(
      "c.yaml:5: mcp_servers.a.env.TOKEN: environment variable NOT_SET_ANYWHERE is not set",
    );
    expect(errorOf(`{"mcpServers": {"a": {"url": "http://x/", "headers": {"X-Key": "\${NOPE}"}}}}`)).toMatch(
      /mcpServers\.a\.headers 'X-Key': environment variable NOPE is not set/,
    );
  });

  it("shows run.yaml only ${VAR} references and redacts literal values; the values sent are secrets to scrub", () => {
    const servers = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          a: { command: "x", env: { GITHUB_TOKEN: "${GH_PAT}", API_KEY: "literal-secret-value", MODE: "fast" } },
          b: {
            url: "http://u:p@127.0.0.1/mcp",
            headers: { Authorization: "Bearer ${MCP_TOKEN}", "X-Raw": "rawsecretvalue" },
          },
        },
      }),
      "m.json",
      env,
    );
    const shown = publicMcpServers(servers);
    expect(shown[0]!.env).toEqual({ GITHUB_TOKEN: "${GH_PAT}", API_KEY: "<redacted>", MODE: "<redacted>" });
    expect(shown[1]!.headers).toEqual({ Authorization: "Bearer ${MCP_TOKEN}", "X-Raw": "<redacted>" });
    expect(JSON.stringify(shown)).not.toMatch(
      /u:p@|tok-1234567890|ghp_secretsecret|literal-secret-value|rawsecretvalue/,
    );
    expect(mcpSecretValues(servers).sort()).toEqual(
      ["Bearer tok-1234567890", "ghp_secretsecret", "literal-secret-value", "rawsecretvalue", "tok-1234567890"].sort(),
    );
  });

  it("reads a row's mcp_servers as a mapping or in Harbor's list form, with the row's reason for a bad one", () => {
    const listed = parseRowMcpServers(
      [
        { name: "db", transport: "streamable-http", url: "http://127.0.0.1:9/mcp" },
        { name: "fs", command: "node", args: ["s.js"] },
      ],
      env,
    );
    expect(listed.map((s) => [s.name, s.transport, s.where])).toEqual([
      ["db", "http", "host"],
      ["fs", "stdio", "sandbox"],
    ]);
    expect(parseRowMcpServers({ fs: { command: "node" } }, env)[0]).toMatchObject({
      name: "fs",
      command: "node",
      args: [],
    });
    const reason = (v: unknown) => {
      try {
        parseRowMcpServers(v, env);
      } catch (err) {
        return (err as Error).message;
      }
      return "no error";
    };
    expect(reason({ fs: { command: "node", args: "x" } })).toBe("mcp_servers.fs.args: must be a list, got 'x'");
    expect(reason([{ command: "x" }])).toBe("mcp_servers.0: each server of the list needs a 'name'");
    expect(
      reason([
        { name: "a", command: "x" },
        { name: "a", command: "y" },
      ]),
    ).toBe("mcp_servers.1: a second server named 'a'");
    expect(reason("fs")).toMatch(/^mcp_servers: must be a mapping/);
    expect(reason({ a: { command: "x", env: { T: "${UNSET_HERE}" } } })).toBe(
      "mcp_servers.a.env.T: environment variable UNSET_HERE is not set",
    );
  });
});
