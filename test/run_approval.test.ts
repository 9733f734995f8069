/**
 * Smart approval inside a real batch run: the agent and the auxiliary approver are both served by the
 * local test server; a denied command never runs, an approved one does, an outage denies, all recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  completion,
  httpError,
  startFakeOpenAI,
  text,
  toolCalls,
  type FakeOpenAI,
  type RecordedRequest,
  type Reply,
} from "./helpers/fake_openai.js";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";

describe("smart approval in a batch run", () => {
  let server: FakeOpenAI;
  let victims: string;
  const approverRequests: RecordedRequest[] = [];

  const approver = (req: RecordedRequest): Reply => {
    approverRequests.push(req);
    const data = JSON.stringify(req.body.messages);
    if (data.includes("victim-outage")) return httpError(503, "approver down");
    const decision = data.includes("victim-deny") ? "deny" : "approve";
    return text(JSON.stringify({ decision, reason: `test approver says ${decision}` }));
  };

  const agent = (req: RecordedRequest): Reply => {
    const prompt: string = req.body.messages.find((m: any) => m.role === "user").content;
    const turn = req.body.messages.filter((m: any) => m.role === "assistant").length;
    const dir = /(victim-\w+)/.exec(prompt)![1]!;
    if (turn === 0) return toolCalls([{ name: "terminal", arguments: { command: `rm -rf ${join(victims, dir)}` } }]);
    const result = req.body.messages.filter((m: any) => m.role === "tool").at(-1).content;
    return completion({ content: `tool said: ${result.slice(0, 200)}` });
  };

  beforeAll(async () => {
    server = await startFakeOpenAI((req) => (req.body?.response_format ? approver(req) : agent(req)));
  });
  afterAll(async () => {
    await server.close();
  });

  it("denied commands do not run, approved ones do, an approver outage denies; every decision is recorded", async () => {
    const dir = tempDir();
    victims = join(dir, "victims");
    for (const v of ["victim-deny", "victim-approve", "victim-outage"]) {
      mkdirSync(join(victims, v), { recursive: true });
      writeFileSync(join(victims, v, "precious.txt"), "keep me");
    }
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      ["victim-deny", "victim-approve", "victim-outage"]
        .map((v) => JSON.stringify({ id: v, prompt: `Clean up ${v} please` }))
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
      // The outage is retried until this limit, then denied (the default 30 s would be spent waiting here).
      "--approval-timeout",
      "5",
      "--toolsets",
      "terminal",
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "a",
      // On the host, so an approved delete of a host folder does happen (the local sandbox could not write it).
      "--env",
      "host",
      "--progress",
      "none",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);

    expect(existsSync(join(victims, "victim-deny", "precious.txt"))).toBe(true);
    expect(existsSync(join(victims, "victim-outage", "precious.txt"))).toBe(true);
    expect(existsSync(join(victims, "victim-approve"))).toBe(false);

    const entries = Object.fromEntries(
      readJsonl(join(dir, "runs", "a", "trajectories.jsonl")).map((e) => [e.task_id, e]),
    );
    const denied = entries["victim-deny"];
    expect(denied.approvals).toHaveLength(1);
    expect(denied.approvals[0]).toMatchObject({ decision: "deny", by: "smart", reason: "test approver says deny" });
    expect(denied.approvals[0].command).toContain("rm -rf");
    expect(denied.messages.find((m: any) => m.role === "tool").content).toContain("BLOCKED");
    expect(entries["victim-approve"].approvals[0]).toMatchObject({ decision: "approve", by: "smart" });
    expect(entries["victim-outage"].approvals[0].decision).toBe("deny");
    expect(entries["victim-outage"].approvals[0].reason).toMatch(/approver error/);
    expect(entries["victim-deny"].approval_usage.total_tokens).toBeGreaterThan(0);

    // The approver got the untrusted command as data, with a JSON-schema response format.
    const first = approverRequests[0]!;
    expect(first.body.model).toBe("approver-model");
    expect(first.body.response_format.type).toBe("json_schema");

    const stats = JSON.parse(readFileSync(join(dir, "runs", "a", "statistics.json"), "utf8"));
    expect(stats.approvals).toMatchObject({ total: 3, approved: 1, denied: 2, errors: 1 });
  });

  it("the scripted demo has no approver: under the default smart policy a dangerous command is denied (fail-closed)", async () => {
    const dir = tempDir();
    const victim = join(dir, "victim");
    mkdirSync(victim);
    writeFileSync(join(victim, "precious.txt"), "keep me");
    const dataset = join(dir, "d.jsonl");
    writeFileSync(dataset, JSON.stringify({ id: "x", prompt: `Please run \`rm -rf ${victim}\`` }) + "\n");
    const r = await runCliInProcess([
      "run",
      dataset,
      "--model",
      "scripted",
      "--toolsets",
      "terminal",
      "--output-dir",
      join(dir, "runs"),
      "--progress",
      "none",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(existsSync(join(victim, "precious.txt"))).toBe(true);
    const [e] = readJsonl(join(dir, "runs", "d", "trajectories.jsonl"));
    expect(e.approvals).toHaveLength(1);
    expect(e.approvals[0]).toMatchObject({ decision: "deny", by: "smart" });
    expect(e.approvals[0].reason).toMatch(/approver error/);
  });
});
