/**
 * `hostileRun` (test/helpers/mcp_hostile.ts) in this test process (runCliInProcess), for the runs that stop with
 * exit 2 at the MCP listing, before any server is registered and before any task runs: all such a run leaves is its
 * exit code and stderr. A run that registers servers or runs tasks stays a child process (`hostileRun`).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCliInProcess, type CliResult } from "./cli.js";

/** `hermes-batch run` of these rows with this MCP config, on the host, the approver off, in this process. */
export async function hostileRunInProcess(
  dir: string,
  baseURL: string,
  mcp: unknown,
  rows: Record<string, unknown>[],
  args: string[],
  opts: { timeoutMs?: number } = {},
): Promise<CliResult> {
  writeFileSync(join(dir, "mcp.json"), JSON.stringify(mcp, null, 2));
  writeFileSync(join(dir, "d.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const flags = ["--model", "m", "--base-url", baseURL, "--api-key", "k", "--mcp-config", join(dir, "mcp.json")];
  return runCliInProcess(
    [
      "run",
      join(dir, "d.jsonl"),
      ...flags,
      "--output-dir",
      join(dir, "runs"),
      "--run-name",
      "r",
      "--progress",
      "none",
      "--mcp-approval",
      "none",
      ...args,
    ],
    { cwd: dir, env: { HERMES_BATCH_CONFIG_DIR: join(dir, "config") }, timeoutMs: opts.timeoutMs ?? 120_000 },
  );
}
