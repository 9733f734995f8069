/**
 * Named environment backends, imported lazily so an unused backend costs nothing,
 * and the per-task holder that creates an environment on first use.
 */
import type { Environment, EnvironmentFactory, EnvironmentOptions, EnvironmentSpec } from "./base.js";

/** A backend module: its factory, and optionally a cheap check run before a task spends tokens. */
export interface EnvironmentBackend {
  create: EnvironmentFactory;
  preflight?: (spec: EnvironmentSpec, options: EnvironmentOptions) => Promise<void>;
}

type Loader = () => Promise<EnvironmentBackend>;

const backends = new Map<string, Loader>();

export function registerEnvironment(name: string, loader: Loader): void {
  backends.set(name, loader);
}

export function environmentNames(): string[] {
  return [...backends.keys()].sort();
}

registerEnvironment("local", async () => ({ create: (await import("./local.js")).createLocalEnvironment }));
registerEnvironment("docker", async () => {
  const m = await import("./docker.js");
  return { create: m.createDockerEnvironment, preflight: m.preflightDocker };
});
registerEnvironment("singularity", async () => {
  const m = await import("./singularity.js");
  return { create: m.createSingularityEnvironment, preflight: m.preflightSingularity };
});

/** Whether each backend can run here now, and why not (for `hermes-batch tools`). */
export async function environmentAvailability(): Promise<{ name: string; available: boolean; reason?: string }[]> {
  const docker = async () => (await import("./docker_client.js")).dockerAvailability(2000);
  const singularity = async () => {
    const a = await (await import("./singularity.js")).singularityAvailability();
    return { available: a.available, reason: a.reason };
  };
  const checks: Record<string, () => Promise<{ available: boolean; reason?: string }>> = {
    local: async () => ({ available: true, reason: "not a sandbox: runs on this machine" }),
    docker,
    singularity,
  };
  return Promise.all(
    environmentNames().map(async (name) => {
      const check = checks[name];
      if (!check) return { name, available: true };
      try {
        return { name, ...(await check()) };
      } catch (err) {
        return { name, available: false, reason: err instanceof Error ? err.message : String(err) };
      }
    }),
  );
}

export class UnknownEnvironmentError extends Error {
  constructor(name: string) {
    super(`unknown environment '${name}'; known: ${environmentNames().join(", ")}`);
  }
}

export async function createEnvironment(name: string, spec: EnvironmentSpec, options: EnvironmentOptions = {}): Promise<Environment> {
  const loader = backends.get(name);
  if (!loader) throw new UnknownEnvironmentError(name);
  const backend = await loader();
  return backend.create(spec, options);
}

/** Fails fast (missing image, missing runtime) before a task spends tokens. */
export async function preflightEnvironment(name: string, spec: EnvironmentSpec, options: EnvironmentOptions = {}): Promise<void> {
  const loader = backends.get(name);
  if (!loader) throw new UnknownEnvironmentError(name);
  const backend = await loader();
  await backend.preflight?.(spec, options);
}

/**
 * One task's environment: created on the first `get()` (concurrent callers share one creation),
 * cleaned up once by `cleanup()`. After cleanup, `get()` refuses.
 */
export class TaskEnvironment {
  private pending: Promise<Environment> | undefined;
  private closed = false;

  constructor(
    readonly kind: string,
    private readonly spec: EnvironmentSpec,
    private readonly options: EnvironmentOptions = {},
  ) {}

  get created(): boolean {
    return this.pending !== undefined;
  }

  get(): Promise<Environment> {
    if (this.closed) return Promise.reject(new Error(`environment of task ${this.spec.taskId} was already cleaned up`));
    if (!this.pending) {
      this.pending = createEnvironment(this.kind, this.spec, this.options);
      // A failed creation may be retried by the next call.
      this.pending.catch(() => {
        if (!this.closed) this.pending = undefined;
      });
    }
    return this.pending;
  }

  async cleanup(): Promise<void> {
    this.closed = true;
    const pending = this.pending;
    this.pending = undefined;
    if (!pending) return;
    let env: Environment;
    try {
      env = await pending;
    } catch {
      return;
    }
    await env.cleanup();
  }
}
