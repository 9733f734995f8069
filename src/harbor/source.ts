/**
 * `run --harbor PATH`: the task folders become an in-memory JSONL dataset, so every pass (scan, plan, shard,
 * --only) reads the same rows and the fingerprint covers each task's digest (a changed task → --resume exit 3).
 */
import { readHarborTasks, shownPath } from "./task_dir.js";

/** Shaped as src/run/dataset.ts's DatasetSource (not imported: src/run imports this folder, not the reverse). */
export interface HarborDatasetSource {
  path: string;
  name: string;
  bytes: Buffer;
  dir: string;
  refused: { file: string; line?: number; reason: string }[];
}

export function harborDatasetSource(path: string): HarborDatasetSource {
  const { rows, bad } = readHarborTasks(path);
  const bytes = Buffer.from(rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length ? "\n" : ""));
  return {
    path,
    name: path,
    bytes,
    dir: process.cwd(),
    refused: bad.map((b) => ({ ...b, file: shownPath(b.file) })),
  };
}
