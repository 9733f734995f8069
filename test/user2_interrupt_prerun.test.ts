/** Ctrl-C while the run is still checking (here: the endpoint's preflight hangs) says so in one line, exit 130. */
import { describe, expect, it } from "vitest";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text } from "./helpers/fake_openai.js";
import { waitUntil } from "./helpers/wait.js";

describe("Ctrl-C during the pre-run checks", () => {
  it("prints that the run was interrupted before any task started, and that nothing was written", async () => {
    let asked = false;
    const server = await startFakeOpenAI(() => text("never asked"), {
      models: () => {
        asked = true;
        return { kind: "hang" };
      },
    });
    try {
      const dir = tempDir();
      const file = join(dir, "d.jsonl");
      writeFileSync(file, `{"id": "a", "prompt": "a"}\n{"id": "b", "prompt": "b"}\n`);
      const child = runCli(
        [
          "run",
          file,
          "--model",
          "m",
          "--base-url",
          server.baseURL,
          "--api-key",
          "k-1",
          "--output-dir",
          join(dir, "runs"),
        ],
        { cwd: dir, timeoutMs: 20_000 },
      );
      expect(await waitUntil(() => asked, 10_000, 20), "the preflight asked the endpoint").toBe(true);
      child.kill("SIGINT");
      const r = await child;
      expect(r.exitCode).toBe(130);
      expect(r.stderr.trim().split("\n").at(-1)).toBe(
        "hermes-batch run: interrupted before any task started: nothing was written",
      );
      expect(existsSync(join(dir, "runs", "d"))).toBe(false);
    } finally {
      await server.close();
    }
  }, 20_000);
});
