/** Runs a tool call the way a task does: through the pipeline (validation, approval gate, dispatch). */
import { createToolPipeline, type ToolPipelineOptions } from "../../tools/pipeline.js";
import type { ToolContext } from "../../tools/registry.js";

/** The parsed JSON result of one call. Without `approval`, the gate denies what needs approval. */
export async function callTool(
  name: string,
  args: Record<string, unknown> | string,
  ctx: ToolContext,
  opts: ToolPipelineOptions = {},
): Promise<any> {
  const text = await createToolPipeline(opts).call(name, args, ctx);
  return JSON.parse(text);
}
