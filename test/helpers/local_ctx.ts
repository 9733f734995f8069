/** A ToolContext whose environment is a real local environment in a fresh temp folder. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Environment } from "../../tools/environments/base.js";
import { createLocalEnvironment } from "../../tools/environments/local/local.js";
import type { Logger, ToolContext } from "../../tools/registry.js";

export { waitUntil } from "./wait.js";

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export interface LocalTaskFixture {
  root: string;
  taskDir: string;
  ctx: ToolContext;
  env(): Promise<Environment>;
  dispose(): Promise<void>;
}

export function localTask(overrides: Partial<ToolContext> = {}): LocalTaskFixture {
  const root = mkdtempSync(join(tmpdir(), "hermes-tools-test-"));
  const taskDir = join(root, "task");
  let pending: Promise<Environment> | undefined;
  const env = () => (pending ??= createLocalEnvironment({ runName: "test", taskId: "t1", hostTaskDir: taskDir }, {}));
  const ctx: ToolContext = { taskId: "t1", envKind: "local", getEnv: env, logger: silentLogger, ...overrides };
  return {
    root,
    taskDir,
    ctx,
    env,
    async dispose() {
      if (pending) await (await pending).cleanup();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** True while the process exists and is not a zombie (this machine's init does not reap promptly). */
export function isAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state !== "Z" && state !== "X";
}
