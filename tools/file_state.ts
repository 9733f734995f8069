/**
 * What a task's file tools remember between calls, as the original's file-state registry and read-loop
 * guard do: identical reads in a row (warned on the 3rd, refused from the 4th), and what each file looked
 * like when the task last read or wrote it (its time, and whether the view was partial), for the
 * stale-write warnings of write_file and patch. The state lives on the task's ToolContext.
 */
import { posix } from "node:path";
import { shellQuote, type Environment } from "./environments/base.js";
import type { ToolContext, ToolResult } from "./registry.js";

/**
 * The directory relative paths resolve against: the terminal's current directory (where its last command
 * ended, as the original's file tools follow the live terminal cwd), else the environment's working directory.
 */
export function currentDir(env: Environment): string {
  return env.cwd ?? env.workdir;
}

/** The path a file is known by: absolute, against the terminal's current directory. */
export function absolutePath(env: Environment, path: string): string {
  return posix.isAbsolute(path) ? posix.normalize(path) : posix.resolve(currentDir(env), path);
}

/**
 * Counts identical read_file / search_files calls in a row (the pipeline resets the count when another
 * tool runs), as the original's read-loop guard does: the 3rd gets a `_warning`, the 4th and later are refused.
 */
export function repeatCount(ctx: ToolContext, key: unknown[]): number {
  const tracker = ctx.fileReads;
  if (!tracker) return 1;
  const k = JSON.stringify(key);
  if (tracker.lastKey === k) tracker.consecutive++;
  else {
    tracker.lastKey = k;
    tracker.consecutive = 1;
  }
  return tracker.consecutive;
}

/** A read result after the original's read-loop guard. */
export function guardedRead(result: Record<string, unknown>, path: string, count: number): Record<string, unknown> {
  if (count >= 4) {
    return {
      error:
        `BLOCKED: You have read this exact file region ${count} times in a row. The content has NOT changed. ` +
        "You already have this information. STOP re-reading and proceed with your task.",
      path,
      already_read: count,
    };
  }
  if (count >= 3) {
    result._warning =
      `You have read this exact file region ${count} times consecutively. The content has not changed since your last read. ` +
      "Use the information you already have. If you are stuck in a loop, stop reading and proceed with writing or responding.";
  }
  return result;
}

/** The file's modification time as the environment sees it, or undefined when it cannot be told. */
async function mtimeOf(env: Environment, full: string, signal?: AbortSignal): Promise<string | undefined> {
  const res = await env
    .exec(`stat -L -c %y ${shellQuote(full)} 2>/dev/null`, { timeoutMs: 10_000, signal })
    .catch(() => undefined);
  const out = res?.exitCode === 0 ? res.stdout.trim() : "";
  return out === "" ? undefined : out;
}

/**
 * read_file records what the task saw of the file: its time, and whether the view was partial; and, for the
 * unchanged-since-last-read answer, the time under the call's window (`dedupKey`).
 */
export async function recordRead(
  env: Environment,
  ctx: ToolContext,
  full: string,
  partial: boolean,
  dedupKey?: string,
  /** The time the read itself saw (`stat -L -c %y`, "" when there was none), instead of asking again. */
  seen?: string,
): Promise<void> {
  if (!ctx.fileStamps && !ctx.readDedup) return;
  const mtime = seen === undefined ? await mtimeOf(env, full, ctx.signal) : seen || undefined;
  if (mtime === undefined) return;
  ctx.fileStamps?.set(full, { mtime, partial });
  if (dedupKey !== undefined) ctx.readDedup?.set(dedupKey, mtime);
}

const READ_DEDUP_MESSAGE =
  "File unchanged since last read. The content from the earlier read_file result in this conversation is still current " +
  "\u2014 refer to that instead of re-reading.";

/** The key of a read_file window for the unchanged answer: the same file, offset and limit. */
export function readDedupKey(full: string, offset: number, limit: number): string {
  return JSON.stringify([full, offset, limit]);
}

/**
 * The original's answer to a read of the same window of a file whose time has not changed since the task
 * read it: a stub without the content (the read-loop count is left as it was). Undefined when the read must happen.
 */
export async function unchangedSinceRead(
  env: Environment,
  ctx: ToolContext,
  full: string,
  key: string,
  path: string,
): Promise<Record<string, unknown> | undefined> {
  const seen = ctx.readDedup?.get(key);
  if (seen === undefined) return undefined;
  if ((await mtimeOf(env, full, ctx.signal)) !== seen) return undefined;
  return { status: "unchanged", message: READ_DEDUP_MESSAGE, path, dedup: true, content_returned: false };
}

/** A successful write is a full read: the task now knows the file as it is. */
export async function noteWrites(env: Environment, ctx: ToolContext, paths: readonly string[]): Promise<void> {
  if (!ctx.fileStamps) return;
  for (const p of paths) {
    const full = absolutePath(env, p);
    const mtime = await mtimeOf(env, full, ctx.signal);
    if (mtime !== undefined) ctx.fileStamps.set(full, { mtime, partial: false });
  }
}

/**
 * The original's stale-write warnings (its file-state registry's check_stale), one per path that the task
 * read and that changed on disk since, or that it last read only in part. Paths it never read, and
 * missing files, are not warned about.
 */
export async function staleWarnings(env: Environment, ctx: ToolContext, paths: readonly string[]): Promise<string[]> {
  const warnings: string[] = [];
  if (!ctx.fileStamps) return warnings;
  for (const p of paths) {
    const full = absolutePath(env, p);
    const stamp = ctx.fileStamps.get(full);
    if (!stamp) continue;
    const now = await mtimeOf(env, full, ctx.signal);
    if (now === undefined) continue;
    if (now !== stamp.mtime) {
      warnings.push(
        `${full} was modified since you last read it on disk (external edit or unrecorded writer). Re-read the file before writing.`,
      );
    } else if (stamp.partial) {
      warnings.push(
        `${full} was last read with offset/limit pagination (partial view). Re-read the whole file before overwriting it.`,
      );
    }
  }
  return warnings;
}

/** The result with the warnings as `_warning` (joined by " | "), placed before a `_hint` as the original does. */
export function withWarnings(result: ToolResult, warnings: readonly string[]): ToolResult {
  const content = result.content;
  if (warnings.length === 0 || typeof content !== "object" || content === null || Array.isArray(content)) return result;
  const { _hint, ...rest } = content as Record<string, unknown>;
  return { ...result, content: { ...rest, _warning: warnings.join(" | "), ...(_hint === undefined ? {} : { _hint }) } };
}

/** Whether a write_file / patch result is a success (no `error`), after which the paths count as read. */
export function succeeded(result: ToolResult): boolean {
  const content = result.content as Record<string, unknown> | undefined;
  return !result.error && !(content && typeof content === "object" && content.error);
}
