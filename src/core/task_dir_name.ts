import { createHash } from "node:crypto";

/**
 * A file-system-safe, still recognisable folder name for a task id: never empty, `.`, `..` or anything that
 * leaves its parent folder (an id of dots gets a hash suffix like any other unsafe id).
 */
export function taskDirName(id: string): string {
  const safe = id.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80);
  if (safe === id && !/^\.*$/.test(id)) return id;
  return `${safe.replace(/^\.+$/, (dots) => "_".repeat(dots.length)) || "task"}-${createHash("sha256").update(id).digest("hex").slice(0, 8)}`;
}
