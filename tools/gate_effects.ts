/**
 * A tool's declared effects as the approval gate judges them: the command line that the
 * dangerous-command detection reads, and the directory it runs in.
 */
import { posix } from "node:path";
import { shellQuote } from "./environments/base.js";
import type { ToolEffect } from "./registry.js";

/**
 * The command as the gate must judge it: run from a `workdir` outside the task's working
 * directory, it is the same as `cd <workdir> && command` (so `rm -rf lib` in /usr is
 * `rm -rf /usr/lib`). A workdir inside the working directory changes nothing for detection.
 */
export function commandAsRun(command: string, defaultCwd: string, cwd: string | undefined): string {
  if (!cwd) return command;
  const rel = posix.relative(posix.normalize(defaultCwd), posix.normalize(cwd));
  if (rel === "" || (rel !== ".." && !rel.startsWith("../") && !posix.isAbsolute(rel))) return command;
  return `cd ${shellQuote(cwd)} && ${command}`;
}

/**
 * What the gate is asked about one effect. A write is described as the shell redirection it amounts
 * to (`write_file > '/etc/hosts'`), so the dangerous-command patterns decide which paths are
 * sensitive (/etc, /boot, ~/.ssh, shell startup files, …) and the approver sees the tool and the path.
 */
export function effectForGate(tool: string, effect: ToolEffect): { command: string; cwd?: string } {
  if (effect.kind === "run")
    return { command: commandAsRun(effect.command, effect.workdir, effect.cwd), cwd: effect.cwd ?? effect.workdir };
  if (effect.kind === "call") return { command: mcpCallText(effect) };
  return { command: `${tool} > ${shellQuote(effect.path)}`, cwd: effect.workdir };
}

/** An MCP call as the approver reads it (as data, never as a command to run). */
export function mcpCallText(effect: Extract<ToolEffect, { kind: "call" }>): string {
  return `MCP call: server '${effect.server}' (${effect.where === "host" ? "outside the sandbox" : "in the task's sandbox"}), tool '${effect.tool}', arguments ${JSON.stringify(effect.arguments)}`;
}

/** What the gate records for an MCP call it must always judge. */
export const MCP_CALL_MATCH = {
  key: "mcp_call",
  description: "a call of an MCP server's tool (--mcp-approval)",
} as const;
