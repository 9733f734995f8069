import { networkModeFor } from "./docker_network.js";
export { networkModeFor };
import { type EnvironmentFactory, type EnvironmentOptions, type EnvironmentSpec } from "../base.js";
import { ensureDockerImage, removeContainerById, type ImageInfo } from "./docker_client.js";
import { WarmPool, type WarmPoolStats } from "./docker_warm.js";
import { gatesFor, type SandboxGates, type WarmPermit } from "../sandbox_gates.js";

export {
  DockerImageNotFoundError,
  DockerUnavailableError,
  LABEL_RUN,
  LABEL_TASK,
  dockerAvailability,
  ensureDockerImage,
  listLabelledContainers,
  removeContainersByLabel,
  type LabelledContainer,
} from "./docker_client.js";
export { TIMEOUT_EXIT_CODE, INTERRUPT_EXIT_CODE } from "./docker_exec.js";

export {
  DEFAULT_DOCKER_IMAGE,
  capabilitiesFor,
  parseDockerOptions,
  type DockerOptions,
} from "./docker_options.js";
export { DockerEnvironment } from "./docker_environment.js";
import type { DockerEnvironment } from "./docker_environment.js";
import {
  DEFAULT_DOCKER_IMAGE,
  imageFor,
  lifetimeSec,
  parseDockerOptions,
  type DockerOptions,
} from "./docker_options.js";
import { liveContainers, shutdown } from "./docker_live.js";
import { startSandbox } from "./docker_start.js";
// ---------------------------------------------------------------------------------------------------------
// Process-wide registry: every container this process created and has not removed yet.

/**
 * Removes every container this process created (for the runner's SIGINT/SIGTERM handlers). By default the
 * process then refuses new sandboxes, so a creation in flight cannot leave one behind.
 */
export async function cleanupAllDockerEnvironments(opts: { refuseNew?: boolean } = {}): Promise<void> {
  if (opts.refuseNew !== false) shutdown.refusing = true;
  if (shutdown.refusing) await drainWarmPool().catch(() => undefined);
  await Promise.all(
    [...liveContainers.entries()].map(async ([id, env]) => {
      if (env) await env.cleanup().catch(() => undefined);
      else await removeContainerById(id).catch(() => undefined);
      liveContainers.delete(id);
    }),
  );
}

/** Containers created by this process and not yet removed (ids). */
export function liveDockerContainers(): string[] {
  return [...liveContainers.keys()];
}

// ---------------------------------------------------------------------------------------------------------
// Warm pool (`prewarm`): one per worker thread, for the run's default image and options, holding at most
// its share of the run-wide warm total (see sandbox_gates.ts).

/**
 * A warm sandbox idle longer than this is retired. Its keep-alive is `WARM_MAX_IDLE_SEC + task timeout +
 * margin`, so a taken one still outlives its task, and after a `kill -9` nothing warm survives longer.
 */
export const WARM_MAX_IDLE_SEC = 600;

let warm: { key: string; pool: WarmPool<DockerEnvironment, WarmPermit> } | undefined;

function prewarmFor(gates: SandboxGates): number {
  return gates.warmShare;
}

function defaultImage(opts: DockerOptions): string {
  return opts.image ?? DEFAULT_DOCKER_IMAGE;
}

/** The task can use a warm sandbox: the run's default image, network and workdir. */
function takesWarm(spec: EnvironmentSpec, opts: DockerOptions): boolean {
  return (
    !spec.cwd &&
    imageFor(spec, opts) === defaultImage(opts) &&
    networkModeFor(spec.network ?? opts.network) === networkModeFor(opts.network)
  );
}

const gateIds = new WeakMap<SandboxGates, number>();
let nextGateId = 0;
function gateId(gates: SandboxGates): number {
  let id = gateIds.get(gates);
  if (id === undefined) gateIds.set(gates, (id = nextGateId++));
  return id;
}

