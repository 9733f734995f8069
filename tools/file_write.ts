/** write_file: the whole file written through the task's environment, folders made on the way. */
import { posix } from "node:path";
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { shellQuote, type Environment } from "./environments/base.js";
import { type ToolContext, type ToolEffect, type ToolResult } from "./registry.js";
import { pathArg, requiredInSchema } from "./tool_args.js";
import { absolutePath, noteWrites, staleWarnings, succeeded, withWarnings } from "./file_state.js";
import { writeFailure, pyDirname, PATH_DESCRIPTION } from "./file_tool_common.js";

/** write_file and patch declare a write of the resolved path; the gate decides which paths are sensitive. */
export async function writeEffects(args: { path?: string }, ctx: ToolContext): Promise<ToolEffect[]> {
  if (!args.path) return []; // no file is written (write_file answers "No such file or directory")
  const env = await ctx.getEnv();
  return [{ kind: "write", path: absolutePath(env, args.path), workdir: env.workdir }];
}

// ---------------------------------------------------------------- write_file

export const writeArgs = lazy(() =>
  z.object({
    // Both required in the schema; left out, they are "" as in the original's handler (`args.get(..., "")`):
    // no content writes an empty file, no path fails as the shell's `cat > ""` does.
    path: requiredInSchema(pathArg().optional().describe(PATH_DESCRIPTION)),
    content: requiredInSchema(z.string().optional().describe("The complete new content of the file.")),
  }),
);

/**
 * write_file with the original's result `{bytes_written, dirs_created}`: dirs_created is true whenever
 * the path names a folder (the original runs `mkdir -p` on it then), false for a bare file name.
 */
export async function handleWriteFile(
  args: z.infer<ReturnType<typeof writeArgs>>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const path = args.path ?? "";
  const content = args.content ?? "";
  if (path === "")
    return {
      content: { bytes_written: 0, dirs_created: false, error: "Failed to write file: : No such file or directory" },
    };
  const env = await ctx.getEnv();
  const warnings = await staleWarnings(env, ctx, [path]);
  const result = await writeFile({ path, content }, env);
  if (succeeded(result)) await noteWrites(env, ctx, [path]);
  return withWarnings(result, warnings);
}

/**
 * Whether the path is (or a link leads to) a FIFO: opening one to write blocks until a reader comes, so a write
 * would hold the task until the backend's file operation times out (two minutes in the local sandbox).
 */
export async function isFifo(env: Environment, full: string): Promise<boolean> {
  const res = await env.exec(`test -p ${shellQuote(full)}`, { timeoutMs: 10_000 }).catch(() => undefined);
  return res?.exitCode === 0;
}

/** The error a write onto a FIFO gets, in the shell's words for a file that is not a regular one. */
export const notRegularFile = (path: string) => `${path}: Not a regular file`;

export async function writeFile(args: { path: string; content: string }, env: Environment): Promise<ToolResult> {
  const { path, content } = args;
  const full = absolutePath(env, path);
  const dirsCreated = pyDirname(path) !== "";
  try {
    if (await isFifo(env, full)) throw new Error(notRegularFile(path));
    await env.writeFile(full, content);
  } catch (err) {
    // As the original: dirs_created says whether the folder is there (its `mkdir -p` succeeded).
    const parent = await env
      .exec(`test -d ${shellQuote(posix.dirname(full))}`, { timeoutMs: 10_000 })
      .catch(() => undefined);
    return {
      content: {
        bytes_written: 0,
        dirs_created: dirsCreated && parent?.exitCode === 0,
        error: `Failed to write file: ${writeFailure(path, err)}`,
      },
    };
  }
  return { content: { bytes_written: Buffer.byteLength(content, "utf8"), dirs_created: dirsCreated } };
}
