import { describe, expect, it } from "vitest";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDatasetSource, readDataset, scanDataset, type DatasetSource } from "../src/run/dataset.js";
import { JsonlAppender, readJsonl, repairTornTail } from "../src/store/jsonl_file.js";
import { loadRunState, recordKey, supersedeTasks } from "../src/store/checkpoint.js";
import { tempDir } from "./helpers/cli.js";

async function collect(file: string) {
  const out = [];
  for await (const x of readDataset(file)) out.push(x);
  return out;
}

describe("dataset reader", () => {
  it("validates each line and reports file:line with the reason", async () => {
    const dir = tempDir();
    const f = join(dir, "d.jsonl");
    writeFileSync(
      f,
      [
        `{"prompt":"a","metadata":{"k":1},"extra":"kept"}`,
        ``,
        `{"prompt":""}`,
        `[1,2]`,
        `{"prompt":"b","toolsets":"terminal"}`,
        `{"prompt":"c","id":7}`,
        `{"prompt":"d","id":"7"}`,
      ].join("\n"),
    );
    const items = await collect(f);
    const bad = items.filter((i) => !i.ok).map((i) => (i.ok ? null : `${i.bad.line}: ${i.bad.reason}`));
    expect(bad).toEqual([
      "3: 'prompt': must not be empty",
      "4: each line must be a JSON object with a 'prompt'",
      expect.stringMatching(/^5: 'toolsets': /),
      "7: duplicate id '7' (first seen on line 6)",
    ]);
    const good = items.filter((i) => i.ok).map((i) => (i.ok ? i.value : null))!;
    expect(good.map((g) => [g!.line, g!.index, g!.id])).toEqual([
      [1, 0, expect.stringMatching(/^[0-9a-f]{16}$/)],
      [6, 1, "7"],
    ]);
    expect(good[0]!.row.extra).toBe("kept");
  });

  it("gives repeated prompts distinct, stable ids", async () => {
    const dir = tempDir();
    const f = join(dir, "d.jsonl");
    writeFileSync(f, `{"prompt":"same"}\n{"prompt":"other"}\n{"prompt":"same"}\n`);
    const ids = (await collect(f)).map((i) => (i.ok ? i.value.id : ""));
    expect(ids[2]).toBe(`${ids[0]}-2`);
    expect(new Set(ids).size).toBe(3);
    const again = (await collect(f)).map((i) => (i.ok ? i.value.id : ""));
    expect(again).toEqual(ids);
  });

  it("scans a large file in one streaming pass", async () => {
    const dir = tempDir();
    const f = join(dir, "big.jsonl");
    const lines = Array.from({ length: 50_000 }, (_, i) => JSON.stringify({ id: `t${i}`, prompt: `task ${i}` }));
    lines[40_000] = `{"prompt": 3}`;
    writeFileSync(f, lines.join("\n"));
    const scan = await scanDataset(f);
    expect(scan.rows).toBe(49_999);
    expect(scan.badCount).toBe(1);
    expect(scan.bad[0]!.line).toBe(40_001);
  });

  it("reports a missing file as a bad row, not a crash", async () => {
    const items = await collect("/nonexistent/x.jsonl");
    expect(items).toHaveLength(1);
    expect(items[0]!.ok).toBe(false);
  });
});

describe("a dataset read twice in one run", () => {
  async function pass(source: DatasetSource) {
    const out = [];
    for await (const x of readDataset(source)) out.push(x);
    return out;
  }

  it("keeps a small dataset's first complete pass: the second gives the same lines without reading the file", async () => {
    const f = join(tempDir(), "d.jsonl");
    writeFileSync(f, `{"prompt":"a"}\nnot json\n{"prompt":"b","id":"x"}\n`);
    const source = await openDatasetSource(f);
    const first = await pass(source);
    rmSync(f);
    expect(await pass(source)).toEqual(first);
    expect(first.map((i) => (i.ok ? i.value.id : i.bad.line))).toEqual([expect.any(String), 2, "x"]);
  });

  it("reads again a pass that stopped early, and a dataset over the size kept", async () => {
    const dir = tempDir();
    const f = join(dir, "d.jsonl");
    writeFileSync(f, `{"prompt":"a"}\n{"prompt":"b"}\n`);
    const source = await openDatasetSource(f);
    for await (const _ of readDataset(source)) break;
    writeFileSync(f, `{"prompt":"c"}\n`);
    expect((await pass(source)).map((i) => i.ok && i.value.row.prompt)).toEqual(["c"]);

    const big = join(dir, "big.jsonl");
    const prompt = "p".repeat(1000);
    writeFileSync(big, Array.from({ length: 5000 }, (_, i) => JSON.stringify({ id: `t${i}`, prompt })).join("\n"));
    const bigSource = await openDatasetSource(big);
    expect((await pass(bigSource)).length).toBe(5000);
    writeFileSync(big, `{"prompt":"changed"}\n`);
    expect((await pass(bigSource)).map((i) => i.ok && i.value.row.prompt)).toEqual(["changed"]);
  });
});

