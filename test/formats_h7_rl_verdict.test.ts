/**
 * rl.jsonl `train` verdicts when the engine's token data is bad (ids that disagree with the reported usage) on a
 * line whose cause would otherwise keep its tokens (a context-window 400 → `full`, a time-out → `masked`). Bad
 * token data is never trained on: such a line must say `excluded` (cause `invalid_tokens`), as every other line
 * with `problems` does, and so stay out of its group's statistics and out of `export --format rl`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { httpError, startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "./helpers/fake_openai.js";
import { tokenizingHandler } from "./helpers/token_server.js";
import { NO_SCHEDULER, runCliInProcess, tempDir } from "./helpers/cli.js";
import { readJsonl } from "./helpers/jsonl.js";
import { RlLineSchema } from "../src/core/rl_record.js";

const userText = (req: RecordedRequest): string =>
  req.body.messages.find((m: { role: string }) => m.role === "user")?.content ?? "";
const assistants = (req: RecordedRequest) =>
  req.body.messages.filter((m: { role: string }) => m.role === "assistant").length;

describe("rl.jsonl verdicts with bad token data", () => {
  let server: FakeOpenAI;
  beforeAll(async () => {
    // Usage one prompt token more than the ids: every turn's token data is flagged in `problems`.
    const { handler } = tokenizingHandler(
      (req) =>
        /task:/.test(userText(req))
          ? { toolCalls: [{ name: "terminal", arguments: { command: "echo hi" } }] }
          : { content: "OK" },
      { usagePromptSkew: 1 },
    );
    server = await startFakeOpenAI((req) =>
      /task:ctx/.test(userText(req)) && assistants(req) >= 1
        ? httpError(400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens")
        : handler(req),
    );
  });
  afterAll(async () => server.close());

  it("a context-window 400 whose turns have bad token data is excluded, not trained on", async () => {
    const dir = tempDir("hb-h7-verdict-");
    const dataset = join(dir, "tasks.jsonl");
    writeFileSync(
      dataset,
      `${JSON.stringify({ id: "ctx", prompt: "task:ctx Answer.", toolsets: ["terminal"], expected: { value: "42", match: "includes" } })}\n`,
    );
    const runDir = join(dir, "runs", "r");
    const r = await runCliInProcess(
      [
        "run",
        dataset,
        "--model",
        "m",
        "--base-url",
        server.baseURL,
        "--output-dir",
        join(dir, "runs"),
        "--run-name",
        "r",
        "--progress",
        "none",
        "--max-retries",
        "0",
        "--rl-capture",
      ],
      { env: NO_SCHEDULER },
    );
    expect(r.stderr).not.toMatch(/internal error/);
    const [line] = readJsonl(join(runDir, "rl.jsonl")).map((l) => RlLineSchema().parse(l));
    expect(line).toMatchObject({ outcome: "context_length", stop_reason: "context_length", branches: [] });
    expect(line!.problems.join("\n")).toMatch(/prompt ids, usage says/);
    expect(line).toMatchObject({ train: "excluded", train_cause: "invalid_tokens" });

    // Not offered to trainers either: `export --format rl` leaves excluded lines out.
    const e = await runCliInProcess(["export", runDir, "--format", "rl", "--out", join(dir, "rl.out")]);
    expect(e.stdout + e.stderr).toMatch(/excluded/);
  });
});
