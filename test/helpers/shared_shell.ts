/**
 * One environment for several scenarios of the terminal's carried shell state (the parity files of the Docker
 * backend): a scenario that needs a fresh environment's shell state gets it from `freshShellState` instead of a new
 * container. The scenarios' files and the variables they export have names of their own, so only the cwd and the
 * HB_ exports are put back.
 */
import { expect } from "vitest";
import { createToolPipeline } from "../../tools/pipeline.js";
import type { ToolContext } from "../../tools/registry.js";
import "../../tools/terminal_tool.js";

/** Through the terminal: the cwd back at the workdir, no HB_ variable exported; checked after. */
export async function freshShellState(ctx: ToolContext): Promise<void> {
  const env = await ctx.getEnv();
  const command = "unset $(env | sed -n 's/^\\(HB_[A-Za-z0-9_]*\\)=.*/\\1/p'); env | grep -c '^HB_'";
  const r = JSON.parse(await createToolPipeline().call("terminal", { command, workdir: env.workdir }, ctx));
  expect(r.output, "HB_ variables left exported").toBe("0");
  expect(env.cwd).toBe(env.workdir);
}
