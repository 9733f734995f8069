import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { shellQuote, type Environment } from "./environments/base.js";
import { type ToolContext, type ToolEffect, type ToolResult } from "./registry.js";
import { booleanArg, pathArg, requiredInSchema, withDefault } from "./tool_args.js";
import { applyV4AHunks, parseV4APatch, type V4AOperation } from "./v4a_patch.js";
import { unifiedDiff } from "./unified_diff.js";
import { fuzzyFindAndReplace, NO_MATCH_ERROR, noMatchHint } from "./fuzzy_match.js";
import { absolutePath, currentDir, noteWrites, staleWarnings, succeeded, withWarnings } from "./file_state.js";
import { writeFailure, errMessage, pySplitext } from "./file_tool_common.js";
import { isFifo, notRegularFile } from "./file_write.js";

export const patchArgs = lazy(() =>
  z.object({
    // Listed as required, as in the original's schema; a call without it is a replace (its handler's default).
    mode: requiredInSchema(
      withDefault(
        z
          .string()
          .optional()
          .meta({ enum: ["replace", "patch"] })
          .describe(
            "Edit mode. 'replace' (default): requires path + old_string + new_string. 'patch': requires patch content only.",
          ),
        "replace",
      ),
    ),
    path: pathArg().optional().describe("REQUIRED when mode='replace'. File path to edit."),
    old_string: z
      .string()
      .optional()
      .describe(
        "REQUIRED when mode='replace'. Exact text to find and replace. Must be unique in the file unless replace_all=true. Include surrounding context lines to ensure uniqueness.",
      ),
    new_string: z
      .string()
      .optional()
      .describe("REQUIRED when mode='replace'. Replacement text. Pass empty string '' to delete the matched text."),
    replace_all: withDefault(
      booleanArg().optional().describe("Replace all occurrences instead of requiring a unique match (default: false)"),
      false,
    ),
    patch: z
      .string()
      .optional()
      .describe(
        "REQUIRED when mode='patch'. V4A format patch content. Format:\n*** Begin Patch\n*** Update File: path/to/file\n@@ context hint @@\n context line\n-removed line\n+added line\n*** End Patch",
      ),
  }),
);
type PatchArgs = z.infer<ReturnType<typeof patchArgs>>;

/** The original's PatchResult keys: `success` first, then those set (empty lists left out). */
function patchResult(fields: {
  success: boolean;
  diff?: string;
  files_modified?: string[];
  files_created?: string[];
  files_deleted?: string[];
  lint?: Record<string, unknown>;
  error?: string;
}): Record<string, unknown> {
  const out: Record<string, unknown> = { success: fields.success };
  if (fields.diff) out.diff = fields.diff;
  for (const key of ["files_modified", "files_created", "files_deleted"] as const)
    if (fields[key]?.length) out[key] = fields[key];
  if (fields.lint) out.lint = fields.lint;
  if (fields.error) out.error = fields.error;
  return out;
}

/** The syntax check the original runs after a replace, by extension. */
const LINTERS: Record<string, string> = {
  ".py": "python -m py_compile {file} 2>&1",
  ".js": "node --check {file} 2>&1",
  ".ts": "npx tsc --noEmit {file} 2>&1",
  ".go": "go vet {file} 2>&1",
  ".rs": "rustfmt --check {file} 2>&1",
};

/** `{status: "skipped", message}` or `{status: "ok" | "error", output}`, as the original's lint result. */
async function lintFile(env: Environment, path: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const ext = pySplitext(path)[1].toLowerCase();
  const command = LINTERS[ext];
  if (!command) return { status: "skipped", message: `No linter for ${ext} files` };
  const tool = command.split(" ")[0]!;
  const has = await env.exec(`command -v ${tool} >/dev/null 2>&1 && echo 'yes'`, { timeoutMs: 10_000, signal });
  if (has.stdout.trim() !== "yes") return { status: "skipped", message: `${tool} not available` };
  // The path as the model gave it, from the working folder, so messages name the file as the original's do.
  const res = await env.exec(`cd ${shellQuote(currentDir(env))} && ${command.replace("{file}", shellQuote(path))}`, {
    timeoutMs: 30_000,
    signal,
  });
  const output = `${res.stdout}${res.stderr}`.trim();
  return { status: res.exitCode === 0 ? "ok" : "error", output };
}

/** The files a V4A patch writes or deletes (for the gate); none when it does not parse (nothing is written then). */
function patchedPaths(patch: string): string[] {
  try {
    return parseV4APatch(patch).flatMap((op) => (op.kind === "update" && op.moveTo ? [op.path, op.moveTo] : [op.path]));
  } catch {
    return [];
  }
}

