/**
 * Run before each file of the docker project, whose files share their worker processes (isolate: false): a file's
 * `afterAll` ends with cleanupAllDockerEnvironments, which makes the process refuse new sandboxes (what a run's
 * exit wants). The next file in that process starts as it would in a process of its own.
 */
import { beforeAll } from "vitest";
import { liveContainers, shutdown } from "../../tools/environments/docker/docker_live.js";

beforeAll(() => {
  if (liveContainers.size > 0)
    throw new Error(`a file before this one left ${liveContainers.size} Docker container(s) of this process`);
  shutdown.refusing = false;
});
