/** The Singularity/Apptainer backend behind the common interface: runtime checks, instances, leftovers by name. */
import { constants as fsConstants } from "node:fs";
import { access } from "node:fs/promises";
import { resolve } from "node:path";
import { UserError } from "../../../src/core/errors.js";
import type { EnvironmentBackend } from "../backend.js";
import {
  createSingularityEnvironment,
  listSingularityLeftovers,
  preflightSingularity,
  removeSingularityLeftovers,
  singularityAvailability,
  singularityCgroupLimits,
} from "./singularity.js";

export const backend: EnvironmentBackend = {
  name: "singularity",
  sandboxed: true,
  sandboxNoun: "instance",
  async availability() {
    const a = await singularityAvailability();
    return { available: a.available, reason: a.reason };
  },
  async preflightRun({ image, options }) {
    const a = await singularityAvailability();
    if (!a.available)
      throw new UserError(`--env singularity: ${a.reason ?? "apptainer/singularity not found on PATH"}`);
    const { diskQuotaUnavailable, parseSize } = await import("../disk_quota.js");
    if (typeof options.disk === "string" && parseSize(options.disk) === undefined)
      throw new UserError(`--disk ${options.disk}: give a size such as 10g or 512m`);
    const missing: string[] = [];
    const why: string[] = [];
    if (!singularityCgroupLimits({ singularityCgroupLimits: options.singularityCgroupLimits === true })) {
      missing.push("memory", "cpu", "pids");
      why.push("the runtime's cgroup limits need a root harness or delegated cgroups");
    }
    const diskWhy = typeof options.disk !== "string" ? "--disk none" : diskQuotaUnavailable();
    if (diskWhy !== undefined) {
      missing.push("disk");
      why.push(diskWhy);
    }
    if (missing.length > 0) {
      const line = `--env singularity: limits not enforced here: ${missing.join(", ")} (${why.join("; ")})`;
      if (options.requireLimits === true) throw new UserError(`${line}; --require-limits stops the run`);
      process.stderr.write(`warning: ${line}\n`);
    }
    // A docker:// image is built into the SIF cache by the first task that needs it; a .sif must exist now.
    if (image?.endsWith(".sif")) {
      await access(resolve(image), fsConstants.R_OK).catch(() => {
        throw new UserError(`--image: singularity image ${resolve(image)} does not exist or is not readable`);
      });
    }
  },
  preflightTask: preflightSingularity,
  create: createSingularityEnvironment,
  listLeftovers: listSingularityLeftovers,
  removeLeftovers: removeSingularityLeftovers,
  // Every instance belongs to a task, whose own clean-up (or the crash clean-up) stops it.
  afterRun: async () => 0,
};