export async function patchEffects(args: PatchArgs, ctx: ToolContext): Promise<ToolEffect[]> {
  const env = await ctx.getEnv();
  const paths = (args.mode ?? "replace") === "patch" ? patchedPaths(args.patch ?? "") : args.path ? [args.path] : [];
  return paths.map((p) => ({ kind: "write" as const, path: absolutePath(env, p), workdir: env.workdir }));
}

/** mode "patch": every file of a V4A patch changed, or none (all are read and checked before any write). */
async function applyV4A(patch: string, ctx: ToolContext): Promise<ToolResult> {
  let ops: V4AOperation[];
  const failed = (error: string): ToolResult => ({ content: patchResult({ success: false, error }) });
  try {
    ops = parseV4APatch(patch);
  } catch (err) {
    return failed(`Failed to parse patch: ${errMessage(err)}`);
  }
  const env = await ctx.getEnv();
  const writes = new Map<string, { shown: string; before: string; after: string }>();
  const deletes: { full: string; shown: string }[] = [];
  // The original's diff: per operation, in order, joined by newlines.
  const diffs: string[] = [];
  // Nothing is written when a file or hunk does not fit (the original's validation phase).
  const invalid = (problem: string) => failed(`Patch validation failed (no files were modified):\n  • ${problem}`);
  const exists = async (full: string) =>
    (await env.exec(`test -e ${shellQuote(full)}`, { timeoutMs: 10_000 })).exitCode === 0;
  const readText = async (shown: string, full: string): Promise<string | ToolResult> => {
    try {
      return (await env.readFile(full)).toString("utf8");
    } catch {
      return invalid(`${shown}: File not found: ${shown}`);
    }
  };
  // The shell a backend writes through drops a NUL byte: `a\u0000b` would change `ab`, a file the patch never named.
  const nul = ops.flatMap((op) => (op.kind === "update" && op.moveTo ? [op.path, op.moveTo] : [op.path]));
  const withNul = nul.find((p) => p.includes("\u0000"));
  if (withNul !== undefined) return invalid(`${JSON.stringify(withNul)}: a path must not contain a NUL byte`);
  for (const op of ops) {
    const full = absolutePath(env, op.path);
    if (op.kind === "add") {
      // As the original: adding a file that exists replaces it.
      writes.set(full, { shown: op.path, before: "", after: op.content });
      diffs.push(
        `--- /dev/null\n+++ b/${op.path}\n${
          op.content === ""
            ? ""
            : op.content
                .split("\n")
                .map((l) => `+${l}`)
                .join("\n")
        }`,
      );
    } else if (op.kind === "delete") {
      if (!(await exists(full))) return invalid(`${op.path}: file not found for deletion`);
      deletes.push({ full, shown: op.path });
      const before = await readText(op.path, full);
      if (typeof before !== "string") return before;
      diffs.push(unifiedDiff(before, "", op.path, 3, "/dev/null") || `# Deleted: ${op.path}`);
    } else {
      const before = writes.get(full)?.after ?? (await readText(op.path, full));
      if (typeof before !== "string") return before;
      let after: string;
      try {
        after = applyV4AHunks(op.path, before, op.hunks);
      } catch (err) {
        return invalid(errMessage(err));
      }
      if (op.moveTo) {
        deletes.push({ full, shown: op.path });
        writes.set(absolutePath(env, op.moveTo), { shown: op.moveTo, before, after });
      } else writes.set(full, { shown: op.path, before, after });
      diffs.push(unifiedDiff(before, after, op.moveTo ?? op.path));
    }
  }
  for (const [full, w] of writes) {
    if (await isFifo(env, full)) return invalid(notRegularFile(w.shown));
  }
  try {
    for (const [full, w] of writes) await env.writeFile(full, w.after);
    const gone = deletes.filter((d) => !writes.has(d.full));
    if (gone.length > 0) {
      const res = await env.exec(`rm -f -- ${gone.map((d) => shellQuote(d.full)).join(" ")}`, { timeoutMs: 30_000 });
      if (res.exitCode !== 0)
        return failed(
          `Apply phase failed (state may be inconsistent — run \`git diff\` to assess):\n  • ${(res.stderr || res.stdout).trim()}`,
        );
    }
  } catch (err) {
    return failed(
      `Apply phase failed (state may be inconsistent — run \`git diff\` to assess):\n  • ${errMessage(err)}`,
    );
  }
  const created = ops.filter((o) => o.kind === "add").map((o) => o.path);
  const moved = ops.flatMap((o) => (o.kind === "update" && o.moveTo ? [o.moveTo] : []));
  const filesModified = ops
    .flatMap((o) => (o.kind === "update" ? [o.moveTo ?? o.path] : []))
    .filter((p) => !created.includes(p));
  const filesCreated = [...created, ...moved];
  // As the original: the syntax check of every modified and created file, by path.
  const lint: Record<string, unknown> = {};
  for (const p of [...filesModified, ...filesCreated]) lint[p] = await lintFile(env, p, ctx.signal);
  return {
    content: patchResult({
      success: true,
      diff: diffs.join("\n"),
      files_modified: filesModified,
      files_created: filesCreated,
      files_deleted: ops.flatMap((o) =>
        o.kind === "delete" ? [o.path] : o.kind === "update" && o.moveTo ? [o.path] : [],
      ),
      lint: Object.keys(lint).length > 0 ? lint : undefined,
    }),
  };
}

