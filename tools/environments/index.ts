/**
 * The environment backends by name, each imported only when first used, and the few operations the rest of
 * the program needs across them (availability for `tools`, leftovers for `gc`). Adding a backend is one
 * `register` line here and a module exporting `backend: EnvironmentBackend`.
 */
import { createRegistry } from "../../src/core/registry.js";
import type {
  BackendAvailability,
  EnvironmentBackend,
  LeftoverFilter,
  LeftoverSandbox,
  RemovedLeftovers,
} from "./backend.js";
import { sandboxOwner, type SandboxGates } from "./sandbox_gates.js";
import { installTempSweeper } from "./temp_dirs.js";

export type {
  BackendAvailability,
  EnvironmentBackend,
  LeftoverFilter,
  LeftoverSandbox,
  RemovedLeftovers,
  RunPreflight,
} from "./backend.js";
export { SandboxGates, sandboxOwner, type SandboxGateBuffers, type SandboxGateLimits } from "./sandbox_gates.js";

export const environments = createRegistry<EnvironmentBackend>("environment");

/** Where each backend runs commands, in words (for the approver), known without loading the backend. */
const isolation = new Map<string, string>();

function registerBackend(name: string, runsWhere: string, load: () => Promise<EnvironmentBackend>): void {
  environments.register(name, load);
  isolation.set(name, runsWhere);
}

registerBackend(
  "local",
  "runs in a bubblewrap sandbox on the host machine: no network, host files read-only",
  async () => (await import("./local/local_backend.js")).backend,
);
registerBackend(
  "docker",
  "runs inside a disposable container",
  async () => (await import("./docker/docker_backend.js")).backend,
);
registerBackend(
  "singularity",
  "runs inside a disposable container",
  async () => (await import("./singularity/singularity_backend.js")).backend,
);
registerBackend(
  "host",
  "runs directly on the host machine, no sandbox",
  async () => (await import("./local/host_backend.js")).backend,
);

/** The backend names in registration order (local first: the default), for option help and validation. */
export function environmentNames(): [string, ...string[]] {
  return [...isolation.keys()] as [string, ...string[]];
}

/** "docker (runs inside a disposable container)"; an unknown name as is. */
export function describeEnvironment(name: string): string {
  const where = isolation.get(name);
  return where ? `${name} (${where})` : name;
}

/** The backend of this name; an unknown name is a UserError listing the known ones. */
export function environmentBackend(name: string): Promise<EnvironmentBackend> {
  installTempSweeper();
  return environments.load(name);
}

/** Whether each backend can run here now, and why not (for `hermes-batch tools`). */
export async function environmentAvailability(): Promise<({ name: string } & BackendAvailability)[]> {
  return Promise.all(
    environments.names().map(async (name) => {
      try {
        return { name, ...(await (await environments.load(name)).availability()) };
      } catch (err) {
        return { name, available: false, reason: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
}

export interface LeftoversByBackend extends RemovedLeftovers {
  backend: EnvironmentBackend;
}

/**
 * Removes (or with dryRun lists) the leftovers of every sandboxing backend that can run here; `only` names
 * backends to use and makes an unavailable one an error. Backends that cannot run here are reported as skipped.
 */
export async function removeLeftoversEverywhere(
  filter: LeftoverFilter & { dryRun?: boolean },
  only?: string[],
): Promise<{ results: LeftoversByBackend[]; unavailable: { name: string; reason: string }[] }> {
  const names = only ?? environments.names();
  const results: LeftoversByBackend[] = [];
  const unavailable: { name: string; reason: string }[] = [];
  for (const name of names) {
    const backend = await environments.load(name);
    if (!backend.sandboxed) continue;
    const a = await backend.availability();
    if (!a.available) {
      unavailable.push({ name, reason: a.reason ?? "unavailable" });
      continue;
    }
    results.push({ backend, ...(await backend.removeLeftovers(filter)) });
  }
  return { results, unavailable };
}

/** Labels of the leftovers, for messages. */
export function describeLeftover(s: LeftoverSandbox): string {
  return `${s.name || s.id.slice(0, 12)} (run ${s.run}, task ${s.task || "-"}, ${s.state})`;
}

/**
 * For the main thread when a worker thread is gone (crashed, or ended by the pool): removes the sandboxes it
 * started, then gives back the run-wide permits it held, which a dead thread can never release.
 */
export async function reclaimThread(
  backendName: string,
  runName: string,
  threadId: number,
  gates: SandboxGates,
): Promise<{ removed: number; permits: number }> {
  const backend = await environments.load(backendName);
  try {
    const { removed } = await backend.removeLeftovers({ run: runName, owner: sandboxOwner(threadId) });
    return { removed: removed.length, permits: gates.releaseThread(threadId).sandboxes };
  } catch (err) {
    // The permits go back even when removal failed: a leaked permit would stall the run for good.
    gates.releaseThread(threadId);
    throw err;
  }
}
