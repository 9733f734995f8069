/**
 * The same run started twice on a fresh folder (a Slurm array task requeued while the first still starts, a
 * pod created twice): the second reads the folder before the first wrote anything, then waits on its preflight
 * while the first runs every task. It must not run them all again from its stale reading.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, tempDir } from "./helpers/cli.js";
import { startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";
import { waitUntil } from "./helpers/wait.js";

const TASKS = 4;
let fast: FakeOpenAI;
let slow: Server;
let slowURL: string;
let modelsAsked = false;
let releaseModels: () => void = () => undefined;
let slowChats = 0;

beforeAll(async () => {
  fast = await startFakeOpenAI(() => text("done"));
  const held = new Promise<void>((resolve) => {
    releaseModels = resolve;
  });
  // Answers the preflight's model list only when the test says so; chat calls at once.
  slow = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      if (req.method === "GET" && /\/models/.test(req.url ?? "")) {
        modelsAsked = true;
        await held;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [] }));
        return;
      }
      slowChats++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          created: 0,
          model: "m",
          choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "again" } }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((r) => slow.listen(0, "127.0.0.1", r));
  slowURL = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  releaseModels();
  await fast.close();
  await new Promise((r) => slow.close(r));
});

describe("a run started twice on a fresh folder", () => {
  it("the later start refuses once it holds the folder and finds the other's results: no task runs twice", async () => {
    const dir = tempDir();
    const dataset = join(dir, "d.jsonl");
    writeFileSync(
      dataset,
      Array.from({ length: TASKS }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `p${i}` })).join("\n"),
    );
    const common = ["run", dataset, "--model", "m", "--api-key", "k", "--toolsets", "todo", "--progress", "none"];
    const out = ["--output-dir", join(dir, "runs"), "--run-name", "twice", "--resume"];
    const second = runCli([...common, "--base-url", slowURL, ...out]);
    expect(await waitUntil(() => modelsAsked, 60_000)).toBe(true);
    const first = await runCli([...common, "--base-url", fast.baseURL, ...out]);
    expect(first.exitCode, first.stderr).toBe(0);
    releaseModels();
    const late = await second;
    expect(late.exitCode, late.stderr).toBe(2);
    expect(late.stderr).toMatch(/got results from another invocation while this one was starting.*run it again/);
    expect(slowChats).toBe(0);
    const lines = readJsonl(join(dir, "runs", "twice", "trajectories.jsonl"));
    expect(lines.map((l) => l.task_id).sort()).toEqual(["t0", "t1", "t2", "t3"]);
  });
});
