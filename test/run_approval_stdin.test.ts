/**
 * The approval gate and a background shell's stdin, end to end through the built CLI with a scripted agent and
 * `--approval deny`, in `--env host` (no sandbox: the gate is all there is). A shell started in the background
 * runs what several `process` writes spell together: `rm -r` + `f <victim>` + Enter is `rm -rf <victim>`, though
 * no write alone is a dangerous command. The gate judges each write with what the session was sent before, so the
 * assembled delete is denied (and recorded) and the victim is still there; a harmless session still works.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import {
  startFakeOpenAI,
  taskTurn,
  text,
  toolCalls,
  type FakeOpenAI,
  type ToolCallSpec,
} from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

let base: string;
let server: FakeOpenAI;

/** Each task's calls; `SID` stands for the session id the background start answered. */
const calls = (victim: string): Record<string, ToolCallSpec[]> => ({
  split: [
    { name: "terminal", arguments: { command: "bash", background: true } },
    { name: "process", arguments: { action: "write", session_id: "SID", data: "rm -r" } },
    { name: "process", arguments: { action: "write", session_id: "SID", data: `f ${victim.slice(0, -3)}` } },
    { name: "process", arguments: { action: "submit", session_id: "SID", data: `${victim.slice(-3)}; echo gone-$?` } },
    { name: "process", arguments: { action: "close", session_id: "SID" } },
  ],
  calm: [
    { name: "terminal", arguments: { command: "cat", background: true } },
    { name: "process", arguments: { action: "write", session_id: "SID", data: "hel" } },
    { name: "process", arguments: { action: "submit", session_id: "SID", data: "lo" } },
    { name: "process", arguments: { action: "close", session_id: "SID" } },
    { name: "process", arguments: { action: "wait", session_id: "SID", timeout: 10 } },
  ],
});

beforeAll(async () => {
  base = tempDir("hb-stdin-gate-");
  const victim = join(base, "victim");
  const script = calls(victim);
  server = await startFakeOpenAI((req) => {
    const { id, turn } = taskTurn(req);
    const steps = script[id]!;
    if (turn >= steps.length) return text("done");
    const tools = req.body.messages.filter((m: any) => m.role === "tool").map((m: any) => String(m.content));
    const sid = tools.map((t: string) => /"session_id":\s*"([^"]+)"/.exec(t)?.[1]).find(Boolean) ?? "none";
    return toolCalls([JSON.parse(JSON.stringify(steps[turn]!).replaceAll('"SID"', JSON.stringify(sid)))]);
  });
});

afterAll(async () => {
  await server?.close();
});

describe("a background shell's stdin", () => {
  it("a delete spelled over several writes is judged whole and denied", { timeout: 120_000 }, async () => {
    const victim = join(base, "victim");
    mkdirSync(join(victim, "sub"), { recursive: true });
    writeFileSync(join(victim, "sub", "keep.txt"), "keep\n");
    const rows = ["split", "calm"].map((id) => ({ id, prompt: `task:${id}`, toolsets: ["terminal"] }));
    writeFileSync(join(base, "d.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const r = await run(join(base, "d.jsonl"), "host", "stdin");
    expect(r.stderr).not.toMatch(/internal error/);
    const lines = new Map(readJsonl(join(base, "runs", "stdin", "trajectories.jsonl")).map((l: any) => [l.task_id, l]));
    expect(existsSync(join(victim, "sub", "keep.txt")), JSON.stringify(lines.get("split")?.messages)).toBe(true);
    const split = lines.get("split");
    const denied = split.approvals.filter((a: any) => a.decision === "deny");
    expect(denied.length, JSON.stringify(split.approvals)).toBeGreaterThan(0);
    // `rm -r` + `f <victim but its last letters>` is already a recursive delete outside the task folder.
    expect(denied[0].command).toBe(`rm -rf ${victim.slice(0, -3)}`);
    expectCalmWorked(lines.get("calm"));
  });

  it("reaches a background process in the local sandbox too", { timeout: 120_000 }, async () => {
    const row = { id: "calm", prompt: "task:calm", toolsets: ["terminal"] };
    writeFileSync(join(base, "calm.jsonl"), `${JSON.stringify(row)}\n`);
    const r = await run(join(base, "calm.jsonl"), "local", "local");
    expect(r.stderr).not.toMatch(/internal error/);
    expectCalmWorked(readJsonl(join(base, "runs", "local", "trajectories.jsonl"))[0]);
  });
});

/** A session whose writes spell nothing dangerous is not refused, and its program got them. */
function expectCalmWorked(calm: any): void {
  expect(calm.approvals ?? []).toEqual([]);
  const tools = calm.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content as string);
  expect(
    tools.slice(1, 4).every((t: string) => t.includes('"status":"ok"')),
    JSON.stringify(tools),
  ).toBe(true);
  expect(tools.at(-1)).toContain("hello");
}

function run(dataset: string, env: string, name: string) {
  return runCli(
    [
      "run",
      dataset,
      "--model",
      "agent",
      "--base-url",
      server.baseURL,
      "--api-key",
      "k",
      "--approval",
      "deny",
      "--env",
      env,
      "--output-dir",
      join(base, "runs"),
      "--run-name",
      name,
      "--progress",
      "none",
      "--concurrency",
      "1",
    ],
    { timeoutMs: 100_000 },
  );
}
