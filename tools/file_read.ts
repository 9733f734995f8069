/**
 * read_file: numbered lines in pages, with the original's errors, hints and refusals (binary, devices, size).
 * As the original's (shell commands in the environment: `wc -c`, `head -c 1000`, `sed -n`, `wc -l`), a read
 * brings only its window of lines out of the environment, each line cut to what its numbered form can show, so
 * a file of any size costs the harness (a worker thread many agent loops share) at most a few MB per read.
 */
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
/**
 * Bytes of each line brought out of the environment: a character takes at most 4 bytes (an undecodable byte is
 * one U+FFFD), so a line cut here still shows its first MAX_LINE_CHARS characters, and has one more to tell it
 * was longer.
 */
const LINE_BYTES_KEPT = 4 * MAX_LINE_CHARS + 1;
/** Characters of a window's text taken in one look (a line's cut text is at most 4 times its numbered form). */
const WINDOW_TEXT_CAP = 4 * MAX_READ_CHARS;
/** Lines per slice when a window's text is larger than that: they are only counted, for the refusal's figure. */
const SLICE_LINES = 250;
/** The bound of each command of a read (a file of many GB is scanned by `wc`). */
const READ_TIMEOUT_MS = 120_000;

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

/** Whether a sample (the file's first 1000 bytes) reads as binary: over 30 % of its characters are control characters. */
function looksBinary(sample: string): boolean {
  const chars = [...sample].slice(0, 1000);
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
 * A window's lines numbered `%6d|` as the original numbers `sed`'s output (split at "\n", so a final newline gives a
 * last, empty numbered line), each cut to MAX_LINE_CHARS characters. Only the first MAX_READ_CHARS characters
 * are kept: past them the read is refused, and only its length is needed.
 */
class NumberedWindow {
  private readonly parts: string[] = [];
  /** Characters (code points) of the whole numbered text. */
  length = 0;
  private next: number;
  /** The text after the last "\n" seen: the start of a line whose end is still to come. */
  private open = "";

  constructor(private readonly start: number) {
    this.next = start;
  }

  /** More of the window's text (slices end at line ends; only the last may end inside its last line). */
  push(text: string): void {
    const pieces = text.split("\n");
    pieces[0] = this.open + pieces[0];
    this.open = pieces.pop() ?? "";
    for (const line of pieces) this.add(line);
  }

  /** The numbered text, once all of it was pushed; undefined when it is longer than MAX_READ_CHARS. */
  finish(): string | undefined {
    this.add(this.open);
    this.open = "";
    return this.length > MAX_READ_CHARS ? undefined : this.parts.join("\n");
  }

  private add(line: string): void {
    const shown = pyLen(line) > MAX_LINE_CHARS ? `${pySlice(line, MAX_LINE_CHARS)}... [truncated]` : line;
    const numbered = `${String(this.next).padStart(6, " ")}|${shown}`;
    this.length += (this.next > this.start ? 1 : 0) + pyLen(numbered);
    this.next++;
    if (this.length <= MAX_READ_CHARS) this.parts.push(numbered);
  }
}

/** The file as the read found it: regular (a link followed) and readable, or not. */
type Probe = { found: true; size: number; mtime: string; sample: string } | { found: false; mtime: string };

/**
 * One command in the environment: the file's time (`stat -L -c %y`, for the file-state registry), and for a
 * regular file (what a link leads to) that can be opened, its size and first 1,000 bytes (the binary check). A
 * FIFO or a device is never opened.
 */
async function probeFile(env: Environment, full: string, signal?: AbortSignal): Promise<Probe> {
  const res = await env
    .exec(
      `f=${shellQuote(full)}; m=$(stat -L -c %y -- "$f" 2>/dev/null); ` +
        `if [ -f "$f" ] && s=$(wc -c < "$f" 2>/dev/null); then echo ok $s "$m"; head -c 1000 -- "$f" 2>/dev/null; ` +
        `else echo "missing $m"; fi`,
      { cwd: "/", timeoutMs: READ_TIMEOUT_MS, signal, maxOutputChars: 4000 },
    )
    .catch(() => undefined);
  const head = res && !res.timedOut ? /^(?:ok (\d+) ?|missing ?)([^\n]*)\n/.exec(res.stdout) : null;
  if (!head) return { found: false, mtime: "" };
  if (head[1] === undefined) return { found: false, mtime: head[2]! };
  return { found: true, size: Number(head[1]), mtime: head[2]!, sample: res!.stdout.slice(head[0].length) };
}

/**
 * Shell text: `count` lines of the file in `$f` from line `first`, each cut to LINE_BYTES_KEPT bytes, after
 * `header` (which may name `$z`). busybox's `cut` ends a line at a zero byte: a window holding one has its zero
 * bytes carried as a control byte it does not hold, `$z` (octal; empty when none was needed or none was free),
 * which the reader turns back.
 */
function windowLines(first: number, count: number, header: string): string {
  const w = `tail -n +${first} -- "$f" 2>/dev/null | head -n ${count}`;
  const has = (byte: string) => `[ $(w | tr -dc ${byte} | head -c 1 | wc -c) -gt 0 ]`;
  return (
    `w() { ${w}; }; z=; if ${has("'\\000'")}; then for c in 001 002 003 004 005 006 007 010; do ` +
    `if ! ${has('"\\\\$c"')}; then z=$c; break; fi; done; fi; ${header}; ` +
    `if [ -n "$z" ]; then w | tr '\\000' "\\\\$z" | cut -b 1-${LINE_BYTES_KEPT}; else w | cut -b 1-${LINE_BYTES_KEPT}; fi`
  );
}

/**
 * The text `sed -n 'FROM,TOp'` prints for lines `from`..`to` of the file, each line cut to LINE_BYTES_KEPT bytes,
 * numbered; and the file's newline count (`wc -l`). Only as much of it as the numbered text can show is brought
 * out: at most WINDOW_TEXT_CAP characters in one look, else slices of SLICE_LINES lines that are only counted
 * (the read is refused then). A string is the command's failure.
 */
async function readWindow(
  env: Environment,
  full: string,
  from: number,
  to: number,
  signal?: AbortSignal,
): Promise<{ content: string | undefined; length: number; totalLines: number } | string> {
  const f = shellQuote(full);
  const res = await env.exec(
    `f=${f}; n=$(wc -l < "$f") || exit 3; u=$(tail -c 1 -- "$f" | tr -d '\\n' | wc -c); ` +
      windowLines(from, to - from + 1, "echo $n $u $z"),
    { cwd: "/", timeoutMs: READ_TIMEOUT_MS, signal, maxOutputChars: WINDOW_TEXT_CAP + 100 },
  );
  const head = /^(\d+) (\d+) ?([0-7]*)\n/.exec(res.stdout);
  if (res.exitCode !== 0 || res.timedOut || !head)
    return res.timedOut ? `timed out after ${READ_TIMEOUT_MS / 1000}s` : res.stderr.trim() || `exit ${res.exitCode}`;
  const totalLines = Number(head[1]);
  // The last line when the file does not end with a newline: the one cut's newline is taken from.
  const unterminated = Number(head[2]) > 0 ? totalLines + 1 : 0;
  const window = new NumberedWindow(from);
  // `cut` ends the file's last line with a newline the file may not have: taken off again.
  const take = (text: string, nulAs: string, first: number, last: number) => {
    const restored = nulAs ? text.replaceAll(String.fromCharCode(Number.parseInt(nulAs, 8)), "\0") : text;
    const cut = first <= unterminated && unterminated <= last && restored.endsWith("\n");
    window.push(cut ? restored.slice(0, -1) : restored);
  };
  if (!res.truncated) take(res.stdout.slice(head[0].length), head[3]!, from, to);
  else {
    // Too wide for one look: longer than the refusal's bound in any case; counted slice by slice for its figure.
    for (let first = from; first <= to; first += SLICE_LINES) {
      const count = Math.min(SLICE_LINES, to - first + 1);
      const slice = await env.exec(`f=${f}; ${windowLines(first, count, 'echo "$z"')}`, {
        cwd: "/",
        timeoutMs: READ_TIMEOUT_MS,
        signal,
        maxOutputChars: count * (LINE_BYTES_KEPT + 1) + 100,
      });
      const sliceHead = /^([0-7]*)\n/.exec(slice.stdout);
      if (slice.exitCode !== 0 || slice.timedOut || slice.truncated || !sliceHead)
        return slice.timedOut
          ? `timed out after ${READ_TIMEOUT_MS / 1000}s`
          : slice.stderr.trim() || `exit ${slice.exitCode}`;
      const text = slice.stdout.slice(sliceHead[0].length);
      take(text, sliceHead[1]!, first, first + count - 1);
      // Fewer lines than asked: the file ends here.
      if (text.split("\n").length - 1 < count) break;
    }
  }
  const content = window.finish();
  return { content, length: window.length, totalLines };
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
  const probe = await probeFile(env, full, ctx.signal);
  if (!probe.found) {
    // The original tells every unreadable path (missing, a folder, no permission) "File not found".
    const similar = await similarFiles(env, path).catch(() => []);
    const missing = readResult({ error: `File not found: ${path}`, similar_files: similar });
    // A folder has a time: the original records it as read all the same.
    await recordRead(env, ctx, full, offset > 1, dedupKey, probe.mtime);
    return { content: guardedRead(missing, path, repeatCount(ctx, ["read", path, offset, limit])) };
  }
  const fileSize = probe.size;
  if (looksBinary(probe.sample)) {
    const binary = readResult({
      file_size: fileSize,
      is_binary: true,
      error: "Binary file - cannot display as text. Use appropriate tools to handle this file type.",
    });
    await recordRead(env, ctx, full, offset > 1, dedupKey, probe.mtime);
    return { content: guardedRead(binary, path, repeatCount(ctx, ["read", path, offset, limit])) };
  }
  const end = offset + limit - 1;
  const window = await readWindow(env, full, offset, end, ctx.signal);
  if (typeof window === "string") return { content: readResult({ error: `Failed to read file: ${window}` }) };
  const { content, totalLines } = window;
  const truncated = totalLines > end;
  if (content === undefined) {
    return {
      content: {
        error:
          `Read produced ${grouped(window.length)} characters which exceeds the safety limit (${grouped(MAX_READ_CHARS)} chars). ` +
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
  await recordRead(env, ctx, full, offset > 1 || truncated, dedupKey, probe.mtime);
  return { content: guardedRead(result, path, repeatCount(ctx, ["read", path, offset, limit])) };
}
