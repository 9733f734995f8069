/**
 * End to end: a plugin tool (from ./.hermes-batch/plugins) in a real CLI run. Its commands go through the
 * run's approval gate although it declares nothing: under --approval deny the flagged one never runs.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text, toolCalls, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";

const PLUGIN = `const { registry } = globalThis.hermesBatch;
registry.register({
  name: "plug_shell",
  toolset: "plug_tools",
  schema: {
    name: "plug_shell",
    description: "Runs a shell command in the task's environment.",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
  handler: async (args, ctx) => {
    const env = await ctx.getEnv();
    const r = await env.exec(args.command);
    return JSON.stringify({ exit_code: r.exitCode, output: r.stdout });
  },
});
`;

describe("a run with a plugin tool", () => {
  let server: FakeOpenAI;
  let markers: string;

  beforeAll(async () => {
    server = await startFakeOpenAI((req: RecordedRequest) => {
      const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
      if (turn > 0) return text(`done: ${req.body.messages.filter((m: any) => m.role === "tool").at(-1).content}`);
      return toolCalls([
        { name: "plug_shell", arguments: { command: `touch ${join(markers, "safe")}` } },
        {
          name: "plug_shell",
          arguments: { command: `touch ${join(markers, "flagged")} && git -C ~/dotfiles reset --hard` },
        },
      ]);
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it("offers the tool, runs its harmless command and denies the flagged one, recorded in the trajectory", async () => {
    const dir = tempDir();
    markers = join(dir, "markers");
    mkdirSync(markers);
    mkdirSync(join(dir, ".hermes-batch", "plugins"), { recursive: true });
    writeFileSync(join(dir, ".hermes-batch", "plugins", "shell_plugin.js"), PLUGIN);
    writeFileSync(join(dir, "d.jsonl"), JSON.stringify({ id: "p1", prompt: "Use the plugin." }) + "\n");
    const r = await runCli(
      [
        "run",
        join(dir, "d.jsonl"),
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--api-key",
        "k",
        "--toolsets",
        "plug_tools",
        "--approval",
        "deny",
        "--env",
        "host",
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        "r",
        "--progress",
        "none",
      ],
      { cwd: dir, env: { HERMES_BATCH_CONFIG_DIR: join(dir, "config") } },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(markers, "safe"))).toBe(true);
    expect(existsSync(join(markers, "flagged"))).toBe(false);

    const entry = JSON.parse(readFileSync(join(dir, "runs", "r", "trajectories.jsonl"), "utf8").split("\n")[0]!);
    expect(entry.tools.map((t: any) => t.function.name)).toEqual(["plug_shell"]);
    const results = entry.messages.filter((m: any) => m.role === "tool").map((m: any) => JSON.parse(m.content));
    expect(results[0]).toEqual({ exit_code: 0, output: "" });
    expect(results[1]).toMatchObject({
      status: "blocked",
      error: expect.stringMatching(/^BLOCKED: .*approval policy is 'deny'/),
    });
    expect(entry.approvals).toEqual([
      expect.objectContaining({ decision: "deny", by: "policy", pattern: "git_reset_hard" }),
    ]);
  });
});
