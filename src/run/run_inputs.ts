/** Files beside the config that every worker needs: read and checked once, on the main thread. */
import type { ChatMessage } from "../core/chat.js";
import type { RunConfig } from "../config/run_config.js";
import { UserError, errorMessage } from "../core/errors.js";
import { readPrefillFile } from "../config/prefill.js";
import { loadUserAllowlist } from "../../tools/approval/allowlist.js";
import type { McpServerCatalog } from "../../tools/mcp/types.js";
import { setUpMcp } from "./mcp_setup.js";

export interface RunInputs {
  prefill?: ChatMessage[];
  allowlist: string[];
  /** The --mcp-config servers with the tools each offered (listed once, here). */
  mcp?: McpServerCatalog[];
}

export async function readRunInputs(config: RunConfig): Promise<RunInputs> {
  const prefill = config.prefill_messages_file ? readPrefillFile(config.prefill_messages_file) : undefined;
  let allowlist: string[];
  try {
    allowlist = await loadUserAllowlist();
  } catch (err) {
    throw new UserError(`command allowlist: ${errorMessage(err).split("\n")[0]}`);
  }
  // Before the planner checks toolsets: the servers' mcp-<server> toolsets must be known by then.
  const mcp = await setUpMcp(config);
  return { prefill, allowlist, ...(mcp ? { mcp } : {}) };
}
