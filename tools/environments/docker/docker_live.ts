/** Process-wide: every Docker container this process created and has not removed yet, and the shutdown switch. */
import type { DockerEnvironment } from "./docker_environment.js";

/** A container id → its environment (undefined while it is being created). */
export const liveContainers = new Map<string, DockerEnvironment | undefined>();
/** Set by cleanupAllDockerEnvironments: the process then refuses new sandboxes. */
export const shutdown = { refusing: false };
