/** The Docker backend behind the common interface: engine checks, containers per task, leftovers by label. */
import { UserError } from "../../../src/core/errors.js";
import type { EnvironmentBackend, LeftoverSandbox } from "../backend.js";
import { createDockerEnvironment, preflightDocker } from "./docker.js";
import {
  DockerImageNotFoundError,
  dockerAvailability,
  ensureDockerImage,
  listLabelledContainers,
  missingNetworks,
  removeContainersByLabel,
  type LabelledContainer,
} from "./docker_client.js";
import { gatesFor } from "../sandbox_gates.js";
import { sleep } from "../../../src/core/abort.js";

const asLeftover = (c: LabelledContainer): LeftoverSandbox => ({ backend: "docker", ...c });

export const backend: EnvironmentBackend = {
  name: "docker",
  sandboxed: true,
  isolatedCopies: true,
  sandboxNoun: "container",
  availability: () => dockerAvailability(2000),
  async preflightRun({ image, networks, options }) {
    const a = await dockerAvailability();
    if (!a.available)
      throw new UserError(
        `--env docker: the Docker engine does not answer (${a.reason ?? "unknown reason"}); start it (e.g. scripts/start-dockerd.sh)`,
      );
    const missing = await missingNetworks(networks ?? []);
    if (missing.length)
      throw new UserError(
        `network ${missing.join(", ")}: no such network at the Docker engine (create it with docker network create, or use none)`,
      );
    if (image !== undefined) {
      try {
        await ensureDockerImage(image, { pull: options.pull === true });
      } catch (err) {
        if (err instanceof DockerImageNotFoundError) throw new UserError(`--image: ${err.message}`);
        throw new UserError(`--image ${image}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // Memory, CPU and processes are the engine's own flags; the workdir's size is a file system of its own.
    const { diskQuotaUnavailable, parseSize } = await import("../disk_quota.js");
    if (typeof options.disk === "string" && parseSize(options.disk) === undefined)
      throw new UserError(`--disk ${options.disk}: give a size such as 10g or 512m`);
    const why = typeof options.disk !== "string" ? "--disk none" : diskQuotaUnavailable();
    if (why === undefined) return;
    const line = `--env docker: limits not enforced here: disk (${why})`;
    if (options.requireLimits === true) throw new UserError(`${line}; --require-limits stops the run`);
    process.stderr.write(`warning: ${line}\n`);
  },
  preflightTask: preflightDocker,
  create: createDockerEnvironment,
  async listLeftovers(filter) {
    return (await listLabelledContainers(filter)).map(asLeftover);
  },
  async removeLeftovers(filter) {
    const { removed, failed } = await removeContainersByLabel(filter);
    return {
      removed: removed.map(asLeftover),
      failed: failed.map((f) => ({ sandbox: asLeftover(f.container), error: f.error })),
    };
  },
  async afterRun(runName, options) {
    if (gatesFor(options).prewarm === 0) return 0;
    // A second pass catches a container whose creation was in flight at the engine when its thread died
    // (it would sit "Created", without the keep-alive that ends the others by itself).
    let count = (await removeContainersByLabel({ run: runName, role: "warm" })).removed.length;
    await sleep(1000);
    count += (await removeContainersByLabel({ run: runName, role: "warm" })).removed.length;
    return count;
  },
};