/** The warm pool for this run's defaults, (re)created when they change (e.g. a new run in the same process). */
function warmPoolFor(
  spec: EnvironmentSpec,
  opts: DockerOptions,
  gates: SandboxGates,
): WarmPool<DockerEnvironment, WarmPermit> {
  const key = JSON.stringify({ run: spec.runName, timeout: spec.taskTimeoutSec ?? null, gates: gateId(gates), opts });
  if (warm?.key === key) return warm.pool;
  if (warm) void warm.pool.drain();
  const lifetime = lifetimeSec(spec, opts.deadmanMarginSec) + WARM_MAX_IDLE_SEC;
  const imageName = defaultImage(opts);
  const pool = new WarmPool<DockerEnvironment, WarmPermit>({
    size: prewarmFor(gates),
    maxIdleMs: WARM_MAX_IDLE_SEC * 1000,
    tryAcquire: () => gates.tryAcquireWarm(),
    handOver: (env) => (env.permit as WarmPermit).handOver(),
    starved: () => gates.waiting > 0 && gates.full,
    start: async (permit) => {
      let image: ImageInfo;
      try {
        image = await ensureDockerImage(imageName, { pull: opts.pull });
      } catch (err) {
        permit.release();
        throw err;
      }
      return startSandbox(
        {
          imageName,
          image,
          opts,
          runName: spec.runName,
          taskId: "",
          role: "warm",
          network: opts.network,
          lifetimeSec: lifetime,
        },
        permit,
        gates,
      );
    },
  });
  warm = { key, pool };
  return pool;
}

/** The current warm pool's counts (undefined without `prewarm`). */
export function warmPoolStats(): WarmPoolStats | undefined {
  return warm?.pool.stats();
}

/** Stops warming and removes the sandboxes not handed out. */
export async function drainWarmPool(): Promise<void> {
  const w = warm;
  warm = undefined;
  await w?.pool.drain();
}

/** Before a task spends tokens: the engine answers and the image exists (pulled only with `pull`). Starts warming. */
export async function preflightDocker(spec: EnvironmentSpec, options: EnvironmentOptions): Promise<void> {
  const opts = parseDockerOptions(options);
  await ensureDockerImage(imageFor(spec, opts), { pull: opts.pull });
  const gates = gatesFor(options);
  if (prewarmFor(gates) > 0 && !shutdown.refusing) warmPoolFor(spec, opts, gates);
}

export const createDockerEnvironment: EnvironmentFactory = async (
  spec: EnvironmentSpec,
  options: EnvironmentOptions,
) => {
  if (shutdown.refusing) throw new Error("shutting down: no new docker sandboxes");
  const opts = parseDockerOptions(options);
  const gates = gatesFor(options);
  const imageName = imageFor(spec, opts);
  // The image check comes first: a missing image fails the task before anything else happens.
  const image = await ensureDockerImage(imageName, { pull: opts.pull });

  if (prewarmFor(gates) > 0) {
    const pool = warmPoolFor(spec, opts, gates);
    if (takesWarm(spec, opts)) {
      const env = await pool.take();
      if (env) {
        env.onLost = spec.reportLost;
        return env;
      }
    }
  }

  // Every permit taken and this thread's pool holds some: one of them makes room at once (other threads'
  // pools do the same on their next tick, seeing this task wait).
  if (warm && gates.full) warm.pool.evictOne();
  const permit = await gates.acquireSandbox(spec.signal);
  const env = await startSandbox(
    {
      imageName,
      image,
      opts,
      runName: spec.runName,
      taskId: spec.taskId,
      role: "task",
      cwd: spec.cwd,
      network: spec.network ?? opts.network,
      lifetimeSec: lifetimeSec(spec, opts.deadmanMarginSec),
      signal: spec.signal,
      onEvent: spec.onEvent,
    },
    permit,
    gates,
  );
  env.onLost = spec.reportLost;
  return env;
};
