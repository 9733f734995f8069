/** Cost of a file read as the task user (docker exec of cat) against the engine's archive API (as root); one run. */
import { createDockerEnvironment } from "../../tools/environments/docker/docker.js";
import { readViaArchive } from "../../tools/environments/docker/docker_archive.js";
const env: any = await createDockerEnvironment({ runName: "fbench", taskId: "t", hostTaskDir: "/tmp" }, {});
await env.exec("echo hi > f.txt");
const N = 30;
let t = performance.now();
for (let i = 0; i < N; i++) await env.readFile("f.txt");
const viaExec = (performance.now() - t) / N;
t = performance.now();
for (let i = 0; i < N; i++) await readViaArchive(env.container, env.workdir + "/f.txt");
const viaArchive = (performance.now() - t) / N;
console.log(
  `readFile as user (exec): ${viaExec.toFixed(1)} ms; archive API: ${viaArchive.toFixed(1)} ms; ratio ${(viaExec / viaArchive).toFixed(2)}`,
);
await env.cleanup();
