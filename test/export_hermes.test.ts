/**
 * The files the original's tools read: a real run through the built CLI, then `export --format hermes`,
 * loaded together with a line in the original's published shape (test/fixtures/hermes). One table means
 * one key set: of every entry, of every metadata object, of every tool_stats / tool_error_counts.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runCliInProcess, tempDir } from "./helpers/cli.js";
import { completion, startFakeOpenAI, text, type FakeOpenAI } from "./helpers/fake_openai.js";
import { readJsonl } from "./helpers/jsonl.js";

const FIXTURE = join(ROOT, "test", "fixtures", "hermes", "original_batch_entry.jsonl");

const keysOf = (o: Record<string, unknown>) => Object.keys(o).sort();

/** Every key path of a JSON value (`a.b`, `a[].c`): one table needs the same set in every line. */
function keyPaths(value: unknown, at = "", into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keyPaths(v, `${at}[]`, into);
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const path = at ? `${at}.${k}` : k;
      into.add(path);
      keyPaths(v, path, into);
    }
  }
  return into;
}

let server: FakeOpenAI;
let dir = "";
let runDir = "";
let runResult: Awaited<ReturnType<typeof runCli>>;

beforeAll(async () => {
  // Each task: one call of a tool it was offered (terminal, else search_files), then an answer.
  server = await startFakeOpenAI((req) => {
    const toolTurns = req.body.messages.filter((m: { role: string }) => m.role === "tool").length;
    const offered: string[] = (req.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
    const call = offered.includes("terminal")
      ? { name: "terminal", arguments: { command: "echo hermes" } }
      : offered.includes("search_files")
        ? { name: "search_files", arguments: { pattern: "hermes" } }
        : undefined;
    return toolTurns === 0 && call
      ? completion({ content: null, reasoning: "I will look.", toolCalls: [call] })
      : text("done");
  });
  dir = tempDir("hb-export-hermes-");
  const dataset = join(dir, "rows.jsonl");
  const rows = Array.from({ length: 5 }, (_, i) => JSON.stringify({ id: `r${i}`, prompt: `task ${i}` }));
  writeFileSync(dataset, rows.join("\n") + "\n");
  runResult = await runCliInProcess([
    "run",
    dataset,
    "--model",
    "test-model",
    "--base-url",
    server.baseURL,
    "--api-key",
    "k",
    "--output-dir",
    join(dir, "runs"),
    "--run-name",
    "h",
    "--distribution",
    "development",
    "--seed",
    "3",
    "--batch-size",
    "2",
    "--approval",
    "deny",
    "--progress",
    "log",
  ]);
  runDir = join(dir, "runs", "h");
}, 180_000);

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("export --format hermes and the original's files", () => {
  it("loads with a line of the original's as one table: the same keys in every entry, metadata and tool stats", async () => {
    expect(runResult.exitCode, runResult.stderr).toBe(0);
    const out = join(dir, "hermes.jsonl");
    const r = await runCliInProcess(["export", runDir, "--format", "hermes", "--out", out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const ours = readJsonl(out, { mustExist: true });
    expect(ours).toHaveLength(5);
    const [original] = readJsonl(FIXTURE, { mustExist: true });
    const table = [original, ...ours];

    const entryKeys = new Set(table.map((e) => JSON.stringify(keysOf(e))));
    expect([...entryKeys]).toEqual([JSON.stringify(keysOf(original))]);
    for (const e of ours) expect(Object.keys(e)).toEqual(Object.keys(original)); // the original's order too
    expect(new Set(table.map((e) => JSON.stringify(keysOf(e.metadata)))).size).toBe(1);
    expect(keysOf(original.metadata)).toEqual(["batch_num", "model", "timestamp"]);
    // The original's line carries every tool its registry holds (68 at cb51baec); ours must name each one.
    expect(Object.keys(original.tool_stats)).toHaveLength(68);
    expect(keysOf(original.tool_error_counts)).toEqual(keysOf(original.tool_stats));
    for (const e of ours) {
      expect(keysOf(e.tool_stats)).toEqual(keysOf(original.tool_stats));
      expect(keysOf(e.tool_error_counts)).toEqual(keysOf(original.tool_error_counts));
      expect([...keyPaths(e)].sort()).toEqual([...keyPaths(original)].sort()); // every nested level at once
    }
    for (const e of table) {
      for (const s of Object.values(e.tool_stats))
        expect(keysOf(s as Record<string, unknown>)).toEqual(["count", "failure", "success"]);
      // The same value types, column by column (a type change would break the table just the same).
      expect(typeof e.prompt_index).toBe("number");
      expect(typeof e.metadata.batch_num).toBe("number");
      expect(typeof e.metadata.timestamp).toBe("string");
      expect(typeof e.metadata.model).toBe("string");
      expect(Array.isArray(e.toolsets_used)).toBe(true);
    }

    for (const e of ours) {
      expect(e.metadata.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/); // naive local, microseconds
      expect(e.metadata.model).toBe("test-model");
      expect(e.metadata.batch_num).toBe(Math.floor(e.prompt_index / 2));
      const called = Object.entries(e.tool_stats).filter(([, st]) => (st as { count: number }).count > 0);
      const offeredAny = e.toolsets_used.includes("terminal") || e.toolsets_used.includes("file");
      expect(called).toEqual(
        offeredAny
          ? [[e.toolsets_used.includes("terminal") ? "terminal" : "search_files", { count: 1, success: 1, failure: 0 }]]
          : [],
      );
      expect(e.conversations[0].value).toContain(
        "If available tools are not relevant in assisting with user query, just respond",
      );
    }
  });

  it("records the drawn toolsets in upstream's order, unprovided ones included, and what was offered apart", () => {
    const entries = [
      ...readJsonl(join(runDir, "trajectories.jsonl"), { mustExist: true }),
      ...readJsonl(join(runDir, "failed.jsonl"), { mustExist: true }),
    ];
    expect(entries).toHaveLength(5);
    const order = ["terminal", "file", "moa", "web", "vision"]; // upstream's development distribution
    let sawUnprovided = false;
    for (const e of entries) {
      expect(e.toolsets_used).toEqual(order.filter((t) => e.toolsets_used.includes(t)));
      expect(e.toolsets_offered).toEqual(e.toolsets_used.filter((t: string) => t === "terminal" || t === "file"));
      if (e.toolsets_used.includes("moa") || e.toolsets_used.includes("vision")) sawUnprovided = true;
      const offered = e.tools.map((t: { function: { name: string } }) => t.function.name);
      expect(offered).not.toContain("mixture_of_agents");
    }
    expect(sawUnprovided).toBe(true); // moa is drawn 60 % of the time: 5 tasks all without it is 1 %
  });

  it("writes the original's checkpoint and statistics keys", () => {
    const cp = JSON.parse(readFileSync(join(runDir, "checkpoint.json"), "utf8"));
    expect(cp.run_name).toBe("h");
    expect(cp.completed_prompts).toEqual([0, 1, 2, 3, 4]);
    expect(cp.batch_stats).toEqual({
      "0": { processed: 2, skipped: 0, discarded_no_reasoning: 0 },
      "1": { processed: 2, skipped: 0, discarded_no_reasoning: 0 },
      "2": { processed: 1, skipped: 0, discarded_no_reasoning: 0 },
    });
    expect(cp.last_updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/);

    const statsText = readFileSync(join(runDir, "statistics.json"), "utf8");
    const stats = JSON.parse(statsText);
    for (const key of [
      "run_name",
      "distribution",
      "total_prompts",
      "total_batches",
      "batch_size",
      "model",
      "completed_at",
      "duration_seconds",
      "tool_statistics",
      "reasoning_statistics",
    ]) {
      expect(stats, key).toHaveProperty(key);
    }
    expect(stats.total_batches).toBe(3);
    expect(stats.batch_size).toBe(2);
    // Rates as Python writes them: 100.0 for a tool that was called and always succeeded.
    expect(statsText).toMatch(
      /"success": [1-5],\n\s+"failure": 0,\n\s+"success_rate": 100\.0,\n\s+"failure_rate": 0\.0\n/,
    );
    // Only the tools used, as the original lists them; completed_at in its format, ours beside it.
    for (const s of Object.values(stats.tool_statistics) as { count: number }[]) expect(s.count).toBeGreaterThan(0);
    expect(stats.completed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/);
    expect(stats.completed_at_utc).toMatch(/Z$/);
  });
});
