/**
 * Hostile MCP tool listings through a real run: input schemas the MCP spec's `type: "object"` does not cover
 * ($ref at the top, oneOf, no type at all), as servers generated from other schema tools write them, and a
 * listing that is not a listing at all. Odd schemas still give the model an object schema and reach the server;
 * a broken listing is one readable exit-2 line.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./helpers/fake_openai.js";
import { hostileDir, hostileRun, scriptedByPrompt, toolResults, type HostileRun } from "./helpers/mcp_hostile.js";
import { hostileRunInProcess } from "./helpers/mcp_hostile_exit2.js";

describe("hostile MCP servers: tool listings", () => {
  let model: FakeOpenAI;
  beforeAll(async () => {
    model = await startFakeOpenAI(scriptedByPrompt);
  });
  afterAll(async () => {
    await model.close();
  });

  /** One run of two servers, a task each: `s` with the odd schemas, `lax` with a loosely written one. */
  describe("one run", () => {
    let r: HostileRun;
    const entry = (id: string) => r.entries.find((e) => e.task_id === id);
    beforeAll(async () => {
      const { dir, server } = hostileDir();
      const tools = [
        { name: "untyped", inputSchema: { properties: { q: { type: "string" } }, required: ["q"] } },
        {
          name: "reffed",
          inputSchema: {
            $ref: "#/$defs/Args",
            $defs: { Args: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } },
          },
        },
        {
          name: "either",
          inputSchema: {
            oneOf: [
              { properties: { a: { type: "string" } }, required: ["a"] },
              { properties: { b: { type: "string" } }, required: ["b"] },
            ],
          },
        },
        { name: "plain", inputSchema: { type: "object", properties: {} } },
      ];
      const loose = [{ name: "loose", inputSchema: { type: ["object", "null"], properties: [], required: "x" } }];
      r = await hostileRun(
        dir,
        model.baseURL,
        {
          mcpServers: {
            s: { command: "python3", args: server({ tools }), where: "host" },
            lax: { command: "python3", args: server({ tools: loose }), where: "host" },
          },
        },
        [
          {
            id: "a",
            prompt: JSON.stringify([
              { name: "mcp_s_untyped", arguments: { q: "hi" } },
              { name: "mcp_s_reffed", arguments: { n: 3 } },
              { name: "mcp_s_either", arguments: { a: "x" } },
            ]),
            toolsets: ["mcp-s"],
          },
          { id: "b", prompt: JSON.stringify([{ name: "mcp_lax_loose", arguments: {} }]), toolsets: ["mcp-lax"] },
        ],
        ["--env", "host"],
      );
    }, 30_000);

    it("tools whose inputSchema has no type, a top-level $ref or oneOf: offered as object schemas and callable", () => {
      expect(r.exitCode, r.stderr).toBe(0);
      const offered = entry("a").tools.map((t: any) => [t.function.name, t.function.parameters.type]);
      expect(offered).toEqual([
        ["mcp_s_either", "object"],
        ["mcp_s_plain", "object"],
        ["mcp_s_reffed", "object"],
        ["mcp_s_untyped", "object"],
      ]);
      expect(toolResults(entry("a"))).toEqual([
        { result: 'args={"q": "hi"}' },
        { result: 'args={"n": 3}' },
        { result: 'args={"a": "x"}' },
      ]);
    });

    it("an object schema written loosely (type list, properties a list, required a string) is offered as a valid one; a non-object one stops the run naming the tool", async () => {
      expect(r.exitCode, r.stderr).toBe(0);
      expect(entry("b").tools[0].function.parameters).toEqual({ type: "object", properties: {} });
      expect(toolResults(entry("b"))).toEqual([{ result: "args={}" }]);

      const { dir, server } = hostileDir();
      const stringly = [{ name: "query", inputSchema: { type: "string" } }];
      const bad = await hostileRunInProcess(
        dir,
        model.baseURL,
        { mcpServers: { s: { command: "python3", args: server({ tools: stringly }), where: "host" } } },
        [{ id: "a", prompt: "x" }],
        ["--toolsets", "mcp-s", "--env", "host"],
      );
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr.trim().split("\n").at(-1)).toMatch(
        /MCP server 's': tool 'query' has an inputSchema of type "string".*tools\.exclude/,
      );
    }, 30_000);
  });

  // Runs that stop at the listing with exit 2: in this process (hostileRunInProcess).
  it("a tools/list answer that is not a listing: one exit-2 line that says what is wrong", async () => {
    const { dir, server } = hostileDir();
    const r = await hostileRunInProcess(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: "python3", args: server({ tools: "all of them" }), where: "host" } } },
      [{ id: "a", prompt: "x" }],
      ["--toolsets", "mcp-s", "--env", "host"],
    );
    expect(r.exitCode).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines.at(-1)).toMatch(/--mcp-config .*mcp\.json: MCP server 's': .*tools.*expected array/);
  }, 30_000);

  it("a server whose listing never ends (a new cursor on every page): the run stops with exit 2, not a hang", async () => {
    const { dir, server } = hostileDir();
    const r = await hostileRunInProcess(
      dir,
      model.baseURL,
      { mcpServers: { s: { command: "python3", args: server({ endless_cursor: true }), where: "host" } } },
      [{ id: "a", prompt: "x" }],
      ["--toolsets", "mcp-s", "--env", "host"],
      { timeoutMs: 20_000 },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n").at(-1)).toMatch(/MCP server 's': tools\/list .*pages/);
  }, 30_000);
});
