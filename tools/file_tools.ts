/**
 * File tools (toolset "file"): read_file, write_file, patch, search_files.
 *
 * All of them go through the task's Environment (readFile/writeFile/exec), so they work the same in
 * every backend. search_files needs only POSIX find/grep/head/sort with busybox-compatible flags.
 */
import { posix } from "node:path";
import { z } from "zod";
import { shellQuote, type Environment } from "./environments/base.js";
import { noEffects, registry, toolFailure, type ToolContext, type ToolEffect, type ToolResult } from "./registry.js";
import { booleanArg, integerArg, nonEmptyString, unadvertisedArg, withDefault } from "./tool_args.js";
import { applyV4AHunks, parseV4APatch, type V4AOperation } from "./v4a_patch.js";

export const READ_DEFAULT_LIMIT = 500;
export const READ_MAX_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;
const SEARCH_DEFAULT_LIMIT = 50;
const SEARCH_MAX_LIMIT = 1000;
const MATCH_LINE_CHARS = 300;
const PRUNED_DIRS = [".git", "node_modules", "__pycache__", ".hg", ".svn"];

const BINARY_EXTENSIONS = new Set([
  "png", "jpg", "jpeg", "gif", "bmp", "ico", "webp", "tiff", "pdf", "zip", "gz", "tgz", "bz2", "xz", "7z", "rar",
  "tar", "jar", "class", "so", "dll", "exe", "o", "a", "pyc", "whl", "mp3", "mp4", "wav", "ogg", "mov", "avi",
  "woff", "woff2", "ttf", "otf", "sqlite", "db", "bin", "dat", "npy", "pt", "safetensors",
]);

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function looksNotFound(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return code === "ENOENT" || /ENOENT|no such file|not found/i.test(errMessage(err));
}

