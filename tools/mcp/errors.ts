/** Errors of MCP servers as the one-line text a tool result or an exit-2 line carries. */

/**
 * An error as one line: a schema error (an answer of the server that is not what MCP says) as its issues
 * (`tools.0.inputSchema.type: Invalid input …`), not as the pretty-printed JSON its message is.
 */
export function describeError(err: unknown): string {
  const issues = (err as { issues?: unknown } | null)?.issues;
  if (Array.isArray(issues) && issues.length > 0) {
    const shown = issues.slice(0, 3).map((i: { path?: PropertyKey[]; message?: string }) => {
      const path = (i.path ?? []).map(String).join(".");
      return `${path ? `${path}: ` : ""}${i.message ?? "invalid"}`;
    });
    return `the server's answer is not valid MCP: ${shown.join("; ")}${issues.length > 3 ? ` (and ${issues.length - 3} more)` : ""}`;
  }
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s*\n\s*/g, " ");
}
