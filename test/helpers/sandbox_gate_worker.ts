/**
 * Worker thread for the sandbox gate test: opens the run's gates from workerData (as src/run/worker.ts does)
 * and runs `tasks` holders of one sandbox permit each, concurrently; reports the most it saw held at once.
 */
import { parentPort, workerData } from "node:worker_threads";
import { SandboxGates, type SandboxGateBuffers } from "../../tools/environments/sandbox_gates.js";

const { buffers, tasks, holdMs } = workerData as { buffers: SandboxGateBuffers; tasks: number; holdMs: number };
const gates = new SandboxGates(buffers);
let overLimit = 0;
await Promise.all(
  Array.from({ length: tasks }, async () => {
    const permit = await gates.acquireSandbox();
    if (gates.live > gates.maxSandboxes) overLimit++;
    await new Promise((r) => setTimeout(r, holdMs));
    permit.release();
  }),
);
parentPort!.postMessage({ done: tasks, overLimit });
