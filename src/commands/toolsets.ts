/** `hermes-batch toolsets [NAME]`: toolsets, their resolved tools, and whether they are available. */
import { UserError } from "../core/errors.js";
import { ensureToolsLoaded, toolsetStatus, type ToolsetStatus } from "../../tools/model_tools.js";
import { LEGACY_TOOLSET_MAP, TOOLSETS, toolsetInfo } from "../../tools/toolsets.js";
import { parseCommandArgs } from "./args.js";
import { formatTable, toolRows } from "./tools.js";
import type { Command } from "./types.js";
import { MCP_LISTING_HELP, MCP_LISTING_OPTIONS, registerListedMcp } from "./mcp_listing.js";

/** "yes", "partly (2/4)", "no (not provided)" or "no (unavailable)". */
export function availabilityLabel(s: ToolsetStatus): string {
  if (s.tools.length === 0) return "no (empty)";
  if (!s.provided) return "no (not provided)";
  if (s.available.length === 0) return "no (unavailable)";
  if (s.available.length < s.tools.length) return `partly (${s.available.length}/${s.tools.length})`;
  return "yes";
}

export const command: Command = {
  summary: "list the toolsets with their resolved tools (or show one)",
  help: `Usage: hermes-batch toolsets [NAME] [--mcp-config FILE] [--json]

Without NAME: every toolset, whether it is available, its tools (includes resolved) and description.
With NAME: that toolset in detail (direct tools, includes, each tool's availability). Legacy names
such as web_tools are accepted; an unknown name is an error (exit 2).

Options:
${MCP_LISTING_HELP}
  --json            machine-readable output
`,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, { json: { type: "boolean" }, ...MCP_LISTING_OPTIONS });
    if (positionals.length > 1) throw new UserError("give at most one toolset name");
    const name = positionals[0];
    await ensureToolsLoaded(); // first: plugins may add toolsets
    await registerListedMcp(values);
    const info = name === undefined ? undefined : toolsetInfo(name); // unknown → ToolsetError, exit 2
    const status = await toolsetStatus();

    if (info) {
      const rows = await toolRows([info.name]);
      if (values.json) {
        process.stdout.write(JSON.stringify({ ...info, tools: rows }, null, 2) + "\n");
        return 0;
      }
      const s = status.find((x) => x.name === info.name);
      const lines = [
        `${info.name}: ${info.description}`,
        `available:    ${s ? availabilityLabel(s) : "yes"}`,
        `direct tools: ${info.directTools.join(", ") || "(none)"}`,
        `includes:     ${info.includes.join(", ") || "(none)"}`,
        "",
        formatTable(
          ["TOOL", "AVAILABLE", "WHY NOT"],
          rows.map((r) => [r.tool, r.available ? "yes" : "no", r.reason ?? ""]),
        ),
      ];
      process.stdout.write(lines.join("\n") + "\n");
      return 0;
    }

    if (values.json) {
      const out = status.map((s) => ({
        name: s.name,
        description: TOOLSETS[s.name]!.description,
        includes: TOOLSETS[s.name]!.includes,
        tools: s.tools,
        registered: s.registered,
        available: s.available,
        status: availabilityLabel(s),
      }));
      process.stdout.write(JSON.stringify({ toolsets: out, legacy: LEGACY_TOOLSET_MAP }, null, 2) + "\n");
      return 0;
    }
    const table = formatTable(
      ["TOOLSET", "AVAILABLE", "DESCRIPTION"],
      status.map((s) => [s.name, availabilityLabel(s), TOOLSETS[s.name]!.description]),
    ).split("\n");
    const indent = " ".repeat(Math.max(...status.map((s) => s.name.length)) + 2);
    const blocks = [table[0], table[1]];
    status.forEach((s, i) => blocks.push(table[i + 2]!, `${indent}tools: ${s.tools.join(", ") || "(none)"}`));
    const legacy = Object.entries(LEGACY_TOOLSET_MAP)
      .map(([k, v]) => `${k}→${v}`)
      .join(", ");
    process.stdout.write(`${blocks.join("\n")}\n\nAlso accepted: all / * (every toolset); legacy names ${legacy}\n`);
    return 0;
  },
};
