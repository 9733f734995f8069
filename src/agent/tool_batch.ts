/**
 * The tool calls of one assistant turn, run as the original Hermes agent runs them (run_agent.py
 * `_should_parallelize_tool_batch`): in call order, one after the other, unless every call of the turn is
 * parallel-safe — a read-only tool, or a file tool (read_file, write_file, patch) whose path overlaps no
 * other file call's path in the turn. Identical calls (same tool, same arguments) run once; each call id
 * still gets its own result message.
 */
import { posix } from "node:path";

/** Interactive tools: a turn containing one never runs concurrently. */
const NEVER_PARALLEL = new Set(["clarify"]);

/** Read-only tools with no shared mutable state. */
export const PARALLEL_SAFE_TOOLS: ReadonlySet<string> = new Set([
  "ha_get_state",
  "ha_list_entities",
  "ha_list_services",
  "read_file",
  "search_files",
  "session_search",
  "skill_view",
  "skills_list",
  "vision_analyze",
  "web_extract",
  "web_search",
]);

/** File tools that may run together when their paths do not overlap. */
export const PATH_SCOPED_TOOLS: ReadonlySet<string> = new Set(["read_file", "write_file", "patch"]);

export interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
  /** The tool call's id (identical calls run once, under the first one's id). */
  id?: string;
}

/** A path's components, `~` kept as written; relative paths marked so they never pass for absolute ones. */
function pathParts(raw: string): string[] {
  const absolute = raw.startsWith("/");
  const normal = posix.normalize(absolute ? raw : `./${raw}`);
  const parts = normal.split("/").filter((p) => p !== "" && p !== ".");
  return [absolute ? "/" : ".", ...parts];
}

/** Two paths may name the same subtree (one is a prefix of the other). A relative and an absolute path are
 * assumed to overlap: without the tool's working directory we cannot tell them apart. */
function pathsOverlap(a: string[], b: string[]): boolean {
  if (a[0] !== b[0]) return true;
  const n = Math.min(a.length, b.length);
  for (let i = 1; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** True when the whole turn may run concurrently. */
export function isParallelSafeBatch(calls: readonly PlannedCall[]): boolean {
  if (calls.length <= 1) return false;
  if (calls.some((c) => NEVER_PARALLEL.has(c.name))) return false;
  const reserved: string[][] = [];
  for (const call of calls) {
    if (PATH_SCOPED_TOOLS.has(call.name)) {
      const path = call.args.path;
      if (typeof path !== "string" || path.trim() === "") return false;
      const parts = pathParts(path.trim());
      if (reserved.some((r) => pathsOverlap(r, parts))) return false;
      reserved.push(parts);
      continue;
    }
    if (!PARALLEL_SAFE_TOOLS.has(call.name)) return false;
  }
  return true;
}

/** Key under which identical calls of one turn share a single execution: tool name and arguments with
 * keys in sorted order, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same call. */
export function callKey(call: PlannedCall): string | undefined {
  const json = canonicalJson(call.args, 0);
  return json === undefined ? undefined : `${call.name}\u0000${json}`;
}

/** Arguments nested deeper than this are compared with nothing (no tool takes them; the recursion would overflow). */
const MAX_KEY_DEPTH = 256;

function canonicalJson(value: unknown, depth: number): string | undefined {
  if (depth > MAX_KEY_DEPTH) return undefined;
  if (value && typeof value === "object") {
    const parts: string[] = [];
    const isArray = Array.isArray(value);
    const obj = value as Record<string, unknown>;
    for (const k of isArray ? [] : Object.keys(obj).sort()) {
      const json = canonicalJson(obj[k], depth + 1);
      if (json === undefined) return undefined;
      parts.push(`${JSON.stringify(k)}:${json}`);
    }
    for (const item of isArray ? (value as unknown[]) : []) {
      const json = canonicalJson(item, depth + 1);
      if (json === undefined) return undefined;
      parts.push(json);
    }
    return isArray ? `[${parts.join(",")}]` : `{${parts.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * Runs the distinct calls of a turn — concurrently (at most `concurrency` at once) when the batch is
 * parallel-safe, else one after the other in call order — and returns one result per input call.
 */
export async function runToolBatch(
  calls: readonly PlannedCall[],
  run: (call: PlannedCall) => Promise<string>,
  concurrency: number,
): Promise<string[]> {
  // The common turn: one call, nothing to share or to run together.
  if (calls.length === 1) return [await run(calls[0]!)];
  // A call whose arguments cannot be keyed (nested too deep) runs on its own, under a key only it has.
  const keys = calls.map((call, i) => callKey(call) ?? `\u0001${i}`);
  const unique = new Map<string, PlannedCall>();
  calls.forEach((call, i) => {
    if (!unique.has(keys[i]!)) unique.set(keys[i]!, call);
  });
  const distinct = [...unique.entries()];
  const results = new Map<string, string>();

  if (isParallelSafeBatch(distinct.map(([, c]) => c))) {
    let next = 0;
    const worker = async () => {
      while (next < distinct.length) {
        const [key, call] = distinct[next++]!;
        results.set(key, await run(call));
      }
    };
    await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), distinct.length) }, worker));
  } else {
    for (const [key, call] of distinct) results.set(key, await run(call));
  }
  return keys.map((key) => results.get(key)!);
}
