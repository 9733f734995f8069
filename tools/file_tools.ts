/**
 * File tools (toolset "file"): read_file, write_file, patch, search_files.
 *
 * All of them go through the task's Environment (readFile/writeFile/exec), so they work the same in
 * every backend. search_files needs only POSIX find/grep/head/sort with busybox-compatible flags.
 */
import { posix } from "node:path";
import { z } from "zod";
import { shellQuote, type Environment } from "./environments/base.js";
import { noEffects, registry, type ToolContext, type ToolEffect, type ToolResult } from "./registry.js";
import { booleanArg, integerArg, nonEmptyString, requiredInSchema, unadvertisedArg, withDefault } from "./tool_args.js";
import { applyV4AHunks, parseV4APatch, type V4AOperation } from "./v4a_patch.js";
import { unifiedDiff } from "./unified_diff.js";
import { fuzzyFindAndReplace, NO_MATCH_ERROR, noMatchHint } from "./fuzzy_match.js";
import {
  absolutePath,
  guardedRead,
  noteWrites,
  readDedupKey,
  recordRead,
  repeatCount,
  staleWarnings,
  succeeded,
  unchangedSinceRead,
  withWarnings,
} from "./file_state.js";

export const READ_DEFAULT_LIMIT = 500;
export const READ_MAX_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;
/** A read whose numbered text is longer than this many characters is refused (the original's default). */
const MAX_READ_CHARS = 100_000;
/** Above this size a truncated wide read gets a hint to read less (the original's `_hint`). */
const LARGE_FILE_HINT_BYTES = 512_000;
const SEARCH_DEFAULT_LIMIT = 50;
/** Match lines are cut to this many characters, as the original does. */
const MATCH_LINE_CHARS = 500;
/** Besides hidden folders (skipped as ripgrep skips them), these are never searched. */
const PRUNED_DIRS = ["node_modules", "__pycache__"];

/** The extensions the original refuses to read as text (tools/binary_extensions.py at cb51baec). */
const BINARY_EXTENSIONS = new Set(
  (
    ".png .jpg .jpeg .gif .bmp .ico .webp .tiff .tif .mp4 .mov .avi .mkv .webm .wmv .flv .m4v .mpeg .mpg .mp3 .wav " +
    ".ogg .flac .aac .m4a .wma .aiff .opus .zip .tar .gz .bz2 .7z .rar .xz .z .tgz .iso .exe .dll .so .dylib .bin .o " +
    ".a .obj .lib .app .msi .deb .rpm .doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp .ttf .otf .woff .woff2 .eot " +
    ".pyc .pyo .class .jar .war .ear .node .wasm .rlib .sqlite .sqlite3 .db .mdb .idx .psd .ai .eps .sketch .fig " +
    ".xd .blend .3ds .max .swf .fla .lockb .dat .data"
  ).split(" "),
);

/** The shell's words for the usual reasons a write fails (the original writes through `cat > PATH`). */
const WRITE_ERRORS: Record<string, string> = {
  ENOTDIR: "Not a directory",
  // Creating the folders met a file on the way.
  EEXIST: "Not a directory",
  EISDIR: "Is a directory",
  EACCES: "Permission denied",
  EPERM: "Operation not permitted",
  EROFS: "Read-only file system",
  ENOSPC: "No space left on device",
  EDQUOT: "Disk quota exceeded",
};

/** Why a write failed, in the shell's words when the reason is a usual one. */
function writeFailure(path: string, err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  return typeof code === "string" && WRITE_ERRORS[code] ? `${path}: ${WRITE_ERRORS[code]}` : errMessage(err);
}

/** Paths whose reading never ends or blocks (checked on the path as given, as the original does). */
const BLOCKED_DEVICE_PATHS = new Set([
  "/dev/zero",
  "/dev/random",
  "/dev/urandom",
  "/dev/full",
  "/dev/stdin",
  "/dev/tty",
  "/dev/console",
  "/dev/stdout",
  "/dev/stderr",
  "/dev/fd/0",
  "/dev/fd/1",
  "/dev/fd/2",
]);

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Python's `os.path.dirname` ("" for a bare name). */
function pyDirname(path: string): string {
  const at = path.lastIndexOf("/");
  if (at < 0) return "";
  const head = path.slice(0, at + 1);
  return /^\/+$/.test(head) ? head : head.replace(/\/+$/, "");
}

