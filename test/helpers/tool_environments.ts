/**
 * Real task environments for tests that call tools through the dispatch: a local bubblewrap sandbox or a container
 * of the test image, each in its own task folder. `toolEnvironments(prefix)` registers the file's set-up and its
 * clean-up (every container of its run removed, the folders deleted).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { Environment } from "../../tools/environments/base.js";
import {
  cleanupAllDockerEnvironments,
  createDockerEnvironment,
  removeContainersByLabel,
} from "../../tools/environments/docker/docker.js";
import { SandboxEnvironment } from "../../tools/environments/local/local_sandbox.js";
import { createToolPipeline } from "../../tools/pipeline.js";
import { ensureDockerTestImages, uniqueRunName } from "./docker.js";
import { silentLogger } from "./local_ctx.js";

export interface ToolEnvironments {
  /** A new environment: `docker` a container of the test image, anything else a local sandbox. */
  environment(kind: string): Promise<Environment>;
  /** Calls of tools in `env` through one pipeline (as a task's), each result parsed. */
  tools(env: Environment, kind: string): (name: string, args: Record<string, unknown>) => Promise<any>;
}

export function toolEnvironments(prefix: string): ToolEnvironments {
  const run = uniqueRunName(prefix);
  let root: string;
  let image: string;
  let made = 0;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), `hb-${prefix}-`));
    image = (await ensureDockerTestImages()).image;
  }, 600_000);
  afterAll(async () => {
    await cleanupAllDockerEnvironments();
    await removeContainersByLabel({ run });
    if (root) rmSync(root, { recursive: true, force: true });
  });
  return {
    environment(kind) {
      const id = `t${made++}`;
      return kind === "docker"
        ? createDockerEnvironment(
            { runName: run, taskId: id, hostTaskDir: join(root, id), taskTimeoutSec: 600 },
            { image },
          )
        : SandboxEnvironment.create({ runName: run, taskId: id, hostTaskDir: join(root, id) }, {});
    },
    tools(env, kind) {
      const pipeline = createToolPipeline();
      const ctx = { taskId: "t", envKind: kind, getEnv: async () => env, logger: silentLogger };
      return async (name, args) => JSON.parse(await pipeline.call(name, args, ctx));
    },
  };
}
