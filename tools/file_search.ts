import * as z from "zod";
import { lazy } from "../src/core/lazy.js";
import { shellQuote } from "./environments/base.js";
import { type ToolContext, type ToolResult } from "./registry.js";
import { integerArg, pathArg, requiredInSchema, unadvertisedArg, withDefault } from "./tool_args.js";
import { absolutePath, currentDir, repeatCount } from "./file_state.js";
import { pyDirname, pyJoin, pySlice } from "./file_tool_common.js";

const SEARCH_DEFAULT_LIMIT = 50;
/** Match lines are cut to this many characters, as the original does. */
const MATCH_LINE_CHARS = 500;
/** Besides hidden folders (skipped as ripgrep skips them), these are never searched. */
const PRUNED_DIRS = ["node_modules", "__pycache__"];

const OUTPUT_MODES = ["content", "files_only", "count"] as const;

export const searchArgs = lazy(() =>
  z.object({
    // Required in the schema; left out it is "" (every line, every file), as in the original's handler.
    pattern: requiredInSchema(
      z
        .string()
        .optional()
        .describe("Regex pattern (extended syntax) for content search, or glob pattern (e.g., '*.py') for file search"),
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
      pathArg().optional().describe("Directory or file to search in (default: current working directory)"),
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
  }),
);

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
export async function handleSearchFiles(
  args: z.infer<ReturnType<typeof searchArgs>>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const a = { ...args, pattern: args.pattern ?? "" };
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
  const cd = `cd ${shellQuote(currentDir(env))} 2>/dev/null;`;
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
