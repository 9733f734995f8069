// Worker-thread entry that loads a TypeScript module (workerData.entry) through tsx, for tests that
// need real threads running the project's source.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);
