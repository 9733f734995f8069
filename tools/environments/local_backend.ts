/** The local backend behind the common interface: always available, nothing to preflight, no sandboxes to leave. */
import type { EnvironmentBackend } from "./backend.js";
import { createLocalEnvironment } from "./local.js";

export const backend: EnvironmentBackend = {
  name: "local",
  sandboxed: false,
  sandboxNoun: "process",
  availability: async () => ({ available: true, reason: "not a sandbox: runs on this machine" }),
  preflightRun: async () => {},
  preflightTask: async () => {},
  create: createLocalEnvironment,
  listLeftovers: async () => [],
  removeLeftovers: async () => ({ removed: [], failed: [] }),
  afterRun: async () => 0,
};
