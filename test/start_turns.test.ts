/** src/run/start_turns.ts: tasks that arrive together start a few per event-loop turn, in arrival order. */
import { describe, expect, it } from "vitest";
import { StartTurns } from "../src/run/start_turns.js";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("StartTurns", () => {
  it("starts waiting callers in arrival order, at most perTurn in one event-loop turn", async () => {
    const turns = new StartTurns(2);
    const started: number[] = [];
    for (let i = 0; i < 5; i++) void turns.next().then(() => started.push(i));
    expect(started).toEqual([]);
    const seen: number[][] = [];
    for (let t = 0; t < 4; t++) {
      await turn();
      seen.push([...started]);
    }
    expect(seen).toEqual([
      [0, 1],
      [0, 1, 2, 3],
      [0, 1, 2, 3, 4],
      [0, 1, 2, 3, 4],
    ]);
  });

  it("a caller arriving after the queue emptied starts on the next turn", async () => {
    const turns = new StartTurns(2);
    await turns.next();
    let started = false;
    void turns.next().then(() => (started = true));
    await turn();
    expect(started).toBe(true);
  });
});
