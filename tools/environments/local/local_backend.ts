/**
 * The local backend behind the common interface: one bubblewrap sandbox per task (local_sandbox.ts). A run
 * without a working bwrap stops before any task with one line and the install hint; nothing is left behind
 * (each sandbox dies with the harness), so there are no leftovers to list.
 */
import { UserError } from "../../../src/core/errors.js";
import type { EnvironmentBackend } from "../backend.js";
import { probeBwrapAsync } from "./bwrap.js";
import { sandboxNetwork, sandboxWorkdir } from "./local_sandbox_rules.js";

export const backend: EnvironmentBackend = {
  name: "local",
  sandboxed: true,
  sandboxNoun: "sandbox",
  availability: async () => {
    const probe = await probeBwrapAsync();
    return probe.ok
      ? { available: true, reason: "a bubblewrap sandbox per task on this machine" }
      : { available: false, reason: probe.reason };
  },
  preflightRun: async ({ options }) => {
    const probe = await probeBwrapAsync();
    if (!probe.ok) throw new UserError(`--env local: ${probe.reason}`);
    try {
      sandboxNetwork(typeof options.network === "string" ? options.network : undefined, undefined);
    } catch (err) {
      throw new UserError((err as Error).message);
    }
    const { limitsNotEnforced } = await import("./cgroups.js");
    const { diskQuotaUnavailable, parseSize } = await import("../disk_quota.js");
    const asked = typeof options.disk === "string";
    if (asked && parseSize(options.disk as string) === undefined)
      throw new UserError(`--disk ${String(options.disk)}: give a size such as 10g or 512m`);
    const { limits, why } = limitsNotEnforced({ asked, unavailable: asked ? diskQuotaUnavailable() : undefined });
    if (limits.length > 0) {
      const line = `--env local: limits not enforced here: ${limits.join(", ")} (${why})`;
      if (options.requireLimits === true) throw new UserError(`${line}; --require-limits stops the run`);
      process.stderr.write(`warning: ${line}\n`);
    }
  },
  preflightTask: async (spec, options) => {
    sandboxNetwork(typeof options.network === "string" ? options.network : undefined, spec.network);
    sandboxWorkdir(spec.cwd);
  },
  rowProblem: (row) => {
    try {
      sandboxWorkdir(row.cwd);
      return undefined;
    } catch (err) {
      return `'cwd' ${(err as Error).message.replace(/^cwd '[^']*' /, "")}`;
    }
  },
  // Loaded on first use: the main thread checks runs and rows without the sandbox's modules.
  create: async (spec, options) => (await import("./local_sandbox.js")).SandboxEnvironment.create(spec, options),
  listLeftovers: async () => [],
  removeLeftovers: async () => ({ removed: [], failed: [] }),
  afterRun: async () => 0,
};
