/** `hermes-batch distributions [NAME]`: the toolset distributions with their probabilities. */
import {
  distributionSource,
  getDistribution,
  listDistributions,
  loadDistributionFile,
} from "../../toolset_distributions.js";
import { checkedDistributionFile } from "../core/settings_file.js";
import { UserError } from "../core/errors.js";
import { ensureToolsLoaded, providedToolsets } from "../../tools/model_tools.js";
import { parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";

export interface DistributionView {
  name: string;
  description: string;
  source: string;
  /** Sorted by probability, highest first (ties: distribution order). */
  toolsets: { toolset: string; probability: number; provided: boolean }[];
}

export function distributionView(name: string, provided: ReadonlySet<string>): DistributionView {
  const dist = getDistribution(name);
  const toolsets = Object.entries(dist.toolsets)
    .map(([toolset, probability]) => ({ toolset, probability, provided: provided.has(toolset) }))
    .sort((a, b) => b.probability - a.probability);
  return { name, description: dist.description, source: distributionSource(name), toolsets };
}

function render(v: DistributionView): string {
  const width = Math.max(...v.toolsets.map((t) => t.toolset.length));
  const source = v.source === "built-in" ? "" : `  [from ${v.source}]`;
  const lines = [`${v.name}: ${v.description}${source}`];
  for (const t of v.toolsets) {
    const mark = t.provided ? "" : "  (not provided here: drawn, offers no tool)";
    lines.push(`  ${t.toolset.padEnd(width)}  ${String(t.probability).padStart(3)}%${mark}`);
  }
  return lines.join("\n");
}

export const command: Command = {
  summary: "list the toolset distributions and their probabilities",
  help: `Usage: hermes-batch distributions [NAME] [--distribution-file FILE] [--json]

Every distribution (sorted by name), or just NAME, with each toolset's independent inclusion chance in
percent (highest first). Toolsets this build does not provide are marked: drawn as in the original
(recorded in toolsets_used), they offer no tool (toolsets_offered lists what a task got).

Options:
  --distribution-file FILE   also read distributions from a YAML file:
                             {name: {description, toolsets: {toolset: percent}}}
  --json                     machine-readable output
`,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      "distribution-file": { type: "string" },
      json: { type: "boolean" },
    });
    if (positionals.length > 1) throw new UserError("give at most one distribution name");
    await ensureToolsLoaded(); // first: plugin toolsets may appear in a distribution file
    if (values["distribution-file"] !== undefined)
      loadDistributionFile(checkedDistributionFile(values["distribution-file"]));
    const names = positionals.length ? [positionals[0]!] : [...listDistributions()].sort();
    const provided = providedToolsets();
    const views = names.map((n) => distributionView(n, provided));
    if (values.json) {
      process.stdout.write(JSON.stringify(positionals.length ? views[0] : views, null, 2) + "\n");
      return 0;
    }
    process.stdout.write(views.map(render).join("\n\n") + "\n");
    return 0;
  },
};
