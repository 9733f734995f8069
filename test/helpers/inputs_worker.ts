/** Worker thread for the worker-inputs test: waits for the run's inputs as src/run/worker.ts does, echoes them. */
import { parentPort, workerData } from "node:worker_threads";
import { receiveWorkerInputs } from "../../src/run/worker_inputs.js";

const inputs = await receiveWorkerInputs((workerData as { channel: string }).channel);
parentPort!.postMessage({ runDir: inputs.runDir, model: inputs.config.model, allowlist: inputs.allowlist });