describe("run files", () => {
  it("moves a torn tail aside and keeps whole lines", () => {
    const dir = tempDir();
    const f = join(dir, "t.jsonl");
    writeFileSync(f, `{"a":1}\n{"a":2}\n{"a":`);
    expect(repairTornTail(f)).toEqual({ repaired: true, bytes: 5 });
    expect(readFileSync(f, "utf8")).toBe(`{"a":1}\n{"a":2}\n`);
    expect(readFileSync(`${f}.torn`, "utf8")).toBe(`{"a":`);
    expect(repairTornTail(f).repaired).toBe(false);
  });

  it("rebuilds done and failed sets from the files; a later success clears a failure", async () => {
    const dir = tempDir();
    const t = new JsonlAppender(join(dir, "trajectories.jsonl"), 0);
    const fl = new JsonlAppender(join(dir, "failed.jsonl"), 0);
    t.append({ task_id: "a", outcome: "completed" });
    fl.append({ task_id: "b", outcome: "timeout", error: "slow" });
    fl.append({ task_id: "c", outcome: "model_error", error: "x" });
    t.append({ task_id: "c", outcome: "completed" });
    t.close();
    fl.close();
    const state = await loadRunState(dir);
    expect([...state.done].sort()).toEqual(["a", "c"]);
    expect([...state.failed.keys()]).toEqual(["b"]);
    expect(state.failed.get("b")!.outcome).toBe("timeout");
  });

  it("reads task ids and epochs from lines in the writer's order and in any other order alike", async () => {
    const dir = tempDir();
    const t = new JsonlAppender(join(dir, "trajectories.jsonl"), 0);
    // As the writer orders keys (read from the head of the line), with ids that need escapes.
    t.append({ prompt_index: 0, task_id: 'q"uote\\back', epoch: 1, metadata: { task_id: "not-this" } });
    t.append({ prompt_index: 1, task_id: "plain", metadata: { epoch: 9 } });
    // Another order (older or foreign files): parsed in full.
    t.append({ metadata: { task_id: "nested" }, task_id: "other-order", epoch: 2 });
    // A line that starts like ours but is damaged further on is not taken as done.
    t.appendLine('{"prompt_index":3,"task_id":"damaged","conversations":[{"from":');
    t.close();
    const state = await loadRunState(dir);
    // Keys escape a `\` in the id (recordKey), so that no two (id, epoch) share one.
    expect([...state.done].sort()).toEqual([recordKey('q"uote\\back', 1), "other-order#2", "plain"].sort());
    expect(recordKey('q"uote\\back', 1)).toBe('q"uote\\\\back#1');
    expect(state.badLines.map((b) => b.line)).toEqual([4]);
  });

  it("supersedes chosen tasks without losing their old lines", async () => {
    const dir = tempDir();
    const t = new JsonlAppender(join(dir, "trajectories.jsonl"), 0);
    for (const id of ["a", "b", "c"]) t.append({ task_id: id });
    t.appendLine("{not json, kept as written");
    t.close();
    expect(await supersedeTasks(dir, new Set(["b"]))).toBe(1);
    const kept = [];
    for await (const l of readJsonl<{ task_id: string }>(join(dir, "trajectories.jsonl")))
      if (l.value) kept.push(l.value.task_id);
    expect(kept).toEqual(["a", "c"]);
    expect(readFileSync(join(dir, "trajectories.jsonl"), "utf8")).toContain("{not json, kept as written\n");
    expect(readFileSync(join(dir, "superseded.jsonl"), "utf8")).toContain(`"b"`);
  });
});
