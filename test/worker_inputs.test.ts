import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import type { RunConfig } from "../src/config/run_config.js";
import { offerWorkerInputs, workerInputsChannelName, type WorkerInputs } from "../src/run/worker_inputs.js";

type Echo = { runDir: string; model: string; allowlist: string[] };

/** A real thread that waits for the inputs on `channel`; resolves with what it received. */
function waitingThread(channel: string): { ready: Promise<void>; echo: Promise<Echo> } {
  const w = new Worker(new URL("./helpers/ts_worker.mjs", import.meta.url), {
    workerData: { entry: new URL("./helpers/inputs_worker.ts", import.meta.url).href, channel },
  });
  const ready = new Promise<void>((resolve) => w.once("online", () => resolve()));
  const echo = new Promise<Echo>((resolve, reject) => {
    w.once("message", resolve);
    w.once("error", reject);
    w.once("exit", (code) => reject(new Error(`worker thread exited (${code}) without the inputs`)));
  });
  return { ready, echo };
}

const inputs = (runDir: string): WorkerInputs => ({
  config: { model: "m-1" } as RunConfig,
  runDir,
  allowlist: ["ls"],
});

describe("worker inputs handed over after the pool started", () => {
  it("reaches threads that asked before the inputs were known and threads started after", async () => {
    const name = workerInputsChannelName();
    const offer = offerWorkerInputs(name);
    try {
      const early = [waitingThread(name), waitingThread(name)];
      await Promise.all(early.map((t) => t.ready));
      // Give the early threads time to load and ask: their request must not be lost while nothing is known yet.
      await new Promise((r) => setTimeout(r, 300));
      offer.provide(inputs("/runs/a"));
      const late = waitingThread(name);
      const got = await Promise.all([...early, late].map((t) => t.echo));
      expect(got).toEqual(Array.from({ length: 3 }, () => ({ runDir: "/runs/a", model: "m-1", allowlist: ["ls"] })));
    } finally {
      offer.close();
    }
  });

  it("keeps two pools apart and refuses a second hand-over", async () => {
    const [a, b] = [workerInputsChannelName(), workerInputsChannelName()];
    expect(a).not.toBe(b);
    const offers = [offerWorkerInputs(a), offerWorkerInputs(b)];
    try {
      const threads = [waitingThread(a), waitingThread(b)];
      offers[1].provide(inputs("/runs/b"));
      offers[0].provide(inputs("/runs/a"));
      expect(() => offers[0].provide(inputs("/runs/c"))).toThrow(/twice/);
      expect((await Promise.all(threads.map((t) => t.echo))).map((e) => e.runDir)).toEqual(["/runs/a", "/runs/b"]);
    } finally {
      for (const o of offers) o.close();
    }
  });
});
