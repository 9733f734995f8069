/**
 * What changed between a run folder's results and the dataset (and --epochs) a resume is given now: tasks added,
 * tasks whose results no longer belong to the dataset slice (a row removed, an id changed, an epoch beyond
 * --epochs), tasks whose prompt or grading criteria changed. A refused resume names these; one that goes on
 * (--allow-config-change) first moves the results that no longer describe the dataset to superseded.jsonl, so
 * the tasks run again and the statistics describe the dataset the run was resumed with.
 */
import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { JsonlAppender, readLines } from "./jsonl_file.js";
import { RUN_FILES } from "./checkpoint.js";

/** A row of the current dataset slice, as a result is compared with it. */
export interface SliceRow {
  index: number;
  prompt: string;
  /** scoringCriteria of the row; undefined when it names no scorer. */
  criteria: string | undefined;
}

export interface DatasetDrift {
  /** Rows of the slice without any result in the folder (appended rows, a changed id's new id). */
  added: string[];
  /** Task ids with results whose row is gone from the slice (removed, or its id changed). */
  gone: string[];
  /** Tasks whose recorded prompt is not the row's prompt now. */
  promptChanged: string[];
  /** Tasks whose results were graded against other criteria (expected, verify, verify_files, rubric) than the row's now. */
  criteriaChanged: string[];
  /** Results of an epoch the resume does not run (--epochs lowered). */
  extraEpochs: number;
  /** Rows whose position changed (their results stay: results are keyed by task id). */
  moved: number;
}

const RESULT_FILES = [RUN_FILES.trajectories, RUN_FILES.dropped, RUN_FILES.failed] as const;

interface ResultLine {
  task_id?: unknown;
  epoch?: unknown;
  prompt_index?: unknown;
  messages?: { role?: unknown; content?: unknown }[];
  score?: { criteria?: unknown } | null;
}

function parse(text: string): ResultLine | undefined {
  try {
    const v = JSON.parse(text) as ResultLine;
    return v !== null && typeof v === "object" && typeof v.task_id === "string" ? v : undefined;
  } catch {
    return undefined; // unreadable: loadRunState reports it
  }
}

const epochOf = (v: ResultLine) => (typeof v.epoch === "number" ? v.epoch : 0);

/** The user messages of a result (its prompt is one of them; prefill may add others). */
function userTexts(v: ResultLine): string[] | undefined {
  if (!Array.isArray(v.messages)) return undefined;
  return v.messages.filter((m) => m?.role === "user" && typeof m.content === "string").map((m) => m.content as string);
}

/** Compares the folder's results with the slice's rows (every result file read once, line by line). */
export async function datasetDrift(
  runDir: string,
  rows: ReadonlyMap<string, SliceRow>,
  epochs: number,
): Promise<DatasetDrift> {
  const seen = new Set<string>();
  const gone = new Set<string>();
  const promptChanged = new Set<string>();
  const criteriaChanged = new Set<string>();
  const moved = new Set<string>();
  let extraEpochs = 0;
  for (const name of RESULT_FILES) {
    for await (const { text } of readLines(join(runDir, name))) {
      const v = parse(text);
      if (!v) continue;
      const id = v.task_id as string;
      const row = rows.get(id);
      if (!row) {
        gone.add(id);
        continue;
      }
      seen.add(id);
      if (epochOf(v) >= Math.max(1, epochs)) extraEpochs++;
      if (typeof v.prompt_index === "number" && v.prompt_index !== row.index) moved.add(id);
      if (name === RUN_FILES.failed) continue; // a failure is rerun anyway: only its id and epoch matter
      const users = userTexts(v);
      if (users !== undefined && users.length > 0 && !users.includes(row.prompt)) promptChanged.add(id);
      else if (name === RUN_FILES.trajectories) {
        const recorded = typeof v.score?.criteria === "string" ? v.score.criteria : undefined;
        if (recorded !== row.criteria) criteriaChanged.add(id);
      }
    }
  }
  for (const id of promptChanged) criteriaChanged.delete(id);
  return {
    added: [...rows.keys()].filter((id) => !seen.has(id)),
    gone: [...gone],
    promptChanged: [...promptChanged],
    criteriaChanged: [...criteriaChanged],
    extraEpochs,
    moved: moved.size,
  };
}

/** Whether results must be set aside for the statistics to describe the dataset slice and epochs given now. */
export function driftSetsAside(d: DatasetDrift): boolean {
  return d.gone.length + d.promptChanged.length + d.criteriaChanged.length + d.extraEpochs > 0;
}

function some(ids: readonly string[]): string {
  return ids.slice(0, 5).join(", ") + (ids.length > 5 ? `, … ${ids.length - 5} more` : "");
}

/** The drift in words, `;`-separated; empty when the results match the rows. */
export function describeDrift(d: DatasetDrift): string {
  const parts: string[] = [];
  if (d.added.length)
    parts.push(`${d.added.length} task(s) without a result yet (new or renamed rows: ${some(d.added)})`);
  if (d.gone.length)
    parts.push(
      `results of ${d.gone.length} task id(s) no longer in the dataset slice (removed or renamed: ${some(d.gone)})`,
    );
  if (d.promptChanged.length)
    parts.push(`${d.promptChanged.length} task(s) whose prompt changed (${some(d.promptChanged)})`);
  if (d.criteriaChanged.length)
    parts.push(
      `${d.criteriaChanged.length} task(s) graded against other criteria than the row's now (expected, verify, verify_files or rubric: ${some(d.criteriaChanged)})`,
    );
  if (d.extraEpochs) parts.push(`${d.extraEpochs} result(s) of epochs beyond --epochs`);
  if (d.moved) parts.push(`${d.moved} row(s) at another position (their results stay)`);
  return parts.join("; ");
}

/**
 * Moves every result line (trajectories, dropped, failed) that no longer describes the slice to superseded.jsonl,
 * each file rewritten under a temporary name and renamed: results of ids gone from the slice, of epochs beyond
 * --epochs, and every result of a task whose prompt or criteria changed (it runs again). Returns the lines moved.
 */
export async function setAsideDrift(
  runDir: string,
  rows: ReadonlyMap<string, SliceRow>,
  epochs: number,
  d: DatasetDrift,
): Promise<number> {
  const rerun = new Set([...d.promptChanged, ...d.criteriaChanged]);
  const stale = (v: ResultLine) => {
    const id = v.task_id as string;
    return !rows.has(id) || rerun.has(id) || epochOf(v) >= Math.max(1, epochs);
  };
  let moved = 0;
  const superseded = new JsonlAppender(join(runDir, "superseded.jsonl"), 0);
  try {
    for (const name of RESULT_FILES) {
      const path = join(runDir, name);
      if (!existsSync(path)) continue;
      const tmp = `${path}.rewrite`;
      rmSync(tmp, { force: true });
      const keep = new JsonlAppender(tmp, 0);
      let movedHere = 0;
      for await (const { text } of readLines(path)) {
        const v = parse(text);
        if (v && stale(v)) {
          superseded.appendLine(text);
          movedHere++;
        } else keep.appendLine(text);
      }
      keep.close();
      superseded.sync();
      if (movedHere > 0) renameSync(tmp, path);
      else rmSync(tmp, { force: true });
      moved += movedHere;
    }
  } finally {
    superseded.close();
  }
  return moved;
}
