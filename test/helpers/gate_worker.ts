/** Worker thread for the shared gate test: runs `tasks` holders of one permit each, concurrently. */
import { parentPort, workerData } from "node:worker_threads";
import { SharedSemaphore } from "../../src/core/shared_gate.js";

const { buffer, tasks, holdMs } = workerData as { buffer: SharedArrayBuffer; tasks: number; holdMs: number };
const gate = new SharedSemaphore(buffer);
let overLimit = 0;
await Promise.all(
  Array.from({ length: tasks }, () =>
    gate.run(async () => {
      if (gate.inUse > gate.limit) overLimit++;
      await new Promise((r) => setTimeout(r, holdMs));
    }),
  ),
);
parentPort!.postMessage({ done: tasks, overLimit });