/** Python's `os.path.join(dir, name)` for a relative name. */
function pyJoin(dir: string, name: string): string {
  return dir === "" || dir.endsWith("/") ? dir + name : `${dir}/${name}`;
}

/** Python's `os.path.splitext` of a file name: [stem, ext]; leading dots never start an extension. */
function pySplitext(name: string): [string, string] {
  const base = name.slice(name.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  if (dot <= 0 || /^\.+$/.test(base.slice(0, dot))) return [name, ""];
  const cut = name.length - base.length + dot;
  return [name.slice(0, cut), name.slice(cut)];
}

/** "156,007": Python's `f"{n:,}"`. */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Length in code points, as Python's `len` counts a string. */
function pyLen(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Python's `str[:n]` (code points). */
function pySlice(text: string, n: number): string {
  if (text.length <= n) return text;
  return [...text].slice(0, n).join("");
}

/**
 * The names in the missing file's folder that resemble it, best first (at most 5), scored as the
 * original scores them: same name, same stem, prefix either way, contains, contained, same extension
 * with enough letters in common. The folder is listed as `ls -1 | head -50`, in the backend's own order.
 */
async function similarFiles(env: Environment, path: string): Promise<string[]> {
  const dir = pyDirname(path) || ".";
  const filename = path.slice(path.lastIndexOf("/") + 1);
  const [stem, ext0] = pySplitext(filename);
  const ext = ext0.toLowerCase();
  const lower = filename.toLowerCase();
  const listDir = posix.isAbsolute(dir) ? dir : posix.resolve(env.workdir, dir);
  const res = await env.exec(`ls -1 ${shellQuote(listDir)} 2>/dev/null | head -50`, { timeoutMs: 10_000 });
  if (res.exitCode !== 0) return [];
  const scored: { score: number; path: string }[] = [];
  for (const f of res.stdout.trim().split("\n")) {
    if (!f) continue;
    const lf = f.toLowerCase();
    let score = 0;
    if (lf === lower) score = 100;
    else if (pySplitext(f)[0].toLowerCase() === stem.toLowerCase()) score = 90;
    else if (lf.startsWith(lower) || lower.startsWith(lf)) score = 70;
    else if (lf.includes(lower)) score = 60;
    else if (lower.includes(lf) && lf.length > 2) score = 40;
    else if (ext && pySplitext(f)[1].toLowerCase() === ext) {
      const common = [...new Set(lower)].filter((c) => lf.includes(c)).length;
      if (common >= Math.max(lower.length, lf.length) * 0.4) score = 30;
    }
    if (score > 0) scored.push({ score, path: pyJoin(dir, f) });
  }
  // A stable sort keeps the listing's order among equal scores.
  return scored
    .sort((x, y) => y.score - x.score)
    .slice(0, 5)
    .map((s) => s.path);
}

/** Whether a sample reads as binary: over 30 % of its first 1000 characters are control characters. */
function looksBinary(sample: Buffer): boolean {
  const chars = [...sample.toString("utf8")].slice(0, 1000);
  if (chars.length === 0) return false;
  const control = chars.filter((c) => c.charCodeAt(0) < 32 && c !== "\n" && c !== "\r" && c !== "\t").length;
  return control / chars.length > 0.3;
}

/** The keys of a read result, in the original's order. */
function readResult(fields: {
  content?: string;
  total_lines?: number;
  file_size?: number;
  truncated?: boolean;
  hint?: string;
  is_binary?: boolean;
  error?: string;
  similar_files?: string[];
}): Record<string, unknown> {
  const out: Record<string, unknown> = {
    content: fields.content ?? "",
    total_lines: fields.total_lines ?? 0,
    file_size: fields.file_size ?? 0,
    truncated: fields.truncated ?? false,
  };
  if (fields.hint !== undefined) out.hint = fields.hint;
  out.is_binary = fields.is_binary ?? false;
  out.is_image = false;
  if (fields.error !== undefined) out.error = fields.error;
  if (fields.similar_files && fields.similar_files.length > 0) out.similar_files = fields.similar_files;
  return out;
}

/**
 * The text `sed -n 'FROM,TOp'` prints for a file: the selected lines, each with its newline (the last
 * line of a file without a final newline has none).
 */
function sedLines(text: string, from: number, to: number): string {
  const parts = text.split("\n");
  const lines = parts.map((p, i) => (i < parts.length - 1 ? `${p}\n` : p)).filter((l) => l !== "");
  return lines.slice(from - 1, to).join("");
}

/** Numbers every piece of `text` split at "\n" (a final newline gives a last, empty numbered line). */
function numberLines(text: string, start: number): string {
  return text
    .split("\n")
    .map((line, i) => {
      const shown = pyLen(line) > MAX_LINE_CHARS ? `${pySlice(line, MAX_LINE_CHARS)}... [truncated]` : line;
      return `${String(start + i).padStart(6, " ")}|${shown}`;
    })
    .join("\n");
}

// ---------------------------------------------------------------- read_file

const PATH_DESCRIPTION = "File path (absolute, or relative to the working directory).";

const readArgs = z.object({
  path: z.string().describe(PATH_DESCRIPTION),
  offset: withDefault(
    integerArg({ min: 1, clamp: "both" })
      .optional()
      .describe("Line number to start reading from (1-indexed, default: 1)"),
    1,
  ),
  // The original advertises only the maximum; a limit below 1 is read as 1 (its normalize_read_pagination).
  limit: withDefault(
    integerArg({ max: READ_MAX_LIMIT, clamp: "max" })
      .optional()
      .describe(`Maximum number of lines to read (default: ${READ_DEFAULT_LIMIT}, max: ${READ_MAX_LIMIT})`),
    READ_DEFAULT_LIMIT,
  ),
});
type ReadArgs = z.infer<typeof readArgs>;

/**
 * read_file with the original's result: `{content, total_lines, file_size, truncated, [hint], is_binary,
 * is_image}` where content is `sed`'s lines numbered `%6d|` (so a final newline shows as a last empty
 * numbered line) and total_lines counts newlines (`wc -l`); errors in the same shape (missing file:
 * `error` and `similar_files`; binary content: `is_binary`), or the original's bare `{error}` for device
 * paths and binary extensions, and `{error, path, total_lines, file_size}` for reads over 100,000 characters.
 */
export async function handleReadFile(args: ReadArgs, ctx: ToolContext): Promise<ToolResult> {
  const { path } = args;
  const offset = args.offset ?? 1;
  const limit = Math.max(1, args.limit ?? READ_DEFAULT_LIMIT);
  if (BLOCKED_DEVICE_PATHS.has(path) || (path.startsWith("/proc/") && /\/fd\/[012]$/.test(path))) {
    return {
      content: { error: `Cannot read '${path}': this is a device file that would block or produce infinite output.` },
    };
  }
  const env = await ctx.getEnv();
  const full = absolutePath(env, path);
  const ext = posix.extname(full).toLowerCase();
  if (BINARY_EXTENSIONS.has(ext)) {
    return {
      content: {
        error: `Cannot read binary file '${path}' (${ext}). Use vision_analyze for images, or terminal to inspect binary files.`,
      },
    };
  }
  const dedupKey = readDedupKey(full, offset, limit);
  const unchanged = await unchangedSinceRead(env, ctx, full, dedupKey, path);
  if (unchanged) return { content: unchanged };
  let data: Buffer;
  try {
    data = await env.readFile(full);
  } catch {
    // The original tells every unreadable path (missing, a folder, no permission) "File not found".
    const similar = await similarFiles(env, path).catch(() => []);
    const missing = readResult({ error: `File not found: ${path}`, similar_files: similar });
    // A folder has a time: the original records it as read all the same.
    await recordRead(env, ctx, full, offset > 1, dedupKey);
    return { content: guardedRead(missing, path, repeatCount(ctx, ["read", path, offset, limit])) };
  }
  const fileSize = data.length;
  if (looksBinary(data.subarray(0, 1000))) {
    const binary = readResult({
      file_size: fileSize,
      is_binary: true,
      error: "Binary file - cannot display as text. Use appropriate tools to handle this file type.",
    });
    await recordRead(env, ctx, full, offset > 1, dedupKey);
    return { content: guardedRead(binary, path, repeatCount(ctx, ["read", path, offset, limit])) };
  }
  const text = data.toString("utf8");
  const end = offset + limit - 1;
  const content = numberLines(sedLines(text, offset, end), offset);
  let totalLines = 0;
  for (const byte of data) if (byte === 10) totalLines++;
  const truncated = totalLines > end;
  if (pyLen(content) > MAX_READ_CHARS) {
    return {
      content: {
        error:
          `Read produced ${grouped(pyLen(content))} characters which exceeds the safety limit (${grouped(MAX_READ_CHARS)} chars). ` +
          `Use offset and limit to read a smaller range. The file has ${totalLines} lines total.`,
        path,
        total_lines: totalLines,
        file_size: fileSize,
      },
    };
  }
  const result = readResult({
    content,
    total_lines: totalLines,
    file_size: fileSize,
    truncated,
    hint: truncated
      ? `Use offset=${end + 1} to continue reading (showing ${offset}-${end} of ${totalLines} lines)`
      : undefined,
  });
  if (fileSize > LARGE_FILE_HINT_BYTES && limit > 200 && truncated) {
    result._hint =
      `This file is large (${grouped(fileSize)} bytes). Consider reading only the section you need with offset and limit ` +
      "to keep context usage efficient.";
  }
  await recordRead(env, ctx, full, offset > 1 || truncated, dedupKey);
  return { content: guardedRead(result, path, repeatCount(ctx, ["read", path, offset, limit])) };
}

// ---------------------------------------------------------------- write effects

/** write_file and patch declare a write of the resolved path; the gate decides which paths are sensitive. */
async function writeEffects(args: { path: string }, ctx: ToolContext): Promise<ToolEffect[]> {
  const env = await ctx.getEnv();
  return [{ kind: "write", path: absolutePath(env, args.path), workdir: env.workdir }];
}

// ---------------------------------------------------------------- write_file

const writeArgs = z.object({
  path: nonEmptyString().describe(PATH_DESCRIPTION),
  content: z.string().describe("The complete new content of the file."),
});

/**
 * write_file with the original's result `{bytes_written, dirs_created}`: dirs_created is true whenever
 * the path names a folder (the original runs `mkdir -p` on it then), false for a bare file name.
 */
export async function handleWriteFile(args: z.infer<typeof writeArgs>, ctx: ToolContext): Promise<ToolResult> {
  const env = await ctx.getEnv();
  const warnings = await staleWarnings(env, ctx, [args.path]);
  const result = await writeFile(args, env);
  if (succeeded(result)) await noteWrites(env, ctx, [args.path]);
  return withWarnings(result, warnings);
}

async function writeFile(args: z.infer<typeof writeArgs>, env: Environment): Promise<ToolResult> {
  const { path, content } = args;
  const full = absolutePath(env, path);
  const dirsCreated = pyDirname(path) !== "";
  try {
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

// ---------------------------------------------------------------- patch

const patchArgs = z.object({
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
  path: z.string().optional().describe("REQUIRED when mode='replace'. File path to edit."),
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
});
type PatchArgs = z.infer<typeof patchArgs>;

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
  const res = await env.exec(`cd ${shellQuote(env.workdir)} && ${command.replace("{file}", shellQuote(path))}`, {
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

async function patchEffects(args: PatchArgs, ctx: ToolContext): Promise<ToolEffect[]> {
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

// ---------------------------------------------------------------- search_files

const OUTPUT_MODES = ["content", "files_only", "count"] as const;

const searchArgs = z.object({
  pattern: nonEmptyString().describe(
    "Regex pattern (extended syntax) for content search, or glob pattern (e.g., '*.py') for file search",
  ),
  // Hermes' aliases (grep, find) are accepted too, so the enum is advertised and checked by the handler.
  target: withDefault(
    z
      .string()
      .optional()
      .meta({ enum: ["content", "files"] })
      .describe("'content' searches inside file contents, 'files' searches for files by name"),
    "content",
  ),
  path: withDefault(
    z.string().optional().describe("Directory or file to search in (default: current working directory)"),
    ".",
  ),
  file_glob: z
    .string()
    .optional()
    .describe("Filter files by pattern in grep mode (e.g., '*.py' to only search Python files)"),
  // No advertised bounds, as in the original; the handler brings values into range as its pagination does.
  limit: withDefault(
    integerArg().optional().describe(`Maximum number of results to return (default: ${SEARCH_DEFAULT_LIMIT})`),
    SEARCH_DEFAULT_LIMIT,
  ),
  offset: withDefault(integerArg().optional().describe("Skip first N results for pagination (default: 0)"), 0),
  output_mode: withDefault(
    z
      .string()
      .optional()
      .meta({ enum: [...OUTPUT_MODES] })
      .describe(
        "Output format for grep mode: 'content' shows matching lines with line numbers, 'files_only' lists file paths, 'count' shows match counts per file",
      ),
    "content",
  ),
  context: withDefault(
    integerArg().optional().describe("Number of context lines before and after each match (grep mode only)"),
    0,
  ),
  // An older name of `target`.
  kind: unadvertisedArg(z.string().optional()),
});

const TARGET_ALIASES: Record<string, "content" | "files"> = {
  content: "content",
  grep: "content",
  files: "files",
  find: "files",
};

/**
 * Turns common Perl-style escapes (\d \w \s and their negations) into POSIX classes, which every
 * grep -E understands (busybox and musl do not know \d or \w).
 */
export function toPosixEre(pattern: string): string {
  const outside: Record<string, string> = {
    d: "[0-9]",
    D: "[^0-9]",
    w: "[[:alnum:]_]",
    W: "[^[:alnum:]_]",
    s: "[[:space:]]",
    S: "[^[:space:]]",
  };
  const inside: Record<string, string> = { d: "0-9", w: "[:alnum:]_", s: "[:space:]" };
  let out = "";
  let inBracket = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) {
      const n = pattern[i + 1]!;
      const map = inBracket ? inside : outside;
      if (map[n] !== undefined) out += map[n];
      else out += c + n;
      i++;
      continue;
    }
    if (!inBracket && c === "[") {
      inBracket = true;
      out += c;
      // A leading ] or ^] is literal inside a bracket expression.
      if (pattern[i + 1] === "^") out += pattern[++i];
      if (pattern[i + 1] === "]") out += pattern[++i];
      continue;
    }
    if (inBracket && c === "[" && pattern[i + 1] === ":") {
      const close = pattern.indexOf(":]", i + 2);
      if (close > 0) {
        out += pattern.slice(i, close + 2);
        i = close + 1;
        continue;
      }
    }
    if (inBracket && c === "]") inBracket = false;
    out += c;
  }
  return out;
}

function findNameTest(glob: string): string {
  return glob.includes("/") ? `-path ${shellQuote(`*/${glob.replace(/^\.?\//, "")}`)}` : `-name ${shellQuote(glob)}`;
}

/** Python's `json.dumps(value, ensure_ascii=False)` for the plain values of a tool result. */
function pyJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value !== "object") return String(value);
  if (Array.isArray(value)) return `[${value.map(pyJson).join(", ")}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`)
    .join(", ")}}`;
}

/** The original's SearchResult keys and order: total_count, then matches, files, counts, truncated, error when set. */
function searchResult(fields: {
  total_count: number;
  matches?: { path: string; line: number; content: string }[];
  files?: string[];
  counts?: Record<string, number>;
  truncated?: boolean;
  error?: string;
}): Record<string, unknown> {
  const out: Record<string, unknown> = { total_count: fields.total_count };
  if (fields.matches?.length) out.matches = fields.matches;
  if (fields.files?.length) out.files = fields.files;
  if (fields.counts && Object.keys(fields.counts).length > 0) out.counts = fields.counts;
  if (fields.truncated) out.truncated = true;
  if (fields.error) out.error = fields.error;
  return out;
}

/** One line of `grep -H -n` output: `path:N:text` for a match, `path-N-text` for context (with -C). */
interface GrepLine {
  path: string;
  line: number;
  content: string;
  context: boolean;
}

/**
 * Parses grep -H -n [-C] output. A context line's path is told apart from its text by the match lines'
 * paths (grep prints context only around matches of the same file), so paths with '-' and digits work.
 */
function parseGrepLines(lines: string[]): GrepLine[] {
  const matchRe = /^(.+?):(\d+):(.*)$/;
  const matched = new Set<string>();
  for (const l of lines) {
    const m = matchRe.exec(l);
    if (m) matched.add(m[1]!);
  }
  const byLength = [...matched].sort((a, b) => b.length - a.length);
  const out: GrepLine[] = [];
  for (const l of lines) {
    if (l === "--") continue;
    let parsed: GrepLine | undefined;
    for (const path of byLength) {
      if (!l.startsWith(path) || (l[path.length] !== ":" && l[path.length] !== "-")) continue;
      const sep = l[path.length]!;
      const rest = new RegExp(`^(\\d+)${sep === "-" ? "-" : ":"}(.*)$`).exec(l.slice(path.length + 1));
      if (rest) {
        parsed = { path, line: Number(rest[1]), content: rest[2]!, context: sep === "-" };
        break;
      }
    }
    // Lines with control characters come from binary files that grep printed anyway (busybox).
    if (!parsed || /[\u0000-\u0008\u000e-\u001f]/.test(parsed.content)) continue;
    out.push(parsed);
  }
  return out;
}

/**
 * search_files with the original's results (its ripgrep path, done here with find and grep):
 * `{total_count, matches | files | counts, truncated}`. Only `limit + offset` output lines are read
 * (200 more with context), so total_count counts at most those; context lines count as matches; a
 * truncated result is followed by the original's "[Hint: Results truncated…]" line after the JSON.
 * Hidden files and folders are skipped, as ripgrep skips them.
 */
export async function handleSearchFiles(a: z.infer<typeof searchArgs>, ctx: ToolContext): Promise<ToolResult> {
  const target = TARGET_ALIASES[(a.target ?? a.kind ?? "content").toLowerCase()] ?? "content";
  const mode = (a.output_mode ?? "content") as string;
  const context = target === "content" && mode === "content" ? Math.max(0, a.context ?? 0) : 0;
  const limit = Math.max(1, a.limit ?? SEARCH_DEFAULT_LIMIT);
  const offset = Math.max(0, a.offset ?? 0);
  const searchPath = a.path ?? ".";
  const env = await ctx.getEnv();
  const full = absolutePath(env, searchPath);

  const count = repeatCount(ctx, ["search", a.pattern, target, searchPath, a.file_glob ?? "", limit, offset]);
  if (count >= 4) {
    return {
      content: {
        error:
          `BLOCKED: You have run this exact search ${count} times in a row. The results have NOT changed. ` +
          "You already have this information. STOP re-searching and proceed with your task.",
        pattern: a.pattern,
        already_searched: count,
      },
    };
  }
  const done = (fields: Parameters<typeof searchResult>[0]): ToolResult => {
    const result = searchResult(fields);
    if (count >= 3) {
      result._warning = `You have run this exact search ${count} times consecutively. The results have not changed. Use the information you already have.`;
    }
    if (!result.truncated) return { content: result };
    return {
      content:
        `${pyJson(result)}\n\n[Hint: Results truncated. Use offset=${offset + limit} to see more, ` +
        "or narrow with a more specific pattern or file_glob.]",
    };
  };

  const P = shellQuote(full);
  const exists = await env.exec(`test -e ${P} && echo exists || echo not_found`, {
    timeoutMs: 10_000,
    signal: ctx.signal,
  });
  if (exists.stdout.includes("not_found")) {
    const parent = pyDirname(searchPath) || ".";
    const query = searchPath.slice(searchPath.lastIndexOf("/") + 1);
    let error = `Path not found: ${searchPath}`;
    const parentFull = absolutePath(env, parent);
    const ls = await env.exec(
      `test -d ${shellQuote(parentFull)} && ls -1 ${shellQuote(parentFull)} 2>/dev/null | head -20`,
      { timeoutMs: 10_000 },
    );
    if (query && ls.exitCode === 0 && ls.stdout.trim()) {
      const q = query.toLowerCase();
      const similar = ls.stdout
        .trim()
        .split("\n")
        .filter(
          (e) =>
            e &&
            (e.toLowerCase().includes(q) || q.includes(e.toLowerCase()) || e.toLowerCase().startsWith(q.slice(0, 3))),
        )
        .map((e) => pyJoin(parent, e));
      if (similar.length > 0) error += `. Similar paths: ${similar.slice(0, 5).join(", ")}`;
    }
    return done({ total_count: 0, error });
  }

  // The search prints paths as the model gave the folder ("src/a.txt", "./a.txt").
  const shownRoot = searchPath;
  const prune = `\\( -name '.*' -o ${PRUNED_DIRS.map((d) => `-name ${shellQuote(d)}`).join(" -o ")} \\) -prune`;
  const fetch = offset + limit + (context > 0 ? 200 : 0);
  const cd = `cd ${shellQuote(env.workdir)} 2>/dev/null;`;
  const S = shellQuote(shownRoot);

  if (target === "files") {
    const name = !a.pattern.startsWith("**/") && !a.pattern.includes("/") ? a.pattern : a.pattern.split("/").pop()!;
    const glob = name.startsWith("*") ? name : `*${name}`;
    // Newest first (ripgrep's --sortr=modified), names in order among equal times.
    const script = `${cd} find ${S} -mindepth 1 ${prune} -o -type f -name ${shellQuote(glob)} -exec stat -c '%Y %n' {} + 2>/dev/null | sort -k1,1nr -k2 | cut -d' ' -f2- | head -n ${fetch}`;
    const res = await env.exec(script, { timeoutMs: 60_000, signal: ctx.signal, maxOutputChars: 2_000_000 });
    if (res.timedOut) return done({ total_count: 0, error: "Search failed: timed out after 60s" });
    const all = res.stdout.split("\n").filter((l) => l !== "");
    return done({ files: all.slice(offset, offset + limit), total_count: all.length, truncated: all.length >= fetch });
  }

  const fileGlobTest = a.file_glob ? ` ${findNameTest(a.file_glob)}` : "";
  const flags =
    mode === "files_only" ? "-l" : mode === "count" ? "-c -H" : `-n -H${context > 0 ? ` -C ${context}` : ""}`;
  const grep = `grep ${flags} -s -E -e ${shellQuote(toPosixEre(a.pattern))}`;
  // grep names binary files on stdout; ripgrep skips them. Counts of 0 are not printed by ripgrep either.
  const filters = [
    `sed '/^Binary file .* matches$/d'`,
    ...(mode === "count" ? [`grep -v ':0$'`] : []),
    `head -n ${fetch}`,
  ].join(" | ");
  // Files in name order, so the same tree always gives the same result.
  const files = `find ${S} -mindepth 1 ${prune} -o -type f${fileGlobTest} -print | LC_ALL=C sort | tr '\\n' '\\0' | xargs -0 -r ${grep} --`;
  const script = `${cd} if [ -f ${S} ]; then ${grep} -- ${S}; else ${files}; fi | ${filters}`;
  const res = await env.exec(script, { timeoutMs: 60_000, signal: ctx.signal, maxOutputChars: 2_000_000 });
  if (res.timedOut) return done({ total_count: 0, error: "Search failed: timed out after 60s" });
  const lines = res.stdout.split("\n").filter((l) => l !== "");
  const problem = res.stderr.split("\n").find((l) => l.trim() !== "" && !/binary file|permission denied/i.test(l));
  if (lines.length === 0 && problem) return done({ total_count: 0, error: `Search failed: ${problem.trim()}` });

  if (mode === "files_only") {
    return done({ files: lines.slice(offset, offset + limit), total_count: lines.length });
  }
  if (mode === "count") {
    const counts: Record<string, number> = {};
    for (const l of lines) {
      const m = /^(.*):(\d+)$/.exec(l);
      if (m) counts[m[1]!] = Number(m[2]);
    }
    return done({ counts, total_count: Object.values(counts).reduce((n, c) => n + c, 0) });
  }
  const all = parseGrepLines(lines)
    .filter((p) => context > 0 || !p.context)
    .map((p) => ({ path: p.path, line: p.line, content: pySlice(p.content, MATCH_LINE_CHARS) }));
  return done({
    matches: all.slice(offset, offset + limit),
    total_count: all.length,
    truncated: all.length > offset + limit,
  });
}

// ---------------------------------------------------------------- registration

registry.register({
  name: "read_file",
  toolset: "file",
  emoji: "📖",
  schema: {
    name: "read_file",
    description:
      `Read a text file with line numbers (LINE|content). Reads up to ${READ_DEFAULT_LIMIT} lines by default ` +
      `(max ${READ_MAX_LIMIT}); use offset and limit for large files. Use this instead of cat/head/tail in the terminal. ` +
      "Binary files and images are refused. When the file does not exist, similar file names are suggested.",
  },
  args: readArgs,
  handler: handleReadFile,
  effects: noEffects,
  needsEnvironment: true,
});

registry.register({
  name: "write_file",
  toolset: "file",
  emoji: "✍️",
  schema: {
    name: "write_file",
    description:
      "Write content to a file, replacing it entirely; parent directories are created. Use this instead of echo/cat " +
      "redirection in the terminal. For small changes to an existing file prefer patch.",
  },
  args: writeArgs,
  handler: handleWriteFile,
  effects: writeEffects,
  needsEnvironment: true,
});

registry.register({
  name: "patch",
  toolset: "file",
  emoji: "🔧",
  schema: {
    name: "patch",
    description:
      "Targeted find-and-replace edits in files. Use this instead of sed/awk in terminal. Returns a unified diff.\n\n" +
      "REPLACE MODE (mode='replace', default): find a unique string and replace it. Exact text is tried first, then " +
      "looser matches (trimmed lines, collapsed whitespace, other indentation, \\n escapes, smart quotes, similar blocks); " +
      "new_string is written as given. REQUIRED PARAMETERS: mode, path, old_string, new_string.\n" +
      "PATCH MODE (mode='patch'): apply V4A multi-file patches for bulk changes (add, update, move, delete files; " +
      "all or nothing). REQUIRED PARAMETERS: mode, patch.",
  },
  args: patchArgs,
  handler: handlePatch,
  effects: patchEffects,
  needsEnvironment: true,
});

registry.register({
  name: "search_files",
  toolset: "file",
  emoji: "🔎",
  schema: {
    name: "search_files",
    description:
      "Search file contents with a regular expression (target=content, default; returns path, line number and line) " +
      "or find files by name glob (target=files, e.g. '*.py'; newest first; a plain word matches names ending in it). " +
      "Hidden files and folders and node_modules are skipped. Use this instead of grep/find in the terminal.",
  },
  args: searchArgs,
  handler: handleSearchFiles,
  effects: noEffects,
  needsEnvironment: true,
});
