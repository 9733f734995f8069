/**
 * `run --harbor PATH`: the task folders become an in-memory JSONL dataset, so every pass (scan, plan, shard,
 * --only) reads the same rows and the fingerprint covers each task's digest (a changed task → --resume exit 3).
 */
import type { DatasetSource } from "../run/dataset.js";
import { readHarborTasks, shownPath } from "./task_dir.js";

export function harborDatasetSource(path: string): DatasetSource {
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
