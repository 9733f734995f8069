/**
 * Cross-call approval in a real batch run: a file written by one tool call (a script through the
 * terminal, a Makefile through write_file) and run by a later command is judged by its text; with a
 * denying approver the later command never runs. Agent and approver are the local fake OpenAI server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  completion,
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

describe("approval across tool calls", () => {
  let server: FakeOpenAI;
  let victims: string;
  const approverCommands: string[] = [];

  const approver = (req: RecordedRequest): Reply => {
    approverCommands.push(JSON.stringify(req.body.messages));
    return text(JSON.stringify({ decision: "deny", reason: "test approver denies" }));
  };

  /** Turn 0 writes the file, turn 1 runs it, turn 2 reports what the tool said. */
  const agent = (req: RecordedRequest): Reply => {
    const prompt: string = req.body.messages.find((m: any) => m.role === "user").content;
    const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
    const victim = join(victims, /(victim-[\w-]+)/.exec(prompt)![1]!);
    const viaMake = prompt.includes("make");
    if (turn === 0) {
      return viaMake
        ? toolCalls([{ name: "write_file", arguments: { path: "Makefile", content: `clean:\n\trm -rf ${victim}\n` } }])
        : toolCalls([
            { name: "terminal", arguments: { command: `cat > cleanup.sh <<'EOF'\n#!/bin/sh\nrm -rf ${victim}\nEOF` } },
          ]);
    }
    if (turn === 1)
      return toolCalls([{ name: "terminal", arguments: { command: viaMake ? "make clean" : "bash cleanup.sh" } }]);
    const result = req.body.messages.filter((m: any) => m.role === "tool").at(-1).content;
    return completion({ content: `tool said: ${result.slice(0, 200)}` });
  };

  beforeAll(async () => {
    server = await startFakeOpenAI((req) => (req.body?.response_format ? approver(req) : agent(req)));
  });
  afterAll(async () => {
    await server.close();
  });

  it("a script or Makefile written by one call and run by the next is denied with a denying approver", async () => {
    const dir = tempDir();
    victims = join(dir, "victims");
    const ids = ["victim-script", "victim-make"];
    for (const v of ids) {
      mkdirSync(join(victims, v), { recursive: true });
      writeFileSync(join(victims, v, "precious.txt"), "keep me");
    }
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      [`Clean up victim-script with a script`, `Clean up victim-make with make`]
        .map((p, i) => JSON.stringify({ id: ids[i], prompt: p }))
        .join("\n") + "\n",
    );
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "agent-model",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--approval-model",
      "approver-model",
      "--toolsets",
      "terminal,file",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "x",
      // On the host, so a delete that slipped through would really remove the victim folder.
      "--env",
      "host",
      "--progress",
      "none",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const v of ids) expect(existsSync(join(victims, v, "precious.txt")), v).toBe(true);

    const entries = Object.fromEntries(
      readJsonl(join(dir, "runs", "x", "trajectories.jsonl")).map((e) => [e.task_id, e]),
    );
    for (const [id, command] of [
      ["victim-script", "bash cleanup.sh"],
      ["victim-make", "make clean"],
    ] as const) {
      const denied = entries[id].approvals.filter((a: any) => a.decision === "deny");
      expect(denied, id).toHaveLength(1);
      expect(denied[0]).toMatchObject({ command, by: "smart", reason: "test approver denies" });
      expect(denied[0].description).toMatch(/earlier call wrote/);
      const toolResults = entries[id].messages.filter((m: any) => m.role === "tool").map((m: any) => m.content);
      expect(toolResults.at(-1)).toContain("BLOCKED");
    }
    // The writing calls themselves were not flagged; the approver saw only the commands that run the files.
    expect(approverCommands).toHaveLength(2);
  });
});
