/**
 * Whether a run's planned tasks can touch a sandbox at all. A run whose tasks offer only in-process tools (todo,
 * memory, web) and have no verify command, Harbor phase or MCP server never creates one, so its backend's start-up
 * check (the local backend starts a bubblewrap sandbox for it: ~0.4 s on the critical path) is left out.
 */
import type { RunConfig } from "../config/run_config.js";
import { registry } from "../../tools/registry.js";
import { getOfferedToolNames } from "../../tools/model_tools.js";
import type { TaskSpec } from "./task_spec.js";

export class SandboxNeed {
  private needed: boolean;
  private readonly combinations = new Map<string, Promise<boolean>>();

  constructor(config: Pick<RunConfig, "harbor" | "mcp_config">) {
    // Harbor tasks always run in a sandbox; MCP servers may start inside one.
    this.needed = config.harbor !== undefined || config.mcp_config !== undefined;
  }

  /** Notes one planned task. */
  add(spec: Pick<TaskSpec, "toolsets" | "verify" | "image" | "extra">): void {
    if (this.needed) return;
    if (spec.verify !== undefined || spec.image !== undefined || spec.extra?.mcp_servers !== undefined) {
      this.needed = true;
      return;
    }
    const key = spec.toolsets.join("\n");
    if (!this.combinations.has(key)) this.combinations.set(key, toolsetsNeedSandbox(spec.toolsets));
  }

  /** Whether any task noted so far may need a sandbox. */
  async any(): Promise<boolean> {
    if (this.needed) return true;
    for (const need of this.combinations.values()) if (await need) return true;
    return false;
  }
}

async function toolsetsNeedSandbox(toolsets: string[]): Promise<boolean> {
  try {
    const names = await getOfferedToolNames({ enabledToolsets: toolsets });
    return names.some((n) => registry.get(n)?.needsEnvironment !== false);
  } catch {
    // A combination that cannot be resolved here is left to the backend's check.
    return true;
  }
}
