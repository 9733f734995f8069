/**
 * Worker thread for the sandbox gate test: opens the run's gates from workerData (as src/run/worker.ts does)
 * and runs `tasks` holders of one sandbox permit each, concurrently; reports the most it saw held at once.
 */
import { parentPort, workerData } from "node:worker_threads";
import { SandboxGates, type SandboxGateBuffers } from "../../tools/environments/sandbox_gates.js";

const { buffers, tasks, holdMs, dieHolding } = workerData as {
  buffers: SandboxGateBuffers;
  tasks: number;
  holdMs: number;
  dieHolding?: number;
};
const gates = new SandboxGates(buffers);
if (dieHolding) {
  // A thread that dies under its tasks: permits taken (one warm), never released.
  for (let i = 0; i < dieHolding; i++) await gates.acquireSandbox();
  gates.tryAcquireWarm();
  parentPort!.postMessage({ held: gates.live });
  process.exit(3);
}
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
