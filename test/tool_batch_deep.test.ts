/**
 * A turn's calls share one execution when they are the same call (tool name and arguments, keys in any order). A call
 * whose arguments nest deeper than any tool takes (JSON.parse reads 100,000 levels; a key built by recursion does not)
 * still runs, once, beside the others: the turn never throws for it.
 */
import { describe, expect, it } from "vitest";
import { runToolBatch, type PlannedCall } from "../src/agent/tool_batch.js";

const deep = (levels: number): unknown => JSON.parse(`${"[".repeat(levels)}${"]".repeat(levels)}`);

describe("runToolBatch", () => {
  it("runs a call with 100,000-deep arguments beside the others, and still shares identical calls", async () => {
    const calls: PlannedCall[] = [
      { name: "todo", args: { todos: deep(100_000) } },
      { name: "terminal", args: { command: "echo a", timeout: 5 } },
      { name: "terminal", args: { timeout: 5, command: "echo a" } },
      { name: "todo", args: { todos: deep(100_000) } },
    ] as PlannedCall[];
    const ran: string[] = [];
    const results = await runToolBatch(
      calls,
      async (call) => {
        ran.push(call.name);
        return JSON.stringify({ ran: call.name, n: ran.length });
      },
      4,
    );
    expect(results).toHaveLength(4);
    // The two terminal calls are one execution; each deep call runs on its own (it cannot be compared).
    expect(ran.filter((n) => n === "terminal")).toHaveLength(1);
    expect(ran.filter((n) => n === "todo")).toHaveLength(2);
    expect(results[1]).toBe(results[2]);
  });
});
