/** Per-task toolsets: fixed by --toolsets, or drawn reproducibly from the run's distribution. */
import type { RunConfig } from "../config/run_config.js";
import { checkedDistributionFile } from "../core/settings_file.js";
import { UserError } from "../core/errors.js";
import { ensureToolsLoaded, providedToolsets } from "../../tools/model_tools.js";
import { validateToolset, listToolsets } from "../../tools/toolsets.js";
import { loadDistributionFile, prepareDistribution } from "../../toolset_distributions.js";

export interface ToolsetPlanner {
  /** Human-readable description of where toolsets come from. */
  source: string;
  toolsetsFor(taskId: string, epoch?: number): string[];
  /** The first unknown name in a row's own toolsets, if any. */
  unknownToolset(names: string[]): string | undefined;
}

export async function createToolsetPlanner(config: RunConfig, warn: (m: string) => void): Promise<ToolsetPlanner> {
  await ensureToolsLoaded({ packages: config.plugins });
  if (config.distribution_file !== undefined) loadDistributionFile(checkedDistributionFile(config.distribution_file));
  const unknownToolset = (names: string[]) => names.find((n) => !validateToolset(n));
  if (config.toolsets) {
    const bad = unknownToolset(config.toolsets);
    if (bad) throw new UserError(`unknown toolset '${bad}' in --toolsets; known: ${listToolsets().join(", ")}`);
    const fixed = [...config.toolsets];
    return { source: `toolsets ${fixed.join(",")}`, toolsetsFor: () => [...fixed], unknownToolset };
  }
  const sampler = prepareDistribution(config.distribution, { available: providedToolsets(), warn });
  return {
    source: `distribution '${config.distribution}'`,
    toolsetsFor: (taskId, epoch = 0) => sampler.sample({ seed: config.seed, taskId, epoch }),
    unknownToolset,
  };
}