/**
 * patch with the original's results: `{success, diff, files_modified, lint}` (a difflib diff, the
 * syntax check by extension), `{success: false, error}` when the file cannot be read or old_string is
 * not found once (with its "Did you mean" lines, or a `_hint`), and a bare `{error}` for missing arguments.
 */
/** The paths a patch call is checked for: `path` when given, then each file a V4A patch names (as the original reads them). */
function checkedPaths(args: PatchArgs): string[] {
  const paths = args.path ? [args.path] : [];
  if ((args.mode ?? "replace") === "patch" && args.patch) {
    for (const m of args.patch.matchAll(/^\*\*\*\s+(?:Update|Add|Delete)\s+File:\s*(.+)$/gm)) paths.push(m[1]!.trim());
  }
  return paths;
}

/** As the original, in both modes: text not found, with no "Did you mean" lines, gets a `_hint` to read the file again. */
function withNotFoundHint(result: ToolResult): ToolResult {
  const content = result.content as Record<string, unknown> | undefined;
  const error = typeof content?.error === "string" ? content.error : "";
  if (!error.includes("Could not find") || error.includes("Did you mean one of these sections?")) return result;
  return {
    ...result,
    content: {
      ...content,
      _hint: "old_string not found. Use read_file to verify the current content, or search_files to locate the text.",
    },
  };
}

export async function handlePatch(args: PatchArgs, ctx: ToolContext): Promise<ToolResult> {
  const mode = args.mode ?? "replace";
  if (mode === "patch") {
    if (!args.patch) return { content: { error: "patch content required" } };
  } else {
    if (mode !== "replace") return { content: { error: `Unknown mode: ${mode}` } };
    if (!args.path) return { content: { error: "path required" } };
    if (args.old_string === undefined || args.new_string === undefined)
      return { content: { error: "old_string and new_string required" } };
  }
  const env = await ctx.getEnv();
  const paths = checkedPaths(args);
  const warnings = await staleWarnings(env, ctx, paths);
  const result = withNotFoundHint(mode === "patch" ? await applyV4A(args.patch!, ctx) : await replaceOnce(args, ctx));
  if (succeeded(result)) await noteWrites(env, ctx, paths);
  return withWarnings(result, warnings);
}

async function replaceOnce(args: PatchArgs, ctx: ToolContext): Promise<ToolResult> {
  if (args.path === undefined || args.old_string === undefined || args.new_string === undefined)
    return { content: { error: "path required" } };
  const path = args.path;
  const replaceAll = args.replace_all ?? false;
  const failed = (error: string): ToolResult => ({ content: patchResult({ success: false, error }) });
  const env = await ctx.getEnv();
  const full = absolutePath(env, path);
  let before: string;
  try {
    before = (await env.readFile(full)).toString("utf8");
  } catch {
    return failed(`Failed to read file: ${path}`);
  }
  // As the original: an LF old_string in a CRLF file matches line by line, and new_string goes in as given.
  const replaced = fuzzyFindAndReplace(before, args.old_string, args.new_string, replaceAll);
  if (replaced.error !== undefined) {
    if (replaced.error !== NO_MATCH_ERROR) return failed(replaced.error);
    return failed(`${NO_MATCH_ERROR}${noMatchHint(replaced.error, args.old_string, before)}`);
  }
  const after = replaced.content;
  try {
    await env.writeFile(full, after);
  } catch (err) {
    return failed(`Failed to write changes: Failed to write file: ${writeFailure(path, err)}`);
  }
  return {
    content: patchResult({
      success: true,
      diff: unifiedDiff(before, after, path),
      files_modified: [path],
      lint: await lintFile(env, path, ctx.signal),
    }),
  };
}
