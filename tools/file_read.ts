/** read_file: numbered lines in pages, with the original's errors, hints and refusals (binary, devices, size). */
import { posix } from "node:path";
import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { shellQuote, type Environment } from "./environments/base.js";
import { type ToolContext, type ToolResult } from "./registry.js";
import { integerArg, pathArg, requiredInSchema, withDefault } from "./tool_args.js";
import {
  absolutePath,
  currentDir,
  guardedRead,
  readDedupKey,
  recordRead,
  repeatCount,
  unchangedSinceRead,
} from "./file_state.js";
import { pyDirname, pyJoin, pySplitext, pyLen, pySlice, PATH_DESCRIPTION } from "./file_tool_common.js";

export const READ_DEFAULT_LIMIT = 500;
export const READ_MAX_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;
/** A read whose numbered text is longer than this many characters is refused (the original's default). */
const MAX_READ_CHARS = 100_000;
/** Above this size a truncated wide read gets a hint to read less (the original's `_hint`). */
const LARGE_FILE_HINT_BYTES = 512_000;

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

/** "156,007": Python's `f"{n:,}"`. */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
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
  const listDir = posix.isAbsolute(dir) ? dir : posix.resolve(currentDir(env), dir);
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

export const readArgs = lazy(() =>
  z.object({
    // Required in the schema; a call without it reads "" as the original's handler does (`args.get("path", "")`).
    path: requiredInSchema(pathArg().optional().describe(PATH_DESCRIPTION)),
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
  }),
);
type ReadArgs = z.infer<ReturnType<typeof readArgs>>;

/**
 * read_file with the original's result: `{content, total_lines, file_size, truncated, [hint], is_binary,
 * is_image}` where content is `sed`'s lines numbered `%6d|` (so a final newline shows as a last empty
 * numbered line) and total_lines counts newlines (`wc -l`); errors in the same shape (missing file:
 * `error` and `similar_files`; binary content: `is_binary`), or the original's bare `{error}` for device
 * paths and binary extensions, and `{error, path, total_lines, file_size}` for reads over 100,000 characters.
 */
export async function handleReadFile(args: ReadArgs, ctx: ToolContext): Promise<ToolResult> {
  const path = args.path ?? "";
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
