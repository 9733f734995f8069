/** `hermes-batch tools`: every tool, its toolset, and whether it is available (and why not). */
import { registry } from "../../tools/registry.js";
import { ensureToolsLoaded } from "../../tools/model_tools.js";
import { TOOLSETS, resolveToolsets } from "../../tools/toolsets.js";
import { nonEmptyList, parseCommandArgs } from "./args.js";
import type { Command } from "./types.js";
import { environmentAvailability } from "../../tools/environments/index.js";
import { MCP_LISTING_HELP, MCP_LISTING_OPTIONS, registerListedMcp } from "./mcp_listing.js";

/** Left-aligned text table; the last column is not padded. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

export interface ToolRow {
  tool: string;
  toolset: string;
  registered: boolean;
  available: boolean;
  reason: string | null;
}

/** For a tool the registry does not know: the first toolset (definition order) that lists it directly. */
function homeToolset(tool: string): string {
  return Object.keys(TOOLSETS).find((n) => TOOLSETS[n]!.tools.includes(tool)) ?? "?";
}

export async function toolRows(onlyToolsets?: string[]): Promise<ToolRow[]> {
  const known = new Set(
    onlyToolsets ? resolveToolsets(onlyToolsets) : [...registry.names(), ...resolveToolsets(["all"])],
  );
  const registered = [...known].filter((t) => registry.has(t));
  const avail = await registry.availability(registered);
  const rows: ToolRow[] = [...known].sort().map((tool) => {
    const entry = registry.get(tool);
    if (!entry)
      return {
        tool,
        toolset: homeToolset(tool),
        registered: false,
        available: false,
        reason: "not provided by this build",
      };
    const a = avail.get(tool)!;
    return {
      tool,
      toolset: entry.toolset,
      registered: true,
      available: a.available,
      reason: a.available ? null : (a.reason ?? "unavailable"),
    };
  });
  return rows.sort(
    (x, y) =>
      Number(y.registered) - Number(x.registered) || x.toolset.localeCompare(y.toolset) || x.tool.localeCompare(y.tool),
  );
}

export const command: Command = {
  summary: "list the tools: toolset, available or not, and why",
  help: `Usage: hermes-batch tools [--toolsets LIST] [--plugins LIST] [--mcp-config FILE] [--json]

Lists every tool this build knows: the registered ones (built-in modules and plugins), then the tools of
toolsets this build does not provide (vision, image_gen, moa, browser), with whether each is available
now and why not (a missing API key, a failed check). Without --toolsets, also whether each environment
backend (local, docker, singularity) can run here.

Options:
  --toolsets LIST   only the tools of these toolsets (comma-separated; unknown names are an error)
  --plugins LIST    also load these npm plugin packages (comma-separated)
${MCP_LISTING_HELP}
  --json            machine-readable output
`,
  async run(argv) {
    const { values } = parseCommandArgs(
      argv,
      { toolsets: { type: "string" }, plugins: { type: "string" }, json: { type: "boolean" }, ...MCP_LISTING_OPTIONS },
      false,
    );
    const only = nonEmptyList(values.toolsets, "--toolsets");
    await ensureToolsLoaded({ packages: nonEmptyList(values.plugins, "--plugins") }); // first: plugins may add toolsets
    await registerListedMcp(values);
    const rows = await toolRows(only);
    if (values.json) {
      process.stdout.write(JSON.stringify(rows, null, 2) + "\n");
      return 0;
    }
    const table = formatTable(
      ["TOOL", "TOOLSET", "AVAILABLE", "WHY NOT"],
      rows.map((r) => [r.tool, r.toolset, r.available ? "yes" : "no", r.reason ?? ""]),
    );
    const availableCount = rows.filter((r) => r.available).length;
    process.stdout.write(`${table}\n\n${availableCount} of ${rows.length} tools available\n`);
    if (!only) {
      const envs = await environmentAvailability();
      process.stdout.write(`\nenvironments (--env):\n`);
      for (const e of envs)
        process.stdout.write(`  ${e.name.padEnd(12)} ${e.available ? "yes" : "no "}  ${e.reason ?? ""}\n`);
    }
    return 0;
  },
};
