/**
 * `--env host`: commands run directly on this machine, in the task's folder, with no sandbox (local.ts). Asked
 * for by name only, and announced with a warning at the start of the run.
 */
import type { EnvironmentBackend } from "../backend.js";
import { createLocalEnvironment } from "./local.js";

export const HOST_WARNING =
  "warning: --env host runs every command directly on this machine as your user, with no sandbox: a task can read and change anything you can; use --env local (bubblewrap) or --env docker to isolate tasks\n";

export const backend: EnvironmentBackend = {
  name: "host",
  sandboxed: false,
  sandboxNoun: "process",
  availability: async () => ({ available: true, reason: "not a sandbox: runs directly on this machine" }),
  preflightRun: async () => {
    process.stderr.write(HOST_WARNING);
  },
  preflightTask: async () => {},
  create: createLocalEnvironment,
  listLeftovers: async () => [],
  removeLeftovers: async () => ({ removed: [], failed: [] }),
  afterRun: async () => 0,
};
