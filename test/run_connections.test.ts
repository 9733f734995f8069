/**
 * `--max-connections` holds for the whole run, across worker threads: the CLI against a local
 * OpenAI-compatible server that records how many requests it holds at once. And the scheduler's retries
 * and limit changes reach events.log, statistics.json and the progress line.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCliInProcess, tempDir } from "./helpers/cli.js";
import { httpError, startFakeOpenAI, text, type FakeOpenAI, type Reply } from "./helpers/fake_openai.js";

const servers: FakeOpenAI[] = [];
afterEach(async () => {
  while (servers.length) await servers.pop()!.close();
});

/**
 * A server that records the most requests it held at once. Requests are held in groups: a group is let go
 * once `group` requests are in (or all that are still to come), then answered a moment later, so the peak
 * does not depend on how fast a loaded machine starts its worker threads, and a limit that does not hold
 * shows as a peak above it.
 */
async function countingServer(opts: { group: number; expected: number; reply: (index: number) => Reply }) {
  const seen = { live: 0, peak: 0, answered: 0 };
  let waiting: (() => void)[] = [];
  const server = await startFakeOpenAI(async (req) => {
    seen.live++;
    seen.peak = Math.max(seen.peak, seen.live);
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (waiting.length >= Math.min(opts.group, opts.expected - seen.answered)) {
        const go = waiting;
        waiting = [];
        setTimeout(() => go.forEach((r) => r()), 100);
      }
    });
    seen.live--;
    seen.answered++;
    return opts.reply(req.index);
  });
  servers.push(server);
  return { server, seen };
}

async function run(server: FakeOpenAI, tasks: number, extra: string[]) {
  const dir = tempDir();
  const dataset = join(dir, "data.jsonl");
  writeFileSync(
    dataset,
    Array.from({ length: tasks }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `question ${i}` })).join("\n") + "\n",
  );
  const result = await runCliInProcess([
    "run",
    dataset,
    "--model",
    "test-model",
    "--base-url",
    server.baseURL,
    "--output-dir",
    join(dir, "runs"),
    "--run-name",
    "r",
    "--toolsets",
    "todo",
    "--approval",
    "deny",
    "--progress",
    "log",
    ...extra,
  ]);
  return { result, runDir: join(dir, "runs", "r") };
}

describe("run-wide model connections", () => {
  it("4 workers, --max-connections 3: the server never holds more than 3 requests, and does hold 3", async () => {
    const { server, seen } = await countingServer({ group: 3, expected: 16, reply: () => text("an answer") });
    const { result } = await run(server, 16, ["--workers", "4", "--concurrency", "16", "--max-connections", "3"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(server.requests).toHaveLength(16);
    expect(seen.peak).toBe(3);
  });

  it("a 429 is retried after its Retry-After and halves the run-wide limit: events.log, statistics.json and the progress line say so", async () => {
    // The first two requests are held together and both answered 429, within one decrease window.
    const { server } = await countingServer({
      group: 2,
      expected: 10,
      reply: (i) => (i < 2 ? httpError(429, "slow down", { "retry-after-ms": "20" }) : text("an answer")),
    });
    const { result, runDir } = await run(server, 8, ["--workers", "2", "--concurrency", "8", "--max-connections", "4"]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(server.requests).toHaveLength(10);
    const events = readFileSync(join(runDir, "events.log"), "utf8");
    const retries = events.split("\n").filter((l) => l.includes("model retry"));
    expect(retries).toHaveLength(2);
    for (const line of retries) {
      expect(line).toMatch(
        /task t\d+: model retry 1\/6 \(agent, http:\/\/127\.0\.0\.1:\d+\/v1#test-model, status 429\) in 20 ms: 429 rate limited: slow down$/,
      );
    }
    expect(events).toMatch(
      /model connection limit 4 → 2 \(http:\/\/127\.0\.0\.1:\d+\/v1#test-model, 429 rate limited\)/,
    );
    const stats = JSON.parse(readFileSync(join(runDir, "statistics.json"), "utf8"));
    expect(stats.model_calls).toMatchObject({
      calls: 10,
      retries: 2,
      rate_limited: 2,
      failed_calls: 0,
      limit_decreases: 1,
    });
    const endpoint = Object.values(stats.model_calls.endpoints)[0] as Record<string, number>;
    expect(endpoint).toMatchObject({ max: 4, lowest_limit: 2, in_flight: 0 });
    expect(result.stderr).toMatch(/progress: 8\/8 tasks .* \| model retries 2, 429s 2/);
  });
});