function absolutePath(env: Environment, path: string): string {
  return posix.isAbsolute(path) ? posix.normalize(path) : posix.resolve(env.workdir, path);
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return 99;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/** Names in the file's directory that resemble it (one cheap `ls`), for a helpful not-found error. */
async function similarNames(env: Environment, fullPath: string): Promise<string[]> {
  const dir = posix.dirname(fullPath);
  const base = posix.basename(fullPath).toLowerCase();
  const res = await env.exec(`ls -1A ${shellQuote(dir)} 2>/dev/null | head -n 1000`, { timeoutMs: 10_000 });
  if (res.exitCode !== 0) return [];
  const stem = base.replace(/\.[^.]*$/, "");
  return res.stdout
    .split("\n")
    .filter(Boolean)
    .filter((name) => {
      const n = name.toLowerCase();
      return n === base || (stem.length >= 3 && n.includes(stem)) || (n.length >= 3 && base.includes(n.replace(/\.[^.]*$/, ""))) || editDistance(n, base) <= 2;
    })
    .slice(0, 5)
    .map((name) => posix.join(dir, name));
}

// ---------------------------------------------------------------- read_file

const PATH_DESCRIPTION = "File path (absolute, or relative to the working directory).";

const readArgs = z.object({
  path: nonEmptyString().describe(PATH_DESCRIPTION),
  offset: withDefault(integerArg({ min: 1 }).optional().describe("Line number to start reading from (1-indexed, default: 1)"), 1),
  limit: withDefault(
    integerArg({ min: 1, max: READ_MAX_LIMIT, clamp: "max" })
      .optional()
      .describe(`Maximum number of lines to read (default: ${READ_DEFAULT_LIMIT}, max: ${READ_MAX_LIMIT})`),
    READ_DEFAULT_LIMIT,
  ),
});
type ReadArgs = z.infer<typeof readArgs>;

export async function handleReadFile(args: ReadArgs, ctx: ToolContext): Promise<ToolResult> {
  const { path } = args;
  const offset = args.offset ?? 1;
  const limit = args.limit ?? READ_DEFAULT_LIMIT;
  const env = await ctx.getEnv();
  const full = absolutePath(env, path);

  const ext = posix.extname(full).slice(1).toLowerCase();
  if (BINARY_EXTENSIONS.has(ext)) {
    return toolFailure(`Cannot read binary file '${path}' (.${ext}); read_file reads text files only`);
  }
  let data: Buffer;
  try {
    data = await env.readFile(full);
  } catch (err) {
    if (looksNotFound(err)) {
      const similar = await similarNames(env, full).catch(() => []);
      return toolFailure(`File not found: ${path}`, similar.length > 0 ? { similar_files: similar } : undefined);
    }
    return toolFailure(`Cannot read '${path}': ${errMessage(err)}`);
  }
  if (data.subarray(0, 8192).includes(0)) {
    return toolFailure(`Cannot read binary file '${path}'; read_file reads text files only`);
  }
  const text = data.toString("utf8");
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  const slice = lines.slice(offset - 1, offset - 1 + limit);
  const content = slice
    .map((line, i) => {
      const clean = line.endsWith("\r") ? line.slice(0, -1) : line;
      const shown = clean.length > MAX_LINE_CHARS ? `${clean.slice(0, MAX_LINE_CHARS)}... [line truncated, ${clean.length} chars]` : clean;
      return `${String(offset + i).padStart(6, " ")}|${shown}`;
    })
    .join("\n");
  const result: Record<string, unknown> = { content, total_lines: total, file_size: data.length };
  const last = offset - 1 + slice.length;
  if (offset > total && total > 0) {
    result.note = `offset ${offset} is past the end of the file (${total} lines)`;
  } else if (last < total) {
    result.truncated = true;
    result.hint = `Showing lines ${offset}-${last} of ${total}; use offset=${last + 1} to read more`;
  }
  return { content: result };
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

export async function handleWriteFile(args: z.infer<typeof writeArgs>, ctx: ToolContext): Promise<ToolResult> {
  const { path, content } = args;
  const env = await ctx.getEnv();
  const full = absolutePath(env, path);
  try {
    await env.writeFile(full, content);
  } catch (err) {
    return toolFailure(`Cannot write '${path}': ${errMessage(err)}`);
  }
  return { content: { success: true, path: full, bytes_written: Buffer.byteLength(content, "utf8") } };
}

// ---------------------------------------------------------------- patch

const patchArgs = z.object({
  mode: withDefault(
    z.string().optional().meta({ enum: ["replace", "patch"] })
      .describe("Edit mode. 'replace' (default): requires path + old_string + new_string. 'patch': requires patch content only."),
    "replace",
  ),
  path: z.string().optional().describe("REQUIRED when mode='replace'. File path to edit."),
  old_string: z.string().optional().describe("REQUIRED when mode='replace'. Exact text to find and replace. Must be unique in the file unless replace_all=true. Include surrounding context lines to ensure uniqueness."),
  new_string: z.string().optional().describe("REQUIRED when mode='replace'. Replacement text. Pass empty string '' to delete the matched text."),
  replace_all: withDefault(booleanArg().optional().describe("Replace all occurrences instead of requiring a unique match (default: false)"), false),
  patch: z
    .string()
    .optional()
    .describe("REQUIRED when mode='patch'. V4A format patch content. Format:\n*** Begin Patch\n*** Update File: path/to/file\n@@ context hint @@\n context line\n-removed line\n+added line\n*** End Patch"),
});
type PatchArgs = z.infer<typeof patchArgs>;

function countOccurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** One unified-style hunk around the changed lines (3 lines of context), capped in size. */
export function unifiedDiff(path: string, before: string, after: string, context = 3, maxChars = 4000): string {
  const a = before.split("\n");
  const b = after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length - 1;
  let endB = b.length - 1;
  while (endA >= start && endB >= start && a[endA] === b[endB]) {
    endA--;
    endB--;
  }
  const from = Math.max(0, start - context);
  const toA = Math.min(a.length - 1, endA + context);
  const toB = Math.min(b.length - 1, endB + context);
  const lines = [`--- a/${path}`, `+++ b/${path}`, `@@ -${from + 1},${toA - from + 1} +${from + 1},${toB - from + 1} @@`];
  for (let i = from; i < start; i++) lines.push(` ${a[i]}`);
  for (let i = start; i <= endA; i++) lines.push(`-${a[i]}`);
  for (let i = start; i <= endB; i++) lines.push(`+${b[i]}`);
  for (let i = endA + 1; i <= toA; i++) lines.push(` ${a[i]}`);
  const diff = lines.join("\n");
  return diff.length > maxChars ? `${diff.slice(0, maxChars)}\n... [diff truncated]` : diff;
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
  try {
    ops = parseV4APatch(patch);
  } catch (err) {
    return toolFailure(`Invalid V4A patch: ${errMessage(err)}`);
  }
  const env = await ctx.getEnv();
  const writes = new Map<string, { shown: string; before: string; after: string }>();
  const deletes: { full: string; shown: string }[] = [];
  const exists = async (full: string) => (await env.exec(`test -e ${shellQuote(full)}`, { timeoutMs: 10_000 })).exitCode === 0;
  const readText = async (shown: string, full: string): Promise<string | ToolResult> => {
    try {
      return (await env.readFile(full)).toString("utf8");
    } catch (err) {
      return toolFailure(looksNotFound(err) ? `File not found: ${shown}` : `Cannot read '${shown}': ${errMessage(err)}`);
    }
  };
  for (const op of ops) {
    const full = absolutePath(env, op.path);
    if (op.kind === "add") {
      if (writes.has(full) || (await exists(full))) return toolFailure(`Cannot add '${op.path}': it already exists (use '*** Update File:')`);
      writes.set(full, { shown: op.path, before: "", after: op.content });
    } else if (op.kind === "delete") {
      if (!(await exists(full))) return toolFailure(`Cannot delete '${op.path}': File not found`);
      deletes.push({ full, shown: op.path });
    } else {
      const before = writes.get(full)?.after ?? (await readText(op.path, full));
      if (typeof before !== "string") return before;
      let after: string;
      try {
        after = applyV4AHunks(op.path, before, op.hunks);
      } catch (err) {
        return toolFailure(errMessage(err));
      }
      if (op.moveTo) {
        deletes.push({ full, shown: op.path });
        writes.set(absolutePath(env, op.moveTo), { shown: op.moveTo, before, after });
      } else writes.set(full, { shown: op.path, before, after });
    }
  }
  try {
    for (const [full, w] of writes) await env.writeFile(full, w.after);
    const gone = deletes.filter((d) => !writes.has(d.full));
    if (gone.length > 0) {
      const res = await env.exec(`rm -f -- ${gone.map((d) => shellQuote(d.full)).join(" ")}`, { timeoutMs: 30_000 });
      if (res.exitCode !== 0) return toolFailure(`Cannot delete: ${(res.stderr || res.stdout).trim()}`);
    }
  } catch (err) {
    return toolFailure(`Cannot write: ${errMessage(err)}`);
  }
  const created = ops.filter((o) => o.kind === "add").map((o) => o.path);
  const moved = ops.flatMap((o) => (o.kind === "update" && o.moveTo ? [o.moveTo] : []));
  const diff = [...writes.values()].map((w) => unifiedDiff(w.shown, w.before, w.after)).join("\n");
  return {
    content: {
      success: true,
      files_modified: ops.flatMap((o) => (o.kind === "update" ? [o.moveTo ?? o.path] : [])).filter((p) => !created.includes(p)),
      files_created: [...created, ...moved],
      files_deleted: ops.flatMap((o) => (o.kind === "delete" ? [o.path] : o.kind === "update" && o.moveTo ? [o.path] : [])),
      diff,
    },
  };
}

export async function handlePatch(args: PatchArgs, ctx: ToolContext): Promise<ToolResult> {
  const mode = (args.mode ?? "replace").toLowerCase();
  if (mode === "patch") {
    if (!args.patch || args.patch.trim() === "") return toolFailure("Invalid arguments for patch: 'patch' is required when mode='patch'");
    return applyV4A(args.patch, ctx);
  }
  if (mode !== "replace") return toolFailure(`Invalid arguments for patch: 'mode': must be replace or patch (got '${args.mode}')`);
  for (const key of ["path", "old_string", "new_string"] as const) {
    if (args[key] === undefined) return toolFailure(`Invalid arguments for patch: '${key}' is required when mode='replace'`);
  }
  const path = args.path!;
  const new_string = args.new_string!;
  let old_string = args.old_string!;
  if (path === "") return toolFailure("Invalid arguments for patch: 'path': must not be empty");
  if (old_string === "") return toolFailure("Invalid arguments for patch: 'old_string': must not be empty");
  let replacement = new_string;
  const replaceAll = args.replace_all ?? false;
  if (old_string === new_string) return toolFailure("Invalid arguments for patch: 'new_string': is identical to old_string");
  const env = await ctx.getEnv();
  const full = absolutePath(env, path);
  let data: Buffer;
  try {
    data = await env.readFile(full);
  } catch (err) {
    return toolFailure(looksNotFound(err) ? `File not found: ${path}` : `Cannot read '${path}': ${errMessage(err)}`);
  }
  const before = data.toString("utf8");
  let count = countOccurrences(before, old_string);
  if (count === 0 && before.includes("\r\n") && !old_string.includes("\r\n")) {
    // The model writes LF; the file has CRLF line endings.
    old_string = old_string.replace(/\n/g, "\r\n");
    replacement = replacement.replace(/\r?\n/g, "\r\n");
    count = countOccurrences(before, old_string);
  }
  if (count === 0) {
    return toolFailure(`old_string not found in ${path}; read the file again and copy the exact text (whitespace and indentation included)`);
  }
  if (count > 1 && !replaceAll) {
    return toolFailure(`old_string occurs ${count} times in ${path}; add surrounding lines to make it unique, or set replace_all=true`);
  }
  const after = replaceAll ? before.split(old_string).join(replacement) : before.replace(old_string, () => replacement);
  try {
    await env.writeFile(full, after);
  } catch (err) {
    return toolFailure(`Cannot write '${path}': ${errMessage(err)}`);
  }
  return { content: { success: true, path: full, replacements: replaceAll ? count : 1, diff: unifiedDiff(path, before, after) } };
}

// ---------------------------------------------------------------- search_files

const OUTPUT_MODES = ["content", "files_only", "count"] as const;
const MAX_CONTEXT = 20;

const searchArgs = z.object({
  pattern: nonEmptyString().describe("Regex pattern (extended syntax) for content search, or glob pattern (e.g., '*.py') for file search"),
  // Hermes' aliases (grep, find) are accepted too, so the enum is advertised and checked by the handler.
  target: withDefault(
    z.string().optional().meta({ enum: ["content", "files"] }).describe("'content' searches inside file contents, 'files' searches for files by name"),
    "content",
  ),
  path: withDefault(z.string().optional().describe("Directory or file to search in (default: current working directory)"), "."),
  file_glob: z.string().optional().describe("Filter files by pattern in grep mode (e.g., '*.py' to only search Python files)"),
  limit: withDefault(
    integerArg({ min: 1, max: SEARCH_MAX_LIMIT, clamp: "max" }).optional().describe(`Maximum number of results to return (default: ${SEARCH_DEFAULT_LIMIT})`),
    SEARCH_DEFAULT_LIMIT,
  ),
  offset: withDefault(integerArg({ min: 0 }).optional().describe("Skip first N results for pagination (default: 0)"), 0),
  output_mode: withDefault(
    z.string().optional().meta({ enum: [...OUTPUT_MODES] })
      .describe("Output format for grep mode: 'content' shows matching lines with line numbers, 'files_only' lists file paths, 'count' shows match counts per file"),
    "content",
  ),
  context: withDefault(
    integerArg({ min: 0, max: MAX_CONTEXT, clamp: "both" }).optional().describe(`Number of context lines before and after each match (grep mode only, max ${MAX_CONTEXT})`),
    0,
  ),
  // An older name of `target`.
  kind: unadvertisedArg(z.string().optional()),
});


const TARGET_ALIASES: Record<string, "content" | "files"> = { content: "content", grep: "content", files: "files", find: "files" };

/**
 * Turns common Perl-style escapes (\d \w \s and their negations) into POSIX classes, which every
 * grep -E understands (busybox and musl do not know \d or \w).
 */
export function toPosixEre(pattern: string): string {
  const outside: Record<string, string> = { d: "[0-9]", D: "[^0-9]", w: "[[:alnum:]_]", W: "[^[:alnum:]_]", s: "[[:space:]]", S: "[^[:space:]]" };
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

function hasGlobChars(s: string): boolean {
  return /[*?[]/.test(s);
}

function findNameTest(glob: string): string {
  return glob.includes("/") ? `-path ${shellQuote(`*/${glob.replace(/^\.?\//, "")}`)}` : `-name ${shellQuote(glob)}`;
}

function stripDotSlash(p: string): string {
  return p.startsWith("./") ? p.slice(2) : p;
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

export async function handleSearchFiles(a: z.infer<typeof searchArgs>, ctx: ToolContext): Promise<ToolResult> {
  const rawTarget = (a.target ?? a.kind ?? "content").toLowerCase();
  const target = TARGET_ALIASES[rawTarget];
  if (!target) return toolFailure(`Invalid arguments for search_files: 'target': must be content or files (got '${rawTarget}')`);
  const mode = (a.output_mode ?? "content").toLowerCase() as (typeof OUTPUT_MODES)[number];
  if (!OUTPUT_MODES.includes(mode)) {
    return toolFailure(`Invalid arguments for search_files: 'output_mode': must be content, files_only or count (got '${a.output_mode}')`);
  }
  const context = target === "content" && mode === "content" ? (a.context ?? 0) : 0;
  const limit = a.limit ?? SEARCH_DEFAULT_LIMIT;
  const offset = a.offset ?? 0;
  const searchPath = a.path && a.path.trim() !== "" ? a.path : ".";
  const env = await ctx.getEnv();

  const P = shellQuote(searchPath);
  const prune = `\\( ${PRUNED_DIRS.map((d) => `-name ${shellQuote(d)}`).join(" -o ")} \\) -prune`;
  const fileGlobTest = a.file_glob ? ` ${findNameTest(a.file_glob)}` : "";
  const want = offset + limit + 1;
  const capLines = context > 0 ? want * (2 * context + 2) : want;
  let script: string;
  if (target === "content") {
    const flags = mode === "files_only" ? "-l" : mode === "count" ? "-c -H" : `-n -H${context > 0 ? ` -C ${context}` : ""}`;
    const grep = `grep ${flags} -s -E -e ${shellQuote(toPosixEre(a.pattern))}`;
    // Counts list every searched file (zeros too): filtered here, so `head` must not cut before.
    const cap = mode === "count" ? "" : ` | head -n ${capLines}`;
    script = [
      `if [ ! -e ${P} ]; then echo __NO_SUCH_PATH__; exit 3; fi`,
      `if [ -f ${P} ]; then ${grep} ${P}; else find ${P} -mindepth 1 ${prune} -o -type f${fileGlobTest} -exec ${grep} {} + ; fi${cap}`,
    ].join("\n");
  } else {
    const glob = hasGlobChars(a.pattern) ? a.pattern : `*${a.pattern}*`;
    script = [
      `if [ ! -e ${P} ]; then echo __NO_SUCH_PATH__; exit 3; fi`,
      `find ${P} -mindepth 1 ${prune} -o -type f ${findNameTest(glob)}${fileGlobTest} -print | sort | head -n ${want}`,
    ].join("\n");
  }
  const res = await env.exec(script, { timeoutMs: 60_000, signal: ctx.signal, maxOutputChars: 2_000_000 });
  if (res.stdout.startsWith("__NO_SUCH_PATH__")) return toolFailure(`Path not found: ${searchPath}`);
  if (res.timedOut) return toolFailure(`search_files timed out after 60s; narrow the path or the pattern`);
  const lines = res.stdout.split("\n").filter((l) => l !== "");

  if (target === "files") {
    const files = lines.map(stripDotSlash);
    const page = files.slice(offset, offset + limit);
    const result: Record<string, unknown> = { files: page, total_count: page.length };
    if (files.length > offset + limit) {
      result.truncated = true;
      result.hint = `More results exist; use offset=${offset + limit} to see more`;
    }
    return { content: result };
  }

  const grepProblem = () => res.stderr.split("\n").find((l) => l.trim() !== "" && !/binary file|permission denied/i.test(l));
  const more = (what: string) => ({ truncated: true, hint: `More ${what} exist; use offset=${offset + limit} or a narrower pattern/path` });

  if (mode === "files_only" || mode === "count") {
    const rows: { path: string; count?: number }[] =
      mode === "files_only"
        ? lines.map((l) => ({ path: stripDotSlash(l) }))
        : lines.flatMap((l) => {
            const m = /^(.*):(\d+)$/.exec(l);
            return m && Number(m[2]) > 0 ? [{ path: stripDotSlash(m[1]!), count: Number(m[2]) }] : [];
          });
    if (rows.length === 0 && grepProblem()) return toolFailure(`search_files failed: ${grepProblem()!.trim()}`);
    const page = rows.slice(offset, offset + limit);
    const result: Record<string, unknown> =
      mode === "files_only"
        ? { files: page.map((r) => r.path), total_count: page.length }
        : { counts: page, total_count: page.length, total_matches: page.reduce((n, r) => n + (r.count ?? 0), 0) };
    if (rows.length > offset + limit) Object.assign(result, more(mode === "files_only" ? "files" : "files with matches"));
    return { content: result };
  }

  const clip = (text: string) => (text.length > MATCH_LINE_CHARS ? `${text.slice(0, MATCH_LINE_CHARS)}...` : text);
  const parsed = parseGrepLines(lines);
  const matchCount = parsed.filter((p) => !p.context).length;
  if (matchCount === 0 && grepProblem()) return toolFailure(`search_files failed: ${grepProblem()!.trim()}`);
  // The page holds matches offset..offset+limit-1, each with the context lines grep printed around it.
  const inRange = (k: number) => k >= offset && k < offset + limit;
  const matchIndex: number[] = []; // per line: the index of the match it is, or of the last match before it
  let k = -1;
  for (const p of parsed) matchIndex.push(p.context ? k : ++k);
  const near = (a: GrepLine | undefined, b: GrepLine) => !!a && a.path === b.path && Math.abs(a.line - b.line) <= context;
  const page: Record<string, unknown>[] = [];
  let prevMatch: GrepLine | undefined;
  for (let i = 0; i < parsed.length; i++) {
    const p = parsed[i]!;
    if (!p.context) {
      prevMatch = p;
      if (inRange(matchIndex[i]!)) page.push({ path: stripDotSlash(p.path), line: p.line, content: clip(p.content) });
      continue;
    }
    let j = i + 1;
    while (j < parsed.length && parsed[j]!.context) j++;
    const nextMatch = parsed[j];
    const keep = (near(prevMatch, p) && inRange(matchIndex[i]!)) || (near(nextMatch, p) && inRange(matchIndex[i]! + 1));
    if (keep) page.push({ path: stripDotSlash(p.path), line: p.line, content: clip(p.content), context: true });
  }
  const shown = page.filter((m) => m.context !== true).length;
  const result: Record<string, unknown> = { matches: page, total_count: shown };
  if (matchCount > offset + limit || lines.length >= capLines) Object.assign(result, more("matches"));
  return { content: result };
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
      "REPLACE MODE (mode='replace', default): find a unique string and replace it (exact text, whitespace and " +
      "indentation included; CRLF files are matched too). REQUIRED PARAMETERS: mode, path, old_string, new_string.\n" +
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
      "or find files by name glob (target=files, e.g. '*.py'; a plain word matches names containing it). " +
      ".git and node_modules are skipped. Use this instead of grep/find in the terminal.",
  },
  args: searchArgs,
  handler: handleSearchFiles,
  effects: noEffects,
  needsEnvironment: true,
});
