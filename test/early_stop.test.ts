/** The early-stop rule (src/run/early_stop.ts), which a run and every shard of it apply to their results. */
import { describe, expect, it } from "vitest";
import { DeadEndpointWatch } from "../src/run/early_stop.js";

const ok = { kind: "trajectory", outcome: "completed" };
const err = (error: string) => ({ kind: "failed", outcome: "model_error", error });

function feed(n: number, results: { kind: string; outcome: string; error?: string }[]) {
  const w = new DeadEndpointWatch(n);
  for (let i = 0; i < results.length; i++) {
    const fired = w.observe(results[i]!);
    if (fired) return { at: i, ...fired };
  }
  return undefined;
}

describe("DeadEndpointWatch", () => {
  it("stops when the first N results are one model error", () => {
    expect(feed(3, [err("401"), err("401"), err("401"), ok])).toEqual({
      at: 2,
      error: "401",
      what: "the first 3 tasks",
    });
  });

  it("stops when the endpoint dies mid-run: N equal model errors in a row after answers that worked", () => {
    expect(feed(3, [ok, ok, err("ECONNREFUSED"), err("ECONNREFUSED"), err("ECONNREFUSED")])).toEqual({
      at: 4,
      error: "ECONNREFUSED",
      what: "3 tasks in a row",
    });
  });

  it("does not stop on failures that differ, are broken by a success, or are not model errors; 0 turns it off", () => {
    expect(feed(3, [err("a"), err("b"), err("a"), ok, err("a"), err("a"), ok])).toBeUndefined();
    expect(
      feed(2, [
        { kind: "failed", outcome: "environment_error", error: "x" },
        { kind: "failed", outcome: "environment_error", error: "x" },
      ]),
    ).toBeUndefined();
    expect(feed(0, [err("a"), err("a"), err("a")])).toBeUndefined();
    expect(feed(2, [err("a"), err("b"), err("b")])).toEqual({ at: 2, error: "b", what: "2 tasks in a row" });
  });
});
