/**
 * A hostile model's paths through the real dispatch path (the pipeline a task's agent loop calls), in a real
 * `--env local` sandbox (bubblewrap): a NUL byte in a path is refused (the shell would drop it and use another
 * file), and a write onto a FIFO fails at once instead of holding the task for the file operation's timeout.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxEnvironment } from "../tools/environments/local/local_sandbox.js";
import { createToolPipeline } from "../tools/pipeline.js";
import type { ToolContext } from "../tools/registry.js";
import "../tools/file_tools.js";
import "../tools/terminal_tool.js";
import { silentLogger } from "./helpers/local_ctx.js";

let root: string;
let env: SandboxEnvironment;
let ctx: ToolContext;
const allow = { gate: async () => ({ allowed: true }), records: [] };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "hb-toolargs-paths-"));
  env = await SandboxEnvironment.create(
    { runName: "r", taskId: "toolargs-paths", hostTaskDir: join(root, "task") },
    {},
  );
  await env.exec("printf 'a\\nb\\n' > f.txt; mkfifo fifo; echo ok");
  ctx = { taskId: "toolargs-paths", envKind: "local", getEnv: async () => env, logger: silentLogger };
});

afterAll(async () => {
  await env?.cleanup();
  rmSync(root, { recursive: true, force: true });
});

/** One call through a fresh pipeline (gate allowing everything: the sandbox is what stands in the way). */
async function call(name: string, args: Record<string, unknown> | string): Promise<string> {
  return createToolPipeline({ approval: allow }).call(name, args, ctx);
}

describe("paths with a NUL byte", () => {
  it.each([["write_file"], ["read_file"], ["patch"], ["search_files"]])(
    "%s refuses it instead of using the path the shell makes of it",
    async (tool) => {
      const args: Record<string, Record<string, unknown>> = {
        write_file: { path: "a\u0000b", content: "x" },
        read_file: { path: "a\u0000b" },
        patch: { path: "a\u0000b", old_string: "a", new_string: "b" },
        search_files: { pattern: "a", path: "a\u0000b" },
      };
      const parsed = JSON.parse(await call(tool, args[tool]!));
      expect(parsed.error).toMatch(/'path': must not contain a NUL byte/);
      expect(existsSync(join(env.taskDir, "ab"))).toBe(false);
    },
  );

  it("terminal's workdir too", async () => {
    const parsed = JSON.parse(await call("terminal", { command: "pwd", workdir: "/tm\u0000p" }));
    expect(parsed.error).toMatch(/'workdir': must not contain a NUL byte/);
  });
});

describe("writes onto a FIFO", () => {
  it("write_file refuses at once instead of blocking until the file operation times out", {
    timeout: 30_000,
  }, async () => {
    const started = Date.now();
    const parsed = JSON.parse(await call("write_file", { path: "fifo", content: "x" }));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(parsed.error).toMatch(/^Failed to write file: fifo: Not a regular file/);
    expect(parsed.bytes_written).toBe(0);
  });

  it("patch's V4A Add File onto it is refused the same way", { timeout: 30_000 }, async () => {
    const started = Date.now();
    const patch = "*** Begin Patch\n*** Add File: fifo\n+hello\n*** End Patch";
    const parsed = JSON.parse(await call("patch", { mode: "patch", patch }));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(parsed.success).toBe(false);
    expect(parsed.error).toMatch(/fifo: Not a regular file/);
  });

  it("the sandbox still answers after them", async () => {
    expect(JSON.parse(await call("terminal", { command: "echo alive" })).output).toBe("alive");
  });
});
