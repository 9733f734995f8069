/**
 * What every environment backend (local, docker, singularity) offers the rest of the program. The runner,
 * `gc` and `tools` talk to backends only through this interface and the registry in index.ts, never to a
 * backend module directly.
 */
import type { Environment, EnvironmentOptions, EnvironmentSpec } from "./base.js";

export interface BackendAvailability {
  available: boolean;
  /** Why not, or a note on what "available" means (local: not a sandbox). */
  reason?: string;
}

/** Which leftovers: of one run, of one task of a run, of one role ("task", "warm"); empty = every run. */
export interface LeftoverFilter {
  run?: string;
  task?: string;
  role?: string;
  /** Started by this worker thread (`sandboxOwner(threadId)`); a backend without owner marks finds none. */
  owner?: string;
}

/** A sandbox a run left behind (a container, an instance), found by its run/task labels. */
export interface LeftoverSandbox {
  backend: string;
  id: string;
  name: string;
  run: string;
  task: string;
  role: string;
  state: string;
}

export interface RemovedLeftovers {
  removed: LeftoverSandbox[];
  failed: { sandbox: LeftoverSandbox; error: string }[];
}

/** What the run checks once, in the main thread, before any task starts. */
export interface RunPreflight {
  /** The run's image (--image), when one was given. */
  image?: string;
  /** Every network the run's tasks ask for (--network and rows' "network"), to check they exist. */
  networks?: string[];
  options: EnvironmentOptions;
}

export interface EnvironmentBackend {
  readonly name: string;
  /** True for a backend that isolates commands from the host (it counts against --max-sandboxes). */
  readonly sandboxed: boolean;
  /** Whether its environments offer `isolatedCopy` (a fresh sandbox from a snapshot: `--verify-isolated`). */
  readonly isolatedCopies?: boolean;
  /** What one leftover is called in messages ("container", "instance"). */
  readonly sandboxNoun: string;
  /** Whether the backend can run here now, and why not (for `hermes-batch tools`, `gc`). */
  availability(): Promise<BackendAvailability>;
  /**
   * Once per run, before any task spends tokens: a UserError (exit 2, one line naming the flag) when the
   * engine or runtime is missing or the run's image is absent.
   */
  preflightRun(check: RunPreflight): Promise<void>;
  /** Once per task that will use an environment, before its first model call (a missing row image fails it). */
  preflightTask(spec: EnvironmentSpec, options: EnvironmentOptions): Promise<void>;
  /** What is wrong with a dataset row for this backend (a `cwd` it can never have), checked before any task runs. */
  rowProblem?(row: { cwd?: string; network?: string }): string | undefined;
  /** One environment for one task. */
  create(spec: EnvironmentSpec, options: EnvironmentOptions): Promise<Environment>;
  /** Sandboxes carrying hermes-batch run/task labels that are still there. */
  listLeftovers(filter: LeftoverFilter): Promise<LeftoverSandbox[]>;
  /** Removes them (or, with dryRun, says what it would remove). */
  removeLeftovers(filter: LeftoverFilter & { dryRun?: boolean }): Promise<RemovedLeftovers>;
  /**
   * After the worker threads of a run are gone (they end without async clean-up): removes what only they
   * could have removed, such as unused warm sandboxes. Returns how many it removed.
   */
  afterRun(runName: string, options: EnvironmentOptions): Promise<number>;
}
