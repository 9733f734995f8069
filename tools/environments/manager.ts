/** One task's environment: its backend from the registry, created on first use, cleaned up once. */
import type { Environment, EnvironmentOptions, EnvironmentSpec } from "./base.js";
import { environmentBackend } from "./index.js";

/**
 * Created on the first `get()` (concurrent callers share one creation), cleaned up once by `cleanup()`.
 * After cleanup, `get()` refuses.
 */
export class TaskEnvironment {
  private pending: Promise<Environment> | undefined;
  private closed = false;
  /** A creation was asked for and has not finished (nor failed) yet. */
  starting = false;

  constructor(
    readonly kind: string,
    private readonly spec: EnvironmentSpec,
    private readonly options: EnvironmentOptions = {},
  ) {}

  get created(): boolean {
    return this.pending !== undefined;
  }

  /** Before the task spends tokens: a missing image or runtime fails it here (docker also starts warming). */
  async preflight(): Promise<void> {
    await (await environmentBackend(this.kind)).preflightTask(this.spec, this.options);
  }

  get(): Promise<Environment> {
    if (this.closed) return Promise.reject(new Error(`environment of task ${this.spec.taskId} was already cleaned up`));
    if (!this.pending) {
      this.starting = true;
      this.pending = environmentBackend(this.kind).then((b) => b.create(this.spec, this.options));
      // A failed creation may be retried by the next call.
      this.pending.then(
        () => {
          this.starting = false;
        },
        () => {
          this.starting = false;
          if (!this.closed) this.pending = undefined;
        },
      );
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
